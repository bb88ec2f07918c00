"""NaN guard: a debugging aid that keeps a simulation's last states and writes them to disk
when a world diverges, so that the failing step can be replayed in plain MuJoCo.

On (`SimulationCfg.nan_guard.enabled`), `Simulation.step` records the state of every world
before each call (a rolling buffer of `buffer_size` calls) and, once a world diverges, writes
the buffered states of the first `max_envs_to_dump` diverged worlds and their models. A world
diverges as `SimulationCfg.check_divergence` defines it: a non-finite qpos/qvel/qacc or one
beyond 1e10 (mjMAXVAL), or a world that C MuJoCo reset for instability (whose state after the
step is then MuJoCo's reset state: the buffer still holds the states that led there). The
guard writes once per simulation, then only records nothing more; it never changes the
physics and raises nothing (it warns, with the path).

Files written to `output_dir`, with `<stamp>` = UTC date, time and process id:

- `nan_dump_<stamp>.npz`: `env_ids` (d,) the dumped worlds; `nan_env_ids` every world that
  diverged in that step; `steps` (b,) the step counter of each buffered state (0 = the first
  `step` call); `nstep` (b,) physics steps of each call; `detection_step` the call that
  diverged; and per state field (`time`, `qpos`, `qvel`, `act`, `ctrl`, `qfrc_applied`,
  `xfrc_applied`, `mocap_pos`, `mocap_quat`) an array (b, d, ...) of the states before each
  buffered call, oldest first, plus `after_<field>` (d, ...) the state after the diverging
  call. float64.
- `model_env<i>_<stamp>.mjb`: world i's model (with its randomized fields), for
  `mujoco.MjModel.from_binary_path`.

Replay: load world i's model, set `qpos`/`qvel`/`act`/`ctrl`/... of the last buffered state
(index -1) into an `MjData` and run `nstep[-1]` `mj_step`s.
"""

from __future__ import annotations

import os
import time
import warnings
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import torch

from mjlab.utils.config import Config, check_int


@dataclass(kw_only=True)
class NanGuardCfg(Config):
    """Keep the last states of a simulation and write them to disk when a world diverges."""

    enabled: bool = False
    """Whether the guard runs. Off (the default) it costs nothing; on, it copies the state
    of every world before each `Simulation.step` and syncs with the device after it."""
    buffer_size: int = 100
    """Number of `Simulation.step` calls whose starting states are kept, >= 1."""
    output_dir: str = "/tmp/mjlab/nan_dumps"
    """Directory the dump is written to (created if missing)."""
    max_envs_to_dump: int = 5
    """Most diverged worlds written (the lowest ids), >= 1."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid."""
        if not isinstance(self.enabled, bool):
            raise ValueError(f"NanGuardCfg.enabled must be True or False, got {self.enabled!r}.")
        check_int(self.buffer_size, "NanGuardCfg.buffer_size", 1, "steps kept")
        check_int(self.max_envs_to_dump, "NanGuardCfg.max_envs_to_dump", 1, "worlds written")
        if not isinstance(self.output_dir, (str, os.PathLike)) or not str(self.output_dir):
            raise ValueError(
                f"NanGuardCfg.output_dir must be a directory path, got {self.output_dir!r}."
            )


class NanGuard:
    """The guard of one `Simulation` (built by it when `cfg.enabled`).

    Args:
        cfg: the guard's config.
        sim: the `mjlab.sim.Simulation` it watches.
        fields: the MjData fields that make a world's state (`Simulation`'s `STATE_FIELDS`);
            those the model has (non-empty) are recorded.
    """

    def __init__(self, cfg: NanGuardCfg, sim: Any, fields: tuple[str, ...]) -> None:
        self.cfg = cfg
        self.sim = sim
        self.buffer: deque[tuple[int, int, dict[str, torch.Tensor]]] = deque(maxlen=cfg.buffer_size)
        self.step_count = 0
        """`Simulation.step` calls seen."""
        self.dump_path: Path | None = None
        """The `.npz` written, None until a world diverges."""
        self.nan_env_ids: list[int] = []
        """Worlds that diverged in the step that was dumped."""
        self._fields = [
            name for name in fields if name == "time" or getattr(sim.data, name).shape[1] > 0
        ]

    def record(self, nstep: int) -> None:
        """Keep a copy of every world's state before a step of `nstep` physics steps."""
        if self.dump_path is not None:
            return
        data = self.sim.data
        state = {name: getattr(data, name).detach().clone() for name in self._fields}
        self.buffer.append((self.step_count, nstep, state))

    def check(self, diverged: torch.Tensor) -> bool:
        """After a step: write the dump if a world in `diverged` ((num_envs,) bool) diverged
        and nothing was written yet. Returns whether it wrote."""
        self.step_count += 1
        if self.dump_path is not None or not bool(diverged.any()):  # the host sync
            return False
        ids = torch.nonzero(diverged).flatten().cpu().tolist()
        self.nan_env_ids = ids
        self.dump_path = self._write(ids[: self.cfg.max_envs_to_dump])
        self.buffer.clear()
        warnings.warn(
            f"NaN guard: worlds {ids[:10]}{' ...' if len(ids) > 10 else ''} diverged at step "
            f"{self.step_count - 1}; their last {self.cfg.buffer_size} states at most and "
            f"models are in {self.dump_path} (SimulationCfg.nan_guard).",
            RuntimeWarning,
            stacklevel=3,
        )
        return True

    def _write(self, env_ids: list[int]) -> Path:
        out = Path(self.cfg.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d_%H%M%S", time.gmtime()) + f"_{os.getpid()}"
        index = torch.as_tensor(env_ids, dtype=torch.long)
        arrays: dict[str, np.ndarray] = {
            "env_ids": np.asarray(env_ids, dtype=np.int64),
            "nan_env_ids": np.asarray(self.nan_env_ids, dtype=np.int64),
            "steps": np.asarray([s for s, _, _ in self.buffer], dtype=np.int64),
            "nstep": np.asarray([n for _, n, _ in self.buffer], dtype=np.int64),
            "detection_step": np.asarray(self.step_count - 1, dtype=np.int64),
        }
        for name in self._fields:
            rows = [state[name][index.to(state[name].device)] for _, _, state in self.buffer]
            arrays[name] = (
                torch.stack(rows).cpu().double().numpy() if rows else np.zeros((0, len(env_ids)))
            )
            after = getattr(self.sim.data, name)
            arrays[f"after_{name}"] = after[index.to(after.device)].cpu().double().numpy()
        path = out / f"nan_dump_{stamp}.npz"
        np.savez_compressed(path, **arrays)
        for i in env_ids:
            mujoco.mj_saveModel(self.sim.get_model(i), str(out / f"model_env{i}_{stamp}.mjb"))
        return path

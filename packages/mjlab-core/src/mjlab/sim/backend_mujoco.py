"""C MuJoCo backend: `mujoco.batch.Batch` (MuJoCo >= 4.0), a thread pool over all worlds."""

from __future__ import annotations

import warnings

import mujoco
import numpy as np
import torch
from mujoco import batch as mjbatch

from mjlab.sim.sim_cfg import SimulationCfg

_STAGE_VEL = mujoco.mjtStage.mjSTAGE_VEL.value
_STAGE_ACC = mujoco.mjtStage.mjSTAGE_ACC.value
_STAGE_NONE = mujoco.mjtStage.mjSTAGE_NONE.value
_WARN_BAD = tuple(
    int(w)
    for w in (
        mujoco.mjtWarning.mjWARN_BADQPOS,
        mujoco.mjtWarning.mjWARN_BADQVEL,
        mujoco.mjtWarning.mjWARN_BADQACC,
    )
)


def _as_tensor(array: np.ndarray) -> torch.Tensor:
    """Zero-copy torch view of a numpy array the batch refreshes in place.

    Output fields are flagged read-only by mujoco.batch because writes would be lost at the next
    call; torch cannot mark a tensor read-only, so the warning it gives is silenced here and the
    rule is documented on `Simulation.data`.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.from_numpy(array)


class MujocoBatchBackend:
    """Runs `num_envs` worlds with C MuJoCo's batch API; every view is a float64 CPU tensor."""

    name = "mujoco"

    def __init__(self, model: mujoco.MjModel, num_envs: int, cfg: SimulationCfg):
        # persistent: one MjData per world, so step(stage=VEL) leaves position/velocity-dependent
        # fields current at the new state at no extra cost (mujoco.batch docs).
        self.batch = mjbatch.Batch(model, num_envs, nthread=cfg.nthread, persistent=True)
        self.num_envs = num_envs
        self.device = torch.device("cpu")
        self._failed = np.zeros(num_envs, dtype=bool)
        self._any_failed = False  # `_failed` has a True: skips two numpy calls per step
        # MuJoCo's instability counters of each world, three (num_envs,) int32 live views:
        # mj_checkPos/Vel/Acc count every NaN/Inf or beyond-mjMAXVAL qpos/qvel/qacc they find,
        # within each substep and, for the last substep's result, in the stage=VEL pass that
        # `step` asks for (as mj_step1 runs them), whether or not autoreset then resets the
        # world (autoreset off, in the model or in any world: the invalid state stays). A reset
        # (ours, or MuJoCo's autoreset, which counts after clearing) zeroes them, so a nonzero
        # counter means "went unstable since the last reset": exact in every step, the first
        # after a reset included (where a clock rewound to 0 could not tell).
        # (`warning` is (num_envs, mjNWARNING, 2): lastinfo, number.)
        self._unstable = tuple(self.batch.warning[:, w, 1] for w in _WARN_BAD)
        self._unstable_or = np.zeros(num_envs, dtype=np.int32)

    # -- views ------------------------------------------------------------------------------
    def field(self, name: str) -> torch.Tensor:
        if name not in mjbatch.DATA_FIELDS:
            raise AttributeError(f"'{name}' is not an MjData field the batch can bind.")
        return _as_tensor(self.batch.bind(name))

    def expand(self, name: str) -> torch.Tensor:
        array = self.batch.expand(name)
        return torch.from_numpy(array)

    def set_const(self, env_ids: np.ndarray | None) -> None:
        self.batch.set_const(env_ids)

    def get_state(self) -> dict[str, torch.Tensor]:
        # The full state rows (mjSTATE_INTEGRATION: time, qpos, qvel, act, history, warmstart,
        # ctrl, applied forces, mocap, eq_active, userdata, plugin state).
        return {"state": torch.from_numpy(self.batch.state.copy())}

    def check_state(self, state: dict[str, torch.Tensor]) -> None:
        shape = tuple(state["state"].shape)
        if shape != self.batch.state.shape:
            raise ValueError(
                f"Saved physics state has shape {shape}, this simulation "
                f"{self.batch.state.shape} (another model or num_envs)."
            )

    def set_state(self, state: dict[str, torch.Tensor]) -> None:  # checked by Simulation
        np.copyto(self.batch.state, state["state"].cpu().numpy())
        # The counters describe the state that was replaced; a restored world's divergence
        # flag travels with the env's own snapshot (`Simulation.diverged`).
        for counter in self._unstable:
            counter.fill(0)

    # -- calls ------------------------------------------------------------------------------
    def _run(self, call, ids: np.ndarray | None, **kwargs) -> None:
        try:
            call(ids=ids, **kwargs)
        except mjbatch.SimulationError as err:
            # The failing worlds kept their previous state; the others ran to completion.
            self._failed[err.ids] = True
            self._any_failed = True

    def step(self, nstep: int) -> None:
        self._run(self.batch.step, None, nstep=nstep, stage=_STAGE_VEL)

    def forward(self, env_ids: np.ndarray | None) -> None:
        self._run(self.batch.forward, env_ids, stage=_STAGE_ACC)

    def reset(self, env_ids: np.ndarray | None, keyframe: int, forward: bool) -> None:
        stage = _STAGE_ACC if forward else _STAGE_NONE
        self._run(self.batch.reset, env_ids, keyframe=keyframe, stage=stage)
        sel = slice(None) if env_ids is None else env_ids
        self._failed[sel] = False

    def newly_diverged(self) -> torch.Tensor:
        # Few numpy calls: this runs right after the physics, when each new code path is slow
        # (the physics has evicted the caches).
        qpos, qvel, qacc = self._unstable
        np.bitwise_or(qpos, qvel, out=self._unstable_or)
        np.bitwise_or(self._unstable_or, qacc, out=self._unstable_or)
        bad = np.not_equal(self._unstable_or, 0)
        if self._any_failed:
            bad |= self._failed
            self._failed.fill(False)
            self._any_failed = False
        return torch.from_numpy(bad)

    def ray(self, pnt, vec, geomgroup, flg_static, bodyexclude):
        dist, geomid = self.batch.ray(
            pnt.detach().cpu().numpy(),
            vec.detach().cpu().numpy(),
            geomgroup=geomgroup,
            flg_static=flg_static,
            bodyexclude=bodyexclude,
        )
        return torch.from_numpy(dist), torch.from_numpy(geomid)

    def get_data(self, env_id: int, data: mujoco.MjData | None = None) -> mujoco.MjData:
        return self.batch.get_data(env_id, data)

    def get_model(self, env_id: int, model: mujoco.MjModel | None = None) -> mujoco.MjModel:
        return self.batch.get_model(env_id, model)

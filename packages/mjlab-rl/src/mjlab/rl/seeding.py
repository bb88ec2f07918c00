"""One seed for a whole training run: the env's generators, torch, numpy and Python's `random`.

`seed_run(seed)` is called by `train` before anything is built. The env's generators
(`ManagerBasedRlEnv.rng` / `np_rng`: resets, commands, domain randomization, observation noise)
get `seed` itself, so `ManagerBasedRlEnvCfg(seed=s)` rebuilds the env of a run with seed s.
Torch's global generator (network initialisation, rsl-rl's action sampling and minibatch
shuffles, `init_at_random_ep_len`), numpy's and Python's get seeds derived from `seed` with
numpy's `SeedSequence` (independent streams: the policy's noise is not the env's noise).

What a seed guarantees: on CPU (C MuJoCo backend) the same seed, code, library versions and
machine give the same run bit for bit (checkpoints and logged curves, with 1 or 2 torch threads:
`packages/mjlab-rl/tests/test_reproducibility.py`). On CUDA, MuJoCo Warp by default accumulates
contacts and constraint forces with atomic additions whose order varies from run to run, so two
runs with one seed start alike and drift apart by rounding; `train --deterministic` turns on
torch's deterministic algorithms (`seed_run(deterministic=True)`) and MuJoCo Warp's
deterministic mode (`SimulationCfg.deterministic`), which is as reproducible as the two
libraries allow (not measured on a GPU by this repository yet).
"""

from __future__ import annotations

import dataclasses
import os
import random
from pathlib import Path

import numpy as np
import torch


@dataclasses.dataclass(frozen=True)
class RunSeeds:
    """The seeds of one run, written to `params/seed.yaml`."""

    seed: int
    """The run's seed (`agent.seed`)."""
    env: int
    """`ManagerBasedRlEnvCfg.seed`: the env's torch and numpy generators (== `seed`)."""
    torch: int
    """`torch.manual_seed` (CPU and every CUDA device)."""
    numpy: int
    """`np.random.seed` (numpy's legacy global generator)."""
    python: int
    """`random.seed`."""
    deterministic: bool = False
    """Whether torch's deterministic algorithms were requested."""


def derive_seeds(seed: int, deterministic: bool = False) -> RunSeeds:
    """The per-component seeds of `seed` (>= 0): the env gets `seed`; torch, numpy and Python
    get the first 32-bit word of three `np.random.SeedSequence(seed).spawn(3)` children.

    Raises:
        ValueError: a seed that is not an integer >= 0.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"agent.seed must be an integer >= 0, got {seed!r}.")
    words = [int(c.generate_state(1)[0]) for c in np.random.SeedSequence(seed).spawn(3)]
    return RunSeeds(seed, seed, *words, deterministic=deterministic)


def seed_run(seed: int, deterministic: bool = False) -> RunSeeds:
    """Seed torch (all devices), numpy and Python's `random` from `seed`; returns the seeds.

    With `deterministic`, also `torch.use_deterministic_algorithms(True, warn_only=True)` (an op
    without a deterministic implementation warns once and runs), cuDNN's deterministic mode
    without autotuning, and
    `CUBLAS_WORKSPACE_CONFIG=:4096:8` when unset (cuBLAS's requirement). On CPU it changes
    nothing measurable: C MuJoCo and torch's CPU kernels are already deterministic
    (`bench/determinism.py` prints the cost). MuJoCo Warp's deterministic mode is the env's
    `SimulationCfg.deterministic`, which `train --deterministic` sets.
    """
    seeds = derive_seeds(seed, deterministic)
    random.seed(seeds.python)
    np.random.seed(seeds.numpy)  # noqa: NPY002 (the global generator third-party code uses)
    torch.manual_seed(seeds.torch)
    if deterministic:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    # Set both ways: the flags are global to the process, and the seeds file says which held.
    torch.use_deterministic_algorithms(deterministic, warn_only=True)
    torch.backends.cudnn.deterministic = deterministic
    if deterministic:
        torch.backends.cudnn.benchmark = False
    return seeds


def write_seeds(log_dir: str | Path, seeds: RunSeeds) -> Path:
    """Write `seeds` to `<log_dir>/params/seed.yaml`; returns the path."""
    import yaml

    path = Path(log_dir) / "params" / "seed.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(dataclasses.asdict(seeds), sort_keys=False))
    return path

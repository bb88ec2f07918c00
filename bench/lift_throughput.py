"""Env steps/s of the Franka lift tasks (state, RGB, depth) on this machine, with the camera's
share of the step.

For each task and N: `ManagerBasedRlEnv.step` with random actions after a warm-up, and for the
image tasks the time spent rendering (the sensor's images are read, so rendered, once per
step; `update_period` 1) from a separate timed loop of renders of the same states.

    MENAGERIE_ROOT=... uv run python bench/lift_throughput.py [--num-envs 16 64] [--steps 20]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch

_MIRROR = Path(__file__).resolve().parents[2] / "shared" / "menagerie"
if "MENAGERIE_ROOT" not in os.environ and _MIRROR.is_dir():
    os.environ["MENAGERIE_ROOT"] = str(_MIRROR)

from mjlab.envs import ManagerBasedRlEnv  # noqa: E402
from mjlab.tasks import load_env_cfg  # noqa: E402

TASKS = ("Mjlab-Lift-Cube-Franka", "Mjlab-Lift-Cube-Franka-Rgb", "Mjlab-Lift-Cube-Franka-Depth")


def measure(task: str, num_envs: int, steps: int) -> tuple[float, float | None]:
    """(env steps/s, ms of rendering per env and frame or None)."""
    cfg = load_env_cfg(task)
    cfg.scene.num_envs = num_envs
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    gen = torch.Generator().manual_seed(0)
    dim = env.action_manager.total_action_dim

    def act() -> torch.Tensor:
        return 2.0 * torch.rand(num_envs, dim, generator=gen) - 1.0

    for _ in range(3):
        env.step(act())
    start = time.perf_counter()
    for _ in range(steps):
        env.step(act())
    rate = num_envs * steps / (time.perf_counter() - start)
    render_ms = None
    if "camera" in env.scene.sensors:
        camera = env.scene["camera"]
        start = time.perf_counter()
        for _ in range(steps):
            camera.reset(torch.arange(num_envs))  # marks every env for a fresh render
            _ = camera.rgb if "rgb" in camera.cfg.data_types else camera.depth
        render_ms = 1000 * (time.perf_counter() - start) / (steps * num_envs)
    return rate, render_ms


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--num-envs", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    print(f"{'task':<32}{'N':>6}{'env steps/s':>14}{'render ms/env/frame':>22}")
    for task in TASKS:
        for n in args.num_envs:
            rate, render = measure(task, n, args.steps)
            shown = "-" if render is None else f"{render:.2f}"
            print(f"{task:<32}{n:>6}{rate:>14,.0f}{shown:>22}", flush=True)


if __name__ == "__main__":
    main()

"""Does each locomotion task learn? Trains it briefly with the `train` command and prints how the
mean episode length and the linear-velocity tracking reward moved.

    uv run python bench/learning_check.py                      # every locomotion task
    uv run python bench/learning_check.py --tasks Mjlab-Velocity-Flat-Unitree-G1 --iterations 100
    uv run python bench/learning_check.py --device cuda:0 --num-envs 4096 --iterations 50

"early" is the mean over iterations 3-7 (the first iterations only count the episodes that end
soonest, so iterations 0-2 are biased low); "late" the mean of the last 5. A task that learns
has late/early > 1: its robots stay up longer. A policy that learns to fall on purpose (a reward
whose penalties outweigh what staying up earns) shows late/early < 1. A rough task also reports
its terrain curriculum: the mean terrain level over envs (mean of the last 5 iterations) against
the highest level that exists, e.g. "1.62/4".
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

LOCOMOTION_TASKS = (
    "Mjlab-Velocity-Flat-Unitree-Go1",
    "Mjlab-Velocity-Rough-Unitree-Go1",
    "Mjlab-Velocity-Flat-Unitree-G1",
    "Mjlab-Velocity-Rough-Unitree-G1",
)


TERRAIN_TAGS = {
    "terrain_level": "Curriculum/terrain_levels/mean",
    "terrain_level_max": "Curriculum/terrain_levels/highest",
}
"""Tensorboard tags of the terrain curriculum (`mdp.terrain_levels`), logged by rough tasks."""


def train_briefly(
    task: str, iterations: int, num_envs: int, workdir: Path, device: str = "cpu"
) -> dict[str, np.ndarray]:
    """Run `train task` in `workdir` and return its per-iteration curves.

    Returns:
        {"iteration", "mean_episode_length" (steps), "track_lin_vel_xy" (fraction of the term's
        maximum)}, each (iterations,); for a task with a terrain curriculum also
        "terrain_level" (mean level over envs) and "terrain_level_max" (the highest level that
        exists), each (iterations,).
    """
    import yaml
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    subprocess.run(
        [
            sys.executable,
            "-m",
            "mjlab.rl.scripts.train",
            task,
            "--env.scene.num-envs",
            str(num_envs),
            "--agent.max-iterations",
            str(iterations),
            "--agent.logger",
            "tensorboard",
            "--agent.save-interval",
            str(10 * iterations),
            "--device",
            device,
        ],
        cwd=workdir,
        # On the CPU, hide any GPU so that nothing (torch, Warp) initializes CUDA.
        env=dict(os.environ, CUDA_VISIBLE_DEVICES="") if device == "cpu" else dict(os.environ),
        check=True,
        capture_output=True,
        timeout=3600,
    )
    (run,) = (p for p in (workdir / "logs" / "rsl_rl").glob("*/*") if p.is_dir())
    acc = EventAccumulator(str(run), size_guidance={"scalars": 0})
    acc.Reload()
    length = acc.Scalars("Train/mean_episode_length")
    track = {e.step: e.value for e in acc.Scalars("Episode_Reward/track_lin_vel_xy_exp")}
    env = yaml.safe_load((run / "params" / "env.yaml").read_text())
    weight = float(env["rewards"]["track_lin_vel_xy_exp"]["weight"])
    curves = {
        "iteration": np.array([e.step for e in length]),
        "mean_episode_length": np.array([e.value for e in length]),
        "track_lin_vel_xy": np.array([track.get(e.step, np.nan) / weight for e in length]),
    }
    logged = set(acc.Tags()["scalars"])
    for name, tag in TERRAIN_TAGS.items():
        if tag in logged:
            by_step = {e.step: e.value for e in acc.Scalars(tag)}
            curves[name] = np.array([by_step.get(e.step, np.nan) for e in length])
    return curves


def summarize(curves: dict[str, np.ndarray]) -> dict[str, float]:
    """early/late means of the episode length (see the module docstring) and their ratio, the
    late tracking reward and, where the curves have them, the late mean terrain level
    ("terrain_late") and the highest level ("terrain_max")."""
    length = curves["mean_episode_length"]
    if len(length) < 13:
        raise ValueError(
            f"need at least 13 logged iterations to compare early and late, got {len(length)}; "
            "train for more iterations"
        )
    early, late = float(length[3:8].mean()), float(length[-5:].mean())
    out = {
        "early": early,
        "late": late,
        "ratio": late / early,
        "track_late": float(np.nanmean(curves["track_lin_vel_xy"][-5:])),
    }
    if "terrain_level" in curves:
        out["terrain_late"] = float(np.nanmean(curves["terrain_level"][-5:]))
        out["terrain_max"] = float(np.nanmax(curves["terrain_level_max"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", nargs="+", default=list(LOCOMOTION_TASKS))
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--num-envs", type=int, default=512)
    parser.add_argument("--device", default="cpu", help='"cpu" or a CUDA device ("cuda:0")')
    parser.add_argument("--json-out", type=Path, default=None, help="append one JSON line per task")
    args = parser.parse_args()

    print(f"{args.iterations} iterations, {args.num_envs} envs, {args.device}")
    print(
        f"{'task':36} {'early len':>9} {'late len':>9} {'late/early':>10} {'track':>6} "
        f"{'terrain':>8} {'min':>5}"
    )
    for task in args.tasks:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            curves = train_briefly(task, args.iterations, args.num_envs, Path(tmp), args.device)
            s = summarize(curves)
            minutes = (time.perf_counter() - start) / 60
        terrain = f"{s['terrain_late']:.2f}/{s['terrain_max']:.0f}" if "terrain_late" in s else "-"
        print(
            f"{task:36} {s['early']:9.1f} {s['late']:9.1f} {s['ratio']:10.2f} "
            f"{s['track_late']:6.3f} {terrain:>8} {minutes:5.1f}"
        )
        if args.json_out is not None:
            row = dict(
                s,
                task=task,
                device=args.device,
                num_envs=args.num_envs,
                iterations=args.iterations,
                minutes=minutes,
            )
            with args.json_out.open("a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

"""Training curve of a motion-tracking run from its tensorboard events: CSV + PNG.

    uv run python bench/tracking_curve.py logs/rsl_rl/g1_tracking/<run> --out docs/results/g1_tracking_squat_cpu

Writes <out>.csv (iteration, wall_time_s, error_body_pos_m, error_anchor_pos_m,
error_joint_pos_rad, mean_episode_length, motion_ended, mean_reward, steps_per_s) and <out>.png
(mean body position error and episode length against wall time), and prints when the 10-iteration
mean body position error first went under `--target` m. The errors are the motion command's
episode means (`Metrics/motion/*`, logged as envs reset); `motion_ended` is rsl-rl's mean of
`Episode_Termination/motion_ended`, the number of envs per reset step that reached the motion's
last frame (a count, not a fraction).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import training_curve  # bench/training_curve.py (this script's folder is on sys.path)

TAGS = {
    "error_body_pos_m": "Metrics/motion/error_body_pos",
    "error_anchor_pos_m": "Metrics/motion/error_anchor_pos",
    "error_joint_pos_rad": "Metrics/motion/error_joint_pos",
    "mean_episode_length": "Train/mean_episode_length",
    "motion_ended": "Episode_Termination/motion_ended",
    "mean_reward": "Train/mean_reward",
    "steps_per_s": "Perf/total_fps",
}


def load(run: Path) -> dict[str, np.ndarray]:
    return training_curve.load(run, TAGS, TAGS["mean_episode_length"])


def smooth(values: np.ndarray, n: int = 10) -> np.ndarray:
    out = np.convolve(np.nan_to_num(values), np.ones(n) / n, mode="full")[: len(values)]
    out[: n - 1] = np.nan
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("run", type=Path, help="run folder with the tensorboard events file")
    parser.add_argument("--out", type=Path, required=True, help="output path without extension")
    parser.add_argument("--target", type=float, default=0.05, help="body position error, m")
    parser.add_argument(
        "--title", default="Mjlab-Tracking-Flat-Unitree-G1 (synthetic squat), 2-core CPU"
    )
    args = parser.parse_args()

    data = load(args.run)
    training_curve.write_csv(data, args.out.with_suffix(".csv"))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    minutes = data["wall_time_s"] / 60
    err = data["error_body_pos_m"] * 100
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    ax[0].plot(minutes, err, alpha=0.35, label="per iteration")
    ax[0].plot(minutes, smooth(err), label="10-iteration mean")
    ax[0].axhline(args.target * 100, color="k", ls="--", lw=1, label=f"{args.target * 100:g} cm")
    ax[0].set(xlabel="wall time (min)", ylabel="mean body position error (cm)")
    ax[0].legend(loc="upper right")
    ax[1].plot(minutes, data["mean_episode_length"], color="tab:green")
    ax[1].set(xlabel="wall time (min)", ylabel="mean episode length (steps)")
    fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.out.with_suffix(".png"), dpi=110)

    mean = smooth(data["error_body_pos_m"])
    print(
        f"{len(minutes)} iterations over {minutes[-1]:.1f} min; last 10-iteration body position "
        f"error {100 * mean[-1]:.2f} cm, episode length {data['mean_episode_length'][-1]:.0f} steps"
    )
    hit = np.nonzero(np.nan_to_num(mean, nan=np.inf) < args.target)[0]
    if len(hit):
        i = hit[0]
        print(
            f"body position error under {args.target * 100:g} cm at iteration "
            f"{int(data['iteration'][i])}, {minutes[i]:.1f} min"
        )
    else:
        print(f"body position error under {args.target * 100:g} cm: not reached")


if __name__ == "__main__":
    main()

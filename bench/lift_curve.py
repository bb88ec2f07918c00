"""Success-rate curve of a cube-lift run from its tensorboard events: CSV + PNG.

    uv run python bench/lift_curve.py logs/rsl_rl/franka_lift/<run> --out docs/results/franka_lift_cpu

Writes <out>.csv (iteration, wall_time_s, success, lifted, error_pos_m, reaching, grasping,
lifting, mean_episode_length, mean_reward, steps_per_s) and <out>.png (success and lifted rates
and the cube's distance to its target against wall time), and prints when the 10-iteration
means of the lifted and success rates first reached `--target`. `success` and `lifted` are the
lift command's metrics of the episodes that ended in an iteration: the share whose cube was, at
the episode's last measured step, within 5 cm of the target (`success`) or with its bottom 3 cm
off the table (`lifted`); `error_pos_m` is the episode mean of the cube's distance to the
target. Reward columns are episode sums per second.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import tracking_curve  # bench/tracking_curve.py: smooth()
import training_curve  # bench/training_curve.py (this script's folder is on sys.path)

TAGS = {
    "success": "Metrics/lift_target/success",
    "lifted": "Metrics/lift_target/lifted",
    "error_pos_m": "Metrics/lift_target/error_pos",
    "reaching": "Episode_Reward/reaching",
    "grasping": "Episode_Reward/grasping",
    "lifting": "Episode_Reward/lifting",
    "mean_episode_length": "Train/mean_episode_length",
    "mean_reward": "Train/mean_reward",
    "steps_per_s": "Perf/total_fps",
}


def load(run: Path) -> dict[str, np.ndarray]:
    return training_curve.load(run, TAGS, TAGS["mean_episode_length"])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("run", type=Path, help="run folder with the tensorboard events file")
    parser.add_argument("--out", type=Path, required=True, help="output path without extension")
    parser.add_argument("--target", type=float, default=0.5, help="success rate")
    parser.add_argument("--title", default="Mjlab-Lift-Cube-Franka (state), 2-core CPU")
    args = parser.parse_args()

    data = load(args.run)
    training_curve.write_csv(data, args.out.with_suffix(".csv"))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    minutes = data["wall_time_s"] / 60
    smooth = tracking_curve.smooth
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    for key, color in (("success", "tab:blue"), ("lifted", "tab:orange")):
        ax[0].plot(minutes, data[key], alpha=0.3, color=color)
        ax[0].plot(minutes, smooth(data[key]), color=color, label=f"{key} (10-iteration mean)")
    ax[0].set(xlabel="wall time (min)", ylabel="share of episodes", ylim=(-0.02, 1.02))
    ax[0].legend(loc="upper left")
    ax[1].plot(minutes, 100 * data["error_pos_m"], color="tab:green")
    ax[1].set(xlabel="wall time (min)", ylabel="cube distance to target, episode mean (cm)")
    fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.out.with_suffix(".png"), dpi=110)

    success, lifted = smooth(data["success"]), smooth(data["lifted"])
    print(
        f"{len(minutes)} iterations over {minutes[-1]:.1f} min; last 10-iteration success "
        f"{success[-1]:.2f}, lifted {lifted[-1]:.2f}, cube-target distance "
        f"{100 * data['error_pos_m'][-1]:.1f} cm"
    )
    for name, series in (("lifted", lifted), ("success", success)):
        hit = np.nonzero(np.nan_to_num(series, nan=-1.0) >= args.target)[0]
        if len(hit):
            i = hit[0]
            print(
                f"{name} rate {args.target:g} reached at iteration {int(data['iteration'][i])}, "
                f"{minutes[i]:.1f} min"
            )
        else:
            print(f"{name} rate {args.target:g}: not reached")


if __name__ == "__main__":
    main()

"""Training curve of a run from its tensorboard events: CSV + PNG, and the time to a target.

    uv run python bench/training_curve.py logs/rsl_rl/go1_velocity/<run> --out docs/results/go1_flat

Several run folders (a run and its resumptions, `train --agent.resume`) are joined in order: each
later run replaces the iterations from its first one on, and its wall time continues from there.
`--last-iteration N` ends the curve at the checkpoint `model_N.pt` it is shown for.

Writes <out>.csv (iteration, wall_time_s, track_lin_vel_xy_exp, track_ang_vel_z_exp,
mean_episode_length, mean_reward, steps_per_s; for a rough task also terrain_level, the mean
terrain level over envs, and terrain_level_max, the highest level that exists) and <out>.png,
and prints when the 10-iteration moving average of the linear-velocity tracking reward first
reached `--target` of its maximum (the term's weight: a perfect tracker earns weight x episode
seconds / episode seconds) and, on rough terrain, when the mean level first reached a quarter
and half of the highest.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np
import yaml
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

TAGS = {
    "track_lin_vel_xy_exp": "Episode_Reward/track_lin_vel_xy_exp",
    "track_ang_vel_z_exp": "Episode_Reward/track_ang_vel_z_exp",
    "mean_episode_length": "Train/mean_episode_length",
    "mean_reward": "Train/mean_reward",
    "steps_per_s": "Perf/total_fps",
    # The terrain curriculum of the rough tasks (absent on flat ground). Older runs logged only
    # the mean, under the term's own name.
    "terrain_level": ("Curriculum/terrain_levels/mean", "Curriculum/terrain_levels"),
    "terrain_level_max": "Curriculum/terrain_levels/highest",
}
TERRAIN_COLUMNS = ("terrain_level", "terrain_level_max")


def load(
    run: Path,
    tags: dict[str, str | tuple[str, ...]] = TAGS,
    base_tag: str = "Episode_Reward/track_lin_vel_xy_exp",
) -> dict[str, np.ndarray]:
    """The run's scalars `tags` ({column: tensorboard tag, or tags tried in order}) at the
    iterations `base_tag` was logged, with `iteration` and `wall_time_s` (from the first of
    them); NaN where missing."""
    acc = EventAccumulator(str(run), size_guidance={"scalars": 0})
    acc.Reload()
    base = acc.Scalars(base_tag)
    steps = np.array([e.step for e in base])
    t0 = base[0].wall_time
    out = {"iteration": steps, "wall_time_s": np.array([e.wall_time - t0 for e in base])}
    logged = set(acc.Tags()["scalars"])
    for name, tag in tags.items():
        found = next((t for t in ((tag,) if isinstance(tag, str) else tag) if t in logged), None)
        by_step = {e.step: e.value for e in acc.Scalars(found)} if found else {}
        out[name] = np.array([by_step.get(s, np.nan) for s in steps])
    return out


def highest_terrain_level(env: dict) -> int | None:
    """The highest terrain level of a run's env config (params/env.yaml as a dict): the
    generator's rows - 1; None on flat ground or without a terrain curriculum."""
    if not (env.get("curriculum") or {}).get("terrain_levels"):
        return None
    generator = ((env.get("scene") or {}).get("terrain") or {}).get("terrain_generator")
    return None if not generator else int(generator["num_rows"]) - 1


def add_terrain_levels(data: dict[str, np.ndarray], env: dict) -> dict[str, np.ndarray]:
    """`data` with the terrain columns kept for a rough task and dropped for a flat one. A run
    logged before `Curriculum/terrain_levels/highest` existed gets the highest level from its
    env config."""
    top = highest_terrain_level(env)
    if top is None or np.isnan(data["terrain_level"]).all():
        return {k: v for k, v in data.items() if k not in TERRAIN_COLUMNS}
    missing = np.isnan(data["terrain_level_max"])
    data["terrain_level_max"] = np.where(missing, float(top), data["terrain_level_max"])
    return data


def write_csv(data: dict[str, np.ndarray], path: Path) -> None:
    """One row per iteration, one column per series (6 significant digits); folders created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    names = list(data)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(names)
        for i in range(len(data["iteration"])):
            writer.writerow([f"{data[n][i]:.6g}" for n in names])


def join(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """One curve from a run and its resumptions (see the module docstring)."""
    out = parts[0]
    for part in parts[1:]:
        first = part["iteration"][0]
        keep = out["iteration"] < first
        # The resumed run's clock starts at its first logged iteration: that iteration's own
        # time is counted as the part's median iteration time.
        step = float(np.median(np.diff(part["wall_time_s"]))) if len(part["iteration"]) > 1 else 0.0
        offset = out["wall_time_s"][keep][-1] + step if keep.any() else 0.0
        out = {
            k: np.concatenate([out[k][keep], part[k] + (offset if k == "wall_time_s" else 0)])
            for k in out
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "run", type=Path, nargs="+", help="run folder(s) with the tensorboard events file"
    )
    parser.add_argument("--out", type=Path, required=True, help="output path without extension")
    parser.add_argument(
        "--target", type=float, default=0.8, help="fraction of the reward's maximum (plotted)"
    )
    parser.add_argument(
        "--title",
        default=None,
        help="figure title (default: the run's experiment folder, e.g. 'g1_velocity, 2-core CPU')",
    )
    parser.add_argument(
        "--last-iteration",
        type=int,
        default=None,
        help="drop what was logged after this iteration (that of the checkpoint the curve is "
        "shown for, when a run was stopped a few iterations past it)",
    )
    args = parser.parse_args()

    env = yaml.safe_load((args.run[-1] / "params" / "env.yaml").read_text())
    data = add_terrain_levels(join([load(run) for run in args.run]), env)
    if args.last_iteration is not None:
        keep = data["iteration"] <= args.last_iteration
        data = {key: value[keep] for key, value in data.items()}
    rough = "terrain_level" in data
    weight = float(env["rewards"]["track_lin_vel_xy_exp"]["weight"])
    track = data["track_lin_vel_xy_exp"] / weight
    smooth = np.convolve(np.nan_to_num(track), np.ones(10) / 10, mode="full")[: len(track)]
    smooth[:9] = np.nan

    write_csv(data, args.out.with_suffix(".csv"))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from mjlab.rl.progress import interp_extrapolated

    minutes = data["wall_time_s"] / 60
    fig, ax = plt.subplots(1, 3 if rough else 2, figsize=(16 if rough else 11, 4))
    ax[0].plot(minutes, track, alpha=0.35, label="per iteration")
    ax[0].plot(minutes, smooth, label="10-iteration mean")
    ax[0].axhline(args.target, color="k", ls="--", lw=1, label=f"{args.target:.0%} of max")
    ax[0].set(xlabel="wall time (min)", ylabel="lin. velocity tracking / max", ylim=(0, 1.05))
    ax[0].legend(loc="lower right")
    ax[1].plot(minutes, data["mean_episode_length"], color="tab:green")
    ax[1].set(xlabel="wall time (min)", ylabel="mean episode length (steps)")
    if rough:
        ax[2].plot(minutes, data["terrain_level"], color="tab:brown", label="mean over envs")
        ax[2].plot(minutes, data["terrain_level_max"], "k--", lw=1, label="highest level")
        ax[2].set(xlabel="wall time (min)", ylabel="terrain level", ylim=(0, None))
        ax[2].legend(loc="lower right")
    # Continued linearly past the run (np.interp would clamp every outside tick onto one
    # spot), ticked only within it.
    top = ax[0].secondary_xaxis(
        "top",
        functions=(
            lambda m: interp_extrapolated(m, minutes, data["iteration"]),
            lambda i: interp_extrapolated(i, data["iteration"], minutes),
        ),
    )
    first, last = data["iteration"][0], data["iteration"][-1]
    top.set_xticks(
        [
            t
            for t in MaxNLocator(nbins=5, integer=True).tick_values(first, last)
            if first <= t <= last
        ]
    )
    top.set_xlabel("iteration")
    fig.suptitle(args.title or f"{Path(args.run[0]).resolve().parent.name}, 2-core CPU")
    fig.tight_layout()
    fig.savefig(args.out.with_suffix(".png"), dpi=110)

    print(
        f"{len(track)} iterations over {minutes[-1]:.1f} min; final tracking {smooth[-1]:.3f} of max"
    )
    max_len = float(env["episode_length_s"]) / (
        float(env["sim"]["mujoco"]["timestep"]) * int(env["decimation"])
    )
    length = data["mean_episode_length"]
    milestones = [
        ("mean episode length passed half its maximum", length, 0.5 * max_len),
        ("tracking passed 50 % of max", smooth, 0.5),
        (f"tracking passed {args.target:.0%} of max", smooth, args.target),
    ]
    if rough:
        highest = float(np.nanmax(data["terrain_level_max"]))
        level = data["terrain_level"]
        print(
            f"mean terrain level: final {level[-1]:.2f}, peak {np.nanmax(level):.2f} "
            f"of {highest:.0f}"
        )
        milestones += [
            ("mean terrain level passed a quarter of the highest", level, highest / 4),
            ("mean terrain level passed half of the highest", level, highest / 2),
        ]
    for label, series, level in milestones:
        hit = np.nonzero(np.nan_to_num(series) >= level)[0]
        if len(hit):
            i = hit[0]
            print(f"{label} at iteration {int(data['iteration'][i])}, {minutes[i]:.1f} min")
        else:
            print(f"{label}: not reached")


if __name__ == "__main__":
    main()

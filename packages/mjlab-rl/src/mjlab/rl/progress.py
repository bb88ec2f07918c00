"""Console progress of a training run and its training curve (PNG + CSV in the run folder).

On a terminal, one line is rewritten in place each iteration; when the output is a file or a
pipe, a plain line (no ANSI codes) is printed every `every` iterations and at the last one.
`train --verbose` keeps rsl-rl's full per-iteration block instead. `train` and
`train-rlightning` both use `TrainingProgress` and `write_training_curve`.
"""

from __future__ import annotations

import csv
import math
import sys
import time
from pathlib import Path
from typing import IO, Any

CURVE_NAME = "training_curve"
"""`<run folder>/training_curve.png` and `.csv`."""


def _eta(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def _rate(value: float) -> str:
    return f"{value / 1000:.1f}k" if value >= 1000 else f"{value:.0f}"


class TrainingProgress:
    """One progress line per iteration (live on a terminal) and the records of the curve.

    Args:
        total: iterations of the run (for the count and the ETA).
        headline: name of the task's key reward term (shown, and plotted), or None.
        stream: where to print (default sys.stdout).
        live: rewrite one line in place (default: `stream.isatty()`).
        every: without `live`, print every `every` iterations (default: about 20 lines a run).
        prefix: the line's tag, e.g. "[mjlab]".
        start: the first iteration of this run (a resumed run starts past 0).
        quiet: record the curve only, print nothing (`--verbose` prints its own lines).
    """

    def __init__(
        self,
        total: int,
        headline: str | None = None,
        stream: IO[str] | None = None,
        live: bool | None = None,
        every: int | None = None,
        prefix: str = "[mjlab]",
        start: int = 0,
        quiet: bool = False,
    ) -> None:
        self.quiet = quiet
        self.total = max(int(total), 1)
        self.start = int(start)
        self.headline = headline
        self.stream = stream if stream is not None else sys.stdout
        isatty = getattr(self.stream, "isatty", None)
        self.live = bool(isatty and isatty()) if live is None else live
        self.every = every or max(1, math.ceil((self.total - self.start) / 20))
        self.prefix = prefix
        self.records: list[dict[str, float]] = []
        """One dict per iteration: iteration, wall_time_s, steps_per_s, mean_reward,
        mean_episode_length, collect_s and update_s (when given) and each logged
        `Episode_Reward/<term>` (as `reward/<term>`)."""
        self._start = time.monotonic()
        self._width = 0
        self._done = 0

    def update(
        self,
        iteration: int,
        steps_per_s: float,
        mean_reward: float | None,
        mean_episode_length: float | None,
        terms: dict[str, float] | None = None,
        collect_s: float | None = None,
        update_s: float | None = None,
    ) -> None:
        """Record one finished iteration and show it. `terms`: `{term: episode value}` of the
        reward terms (the `Episode_Reward/<term>` log values); `collect_s` / `update_s`: the
        iteration's rollout (env steps and policy inference) and PPO update times, s."""
        self._done += 1
        wall = time.monotonic() - self._start
        record: dict[str, float] = {
            "iteration": float(iteration),
            "wall_time_s": wall,
            "steps_per_s": float(steps_per_s),
            "mean_reward": math.nan if mean_reward is None else float(mean_reward),
            "mean_episode_length": (
                math.nan if mean_episode_length is None else float(mean_episode_length)
            ),
        }
        if collect_s is not None and update_s is not None:
            record["collect_s"] = float(collect_s)
            record["update_s"] = float(update_s)
        for name, value in (terms or {}).items():
            record[f"reward/{name}"] = float(value)
        self.records.append(record)
        left = max(self.total - self.start - self._done, 0)
        eta = wall / self._done * left
        parts = [
            f"{self.prefix} it {iteration + 1}/{self.total}",
            f"{_rate(steps_per_s)} steps/s",
        ]
        if collect_s is not None and update_s is not None:
            parts.append(f"collect {collect_s:.2f}s + update {update_s:.2f}s")
        parts.append(f"ETA {_eta(eta)}")
        if mean_reward is not None:
            parts.append(f"reward {mean_reward:.3g}")
        if mean_episode_length is not None:
            parts.append(f"ep len {mean_episode_length:.0f}")
        if self.headline and f"reward/{self.headline}" in record:
            parts.append(f"{self.headline} {record[f'reward/{self.headline}']:.3g}")
        line = " | ".join(parts)
        if self.quiet:
            return
        if self.live:
            pad = max(self._width - len(line), 0)
            self.stream.write("\r" + line + " " * pad)
            self._width = len(line)
            self.stream.flush()
        elif self._done % self.every == 0 or left == 0 or self._done == 1:
            print(line, file=self.stream, flush=True)

    def close(self) -> None:
        """End the live line (call once, after the last iteration)."""
        if self.live and self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0


def headline_term(env: Any) -> str | None:
    """The reward term with the largest positive weight of an mjlab env (its headline), or
    None when it has none."""
    manager = getattr(getattr(env, "unwrapped", env), "reward_manager", None)
    if manager is None:
        return None
    weights = {
        name: float(term.weight)
        for name, term in manager.cfg.items()
        if term is not None and float(term.weight) > 0
    }
    return max(weights, key=weights.__getitem__) if weights else None


def write_training_curve(
    records: list[dict[str, float]],
    folder: str | Path,
    title: str = "",
    headline: str | None = None,
) -> Path | None:
    """Write `<folder>/training_curve.csv` and `.png`: mean reward, mean episode length and the
    reward terms (the headline first, at most 4) against iterations (bottom axis) and wall time
    (top axis). Returns the PNG's path, or None when there is nothing to plot.
    """
    if not records:
        return None
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    names = list(dict.fromkeys(k for r in records for k in r))
    with open(folder / f"{CURVE_NAME}.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(names)
        for r in records:
            writer.writerow([f"{r.get(n, math.nan):.6g}" for n in names])

    # A Figure with its own Agg canvas: pyplot's global backend (a notebook's) is left alone.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    it = [r["iteration"] for r in records]
    seconds = [r["wall_time_s"] for r in records]
    terms = [n for n in names if n.startswith("reward/")]
    if headline and f"reward/{headline}" in terms:
        terms.remove(f"reward/{headline}")
        terms.insert(0, f"reward/{headline}")
    panels = [("mean_reward", "mean episode reward"), ("mean_episode_length", "episode length")]
    fig = Figure(figsize=(14 if terms else 10, 3.8))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 3 if terms else 2)
    for ax, (key, label) in zip(axes, panels, strict=False):
        ax.plot(*_finite(it, [r.get(key, math.nan) for r in records]))
        ax.set(xlabel="iteration", ylabel=label)
    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6, integer=True))
    if terms:
        # Every term, each with its own line style and marker: terms that coincide (Cartpole's
        # alive and upright) stay visible one over the other.
        styles = ["-", "--", ":", "-."]
        for k, key in enumerate(terms[:_MAX_TERMS]):
            x, y = _finite(it, [r.get(key, math.nan) for r in records])
            axes[2].plot(
                x,
                y,
                linestyle=styles[k % len(styles)],
                marker="os^vDx"[k % 6] if len(x) <= 30 else None,
                markersize=4,
                label=key[len("reward/") :],
            )
        axes[2].set(xlabel="iteration", ylabel="episode reward term (per s)")
        axes[2].legend(fontsize=8)
    if len(it) > 1 and seconds[-1] > seconds[0]:
        for ax in axes:
            _wall_time_axis(ax, it, seconds)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out = folder / f"{CURVE_NAME}.png"
    fig.savefig(out, dpi=100)
    return out


_MAX_TERMS = 8
"""Reward terms drawn in the curve's third panel (the headline first)."""


def _finite(x: list[float], y: list[float]) -> tuple[list[float], list[float]]:
    """The points of (x, y) whose y is a number: an iteration in which no episode ended logs
    no term values (NaN), and the line joins its neighbours instead of breaking there."""
    keep = [i for i, v in enumerate(y) if v is not None and math.isfinite(v)]
    return [x[i] for i in keep], [y[i] for i in keep]


def wall_time_ticks(seconds: list[float]) -> tuple[str, float, list[float]]:
    """The unit of a curve's wall-time axis (s, min or h: whichever gives readable numbers for
    the run's length), seconds per unit, and at most 6 ticks in that unit within the run."""
    from matplotlib.ticker import MaxNLocator

    total = seconds[-1]
    unit, scale = (
        ("s", 1.0) if total < 180 else ("min", 60.0) if total < 3 * 3600 else ("h", 3600.0)
    )
    lo, hi = seconds[0] / scale, total / scale
    ticks = [float(v) for v in MaxNLocator(nbins=5).tick_values(lo, hi) if lo <= v <= hi]
    return unit, scale, ticks


def _wall_time_axis(ax: Any, it: list[float], seconds: list[float]) -> None:
    """A top axis with the wall time of the iterations below (`wall_time_ticks`)."""
    unit, scale, ticks = wall_time_ticks(seconds)
    t = [v / scale for v in seconds]
    top = ax.secondary_xaxis(
        "top",
        functions=(
            lambda i: interp_extrapolated(i, it, t),
            lambda v: interp_extrapolated(v, t, it),
        ),
    )
    top.set_xticks(ticks)
    top.set_xlabel(f"wall time ({unit})")


def interp_extrapolated(x: Any, xp: list[float], fp: list[float]) -> Any:
    """Piecewise-linear map through (xp, fp), continued linearly past both ends (clamped, every
    point outside the run would land on one spot)."""
    import numpy as np

    x, xp_, fp_ = (np.asarray(v, dtype=float) for v in (x, xp, fp))
    y = np.interp(x, xp_, fp_)
    lo = (fp_[1] - fp_[0]) / (xp_[1] - xp_[0]) if xp_[1] > xp_[0] else 0.0
    hi = (fp_[-1] - fp_[-2]) / (xp_[-1] - xp_[-2]) if xp_[-1] > xp_[-2] else 0.0
    y = np.where(x < xp_[0], fp_[0] + lo * (x - xp_[0]), y)
    return np.where(x > xp_[-1], fp_[-1] + hi * (x - xp_[-1]), y)

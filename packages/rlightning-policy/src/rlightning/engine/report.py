"""What an engine reports after each iteration, and the episode bookkeeping behind it."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch


@dataclass(kw_only=True)
class RolloutStats:
    """Statistics of one rollout of one worker."""

    num_steps: int
    """Environment steps collected (``num_steps_per_env * num_envs``)."""

    collect_time: float
    """Wall time of the rollout in seconds."""

    episode_rewards: list[float] = field(default_factory=list)
    """Undiscounted return of every episode that ended during the rollout."""

    episode_lengths: list[int] = field(default_factory=list)
    """Length in steps of every episode that ended during the rollout."""

    weights_version: int | None = None
    """Version of the weights the rollout ran (the Ray engine's broadcast count; None: not
    versioned)."""

    env_log: dict[str, float] = field(default_factory=dict)
    """Mean over the rollout's steps of each scalar in the env's ``extras["log"]``."""


@dataclass(kw_only=True)
class IterationReport:
    """One rollout -> update -> weight-sync iteration of an engine."""

    iteration: int
    """0-based iteration index."""

    num_steps: int
    """Environment steps collected in this iteration (all workers)."""

    total_steps: int
    """Environment steps collected since the engine started."""

    steps_per_second: float
    """``num_steps / (collect_time + learn_time)``."""

    collect_time: float
    """Seconds spent collecting (all workers in parallel for the Ray engine)."""

    learn_time: float
    """Seconds spent in the update and the weight sync."""

    mean_episode_reward: float
    """Mean undiscounted return over the last (up to) 100 finished episodes; NaN before any."""

    mean_episode_length: float
    """Mean length in steps over the same episodes; NaN before any."""

    losses: dict[str, float]
    """What the learner's ``train()`` returned (PPO losses, learning rate)."""

    env_log: dict[str, float] = field(default_factory=dict)
    """Mean of the env's ``extras["log"]`` scalars over the iteration."""

    def summary(self) -> str:
        """One console line."""
        return (
            f"it {self.iteration:4d} | steps/s {self.steps_per_second:9.0f} | "
            f"ep reward {self.mean_episode_reward:8.3f} | ep len {self.mean_episode_length:6.1f} | "
            + " ".join(f"{k} {v:.4g}" for k, v in self.losses.items())
        )


class EpisodeTracker:
    """Accumulates per-env returns and lengths; keeps the last ``window`` finished episodes.

    Args:
        num_envs: Number of sub-environments.
        device: Device of the reward/done tensors it will receive.
        window: How many finished episodes the running means cover.
    """

    def __init__(self, num_envs: int, device: torch.device | str, window: int = 100) -> None:
        self._reward_sum = torch.zeros(num_envs, device=device)
        self._length = torch.zeros(num_envs, dtype=torch.long, device=device)
        self.rewards: deque[float] = deque(maxlen=window)
        self.lengths: deque[int] = deque(maxlen=window)

    def update(self, rewards: torch.Tensor, dones: torch.Tensor) -> tuple[list[float], list[int]]:
        """Add one step of ``(N,)`` rewards and dones; return the episodes it finished."""
        self._reward_sum += rewards.reshape(-1).float()
        self._length += 1
        done_ids = dones.reshape(-1).bool().nonzero(as_tuple=False).flatten()
        finished_rewards = self._reward_sum[done_ids].tolist()
        finished_lengths = self._length[done_ids].tolist()
        self._reward_sum[done_ids] = 0.0
        self._length[done_ids] = 0
        self.rewards.extend(finished_rewards)
        self.lengths.extend(finished_lengths)
        return finished_rewards, finished_lengths

    def add_finished(self, rewards: list[float], lengths: list[int]) -> None:
        """Record episodes finished elsewhere (e.g. on a remote worker)."""
        self.rewards.extend(rewards)
        self.lengths.extend(lengths)

    @property
    def mean_reward(self) -> float:
        """Mean return of the kept episodes, NaN if none finished yet."""
        return sum(self.rewards) / len(self.rewards) if self.rewards else math.nan

    @property
    def mean_length(self) -> float:
        """Mean length of the kept episodes, NaN if none finished yet."""
        return sum(self.lengths) / len(self.lengths) if self.lengths else math.nan


def mean_logs(logs: list[dict[str, float]]) -> dict[str, float]:
    """Key-wise mean of several ``{name: value}`` dicts (keys missing from some are fine)."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for log in logs:
        for key, value in log.items():
            sums[key] = sums.get(key, 0.0) + value
            counts[key] = counts.get(key, 0) + 1
    return {key: sums[key] / counts[key] for key in sums}


def log_and_save(
    train_config: Any, report: IterationReport, save: Callable[[Path], None], last: bool
) -> None:
    """Print ``report`` and call ``save(path)`` when ``train_config`` (a ``TrainConfig``) asks.

    Checkpoints go to ``<save_dir>/model_<iteration>.pt`` every ``save_interval`` iterations and
    after the last one.
    """
    if train_config.log_interval and report.iteration % train_config.log_interval == 0:
        print(report.summary(), flush=True)
    saving = train_config.save_dir is not None and train_config.save_interval > 0
    if saving and (report.iteration % train_config.save_interval == 0 or last):
        save(Path(train_config.save_dir) / f"model_{report.iteration}.pt")

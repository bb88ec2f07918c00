"""The training loop both engines run: iterations, reports, logging and checkpoints.

An engine subclasses :class:`EngineLoop` and says only how one iteration collects and learns
(`run_iteration`, building its report with `_report`) and how a checkpoint is written
(`save_checkpoint`); `run` is the same for every engine.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rlightning.engine.report import EpisodeTracker, IterationReport, RolloutStats, log_and_save
from rlightning.policy.config import TrainConfig


class EngineLoop:
    """Iteration counting, episode statistics and the `run` loop shared by the engines."""

    train_config: TrainConfig

    def _init_loop(self) -> None:
        self.tracker = EpisodeTracker(1, "cpu")
        self.iteration = 0
        self.total_steps = 0

    def run_iteration(self) -> IterationReport:
        raise NotImplementedError

    def save_checkpoint(self, path: str | Path) -> None:
        raise NotImplementedError

    def _report(
        self,
        stats: list[RolloutStats],
        collect_time: float,
        learn_time: float,
        losses: dict[str, float],
        env_log: dict[str, float],
    ) -> IterationReport:
        """The report of the iteration just run (and the counters advanced past it)."""
        num_steps = sum(s.num_steps for s in stats)
        for s in stats:
            self.tracker.add_finished(s.episode_rewards, s.episode_lengths)
        self.total_steps += num_steps
        report = IterationReport(
            iteration=self.iteration,
            num_steps=num_steps,
            total_steps=self.total_steps,
            steps_per_second=num_steps / max(collect_time + learn_time, 1e-9),
            collect_time=collect_time,
            learn_time=learn_time,
            mean_episode_reward=self.tracker.mean_reward,
            mean_episode_length=self.tracker.mean_length,
            losses=losses,
            env_log=env_log,
        )
        self.iteration += 1
        return report

    def run(
        self,
        num_iterations: int | None = None,
        callback: Callable[[IterationReport], None] | None = None,
    ) -> list[IterationReport]:
        """Run iterations, printing and checkpointing as ``train_config`` says.

        Args:
            num_iterations: How many; ``None`` uses ``train_config.max_iterations``.
            callback: Called with each report (e.g. to log to a tracker).

        Returns:
            The reports, in order.
        """
        count = self.train_config.max_iterations if num_iterations is None else num_iterations
        reports = []
        for i in range(count):
            report = self.run_iteration()
            reports.append(report)
            log_and_save(self.train_config, report, self.save_checkpoint, i == count - 1)
            if callback is not None:
                callback(report)
        return reports

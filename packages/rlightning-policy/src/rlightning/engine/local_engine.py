"""Synchronous single-process engine: rollout -> update -> weight sync, one after the other."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch
from rsl_rl.env import VecEnv

from rlightning.engine.report import EpisodeTracker, IterationReport, log_and_save
from rlightning.engine.rollout_worker import RolloutWorker
from rlightning.policy.base_policy import PolicyRole
from rlightning.policy.config import PolicyConfig, TrainConfig
from rlightning.policy.rsl_rl_policy import RSLRLPolicy, env_meta_from_vec_env


class LocalEngine:
    """Train an :class:`RSLRLPolicy` in this process, with the actor/learner split kept.

    One EVAL policy collects ``num_steps_per_env`` steps from the env, the TRAIN policy runs one
    PPO update on them, and the learner's weights are pushed to the actor (through its idle gate
    and weight-update thread) before the next rollout. Semantics match rsl-rl's
    ``OnPolicyRunner.learn``.

    Args:
        env_factory: ``() -> VecEnv``; called once here.
        train_cfg: rsl-rl-lib ``train_cfg`` dict (``"algorithm"``, ``"actor"``, ``"critic"``,
            ``"obs_groups"``, ``"num_steps_per_env"``).
        train_config: Run settings; ``None`` means ``TrainConfig()``.
        device: Torch device of both policies; ``None``: CUDA if available, else CPU.
        env_id: Name of the env in every ``EnvRet``.

    Raises:
        ValueError: If ``train_cfg`` is not a valid rsl-rl train_cfg (see ``PolicyConfig``).
    """

    def __init__(
        self,
        env_factory: Callable[[], VecEnv],
        train_cfg: dict[str, Any],
        train_config: TrainConfig | None = None,
        *,
        device: str | None = None,
        env_id: str = "env_0",
    ) -> None:
        self.train_config = train_config if train_config is not None else TrainConfig()
        if self.train_config.seed is not None:
            torch.manual_seed(self.train_config.seed)
        self.env = env_factory()
        self.env_meta = env_meta_from_vec_env(self.env, env_id)
        policy_config = PolicyConfig(train_cfg=train_cfg, device=device)
        self.learner = RSLRLPolicy(policy_config, PolicyRole.TRAIN)
        self.learner.init_train(self.train_config, self.env_meta)
        self.actor = RSLRLPolicy(policy_config, PolicyRole.EVAL)
        self.actor.init_eval(env_meta=self.env_meta)
        self.sync_weights()
        self.worker = RolloutWorker(
            self.env,
            self.actor,
            int(train_cfg["num_steps_per_env"]),
            env_id,
            check_for_nan=bool(train_cfg.get("check_for_nan", True)),
        )
        self.tracker = EpisodeTracker(self.env.num_envs, "cpu")
        self.iteration = 0
        self.total_steps = 0

    def sync_weights(self) -> None:
        """Push the learner's weights to the actor and wait until they are loaded."""
        self.actor.push_weights(self.learner.get_trainable_parameters())
        self.actor.wait_for_weight_update_done()

    def run_iteration(self) -> IterationReport:
        """Collect one rollout, run one update, sync weights; return the iteration's report."""
        data, stats = self.worker.collect()
        start = time.perf_counter()
        self.learner.update_dataset(data)
        losses = self.learner.train()
        self.sync_weights()
        learn_time = time.perf_counter() - start
        self.tracker.add_finished(stats.episode_rewards, stats.episode_lengths)
        self.total_steps += stats.num_steps
        report = IterationReport(
            iteration=self.iteration,
            num_steps=stats.num_steps,
            total_steps=self.total_steps,
            steps_per_second=stats.num_steps / max(stats.collect_time + learn_time, 1e-9),
            collect_time=stats.collect_time,
            learn_time=learn_time,
            mean_episode_reward=self.tracker.mean_reward,
            mean_episode_length=self.tracker.mean_length,
            losses=losses,
            env_log=stats.env_log,
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
            log_and_save(self.train_config, report, self.learner.save_checkpoint, i == count - 1)
            if callback is not None:
                callback(report)
        return reports

    def close(self) -> None:
        """Stop the actor's weight-update thread."""
        self.actor.close()

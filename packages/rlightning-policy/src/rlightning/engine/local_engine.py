"""Synchronous single-process engine: rollout -> update -> weight sync, one after the other."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch
from rsl_rl.env import VecEnv

from rlightning.engine.loop import EngineLoop
from rlightning.engine.report import IterationReport
from rlightning.engine.rollout_worker import RolloutWorker
from rlightning.policy.base_policy import PolicyRole
from rlightning.policy.config import PolicyConfig, TrainConfig
from rlightning.policy.rsl_rl_policy import RSLRLPolicy, env_meta_from_vec_env


class LocalEngine(EngineLoop):
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
        self._init_loop()

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
        return self._report([stats], stats.collect_time, learn_time, losses, stats.env_log)

    def save_checkpoint(self, path) -> None:
        """Atomic checkpoint of the learner's modules."""
        self.learner.save_checkpoint(path)

    def close(self) -> None:
        """Stop the actor's weight-update thread."""
        self.actor.close()

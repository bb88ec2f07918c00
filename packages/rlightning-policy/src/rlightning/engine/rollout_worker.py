"""One environment plus one EVAL policy, producing ``(T, N)`` datasets for a learner."""

from __future__ import annotations

import time
from typing import Any

import torch
from rsl_rl.env import VecEnv
from rsl_rl.utils import check_nan
from tensordict import TensorDict

from rlightning.engine.report import EpisodeTracker, RolloutStats, mean_logs
from rlightning.policy.base_policy import BasePolicy, PolicyRole
from rlightning.types import EnvRet


def _scalar_log(log: Any) -> dict[str, float]:
    """Scalars of an ``extras["log"]`` dict as floats (tensors are averaged; others skipped)."""
    out: dict[str, float] = {}
    if not isinstance(log, dict):
        return out
    for key, value in log.items():
        if isinstance(value, torch.Tensor) and value.numel() > 0:
            out[key] = value.float().mean().item()
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = float(value)
    return out


class RolloutWorker:
    """Steps an rsl-rl ``VecEnv`` with an EVAL policy and packs the transitions.

    The env is never reset by the worker: rsl-rl envs reset finished sub-environments inside
    ``step``, so consecutive rollouts continue the same episodes (as ``OnPolicyRunner`` does).

    Args:
        env: The environment (``num_envs``, ``get_observations``, ``step``).
        policy: An initialized EVAL policy (``rollout`` / ``process_transition``).
        num_steps_per_env: Steps per rollout ``T``.
        env_id: Name used in every ``EnvRet``.
        check_for_nan: Raise when the env returns NaN observations or rewards.

    Raises:
        ValueError: If ``policy`` is not an EVAL policy or ``num_steps_per_env`` < 1.
    """

    def __init__(
        self,
        env: VecEnv,
        policy: BasePolicy,
        num_steps_per_env: int,
        env_id: str = "env_0",
        check_for_nan: bool = True,
    ) -> None:
        if policy.role_type != PolicyRole.EVAL:
            raise ValueError("RolloutWorker needs an EVAL policy (init_eval), not a learner.")
        if num_steps_per_env < 1:
            raise ValueError(f"num_steps_per_env must be >= 1, got {num_steps_per_env}.")
        self.env = env
        self.policy = policy
        self.num_steps_per_env = num_steps_per_env
        self.env_id = env_id
        self.check_for_nan = check_for_nan
        self.tracker = EpisodeTracker(env.num_envs, env.device)
        self._env_ret = EnvRet(env_id, observation=env.get_observations())

    def collect(self) -> tuple[TensorDict, RolloutStats]:
        """Run ``num_steps_per_env`` steps.

        Returns:
            The dataset (``TensorDict`` with batch size ``(T, N)`` of the policy's
            ``postprocess`` fields, on the policy's device) and the rollout's statistics.
        """
        start = time.perf_counter()
        transitions: list[TensorDict] = []
        logs: list[dict[str, float]] = []
        finished_rewards: list[float] = []
        finished_lengths: list[int] = []
        num_envs = self.env.num_envs
        env_ret = self._env_ret
        for _ in range(self.num_steps_per_env):
            response = self.policy.rollout(env_ret)
            observations, rewards, dones, extras = self.env.step(
                response.actions.to(self.env.device)
            )
            if self.check_for_nan:
                check_nan(observations, rewards, dones)
            dones = dones.bool()
            time_outs = extras.get("time_outs")
            time_outs = torch.zeros_like(dones) if time_outs is None else time_outs.bool()
            env_ret = EnvRet(
                self.env_id,
                observation=observations,
                last_reward=rewards,
                last_terminated=dones & ~time_outs,
                last_truncated=time_outs,
                info=extras.get("log", {}),
            )
            transition = self.policy.process_transition(env_ret, response)
            transitions.append(
                TensorDict({k: transition[k] for k in transition}, batch_size=[num_envs])
            )
            ended_rewards, ended_lengths = self.tracker.update(rewards, dones | time_outs)
            finished_rewards += ended_rewards
            finished_lengths += ended_lengths
            logs.append(_scalar_log(env_ret.info))
        self._env_ret = env_ret
        data: TensorDict = torch.stack(transitions, dim=0)  # type: ignore[arg-type,assignment]
        stats = RolloutStats(
            num_steps=self.num_steps_per_env * num_envs,
            collect_time=time.perf_counter() - start,
            episode_rewards=finished_rewards,
            episode_lengths=finished_lengths,
            env_log=mean_logs(logs),
        )
        return data, stats

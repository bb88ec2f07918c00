"""Reward manager: weighted sum of terms, scaled by step_dt, with episode sums."""

from __future__ import annotations

import torch

from mjlab.managers.manager_base import ManagerBase
from mjlab.managers.manager_term_config import RewardTermCfg


class RewardManager(ManagerBase):
    """reward = sum_i weight_i * term_i * step_dt. Episode sums are logged on reset as
    `Episode_Reward/<term>`: the episode's sum divided by the max episode length in seconds
    (Isaac Lab's convention, so values are comparable across episode lengths)."""

    kind = "Reward term"

    def __init__(self, cfg: dict[str, RewardTermCfg | None], env):
        super().__init__(cfg, env)
        n = env.num_envs
        for name, term in self.cfg.items():
            if term.weight is None:
                raise ValueError(
                    f"Reward term '{name}' has no weight: set RewardTermCfg(weight=...)."
                )
            self.prepare_term(name, term)
            value = term.func(env, **term.params)
            self.check_output(
                name, value, (n,), "float", "Reduce over the last dimension, e.g. .sum(dim=1)."
            )
        self.terms = {k: v for k, v in self.cfg.items() if v.weight != 0.0}
        self._episode_sums = {k: torch.zeros(n, device=env.device) for k in self.terms}
        self._step_reward = torch.zeros(n, len(self.terms), device=env.device)
        self._reward_buf = torch.zeros(n, device=env.device)

    @property
    def active_terms(self) -> list[str]:
        return list(self.terms)

    @property
    def step_reward(self) -> torch.Tensor:
        """(num_envs, len(active_terms)) each term's weighted value of the last step, per
        second (weight * term; the reward adds it times step_dt)."""
        return self._step_reward

    def compute(self, dt: float) -> torch.Tensor:
        """(num_envs,) reward of this step; non-finite term values count as 0."""
        self._reward_buf.zero_()
        for i, (name, term) in enumerate(self.terms.items()):
            value = torch.nan_to_num(
                term.func(self.env, **term.params), nan=0.0, posinf=0.0, neginf=0.0
            )
            value = value * (term.weight * dt)
            self._reward_buf += value
            self._episode_sums[name] += value
            self._step_reward[:, i] = value / dt
        return self._reward_buf

    def reset(self, env_ids: torch.Tensor) -> dict[str, float]:
        log: dict[str, float] = {}
        seconds = self.env.max_episode_length_s
        for name, term in self.terms.items():
            log[f"Episode_Reward/{name}"] = (
                self._episode_sums[name][env_ids].mean() / seconds
            ).item()
            self._episode_sums[name][env_ids] = 0.0
            self.reset_term(term, env_ids)
        return log

"""`RslRlVecEnvWrapper`: a `ManagerBasedRlEnv` seen as an rsl-rl-lib `VecEnv`."""

from __future__ import annotations

import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from mjlab.envs import ManagerBasedRlEnv


class RslRlVecEnvWrapper(VecEnv):
    """Adapts a `ManagerBasedRlEnv` to rsl-rl-lib's `VecEnv` contract.

    - `get_observations()` returns the env's last computed observation groups (`env.obs_buf`,
      also after `env.set_state`) as a `TensorDict` (batch size (num_envs,)); it has no side
      effects (history buffers do not move).
    - `step(actions)` returns `(obs, rewards, dones, extras)`; `dones = terminated | truncated`;
      `extras["time_outs"]` is the truncation mask (for value bootstrapping) unless the task is
      finite-horizon; `extras["log"]` carries the env's logs.
    - `episode_length_buf` is the env's and can be set (rsl-rl's `init_at_random_ep_len`).

    Args:
        env: the environment (reset here once so that observations exist).
        clip_actions: if set, actions are clamped to [-clip_actions, clip_actions].

    Raises:
        ValueError: clip_actions <= 0, or an observation group that is not concatenated.
    """

    def __init__(self, env: ManagerBasedRlEnv, clip_actions: float | None = None):
        if clip_actions is not None and clip_actions <= 0:
            raise ValueError(f"clip_actions must be > 0 or None, got {clip_actions}.")
        self.env = env
        self.clip_actions = clip_actions
        self.num_envs = env.num_envs
        self.device = env.device
        self.max_episode_length = env.max_episode_length
        self.num_actions = env.action_manager.total_action_dim
        self.cfg = env.cfg
        om = env.observation_manager
        flat = sorted(set(om.term_dims) - set(om.group_dims))
        if flat:
            raise ValueError(
                f"Observation groups {flat} are not concatenated; rsl-rl needs "
                "ObservationGroupCfg(concatenate_terms=True)."
            )
        env.reset()

    @property
    def unwrapped(self) -> ManagerBasedRlEnv:
        return self.env

    @property
    def episode_length_buf(self) -> torch.Tensor:
        return self.env.episode_length_buf

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        self.env.episode_length_buf = value

    @property
    def observation_space(self):
        return self.env.observation_space

    @property
    def action_space(self):
        return self.env.action_space

    def seed(self, seed: int = -1) -> int:
        return self.env.seed(seed)

    def _to_tensordict(self, obs: dict) -> TensorDict:
        return TensorDict(dict(obs), batch_size=[self.num_envs], device=self.device)

    def get_observations(self) -> TensorDict:
        return self._to_tensordict(self.env.obs_buf)

    def reset(self) -> tuple[TensorDict, dict]:
        obs, extras = self.env.reset()
        return self._to_tensordict(obs), extras

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict]:
        if self.clip_actions is not None:
            actions = actions.clamp(-self.clip_actions, self.clip_actions)
        obs, rew, terminated, truncated, extras = self.env.step(actions)
        dones = (terminated | truncated).to(torch.long)
        if not self.env.cfg.is_finite_horizon:
            extras["time_outs"] = truncated
        return self._to_tensordict(obs), rew, dones, extras

    def close(self) -> None:
        self.env.close()

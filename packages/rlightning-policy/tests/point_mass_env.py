"""A small real task for the tests: batched 1-D point masses that must reach and hold a target.

Implements rsl-rl-lib's ``VecEnv`` interface the way mjlab's ``RslRlVecEnvWrapper`` does:
``get_observations()`` returns a ``TensorDict`` with groups ``"actor"`` and ``"critic"``, and
``step`` returns ``(obs, rewards (N,), dones (N,), extras)`` with ``extras["time_outs"]`` and
``extras["log"]``. Done envs are reset inside ``step``, so the returned observation of a done env
is already its new episode's first observation.
"""

from __future__ import annotations

import gymnasium as gym
import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict


class PointMassEnv(VecEnv):
    """Unit point masses on a line, pushed by a bounded force toward a random target.

    State per env: position ``x`` (m), velocity ``v`` (m/s), target ``x*`` (m).
    Action: force in N, clipped to [-1, 1], on a 1 kg mass with linear damping.
    Reward per step: ``exp(-(x - x*)^2 / 0.05)`` (1 when on target), 0 on leaving |x| <= bound.
    Episodes end when ``|x| > bound`` (terminated) or after ``max_episode_length`` steps
    (time-out).

    Args:
        num_envs: Number of point masses.
        max_episode_length: Episode length in steps before a time-out.
        dt: Integration step in seconds.
        device: Torch device of every tensor.
        seed: Seed of the env's own random generator (starts and targets).
        bound: Position limit in m; crossing it terminates the episode.
    """

    num_actions = 1

    def __init__(
        self,
        num_envs: int = 64,
        max_episode_length: int = 100,
        dt: float = 0.05,
        device: str = "cpu",
        seed: int = 0,
        bound: float = 2.0,
    ) -> None:
        self.num_envs = num_envs
        self.max_episode_length = max_episode_length
        self.dt = dt
        self.bound = bound
        self.device = device
        self.cfg = {"num_envs": num_envs, "max_episode_length": max_episode_length, "dt": dt}
        self.single_action_space = gym.spaces.Box(-1.0, 1.0, shape=(1,))
        self.generator = torch.Generator(device=device).manual_seed(seed)
        self.pos = torch.zeros(num_envs, device=device)
        self.vel = torch.zeros(num_envs, device=device)
        self.target = torch.zeros(num_envs, device=device)
        self.episode_length_buf = torch.zeros(num_envs, dtype=torch.long, device=device)
        self._reset(torch.arange(num_envs, device=device))

    def _uniform(self, count: int, low: float, high: float) -> torch.Tensor:
        unit = torch.rand(count, generator=self.generator, device=self.device)
        return low + (high - low) * unit

    def _reset(self, env_ids: torch.Tensor) -> None:
        count = int(env_ids.numel())
        self.pos[env_ids] = self._uniform(count, -1.0, 1.0)
        self.vel[env_ids] = 0.0
        self.target[env_ids] = self._uniform(count, -1.0, 1.0)
        self.episode_length_buf[env_ids] = 0

    def get_observations(self) -> TensorDict:
        error = self.pos - self.target
        actor = torch.stack([error, self.vel], dim=-1)
        critic = torch.stack([error, self.vel, self.pos, self.target], dim=-1)
        return TensorDict({"actor": actor, "critic": critic}, batch_size=[self.num_envs])

    def step(self, actions: torch.Tensor) -> tuple[TensorDict, torch.Tensor, torch.Tensor, dict]:
        force = actions[:, 0].clamp(-1.0, 1.0)
        self.vel += (force - 0.5 * self.vel) * self.dt
        self.pos += self.vel * self.dt
        self.episode_length_buf += 1

        terminated = self.pos.abs() > self.bound
        time_outs = (self.episode_length_buf >= self.max_episode_length) & ~terminated
        error = self.pos - self.target
        rewards = torch.exp(-error.square() / 0.05) * (~terminated).float()
        dones = terminated | time_outs
        log = {"Metrics/abs_position_error": error.abs().mean()}

        done_ids = dones.nonzero(as_tuple=False).flatten()
        if done_ids.numel() > 0:
            self._reset(done_ids)
        extras = {"time_outs": time_outs, "log": log}
        return self.get_observations(), rewards, dones, extras


def make_point_mass_env(
    num_envs: int = 64, max_episode_length: int = 100, seed: int = 0
) -> PointMassEnv:
    """Env factory for the engines (picklable by value once registered with cloudpickle)."""
    return PointMassEnv(num_envs=num_envs, max_episode_length=max_episode_length, seed=seed)


def point_mass_train_cfg(
    num_steps_per_env: int = 24, obs_normalization: bool = False, **algorithm: object
) -> dict:
    """An rsl-rl-lib 5 ``train_cfg`` for the point mass (small nets, tuned for a few seconds);
    ``algorithm`` entries override the PPO arguments."""
    model = {"class_name": "MLPModel", "hidden_dims": [32, 32], "activation": "elu"}
    return {
        "num_steps_per_env": num_steps_per_env,
        "obs_groups": {"actor": ["actor"], "critic": ["critic"]},
        "actor": {
            **model,
            "obs_normalization": obs_normalization,
            "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 1.0},
        },
        "critic": {**model, "obs_normalization": obs_normalization},
        "algorithm": {
            "class_name": "PPO",
            "num_learning_epochs": 5,
            "num_mini_batches": 4,
            "learning_rate": 1e-3,
            "schedule": "adaptive",
            "gamma": 0.98,
            "lam": 0.95,
            "entropy_coef": 0.0,
            "desired_kl": 0.01,
            "max_grad_norm": 1.0,
            "value_loss_coef": 1.0,
            "use_clipped_value_loss": True,
            "clip_param": 0.2,
            **algorithm,
        },
    }


def mean_abs_error_of_deterministic_policy(
    policy_actor: torch.nn.Module, env: PointMassEnv, steps: int
) -> float:
    """Run the actor's mean action for ``steps`` steps; mean |x - x*| over the last quarter."""
    errors = []
    obs = env.get_observations()
    with torch.inference_mode():
        for _ in range(steps):
            obs, _, _, _ = env.step(policy_actor(obs))
            errors.append((env.pos - env.target).abs().mean().item())
    tail = errors[-max(1, steps // 4) :]
    return sum(tail) / len(tail)


__all__ = [
    "PointMassEnv",
    "make_point_mass_env",
    "mean_abs_error_of_deterministic_policy",
    "point_mass_train_cfg",
]

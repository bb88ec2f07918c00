"""Velocity command with heading control (legged_gym / Isaac Lab semantics)."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from mjlab.managers.command_manager import CommandTerm
from mjlab.managers.manager_term_config import CommandTermCfg
from mjlab.utils.config import Config
from mjlab.utils.math import rand, sample_uniform, wrap_to_pi


@dataclass(kw_only=True)
class VelocityRanges(Config):
    """Sampling ranges of the base velocity command (base frame)."""

    lin_vel_x: tuple[float, float] = (-1.0, 1.0)
    """Forward velocity, m/s."""
    lin_vel_y: tuple[float, float] = (-1.0, 1.0)
    """Lateral velocity, m/s."""
    ang_vel_z: tuple[float, float] = (-1.0, 1.0)
    """Yaw rate, rad/s (the bound of heading control's output too)."""
    heading: tuple[float, float] | None = (-3.141592653589793, 3.141592653589793)
    """Target heading, rad, world frame (used with heading_command)."""


class UniformVelocityCommand(CommandTerm):
    """`command`: (num_envs, 3) = (vx m/s, vy m/s, wz rad/s) in the base frame.

    Standing envs get zeros. With `heading_command`, a fraction of envs track a sampled world
    heading: wz = clip(k * wrap(heading_target - heading), ang_vel_z range).
    Metrics (episode means): `error_vel_xy` m/s and `error_vel_yaw` rad/s.
    """

    cfg: UniformVelocityCommandCfg
    components = ("lin_vel_x", "lin_vel_y", "ang_vel_z")

    def __init__(self, cfg: UniformVelocityCommandCfg, env):
        super().__init__(cfg, env)
        self.robot = env.scene[cfg.asset_name]
        n, dev = self.num_envs, self.device
        self.vel_command_b = torch.zeros(n, 3, device=dev)
        self.heading_target = torch.zeros(n, device=dev)
        self.is_heading_env = torch.zeros(n, dtype=torch.bool, device=dev)
        self.is_standing_env = torch.zeros(n, dtype=torch.bool, device=dev)
        self.metrics["error_vel_xy"] = torch.zeros(n, device=dev)
        self.metrics["error_vel_yaw"] = torch.zeros(n, device=dev)

    @property
    def command(self) -> torch.Tensor:
        return self.vel_command_b

    def _rand(self, n: int, rng: tuple[float, float]) -> torch.Tensor:
        return sample_uniform(rng[0], rng[1], n, self.device, self.env.rng)

    def _resample(self, env_ids: torch.Tensor) -> None:
        r, n = self.cfg.ranges, len(env_ids)
        self.vel_command_b[env_ids, 0] = self._rand(n, r.lin_vel_x)
        self.vel_command_b[env_ids, 1] = self._rand(n, r.lin_vel_y)
        self.vel_command_b[env_ids, 2] = self._rand(n, r.ang_vel_z)
        u = rand((n, 2), self.device, self.env.rng)
        if self.cfg.heading_command and r.heading is not None:
            self.heading_target[env_ids] = self._rand(n, r.heading)
            self.is_heading_env[env_ids] = u[:, 0] <= self.cfg.rel_heading_envs
        self.is_standing_env[env_ids] = u[:, 1] <= self.cfg.rel_standing_envs

    def _update_command(self) -> None:
        if self.cfg.heading_command:
            ids = self.is_heading_env
            err = wrap_to_pi(self.heading_target - self.robot.data.heading_w)
            lo, hi = self.cfg.ranges.ang_vel_z
            wz = (self.cfg.heading_control_stiffness * err).clamp(lo, hi)
            self.vel_command_b[:, 2] = torch.where(ids, wz, self.vel_command_b[:, 2])
        # One masked_fill_ over the rows (the mask broadcast to the three columns).
        self.vel_command_b.masked_fill_(self.is_standing_env[:, None], 0.0)

    def _update_metrics(self) -> None:
        # Running episode mean of the tracking errors.
        data = self.robot.data
        err_xy = torch.linalg.vector_norm(
            self.vel_command_b[:, :2] - data.root_link_lin_vel_b[:, :2], dim=-1
        )
        err_yaw = (self.vel_command_b[:, 2] - data.root_link_ang_vel_b[:, 2]).abs()
        self._accumulate_episode_mean("error_vel_xy", err_xy)
        self._accumulate_episode_mean("error_vel_yaw", err_yaw)

    def reset(self, env_ids: torch.Tensor) -> dict[str, float]:
        log = super().reset(env_ids)
        self._update_command()
        return log


@dataclass(kw_only=True)
class UniformVelocityCommandCfg(CommandTermCfg):
    """Config of `UniformVelocityCommand`."""

    class_type: type = UniformVelocityCommand
    """The command term class."""
    asset_name: str = "robot"
    """Entity whose base velocity is commanded."""
    heading_command: bool = True
    """Track a sampled world heading in a fraction of envs (rel_heading_envs)."""
    heading_control_stiffness: float = 0.5
    """Proportional gain from heading error (rad) to yaw-rate command (rad/s)."""
    rel_heading_envs: float = 1.0
    """Fraction of envs that use heading control."""
    rel_standing_envs: float = 0.0
    """Fraction of envs commanded to stand still."""
    ranges: VelocityRanges = field(default_factory=VelocityRanges)
    """Sampling ranges."""

    def validate(self) -> None:
        super().validate()
        for name in ("rel_heading_envs", "rel_standing_envs"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ValueError(
                    f"UniformVelocityCommandCfg.{name} must be a fraction in [0, 1], got {value!r}."
                )

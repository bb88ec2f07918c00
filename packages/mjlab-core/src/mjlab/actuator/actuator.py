"""Runtime actuators: what an entity keeps per actuator config once the model is compiled.

An `Actuator` knows its joints (entity joint order), its ctrl columns and, for explicit or
delayed actuators, computes the ctrl of every physics step from the entity's targets
(`ActuatorCmd`) in batched torch code. Builtin actuators without delay never run here: the
entity writes their targets straight into ctrl.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch

from mjlab.actuator.actuator_cfg import ActuatorCfg, CommandField
from mjlab.utils.config import Config


@dataclass(kw_only=True)
class ActuatorCmd(Config):
    """Targets and joint state of one actuator's joints, each (num_envs, n) float32."""

    position_target: torch.Tensor
    """Joint position targets, rad (m for slides)."""
    velocity_target: torch.Tensor
    """Joint velocity targets, rad/s."""
    effort_target: torch.Tensor
    """Feed-forward efforts, N m."""
    pos: torch.Tensor
    """Current joint positions, rad."""
    vel: torch.Tensor
    """Current joint velocities, rad/s."""


class Actuator:
    """One actuator config applied to its joints.

    Args:
        cfg: the config.
        joint_ids: the selected joints, entity joint order.
        joint_names: their names.
    """

    param_names: ClassVar[tuple[str, ...]] = ()
    """Names of the per-joint parameters kept as (num_envs, n) tensors (for randomization)."""

    def __init__(self, cfg: ActuatorCfg, joint_ids: list[int], joint_names: list[str]):
        self.cfg = cfg
        self.joint_ids = list(joint_ids)
        self.joint_names = list(joint_names)
        self.delay: DelayBuffer | None = None
        self._value_names = list(joint_names)  # the config's whole selection (values resolve)
        self._keep = list(range(len(joint_ids)))

    def restrict(self, keep: list[int]) -> None:
        """Keep only the selected joints at positions `keep` (those a later config does not
        take over); per-joint values still resolve over the whole selection."""
        self._keep = list(keep)
        self.joint_ids = [self.joint_ids[p] for p in keep]
        self.joint_names = [self.joint_names[p] for p in keep]

    @property
    def needs_substep(self) -> bool:
        """Whether the entity must compute this actuator's ctrl before every physics step."""
        return self.cfg._explicit or self.cfg.has_delay

    def initialize(
        self,
        ctrl_ids: np.ndarray,
        num_envs: int,
        device: torch.device,
        generator: torch.Generator | None = None,
    ) -> None:
        """Bind to the compiled model: `ctrl_ids` are the global actuator ids of the joints;
        `generator` draws the delay lags (None: a private generator seeded with 0; torch's
        global generator is never used)."""
        self.num_envs, self.device = num_envs, device
        self.ctrl_ids = torch.as_tensor(ctrl_ids, device=device)
        self._joint_index = torch.as_tensor(self.joint_ids, device=device)
        values = self.cfg._per_joint(self._value_names)
        for name in self.param_names:
            v = values.get(name)
            v = None if v is None else [v[p] for p in self._keep]
            v = (
                [np.inf if name == "effort_limit" else 0.0] * len(self.joint_ids)
                if v is None
                else v
            )
            setattr(
                self, name, torch.tensor(v, dtype=torch.float32, device=device).repeat(num_envs, 1)
            )
        if self.cfg.has_delay:
            self.delay = DelayBuffer(self.cfg, num_envs, len(self.joint_ids), device, generator)

    def nominal_gains(self) -> dict[str, np.ndarray] | None:
        """Per-joint stiffness/damping/effort_limit to report (explicit actuators), or None to
        read them from the compiled model."""
        if not self.cfg._explicit:
            return None
        nominal = self.__dict__.get("_dr_nominal", {})  # configured values, before any DR draw
        return {
            name: nominal.get(name, getattr(self, name))[0].cpu().numpy().astype(np.float64)
            for name in ("stiffness", "damping", "effort_limit")
            if name in self.param_names
        }

    def compute(self, cmd: ActuatorCmd) -> torch.Tensor:
        """ctrl (num_envs, n) from the command: builtin actuators pass their target through."""
        field = self.cfg.target_field()
        if field == CommandField.POSITION:
            return cmd.position_target
        if field == CommandField.VELOCITY:
            return cmd.velocity_target
        return cmd.effort_target

    def substep(
        self, targets: torch.Tensor, pos: torch.Tensor, vel: torch.Tensor, ctrl: torch.Tensor
    ) -> None:
        """Write this actuator's ctrl for the next physics step.

        Args:
            targets: (num_envs, 3, num_joints) the entity's position/velocity/effort targets.
            pos: (num_envs, num_joints) joint positions, rad.
            vel: (num_envs, num_joints) joint velocities, rad/s.
            ctrl: (num_envs, nu) the simulation's ctrl, written in place.
        """
        own = targets[:, :, self._joint_index]
        if self.delay is not None:
            own = self.delay.push(own)
        cmd = ActuatorCmd(
            position_target=own[:, 0],
            velocity_target=own[:, 1],
            effort_target=own[:, 2],
            pos=pos[:, self._joint_index],
            vel=vel[:, self._joint_index],
        )
        ctrl[:, self.ctrl_ids] = self.compute(cmd).to(ctrl.dtype)

    def reset(self, env_ids: torch.Tensor, targets: torch.Tensor) -> None:
        """Clear per-env state of `env_ids`; `targets` as in `substep`."""
        if self.delay is not None:
            self.delay.reset(env_ids, targets[env_ids][:, :, self._joint_index])


class DelayBuffer:
    """Per-env command lag in physics steps: a ring buffer of the last max_lag+1 commands.

    Each env reads the command of `lag` steps ago; lags are drawn uniformly in
    [delay_min_lag, delay_max_lag] on reset and every `delay_update_period` steps (kept with
    probability `delay_hold_prob`), staggered by a random per-env phase if asked.
    """

    def __init__(
        self,
        cfg: ActuatorCfg,
        num_envs: int,
        n: int,
        device: torch.device,
        generator: torch.Generator | None = None,
    ):
        self.cfg = cfg
        if generator is None:
            generator = torch.Generator(device=device).manual_seed(0)
        self.generator = generator
        """Draws the lags, the phases and the hold decisions (the env's `rng`)."""
        self._gen_device = generator.device
        self.size = cfg.delay_max_lag + 1
        self.buf = torch.zeros(self.size, num_envs, 3, n, device=device)
        self.head = 0
        self.count = 0
        self.lag = self._draw(num_envs, device)
        period = max(cfg.delay_update_period, 1)
        self.phase = (
            torch.randint(0, period, (num_envs,), device=self._gen_device, generator=generator).to(
                device
            )
            if cfg.delay_per_env_phase
            else torch.zeros(num_envs, dtype=torch.long, device=device)
        )
        self._envs = torch.arange(num_envs, device=device)

    def _draw(self, count: int, device) -> torch.Tensor:
        lag = torch.randint(
            self.cfg.delay_min_lag,
            self.cfg.delay_max_lag + 1,
            (count,),
            device=self._gen_device,
            generator=self.generator,
        )
        return lag.to(device)

    def push(self, command: torch.Tensor) -> torch.Tensor:
        """Store `command` (num_envs, 3, n) and return each env's lagged command."""
        self.head = (self.head + 1) % self.size
        self.buf[self.head] = command
        self.count += 1
        period = self.cfg.delay_update_period
        if period > 0:
            due = (self.count + self.phase) % period == 0
            keep = (
                torch.rand(due.shape, device=self._gen_device, generator=self.generator).to(
                    due.device
                )
                < self.cfg.delay_hold_prob
            )
            self.lag = torch.where(due & ~keep, self._draw(len(due), due.device), self.lag)
        return self.buf[(self.head - self.lag) % self.size, self._envs]

    def reset(self, env_ids: torch.Tensor, command: torch.Tensor) -> None:
        """Fill the history of `env_ids` with `command` (len(env_ids), 3, n); draw new lags."""
        self.buf[:, env_ids] = command.unsqueeze(0)
        self.lag[env_ids] = self._draw(len(env_ids), self.lag.device)


@dataclass(kw_only=True)
class BuiltinActuatorGroup(Config):
    """The actuators of an entity whose targets go straight into ctrl (builtin, no delay), by
    command field: (joint ids in entity order, global ctrl ids), each written in one batch."""

    position: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    """Actuators driven by position targets."""
    velocity: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    """Actuators driven by velocity targets."""
    effort: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    """Actuators driven by efforts (motors, DC motor voltage, muscle activation)."""


@dataclass(kw_only=True)
class FusedActuatorGroup(Config):
    """The actuators of an entity that run before every physics step (explicit or delayed), in
    the order they are computed."""

    actuators: tuple[Actuator, ...] = ()
    """The actuators."""

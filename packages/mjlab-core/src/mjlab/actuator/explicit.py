"""Explicit actuators: torques computed in torch before every physics step.

The spec gets a plain motor (ctrl = torque, gear 1) on each joint; the entity writes the
torque each step. MuJoCo's integrator cannot see their velocity derivative, so stiff gains need
a smaller timestep than the builtin servos.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

import mujoco
import torch

from mjlab.actuator.actuator import Actuator, ActuatorCmd
from mjlab.actuator.actuator_cfg import ActuatorCfg, PerJoint, _check_non_negative
from mjlab.utils.config import Config


@dataclass(kw_only=True)
class IdealPdActuatorCfg(ActuatorCfg):
    """PD law computed explicitly:
    tau = clip(stiffness (q* - q) + damping (qd* - qd) + tau_ff, -effort_limit, effort_limit)."""

    stiffness: PerJoint
    """Proportional gain kp, N m/rad."""
    damping: PerJoint
    """Derivative gain kd, N m s/rad."""

    _explicit: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_non_negative(self, "stiffness", "damping")

    def _gain_fields(self) -> tuple[str, ...]:
        return ("stiffness", "damping")

    def _configure(self, actuator, index, values) -> None:
        actuator.set_to_motor()
        actuator.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE


class IdealPdActuator(Actuator):
    """Runtime of `IdealPdActuatorCfg`; gains are (num_envs, n) tensors."""

    param_names = ("stiffness", "damping", "effort_limit")

    def pd_torque(self, cmd: ActuatorCmd) -> torch.Tensor:
        """Unclipped PD torque plus feed-forward, (num_envs, n) N m."""
        return (
            self.stiffness * (cmd.position_target - cmd.pos)
            + self.damping * (cmd.velocity_target - cmd.vel)
            + cmd.effort_target
        )

    def compute(self, cmd: ActuatorCmd) -> torch.Tensor:
        limit = self.effort_limit
        return torch.clamp(self.pd_torque(cmd), -limit, limit)


@dataclass(kw_only=True)
class DcMotorDatasheetParams(Config):
    """A DC motor from its datasheet, at the output shaft."""

    nominal_voltage: float
    """Supply voltage, V."""
    stall_torque: float
    """Torque at zero speed and nominal voltage, N m."""
    no_load_speed: float
    """Speed at zero torque and nominal voltage, rad/s."""

    @property
    def saturation_effort(self) -> float:
        """Stall torque, N m."""
        return self.stall_torque

    @property
    def velocity_limit(self) -> float:
        """No-load speed, rad/s."""
        return self.no_load_speed


@dataclass(kw_only=True)
class DcMotorPhysicalParams(Config):
    """A DC motor from its electrical constants (quasi-static model, tau = kt (V - ke w) / R;
    MuJoCo's DC motor note, mujoco.readthedocs.io/en/latest/_static/dcmotor.pdf)."""

    kt: float
    """Torque constant, N m/A."""
    ke: float
    """Back-EMF constant, V s/rad."""
    resistance: float
    """Winding resistance, Ohm."""

    def stall_torque(self, voltage: float) -> float:
        """kt V / R, N m."""
        return self.kt * voltage / self.resistance

    def no_load_speed(self, voltage: float) -> float:
        """V / ke, rad/s."""
        return voltage / self.ke


@dataclass(kw_only=True)
class DcMotorActuatorCfg(IdealPdActuatorCfg):
    """Ideal PD clipped by a DC motor's torque-speed line (Isaac Lab's DCMotor model):
    tau_max(qd) = clip(saturation_effort (1 - qd / velocity_limit), 0, effort_limit),
    tau_min(qd) = clip(saturation_effort (-1 - qd / velocity_limit), -effort_limit, 0)."""

    saturation_effort: PerJoint
    """Stall torque, N m (e.g. `DcMotorDatasheetParams.saturation_effort`)."""
    velocity_limit: PerJoint
    """No-load speed, rad/s (> 0)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_non_negative(self, "saturation_effort")
        values = (
            self.velocity_limit.values()
            if isinstance(self.velocity_limit, Mapping)
            else [self.velocity_limit]
        )
        if any(v <= 0 for v in values):
            raise ValueError(f"DcMotorActuatorCfg.velocity_limit must be > 0 rad/s, got {values}.")

    def _gain_fields(self) -> tuple[str, ...]:
        return ("stiffness", "damping", "saturation_effort", "velocity_limit")


class DcMotorActuator(IdealPdActuator):
    """Runtime of `DcMotorActuatorCfg`."""

    param_names = ("stiffness", "damping", "effort_limit", "saturation_effort", "velocity_limit")

    def compute(self, cmd: ActuatorCmd) -> torch.Tensor:
        return self.clip(self.pd_torque(cmd), cmd.vel)

    def clip(self, torque: torch.Tensor, vel: torch.Tensor) -> torch.Tensor:
        """`torque` (num_envs, n), N m, clipped by the torque-speed line at joint velocities
        `vel` (num_envs, n), rad/s, and by +-effort_limit."""
        ratio = vel / self.velocity_limit
        upper = torch.minimum(
            (self.saturation_effort * (1.0 - ratio)).clamp(min=0.0), self.effort_limit
        )
        lower = torch.maximum(
            (self.saturation_effort * (-1.0 - ratio)).clamp(max=0.0), -self.effort_limit
        )
        return torch.maximum(torch.minimum(torque, upper), lower)


@dataclass(kw_only=True)
class LearnedMlpActuatorCfg(DcMotorActuatorCfg):
    """A learned actuator network (TorchScript) mapping, per joint, the recent position errors
    (q* - q) and velocities to a torque (Hwangbo et al., Science Robotics 2019).

    Input per joint: `history_length` samples of each, newest first, scaled by `pos_scale` /
    `vel_scale`, concatenated in `input_order`; shape (num_envs * n, 2 history_length).
    Output (num_envs * n, 1) times `torque_scale`, then clipped like `DcMotorActuatorCfg` by the
    torque-speed line (`saturation_effort`, `velocity_limit`) and +-effort_limit.
    """

    network_file: str
    """Path of the TorchScript file (`torch.jit.save`)."""
    pos_scale: float = 1.0
    """Multiplier on the position errors."""
    vel_scale: float = 1.0
    """Multiplier on the velocities."""
    torque_scale: float = 1.0
    """Multiplier on the network output, N m."""
    input_order: Literal["pos_vel", "vel_pos"] = "pos_vel"
    """Which half of the input comes first."""
    history_length: int = 3
    """Samples of each signal, physics steps (the current one included)."""
    stiffness: PerJoint = 0.0
    """Nominal kp reported to the exporter, N m/rad (not used by the network)."""
    damping: PerJoint = 0.0
    """Nominal kd reported to the exporter, N m s/rad (not used by the network)."""

    _explicit: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.input_order not in ("pos_vel", "vel_pos"):
            raise ValueError(
                f"LearnedMlpActuatorCfg.input_order must be 'pos_vel' or 'vel_pos', got "
                f"{self.input_order!r}."
            )
        if self.history_length < 1:
            raise ValueError("LearnedMlpActuatorCfg.history_length must be >= 1.")


class LearnedMlpActuator(DcMotorActuator):
    """Runtime of `LearnedMlpActuatorCfg`: the network and the per-env histories."""

    def initialize(self, ctrl_ids, num_envs, device, generator=None) -> None:
        super().initialize(ctrl_ids, num_envs, device, generator)
        try:
            self.network = torch.jit.load(self.cfg.network_file, map_location=device).eval()
        except Exception as err:  # a missing or non-TorchScript file
            raise ValueError(
                f"LearnedMlpActuatorCfg.network_file={self.cfg.network_file!r} could not be "
                f"loaded as TorchScript: {err}"
            ) from err
        shape = (num_envs, len(self.joint_ids), self.cfg.history_length)
        self.pos_history = torch.zeros(shape, device=device)
        self.vel_history = torch.zeros(shape, device=device)

    def compute(self, cmd: ActuatorCmd) -> torch.Tensor:
        cfg = self.cfg
        error = cmd.position_target - cmd.pos
        self.pos_history = torch.cat([error.unsqueeze(-1), self.pos_history[..., :-1]], dim=-1)
        self.vel_history = torch.cat([cmd.vel.unsqueeze(-1), self.vel_history[..., :-1]], dim=-1)
        parts = [self.pos_history * cfg.pos_scale, self.vel_history * cfg.vel_scale]
        if cfg.input_order == "vel_pos":
            parts.reverse()
        n_envs, n = error.shape
        inputs = torch.cat(parts, dim=-1).reshape(n_envs * n, -1)
        with torch.no_grad():
            out = self.network(inputs).reshape(n_envs, n) * cfg.torque_scale
        return self.clip(out, cmd.vel)

    def reset(self, env_ids, targets) -> None:
        super().reset(env_ids, targets)
        self.pos_history[env_ids] = 0.0
        self.vel_history[env_ids] = 0.0


IdealPdActuatorCfg._runtime = IdealPdActuator
DcMotorActuatorCfg._runtime = DcMotorActuator
LearnedMlpActuatorCfg._runtime = LearnedMlpActuator

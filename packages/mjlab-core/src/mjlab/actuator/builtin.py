"""MuJoCo builtin actuators (mjlab 1.6 names): MuJoCo computes the force, implicitly in the
velocity terms, from a ctrl the entity writes straight from its targets."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import ClassVar

import mujoco
import numpy as np

from mjlab.actuator.actuator import Actuator
from mjlab.actuator.actuator_cfg import (
    CommandField,
    MotorActuatorCfg,
    PositionActuatorCfg,
    VelocityActuatorCfg,
)
from mjlab.actuator.explicit import DcMotorDatasheetParams, DcMotorPhysicalParams


class BuiltinPositionActuator(Actuator):
    """Runtime of `BuiltinPositionActuatorCfg` (and `PositionActuatorCfg`)."""


class BuiltinPdActuator(Actuator):
    """Runtime of `BuiltinPdActuatorCfg`."""


class BuiltinVelocityActuator(Actuator):
    """Runtime of `BuiltinVelocityActuatorCfg`."""


class BuiltinMotorActuator(Actuator):
    """Runtime of `BuiltinMotorActuatorCfg`."""


class BuiltinDcMotorActuator(Actuator):
    """Runtime of `BuiltinDcMotorActuatorCfg`."""


class BuiltinMuscleActuator(Actuator):
    """Runtime of `BuiltinMuscleActuatorCfg`."""


@dataclass(kw_only=True)
class BuiltinPositionActuatorCfg(PositionActuatorCfg):
    """MuJoCo position servo: force = stiffness (ctrl - q) - damping qd, clipped to
    +-effort_limit; ctrl is the position target."""

    _runtime: ClassVar[type[Actuator]] = BuiltinPositionActuator


@dataclass(kw_only=True)
class BuiltinPdActuatorCfg(PositionActuatorCfg):
    """A PD servo built as MuJoCo's position actuator (kp, kv): the same force law as
    `BuiltinPositionActuatorCfg`, kept as its own name for mjlab 1.6 configs."""

    _runtime: ClassVar[type[Actuator]] = BuiltinPdActuator


@dataclass(kw_only=True)
class BuiltinVelocityActuatorCfg(VelocityActuatorCfg):
    """MuJoCo velocity servo: force = damping (ctrl - qd); ctrl is the velocity target."""

    _runtime: ClassVar[type[Actuator]] = BuiltinVelocityActuator


@dataclass(kw_only=True)
class BuiltinMotorActuatorCfg(MotorActuatorCfg):
    """MuJoCo motor: force = gear ctrl, ctrl in +-effort_limit / gear."""

    _runtime: ClassVar[type[Actuator]] = BuiltinMotorActuator


class DcMotorInputMode(enum.Enum):
    """What the ctrl of a builtin DC motor means. Only VOLTAGE is supported in this version."""

    VOLTAGE = "voltage"


@dataclass(kw_only=True)
class BuiltinDcMotorActuatorCfg(MotorActuatorCfg):
    """MuJoCo's `dcmotor` actuator (MuJoCo >= 3.4): ctrl is the applied voltage and MuJoCo
    computes tau = gear K (V - K gear qd) / R (quasi-static model, MuJoCo's DC motor note; K is
    the motor constant, see `_constants`).

    Supported here: `motor_params`, `mode` VOLTAGE, `voltage_limit`, `effort_limit`, `gear`.
    The controller, electrical, thermal, cogging and friction extensions must keep their
    defaults (ValueError otherwise).
    """

    _runtime: ClassVar[type[Actuator]] = BuiltinDcMotorActuator

    motor_params: DcMotorPhysicalParams | DcMotorDatasheetParams
    """Motor constants (datasheet values are converted as in `_constants`)."""
    mode: DcMotorInputMode = DcMotorInputMode.VOLTAGE
    """Meaning of ctrl."""
    stiffness: float = 0.0
    """Position gain of MuJoCo's built-in controller (unsupported: keep 0)."""
    damping: float = 0.0
    """Velocity gain of MuJoCo's built-in controller (unsupported: keep 0)."""
    voltage_limit: float | None = None
    """ctrl range +-voltage_limit, V; None: unlimited."""
    integral_gain: float = 0.0
    """Unsupported: keep 0."""
    integral_limit: float = 0.0
    """Unsupported: keep 0."""
    slew_rate: float = 0.0
    """Unsupported: keep 0."""
    effort_limit: float | None = None
    """Force range +-effort_limit, N m; None: unlimited."""
    gear: float = 1.0
    """Transmission ratio."""
    inductance: float = 0.0
    """Unsupported: keep 0."""
    electrical_time_constant: float = 0.0
    """Unsupported: keep 0."""
    thermal: tuple[float, ...] | None = None
    """Unsupported: keep None."""
    cogging: tuple[float, ...] | None = None
    """Unsupported: keep None."""
    lugre: tuple[float, ...] | None = None
    """Unsupported: keep None."""

    _target_field: ClassVar[CommandField] = CommandField.EFFORT

    _requires_effort_limit: ClassVar[bool] = False  # None: no forcerange

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.gear <= 0:
            raise ValueError(f"BuiltinDcMotorActuatorCfg.gear must be > 0, got {self.gear}.")
        for name in (
            "stiffness",
            "damping",
            "integral_gain",
            "integral_limit",
            "slew_rate",
            "inductance",
            "electrical_time_constant",
        ):
            if getattr(self, name) != 0.0:
                raise ValueError(f"BuiltinDcMotorActuatorCfg.{name} is not supported yet; keep 0.")
        for name in ("thermal", "cogging", "lugre"):
            if getattr(self, name) is not None:
                raise ValueError(f"BuiltinDcMotorActuatorCfg.{name} is not supported yet.")
        if self.mode != DcMotorInputMode.VOLTAGE:
            raise ValueError("BuiltinDcMotorActuatorCfg.mode: only DcMotorInputMode.VOLTAGE.")

    def _per_joint(self, names):
        values = super()._per_joint(names)
        if values["effort_limit"] is not None and np.isinf(values["effort_limit"]).all():
            values["effort_limit"] = None  # unlimited: no forcerange
        return values

    def _constants(self) -> tuple[float, float]:
        """(K, R): the motor constant (torque constant = back-EMF constant, N m/A = V s/rad, at
        the motor shaft) and the winding resistance, Ohm.

        MuJoCo compiles `motorconst=[kt, ke]` into one constant sqrt(kt ke), so only K = kt = ke
        is meaningful: `DcMotorPhysicalParams` with kt != ke raises ValueError. A datasheet is
        read at the output shaft (after `gear`): no-load speed w0 = V / (gear K) and stall torque
        tau_s = gear K V / R give K = V / (gear w0) and R = gear K V / tau_s = V^2 / (w0 tau_s).
        """
        p = self.motor_params
        if isinstance(p, DcMotorPhysicalParams):
            if not np.isclose(p.kt, p.ke, rtol=1e-9, atol=0.0):
                raise ValueError(
                    f"BuiltinDcMotorActuatorCfg.motor_params: kt={p.kt} != ke={p.ke}; MuJoCo's "
                    "dcmotor uses one motor constant (kt = ke in SI units). Give kt == ke, or a "
                    "DcMotorDatasheetParams."
                )
            return p.kt, p.resistance
        k = p.nominal_voltage / (self.gear * p.no_load_speed)
        return k, self.gear * k * p.nominal_voltage / p.stall_torque

    def _configure(self, actuator, index, values) -> None:
        k, r = self._constants()
        actuator.set_to_dcmotor(motorconst=[k, k], resistance=r)
        actuator.gear[0] = self.gear
        if self.voltage_limit is None:
            actuator.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
        else:
            actuator.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
            actuator.ctrlrange = [-self.voltage_limit, self.voltage_limit]


@dataclass(kw_only=True)
class BuiltinMuscleActuatorCfg(BuiltinMotorActuatorCfg):
    """MuJoCo muscle (MJCF <muscle>; parameters as in MuJoCo's XML reference); ctrl is the
    activation command in [0, 1]."""

    _runtime: ClassVar[type[Actuator]] = BuiltinMuscleActuator

    length_range: tuple[float, float] = (0.0, 0.0)
    """Actuator length range; (0, 0): MuJoCo computes it at compile time."""
    gear: float = 1.0
    """Transmission ratio (moment arm), m."""
    timeconst: tuple[float, float] = (0.01, 0.04)
    """Activation and deactivation time constants, s."""
    tausmooth: float = 0.0
    """Smoothing width between the two time constants."""
    range: tuple[float, float] = (0.75, 1.05)
    """Operating length range of the muscle, in optimal lengths L0."""
    force: float = -1.0
    """Peak active force at rest, N; -1: scale / actuator acc0."""
    scale: float = 200.0
    """Force scale used when force is -1."""
    lmin: float = 0.5
    """Lower bound of the active force-length curve, L0."""
    lmax: float = 1.6
    """Upper bound of the active force-length curve, L0."""
    vmax: float = 1.5
    """Shortening velocity at which force is zero, L0/s."""
    fpmax: float = 1.3
    """Passive force at lmax, relative to peak force."""
    fvmax: float = 1.2
    """Active force at saturating lengthening velocity, relative to peak force."""
    effort_limit: float | None = None
    """Unused by muscles (their force is bounded by `force`); None."""

    _requires_effort_limit: ClassVar[bool] = False  # no forcerange on a muscle

    def _configure(self, actuator, index, values) -> None:
        actuator.set_to_muscle(
            timeconst=list(self.timeconst),
            tausmooth=self.tausmooth,
            range=list(self.range),
            force=self.force,
            scale=self.scale,
            lmin=self.lmin,
            lmax=self.lmax,
            vmax=self.vmax,
            fpmax=self.fpmax,
            fvmax=self.fvmax,
        )
        actuator.gear[0] = self.gear
        actuator.lengthrange = list(self.length_range)
        actuator.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        actuator.ctrlrange = [0.0, 1.0]

    def _per_joint(self, names):
        values = super()._per_joint(names)
        values["effort_limit"] = None  # no forcerange on a muscle
        return values

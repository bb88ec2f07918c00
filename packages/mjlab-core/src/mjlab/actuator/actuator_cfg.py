"""Actuator configs: selected by joint-name regex, they replace the MJCF's actuators on those
joints (except `XmlActuatorCfg`, which keeps them).

Joints that no config selects keep the MJCF's own actuators. All gains are per joint; the entity
reads them back from the compiled model in joint order (`EntityData.joint_stiffness`, ...), or
from the config for explicit actuators, which is what the exporter writes into the deployment
metadata.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import mujoco

from mjlab.utils.config import Config
from mjlab.utils.string import resolve_matching_values

PerJoint = float | Mapping[str, float]
"""A scalar for every selected joint, or a {joint regex: value} dict."""


class TransmissionType(enum.Enum):
    """What an actuator drives. The actuator models here drive joints only; tendons and sites
    are driven through the MJCF's own actuators by the action terms
    (`mjlab.envs.mdp.TendonLengthActionCfg`, `SiteEffortActionCfg`, ...)."""

    JOINT = "joint"
    TENDON = "tendon"
    SITE = "site"


class CommandField(enum.Enum):
    """Which of an entity's targets an actuator turns into its ctrl."""

    POSITION = "position"
    VELOCITY = "velocity"
    EFFORT = "effort"


@dataclass(kw_only=True)
class ActuatorCfg(Config):
    """Base: which joints, and joint properties every actuator type may set.

    Give the joints by `target_names_expr` (mjlab 1.6's name) or `joint_names_expr` (this
    project's earlier name): exactly one of the two.
    """

    target_names_expr: tuple[str, ...] | None = None
    """Regexes (full match) over the entity's joint names, without the entity prefix."""
    transmission_type: TransmissionType = TransmissionType.JOINT
    """What the actuators drive; only `TransmissionType.JOINT`."""
    armature: PerJoint | None = None
    """Reflected rotor inertia added to the joint, kg m^2 (MuJoCo joint armature); None: keep."""
    frictionloss: PerJoint | None = None
    """Dry friction of the joint, N m (MuJoCo joint frictionloss); None: keep."""
    viscous_damping: PerJoint | None = None
    """Passive joint damping, N m s/rad (MuJoCo joint damping); None: keep."""
    delay_min_lag: int = 0
    """Smallest command lag, physics steps."""
    delay_max_lag: int = 0
    """Largest command lag, physics steps; 0 (with `delay_min_lag` 0): no delay."""
    delay_hold_prob: float = 0.0
    """At each lag update, the probability that an env keeps its current lag."""
    delay_update_period: int = 0
    """Physics steps between lag resamplings; 0: a lag is drawn only when an env resets."""
    delay_per_env_phase: bool = True
    """Stagger the lag updates of the envs by a random phase (else all update together)."""
    joint_names_expr: tuple[str, ...] | None = None
    """This project's earlier name for `target_names_expr` (same meaning)."""
    effort_limit: PerJoint | None = None
    """Maximum actuator force/torque, N or N m (MuJoCo forcerange); None: unlimited."""

    def __post_init__(self) -> None:
        name = type(self).__name__
        given = [
            f for f in ("target_names_expr", "joint_names_expr") if getattr(self, f) is not None
        ]
        if len(given) != 1:
            raise ValueError(
                f"{name}: give the joints by exactly one of target_names_expr (mjlab 1.6) or "
                f"joint_names_expr, e.g. target_names_expr=('.*_hip_joint',); got "
                f"target_names_expr={self.target_names_expr!r}, "
                f"joint_names_expr={self.joint_names_expr!r}."
            )
        field = given[0]
        exprs = getattr(self, field)
        if isinstance(exprs, str):
            raise ValueError(
                f"{name}.{field} must be a tuple of regexes, e.g. ('{exprs}',), not a string."
            )
        if not exprs:
            raise ValueError(f"{name}.{field} is empty.")
        if self.transmission_type != TransmissionType.JOINT:
            raise ValueError(
                f"{name}.transmission_type={self.transmission_type!r}: actuator models drive "
                "joints only (TransmissionType.JOINT); drive a tendon or site through an MJCF "
                "actuator with mdp.Tendon*ActionCfg / mdp.SiteEffortActionCfg."
            )
        _check_non_negative(self, "effort_limit", "armature", "frictionloss", "viscous_damping")
        if not 0 <= self.delay_min_lag <= self.delay_max_lag:
            raise ValueError(
                f"{name}: need 0 <= delay_min_lag <= delay_max_lag (physics steps), got "
                f"{self.delay_min_lag} and {self.delay_max_lag}."
            )
        if not 0.0 <= self.delay_hold_prob <= 1.0:
            raise ValueError(
                f"{name}.delay_hold_prob must be in [0, 1], got {self.delay_hold_prob}."
            )
        if self.delay_update_period < 0:
            raise ValueError(f"{name}.delay_update_period must be >= 0 (0: only on reset).")

    @property
    def names_expr(self) -> tuple[str, ...]:
        """The joint regexes, whichever of the two fields gave them."""
        return tuple(self.target_names_expr or self.joint_names_expr or ())

    @property
    def has_delay(self) -> bool:
        """Whether commands go through the per-env delay buffer."""
        return self.delay_max_lag > 0

    _target_field: ClassVar[CommandField] = CommandField.POSITION
    _explicit: ClassVar[bool] = False  # torques computed in torch; the spec gets motors

    def target_field(self) -> CommandField:
        """The entity target (position, velocity or effort) this actuator's command comes from."""
        return self._target_field

    _runtime: ClassVar[type | None] = None  # the runtime class; None: the base `Actuator`

    def build(self, joint_ids: list[int], joint_names: list[str]):
        """The runtime `Actuator` of this config for the selected joints (entity joint order)."""
        runtime = self._runtime
        if runtime is None:
            from mjlab.actuator.actuator import Actuator  # runtime module imports this one

            runtime = Actuator
        return runtime(self, joint_ids, joint_names)

    def _configure(self, actuator: mujoco.MjsActuator, index: int, values: dict) -> None:
        raise NotImplementedError

    def _per_joint(self, names: list[str]) -> dict[str, list[float] | None]:
        fields = (
            "effort_limit",
            "armature",
            "frictionloss",
            "viscous_damping",
            *self._gain_fields(),
        )
        return {
            f: None
            if getattr(self, f) is None
            else resolve_matching_values(
                getattr(self, f), names, what="joint", owner=f"{type(self).__name__}.{f}"
            )
            for f in fields
        }

    def _gain_fields(self) -> tuple[str, ...]:
        return ()

    def remove_existing(self, spec: mujoco.MjSpec, joints: list[mujoco.MjsJoint]) -> None:
        """Delete the spec's joint actuators on `joints`."""
        targets = {j.name for j in joints}
        for actuator in list(spec.actuators):
            if actuator.trntype == mujoco.mjtTrn.mjTRN_JOINT and actuator.target in targets:
                spec.delete(actuator)

    def add_one(
        self, spec: mujoco.MjSpec, joint: mujoco.MjsJoint, index: int, values: dict
    ) -> None:
        """Set the joint properties of `joint` and add its actuator (values: `_per_joint`)."""
        if values["armature"] is not None:
            joint.armature = values["armature"][index]
        if values["frictionloss"] is not None:
            joint.frictionloss = values["frictionloss"][index]
        if values["viscous_damping"] is not None:
            joint.damping[0] = values["viscous_damping"][index]  # linear term (MuJoCo 4: a vector)
        actuator = spec.add_actuator(name=joint.name, target=joint.name)
        actuator.trntype = mujoco.mjtTrn.mjTRN_JOINT
        self._configure(actuator, index, values)
        if values["effort_limit"] is not None:
            limit = values["effort_limit"][index]
            actuator.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
            actuator.forcerange = [-limit, limit]

    def apply(self, spec: mujoco.MjSpec, joints: list[mujoco.MjsJoint]) -> None:
        """Replace the actuators of `joints` in `spec` with one actuator of this type per joint."""
        values = self._per_joint([j.name for j in joints])
        self.remove_existing(spec, joints)
        for i, joint in enumerate(joints):
            self.add_one(spec, joint, i, values)


@dataclass(kw_only=True)
class PositionActuatorCfg(ActuatorCfg):
    """PD position servo: force = stiffness (ctrl - q) - damping qdot, clipped to effort_limit.

    ctrl is the joint position target, rad (or m for slide joints).
    """

    stiffness: PerJoint
    """Proportional gain kp, N m/rad."""
    damping: PerJoint
    """Derivative gain kd, N m s/rad."""

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_non_negative(self, "stiffness", "damping")

    def _gain_fields(self) -> tuple[str, ...]:
        return ("stiffness", "damping")

    def _configure(self, actuator, index, values) -> None:
        kp, kd = values["stiffness"][index], values["damping"][index]
        actuator.set_to_position(kp=kp, kv=kd)
        actuator.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE


@dataclass(kw_only=True)
class VelocityActuatorCfg(ActuatorCfg):
    """Velocity servo: force = damping (ctrl - qdot); ctrl is the joint velocity target, rad/s."""

    damping: PerJoint
    """Velocity gain kv, N m s/rad."""

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_non_negative(self, "damping")

    def _gain_fields(self) -> tuple[str, ...]:
        return ("damping",)

    _target_field = CommandField.VELOCITY

    def _configure(self, actuator, index, values) -> None:
        actuator.set_to_velocity(kv=values["damping"][index])
        actuator.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE


@dataclass(kw_only=True)
class MotorActuatorCfg(ActuatorCfg):
    """Direct effort: force = gear * ctrl; ctrl is the joint torque (force), N m, clipped to
    +-effort_limit."""

    gear: float = 1.0
    """Transmission ratio."""

    _requires_effort_limit: ClassVar[bool] = True  # it bounds ctrl

    def __post_init__(self) -> None:
        super().__post_init__()
        if self._requires_effort_limit and self.effort_limit is None:
            raise ValueError(
                f"{type(self).__name__}.effort_limit is required (N m): it bounds ctrl."
            )

    _target_field = CommandField.EFFORT

    def _configure(self, actuator, index, values) -> None:
        actuator.set_to_motor()
        actuator.gear[0] = self.gear
        limit = values["effort_limit"][index]
        actuator.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        actuator.ctrlrange = [-limit / self.gear, limit / self.gear]


def _check_non_negative(cfg, *fields: str) -> None:
    for name in fields:
        value = getattr(cfg, name)
        values = value.values() if isinstance(value, Mapping) else [value]
        for v in values:
            if v is not None and v < 0:
                raise ValueError(f"{type(cfg).__name__}.{name} must be >= 0, got {v}.")

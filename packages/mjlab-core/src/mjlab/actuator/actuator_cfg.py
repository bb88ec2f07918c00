"""Actuator configs: selected by joint-name regex, they replace the MJCF's actuators on those joints.

Joints that no config selects keep the MJCF's own actuators. All gains are per joint; the entity
reads them back from the compiled model in joint order (`EntityData.joint_stiffness`, ...), which
is what the exporter writes into the deployment metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import mujoco

from mjlab.utils.config import Config
from mjlab.utils.string import resolve_matching_values

PerJoint = float | Mapping[str, float]
"""A scalar for every selected joint, or a {joint regex: value} dict."""


@dataclass(kw_only=True)
class ActuatorCfg(Config):
    """Base: which joints, and joint properties every actuator type may set."""

    joint_names_expr: tuple[str, ...]
    """Regexes (full match) over the entity's joint names, without the entity prefix."""
    effort_limit: PerJoint | None = None
    """Maximum actuator force/torque, N or N m (MuJoCo forcerange); None: unlimited."""
    armature: PerJoint | None = None
    """Reflected rotor inertia added to the joint, kg m^2 (MuJoCo joint armature); None: keep."""
    frictionloss: PerJoint | None = None
    """Dry friction of the joint, N m (MuJoCo joint frictionloss); None: keep."""

    def __post_init__(self) -> None:
        if isinstance(self.joint_names_expr, str):
            raise ValueError(
                f"{type(self).__name__}.joint_names_expr must be a tuple of regexes, e.g. "
                f"('{self.joint_names_expr}',), not a string."
            )
        if not self.joint_names_expr:
            raise ValueError(f"{type(self).__name__}.joint_names_expr is empty.")
        _check_non_negative(self, "effort_limit", "armature", "frictionloss")

    def _configure(self, actuator: mujoco.MjsActuator, index: int, values: dict) -> None:
        raise NotImplementedError

    def _per_joint(self, names: list[str]) -> dict[str, list[float] | None]:
        fields = [f for f in ("effort_limit", "armature", "frictionloss", *self._gain_fields())]
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

    def apply(self, spec: mujoco.MjSpec, joints: list[mujoco.MjsJoint]) -> None:
        """Replace the actuators of `joints` in `spec` with one actuator of this type per joint."""
        names = [j.name for j in joints]
        values = self._per_joint(names)
        targets = set(names)
        for actuator in list(spec.actuators):
            if actuator.trntype == mujoco.mjtTrn.mjTRN_JOINT and actuator.target in targets:
                spec.delete(actuator)
        for i, joint in enumerate(joints):
            if values["armature"] is not None:
                joint.armature = values["armature"][i]
            if values["frictionloss"] is not None:
                joint.frictionloss = values["frictionloss"][i]
            actuator = spec.add_actuator(name=joint.name, target=joint.name)
            actuator.trntype = mujoco.mjtTrn.mjTRN_JOINT
            self._configure(actuator, i, values)
            if values["effort_limit"] is not None:
                limit = values["effort_limit"][i]
                actuator.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
                actuator.forcerange = [-limit, limit]


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

    def _configure(self, actuator, index, values) -> None:
        actuator.set_to_velocity(kv=values["damping"][index])
        actuator.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE


@dataclass(kw_only=True)
class MotorActuatorCfg(ActuatorCfg):
    """Direct effort: force = gear * ctrl; ctrl is the joint torque (force), N m, clipped to
    +-effort_limit."""

    gear: float = 1.0
    """Transmission ratio."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.effort_limit is None:
            raise ValueError("MotorActuatorCfg.effort_limit is required (N m): it bounds ctrl.")

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

"""Robots of the built-in tasks as typed configs (`RobotCfg`), one module per robot:
`mjlab.tasks.robots.go1.GO1`, `mjlab.tasks.robots.g1.G1`.

PD gains follow from each joint's reflected inertia (MuJoCo armature, kg m^2) and a chosen
closed-loop natural frequency w and damping ratio z of the joint as a second-order system
I qdd + kd qd + kp q = 0 (I = armature, link inertia neglected):

    kp = I w^2,   kd = 2 z I w

The action scale is 0.25 * effort_limit / kp: a unit action asks for a quarter of the
motor's torque at zero velocity, so exploration noise stays within what the motors can do.

Models come from mujoco-menagerie through `menagerie_spec` and fail with `RobotModelError`, both
`mjlab.deploy.menagerie`'s (the loader the robot side's `MujocoRobot` uses too), re-exported here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mjlab.actuator import PositionActuatorCfg
from mjlab.deploy.menagerie import RobotModelError as RobotModelError
from mjlab.deploy.menagerie import menagerie_spec as menagerie_spec
from mjlab.entity import CollisionCfg, EntityArticulationInfoCfg, EntityCfg, InitialStateCfg
from mjlab.utils.config import Config

NATURAL_FREQ = 10.0 * 2.0 * math.pi
"""w, rad/s (10 Hz)."""
DAMPING_RATIO = 2.0
"""z (overdamped: no oscillation about the target)."""


def pd_gains(
    armature: float, natural_freq: float = NATURAL_FREQ, damping_ratio: float = DAMPING_RATIO
) -> tuple[float, float]:
    """(kp N m/rad, kd N m s/rad) for a joint of reflected inertia `armature` kg m^2."""
    return armature * natural_freq**2, 2.0 * damping_ratio * armature * natural_freq


@dataclass(frozen=True, kw_only=True)
class RobotCfg(Config):
    """A Menagerie robot with PD position actuators on every joint: the model, the actuator
    constants and the body names tasks refer to. Joint-keyed dicts map joint-name regexes
    (full match) to values."""

    menagerie_robot: str
    """mujoco-menagerie robot, e.g. "unitree_go1"."""
    menagerie_entry: str
    """Entry (MJCF file stem) of that robot, e.g. "go1" or "scene_mjx"."""
    base_body: str
    """Root (floating-base) body, e.g. "trunk" or "pelvis"."""
    foot_geoms: tuple[str, ...] = ()
    """Foot collision geoms (regexes), when the feet are single geoms (Go1)."""
    foot_bodies: tuple[str, ...] = ()
    """Foot bodies (regexes), when a foot is several geoms under one body (G1)."""
    armature: dict[str, float]
    """Reflected motor inertia per joint, kg m^2 (also sets the PD gains, see `pd_gains`)."""
    effort_limit: dict[str, float]
    """Peak motor torque per joint, N m."""
    velocity_limit: dict[str, float]
    """Motor speed limit per joint, rad/s (data sheet): exported for the robot-side control
    loop, which faults on a faster joint (`EntityCfg.joint_vel_limit`; not simulated)."""
    default_joint_pos: dict[str, float]
    """Nominal standing pose, rad: the PD targets' offset and the reset pose."""
    init_pos: tuple[float, float, float]
    """Spawn position of the root body over the env origin, m."""
    collisions: tuple[CollisionCfg, ...] = ()
    """Contact property edits applied to the model's geoms."""
    ground_geoms: tuple[str, ...] = ()
    """The entry's own floor geoms, replaced by the task's terrain (`EntityCfg.ground_geoms`)."""
    natural_freq: float = NATURAL_FREQ
    """PD closed-loop natural frequency w, rad/s."""
    damping_ratio: float = DAMPING_RATIO
    """PD damping ratio z."""
    soft_joint_pos_limit_factor: float = 0.9
    """Soft joint limits as a fraction of each joint's range."""
    action_scale_fraction: float = 0.25
    """A unit action asks for this fraction of the effort limit (action scale = f * limit / kp)."""

    def __post_init__(self) -> None:
        for name in ("effort_limit", "velocity_limit"):
            other = set(getattr(self, name))
            if set(self.armature) != other:
                raise ValueError(
                    f"RobotCfg({self.menagerie_robot}): armature and {name} must name the same "
                    f"joint patterns; only in one of them: {sorted(set(self.armature) ^ other)}."
                )
        if not self.foot_geoms and not self.foot_bodies:
            raise ValueError(f"RobotCfg({self.menagerie_robot}): set foot_geoms or foot_bodies.")

    @property
    def stiffness(self) -> dict[str, float]:
        """kp per joint pattern, N m/rad."""
        return {
            k: pd_gains(v, self.natural_freq, self.damping_ratio)[0]
            for k, v in self.armature.items()
        }

    @property
    def damping(self) -> dict[str, float]:
        """kd per joint pattern, N m s/rad."""
        return {
            k: pd_gains(v, self.natural_freq, self.damping_ratio)[1]
            for k, v in self.armature.items()
        }

    @property
    def action_scale(self) -> dict[str, float]:
        """rad of PD target per unit action, per joint pattern."""
        kp = self.stiffness
        return {k: self.action_scale_fraction * self.effort_limit[k] / kp[k] for k in kp}

    def entity_cfg(self) -> EntityCfg:
        """The robot as a scene entity: the Menagerie model, a PD position actuator on every
        joint with this config's per-joint values, soft joint limits, collision edits."""
        robot, entry = self.menagerie_robot, self.menagerie_entry
        return EntityCfg(
            spec_fn=lambda: menagerie_spec(robot, entry),
            menagerie=(robot, entry),
            init_state=InitialStateCfg(pos=self.init_pos, joint_pos=dict(self.default_joint_pos)),
            articulation=EntityArticulationInfoCfg(
                actuators=(
                    PositionActuatorCfg(
                        joint_names_expr=(".*",),
                        stiffness=self.stiffness,
                        damping=self.damping,
                        effort_limit=dict(self.effort_limit),
                        armature=dict(self.armature),
                    ),
                ),
                soft_joint_pos_limit_factor=self.soft_joint_pos_limit_factor,
            ),
            collisions=self.collisions,
            ground_geoms=self.ground_geoms,
            joint_vel_limit=dict(self.velocity_limit),
        )

"""Unitree Go1 (mujoco-menagerie `unitree_go1`, entry `go1`): `GO1`, everything the tasks and
the exporter need to know about the robot."""

from __future__ import annotations

from mjlab.entity import CollisionCfg
from mjlab.tasks.robots import RobotCfg

JOINT_NAMES = tuple(
    f"{leg}_{part}_joint" for leg in ("FR", "FL", "RR", "RL") for part in ("hip", "thigh", "calf")
)
"""Control order = MJCF joint order."""
FOOT_GEOMS = ("FR", "FL", "RR", "RL")
"""Foot collision geoms (spheres at the calf tips)."""
FOOT_SOLIMP = (0.9, 0.95, 0.023)
"""Foot contact impedance. Menagerie's go1.xml gives the feet solimp (0.015, 1, 0.031), a contact
so soft that the standing robot sinks 1.5-1.7 cm (3 cm on landing) into the ground; this one
is MuJoCo's default impedance band over the foot radius (2.3 cm): the feet sink < 1 cm."""

# Reflected inertia: Menagerie's MJCF gives every Go1 joint armature 0.01 kg m^2.
ARMATURE = {".*_hip_joint": 0.01, ".*_thigh_joint": 0.01, ".*_calf_joint": 0.01}
# Torque limits of the Go1 motors: 23.7 N m (hip, thigh) and 35.55 N m (knee, 1.5x gearing),
# as in Menagerie's forcerange.
EFFORT_LIMIT = {".*_hip_joint": 23.7, ".*_thigh_joint": 23.7, ".*_calf_joint": 35.55}

# Joint speed limits of the same motors: 30.1 rad/s (hip, thigh) and 30.1 / 1.5 = 20.06 rad/s
# (knee, through its 1.5x gearing), as in Unitree's go1_description URDF (unitree_ros,
# <limit velocity=...>); Menagerie's MJCF carries no speed limits.
VELOCITY_LIMIT = {".*_hip_joint": 30.1, ".*_thigh_joint": 30.1, ".*_calf_joint": 20.06}

DEFAULT_JOINT_POS = {".*_hip_joint": 0.0, ".*_thigh_joint": 0.9, ".*_calf_joint": -1.8}
"""Standing pose, rad (Menagerie's `home` keyframe)."""
INIT_POS = (0.0, 0.0, 0.36)
"""Spawn position of the trunk, m. The velocity task's reset scales the default joint angles by
U(0.8, 1.2); at 0.8 the legs are longest (hip-to-foot 0.320 m plus the 0.023 m foot radius), so
at 0.36 m every foot starts >= 1.7 cm above flat ground (at 0.30 m a reset put feet up to 4 cm
into the ground)."""

ACTION_SCALE_FRACTION = 0.375
"""A unit action asks for 3/8 of the effort limit: 0.225 rad of PD target on hip and thigh, 0.34
rad on the calf (the velocity tasks' default is 1/4). Larger than the default because at 1/4 PPO
on Go1 flat first settles for standing still; docs/results.md gives the measurements."""


GO1 = RobotCfg(
    menagerie_robot="unitree_go1",
    menagerie_entry="go1",
    base_body="trunk",
    foot_geoms=FOOT_GEOMS,
    armature=ARMATURE,
    effort_limit=EFFORT_LIMIT,
    velocity_limit=VELOCITY_LIMIT,
    default_joint_pos=DEFAULT_JOINT_POS,
    init_pos=INIT_POS,
    action_scale_fraction=ACTION_SCALE_FRACTION,
    collisions=(
        CollisionCfg(
            geom_names_expr=FOOT_GEOMS, condim=3, friction=(0.8,), priority=1, solimp=FOOT_SOLIMP
        ),
    ),
)
"""The Go1: feet stiffened and given friction 0.8 (see FOOT_SOLIMP), PD gains at 10 Hz, action
scale at 3/8 of the effort limit (see ACTION_SCALE_FRACTION)."""

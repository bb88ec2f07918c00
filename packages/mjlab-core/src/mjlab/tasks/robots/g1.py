"""Unitree G1 29-DoF (mujoco-menagerie `unitree_g1`, entry `scene_mjx`: simplified colliders).

The MJX model turns contype/conaffinity off on every geom and declares its contacts as explicit
`<pair>`s in `scene_mjx.xml` (three capsules per foot with the floor at solref 0.008, friction 1;
limbs, pelvis, torso and head with the floor; foot/shin, hand/hip, torso/arm self-collisions).
The entity loads that scene and names its `floor` a ground geom, so the floor pairs move onto
whatever terrain the task builds and the self-collision pairs stay as Menagerie declares them.
"""

from __future__ import annotations

from mjlab.tasks.robots import RobotCfg

GROUND_GEOMS = ("floor",)
"""The entry's own floor, replaced by the task's terrain."""

FOOT_BODIES = ("left_ankle_roll_link", "right_ankle_roll_link")

# Reflected inertia per motor type, as in Menagerie's g1_mjx armature values (kg m^2):
# 7520-14 0.01018, 7520-22 0.0251, dual 5020 0.00722, 5020 0.00361, 4010 0.00425.
ARMATURE = {
    ".*_hip_pitch_joint": 0.01018,
    ".*_hip_yaw_joint": 0.01018,
    ".*_hip_roll_joint": 0.0251,
    ".*_knee_joint": 0.0251,
    ".*_ankle_.*_joint": 0.00722,
    "waist_yaw_joint": 0.01018,
    "waist_(roll|pitch)_joint": 0.00722,
    ".*_shoulder_.*_joint": 0.00361,
    ".*_elbow_joint": 0.00361,
    ".*_wrist_roll_joint": 0.00361,
    ".*_wrist_(pitch|yaw)_joint": 0.00425,
}
# Peak torques of the same motor types (Unitree G1 specification), N m.
EFFORT_LIMIT = {
    ".*_hip_pitch_joint": 88.0,
    ".*_hip_yaw_joint": 88.0,
    ".*_hip_roll_joint": 139.0,
    ".*_knee_joint": 139.0,
    ".*_ankle_.*_joint": 50.0,
    "waist_yaw_joint": 88.0,
    "waist_(roll|pitch)_joint": 50.0,
    ".*_shoulder_.*_joint": 25.0,
    ".*_elbow_joint": 25.0,
    ".*_wrist_roll_joint": 25.0,
    ".*_wrist_(pitch|yaw)_joint": 5.0,
}
# Joint speed limits of the same motor types, rad/s, as in Unitree's g1_29dof URDF
# (unitree_ros, <limit velocity=...>): 7520-14 32, 7520-22 20, 5020 and dual 5020 37, 4010 22.
# Menagerie's MJCF carries no speed limits.
VELOCITY_LIMIT = {
    ".*_hip_pitch_joint": 32.0,
    ".*_hip_yaw_joint": 32.0,
    ".*_hip_roll_joint": 20.0,
    ".*_knee_joint": 20.0,
    ".*_ankle_.*_joint": 37.0,
    "waist_yaw_joint": 32.0,
    "waist_(roll|pitch)_joint": 37.0,
    ".*_shoulder_.*_joint": 37.0,
    ".*_elbow_joint": 37.0,
    ".*_wrist_roll_joint": 37.0,
    ".*_wrist_(pitch|yaw)_joint": 22.0,
}

DEFAULT_JOINT_POS = {
    ".*": 0.0,
    ".*_hip_pitch_joint": -0.1,
    ".*_knee_joint": 0.3,
    ".*_ankle_pitch_joint": -0.2,
    ".*_shoulder_pitch_joint": 0.2,
    "left_shoulder_roll_joint": 0.2,
    "right_shoulder_roll_joint": -0.2,
    ".*_elbow_joint": 1.28,
}
"""Knees-bent standing pose, rad (Menagerie's scene_mjx keyframe)."""
INIT_POS = (0.0, 0.0, 0.8)
"""Spawn height of the pelvis, m."""


G1 = RobotCfg(
    menagerie_robot="unitree_g1",
    menagerie_entry="scene_mjx",
    base_body="pelvis",
    foot_bodies=FOOT_BODIES,
    armature=ARMATURE,
    effort_limit=EFFORT_LIMIT,
    velocity_limit=VELOCITY_LIMIT,
    default_joint_pos=DEFAULT_JOINT_POS,
    init_pos=INIT_POS,
    ground_geoms=GROUND_GEOMS,
)
"""The G1 29-DoF with Menagerie's MJX contact pairs moved onto the task's terrain."""

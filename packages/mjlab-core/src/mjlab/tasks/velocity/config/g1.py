"""G1 velocity tracking (`Mjlab-Velocity-{Flat,Rough}-Unitree-G1`)."""

from __future__ import annotations

import math

from mjlab.envs import ManagerBasedRlEnvCfg, mdp
from mjlab.managers import CurriculumTermCfg, RewardTermCfg, SceneEntityCfg
from mjlab.sensor import ContactMatch
from mjlab.tasks.robots.g1 import FOOT_BODIES, G1
from mjlab.tasks.velocity import mdp as velocity_mdp
from mjlab.tasks.velocity.velocity_env_cfg import (
    VelocityRobotCfg,
    velocity_env_cfg,
    velocity_play_env_cfg,
)

# Posture tolerance per joint, rad: tight on what balances (hip roll/yaw, ankle roll, waist roll
# and pitch), loose on what makes a stride (hip pitch, knees), wider when running.
POSTURE_STD_STANDING = {".*": 0.05}
POSTURE_STD_WALKING = {
    ".*_hip_pitch_joint": 0.3,
    ".*_hip_(roll|yaw)_joint": 0.15,
    ".*_knee_joint": 0.35,
    ".*_ankle_pitch_joint": 0.25,
    ".*_ankle_roll_joint": 0.1,
    "waist_yaw_joint": 0.2,
    "waist_roll_joint": 0.08,
    "waist_pitch_joint": 0.1,
    ".*_shoulder_(pitch|roll)_joint": 0.15,
    ".*_shoulder_yaw_joint": 0.1,
    ".*_elbow_joint": 0.15,
    ".*_wrist_.*": 0.3,
}
POSTURE_STD_RUNNING = {
    ".*_hip_pitch_joint": 0.5,
    ".*_hip_(roll|yaw)_joint": 0.2,
    ".*_knee_joint": 0.6,
    ".*_ankle_pitch_joint": 0.35,
    ".*_ankle_roll_joint": 0.15,
    "waist_yaw_joint": 0.3,
    "waist_roll_joint": 0.08,
    "waist_pitch_joint": 0.2,
    ".*_shoulder_pitch_joint": 0.5,
    ".*_shoulder_roll_joint": 0.2,
    ".*_shoulder_yaw_joint": 0.15,
    ".*_elbow_joint": 0.35,
    ".*_wrist_.*": 0.3,
}
FOOT_HEIGHT_OFFSET = 0.037
"""Height of the ankle roll body's origin above the ground when the foot is flat on it, m."""

G1_VELOCITY = VelocityRobotCfg(
    robot=G1,
    illegal=ContactMatch(mode="body", patterns=("pelvis", "torso_link")),
    undesired=None,
    min_base_height=0.4,
    air_time_threshold=0.4,
    # The deploy loop keeps targets inside the joint range; train the same way, or a policy that
    # leans on targets past the range falls there.
    clamp_to_joint_limits=True,
    reward_overrides={
        # Positive kernels carry the reward (tracking, upright torso, posture); penalties stay
        # small, so staying up always pays and no termination penalty is needed.
        "track_lin_vel_xy_exp": RewardTermCfg(
            func=mdp.track_lin_vel_xy_exp, weight=2.0, params={"std": 0.5}
        ),
        "track_ang_vel_z_exp": RewardTermCfg(
            func=mdp.track_ang_vel_z_exp, weight=2.0, params={"std": math.sqrt(0.5)}
        ),
        "upright": RewardTermCfg(
            func=velocity_mdp.upright,
            weight=1.0,
            params={
                "std": math.sqrt(0.2),
                "asset_cfg": SceneEntityCfg("robot", body_names=("torso_link",)),
            },
        ),
        "posture": RewardTermCfg(
            func=velocity_mdp.variable_posture,
            weight=1.0,
            params={
                "std_standing": POSTURE_STD_STANDING,
                "std_walking": POSTURE_STD_WALKING,
                "std_running": POSTURE_STD_RUNNING,
            },
        ),
        "body_ang_vel": RewardTermCfg(
            func=velocity_mdp.body_ang_vel_xy_l2,
            weight=-0.05,
            params={"asset_cfg": SceneEntityCfg("robot", body_names=("torso_link",))},
        ),
        "foot_clearance": RewardTermCfg(
            func=velocity_mdp.feet_clearance,
            weight=-2.0,
            params={
                "target_height": 0.1,
                "foot_height_offset": FOOT_HEIGHT_OFFSET,
                "asset_cfg": SceneEntityCfg("robot", body_names=FOOT_BODIES),
            },
        ),
        "foot_slip": RewardTermCfg(
            func=velocity_mdp.feet_slip,
            weight=-0.1,
            params={
                "sensor_name": "feet_contact",
                "asset_cfg": SceneEntityCfg("robot", body_names=FOOT_BODIES),
            },
        ),
        "action_rate_l2": RewardTermCfg(func=mdp.action_rate_l2, weight=-0.1),
        "lin_vel_z_l2": None,
        "ang_vel_xy_l2": None,
        "flat_orientation_l2": None,
        "joint_torques_l2": None,
        "joint_acc_l2": None,
        "feet_air_time": None,
    },
)


FLAT_TIGHT_TRACKING_STEP = 1600 * 24
"""Env step from which G1 flat tracks linear velocity with a tighter kernel: iteration 1600 of
its PPO run (24 env steps per iteration)."""
FLAT_TIGHT_TRACKING_STD = 0.3
"""The tighter kernel's std, m/s (0.5 before)."""


def flat() -> ManagerBasedRlEnvCfg:
    """G1 flat. Once the robot walks (iteration 1600), the linear-velocity kernel tightens
    from std 0.5 to 0.3 m/s: with the wide kernel a 0.1 m/s error costs under 4 % of the term,
    and the policy side-stepped one way only (0.04 m/s at a 0.3 m/s command to the left);
    100 iterations with the tight kernel brought both sides within 0.07 m/s (0.28 m/s left,
    0.26 m/s right in plain MuJoCo)."""
    cfg = velocity_env_cfg(G1_VELOCITY, rough=False)
    cfg.curriculum["track_lin_vel_std"] = CurriculumTermCfg(
        func=mdp.reward_curriculum,
        params={
            "reward_name": "track_lin_vel_xy_exp",
            "stages": [
                {"step": FLAT_TIGHT_TRACKING_STEP, "params": {"std": FLAT_TIGHT_TRACKING_STD}}
            ],
        },
    )
    return cfg


def flat_play() -> ManagerBasedRlEnvCfg:
    return velocity_play_env_cfg(G1_VELOCITY, rough=False)


def rough() -> ManagerBasedRlEnvCfg:
    return velocity_env_cfg(G1_VELOCITY, rough=True)


def rough_play() -> ManagerBasedRlEnvCfg:
    return velocity_play_env_cfg(G1_VELOCITY, rough=True)

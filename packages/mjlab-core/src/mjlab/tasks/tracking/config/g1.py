"""G1 motion tracking (`Mjlab-Tracking-Flat-Unitree-G1` and its `-No-State-Estimation` variant)."""

from __future__ import annotations

from mjlab.envs import ManagerBasedRlEnvCfg
from mjlab.tasks.robots.g1 import G1
from mjlab.tasks.tracking.tracking_env_cfg import (
    TrackingRobotCfg,
    tracking_env_cfg,
    tracking_play_env_cfg,
)

G1_TRACKING = TrackingRobotCfg(
    robot=G1,
    anchor_body="torso_link",
    # BeyondMimic's 14 bodies: pelvis, hips, knees, feet, torso, shoulders, elbows, wrists.
    tracked_bodies=(
        "pelvis",
        ".*_hip_roll_link",
        ".*_knee_link",
        ".*_ankle_roll_link",
        "torso_link",
        ".*_shoulder_roll_link",
        ".*_elbow_link",
        ".*_wrist_yaw_link",
    ),
    end_effectors=(".*_ankle_roll_link", ".*_wrist_yaw_link"),
    undesired_contacts=(
        "pelvis",
        ".*_hip_.*_link",
        ".*_knee_link",
        ".*_ankle_pitch_link",
        "waist_.*_link",
        "torso_link",
        ".*_shoulder_.*_link",
        ".*_elbow_link",
        ".*_wrist_(roll|pitch)_link",
    ),
)


def flat() -> ManagerBasedRlEnvCfg:
    return tracking_env_cfg(G1_TRACKING)


def flat_play() -> ManagerBasedRlEnvCfg:
    return tracking_play_env_cfg(G1_TRACKING)


def flat_no_state_estimation() -> ManagerBasedRlEnvCfg:
    return tracking_env_cfg(G1_TRACKING, state_estimation=False)


def flat_no_state_estimation_play() -> ManagerBasedRlEnvCfg:
    return tracking_play_env_cfg(G1_TRACKING, state_estimation=False)

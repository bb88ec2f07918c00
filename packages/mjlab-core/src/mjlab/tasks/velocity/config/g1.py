"""G1 velocity tracking (`Mjlab-Velocity-{Flat,Rough}-Unitree-G1`)."""

from __future__ import annotations

from mjlab.envs import ManagerBasedRlEnvCfg, mdp
from mjlab.managers import RewardTermCfg, SceneEntityCfg
from mjlab.sensor import ContactMatch
from mjlab.tasks.robots.g1 import G1
from mjlab.tasks.velocity.velocity_env_cfg import (
    VelocityRobotCfg,
    velocity_env_cfg,
    velocity_play_env_cfg,
)

G1_VELOCITY = VelocityRobotCfg(
    robot=G1,
    illegal=ContactMatch(mode="body", patterns=("pelvis", "torso_link")),
    undesired=None,
    min_base_height=0.4,
    air_time_threshold=0.4,
    # A humanoid pays more per step in penalties (29 joints) than it earns early on, so without a
    # price on falling PPO learns to fall at once (mean episode length 60 -> 20 steps over the
    # first 50 iterations). As in Isaac Lab's G1 velocity task: a termination penalty, arms and
    # waist held near their default pose, a lighter action-rate penalty.
    reward_overrides={
        "termination_penalty": RewardTermCfg(func=mdp.is_terminated, weight=-200.0),
        "joint_deviation_upper": RewardTermCfg(
            func=mdp.joint_deviation_l1,
            weight=-0.1,
            params={
                "asset_cfg": SceneEntityCfg(
                    "robot",
                    joint_names=(
                        "waist_.*",
                        ".*_shoulder_.*",
                        ".*_elbow_joint",
                        ".*_wrist_.*",
                        ".*_hip_(yaw|roll)_joint",
                    ),
                )
            },
        ),
        "action_rate_l2": RewardTermCfg(func=mdp.action_rate_l2, weight=-0.005),
        # legged_gym's air-time term pays (air time - 0.4 s) per touchdown: negative for the
        # quick steps a humanoid starts with; with it the G1 learned to stand (episodes of
        # ~850 steps by iteration 250) but not to walk (tracking flat at 0.3 of its maximum).
        "feet_air_time": RewardTermCfg(
            func=mdp.feet_air_time_biped,
            weight=0.5,
            params={"sensor_name": "feet_contact", "threshold": 0.4},
        ),
    },
)


def flat() -> ManagerBasedRlEnvCfg:
    return velocity_env_cfg(G1_VELOCITY, rough=False)


def flat_play() -> ManagerBasedRlEnvCfg:
    return velocity_play_env_cfg(G1_VELOCITY, rough=False)


def rough() -> ManagerBasedRlEnvCfg:
    return velocity_env_cfg(G1_VELOCITY, rough=True)


def rough_play() -> ManagerBasedRlEnvCfg:
    return velocity_play_env_cfg(G1_VELOCITY, rough=True)

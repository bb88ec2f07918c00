"""Go1 velocity tracking (`Mjlab-Velocity-{Flat,Rough}-Unitree-Go1`)."""

from __future__ import annotations

from mjlab.envs import ManagerBasedRlEnvCfg
from mjlab.sensor import ContactMatch
from mjlab.tasks.robots.go1 import GO1
from mjlab.tasks.velocity.velocity_env_cfg import (
    VelocityRobotCfg,
    velocity_env_cfg,
    velocity_play_env_cfg,
)

GO1_VELOCITY = VelocityRobotCfg(
    robot=GO1,
    illegal=ContactMatch(mode="body", patterns=("trunk",)),
    undesired=ContactMatch(mode="body", patterns=(".*_thigh",)),
    min_base_height=0.15,
    air_time_threshold=0.25,
)


def flat() -> ManagerBasedRlEnvCfg:
    """512 envs (the velocity tasks' default is 1024): more PPO iterations per minute on a CPU
    than 1024, and faster learning than 256 (docs/results.md, Go1 flat)."""
    return velocity_env_cfg(GO1_VELOCITY, rough=False, num_envs=512)


def flat_play() -> ManagerBasedRlEnvCfg:
    return velocity_play_env_cfg(GO1_VELOCITY, rough=False)


def rough() -> ManagerBasedRlEnvCfg:
    return velocity_env_cfg(GO1_VELOCITY, rough=True)


def rough_play() -> ManagerBasedRlEnvCfg:
    return velocity_play_env_cfg(GO1_VELOCITY, rough=True)

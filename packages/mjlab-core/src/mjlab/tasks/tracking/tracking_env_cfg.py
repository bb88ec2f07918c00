"""Whole-body motion tracking for humanoids (BeyondMimic-style): 50 Hz policy, a reference
motion played one frame per step, episodes that end with the motion or when the robot leaves it.

Actor observations: the reference joint positions and velocities (the command), the reference
anchor's position and orientation in the robot anchor frame, base velocities, joint positions
and velocities, the last action. The no-state-estimation variant drops what a robot without a
state estimator cannot measure: the anchor position error and the base linear velocity. The
critic also sees every tracked body's pose in the anchor frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mjlab.envs import ManagerBasedRlEnvCfg, ViewerCfg, mdp
from mjlab.managers import (
    EventTermCfg,
    ObservationGroupCfg,
    ObservationTermCfg,
    RewardTermCfg,
    SceneEntityCfg,
    TerminationTermCfg,
    UniformNoiseCfg,
)
from mjlab.scene import SceneCfg
from mjlab.sensor import ContactMatch, ContactSensorCfg
from mjlab.sim import MujocoCfg, SimulationCfg
from mjlab.tasks.robots import RobotCfg
from mjlab.tasks.tracking import mdp as tracking
from mjlab.terrains import TerrainImporterCfg
from mjlab.terrains.terrain_importer import TERRAIN_NAME
from mjlab.utils.config import Config


@dataclass(kw_only=True)
class TrackingRobotCfg(Config):
    """A humanoid in the tracking task: its `RobotCfg` and the bodies the task names."""

    robot: RobotCfg
    """The robot (model, actuators)."""
    anchor_body: str
    """The body whose pose anchors the reference (BeyondMimic: the torso)."""
    tracked_bodies: tuple[str, ...]
    """Bodies whose poses and velocities are tracked."""
    end_effectors: tuple[str, ...]
    """Tracked bodies whose height error ends an episode (feet and hands)."""
    undesired_contacts: tuple[str, ...]
    """Bodies whose ground contacts are penalized (all but the feet and hands); regexes."""


def _obs(noise: bool, state_estimation: bool, privileged: bool) -> ObservationGroupCfg:
    def n(a: float) -> UniformNoiseCfg | None:
        return UniformNoiseCfg(n_min=-a, n_max=a) if noise else None

    terms: dict[str, Any] = {
        "command": ObservationTermCfg(
            func=mdp.generated_commands, params={"command_name": "motion"}
        ),
        "motion_anchor_pos_b": ObservationTermCfg(
            func=tracking.motion_anchor_pos_b, params={"command_name": "motion"}, noise=n(0.25)
        ),
        "motion_anchor_ori_b": ObservationTermCfg(
            func=tracking.motion_anchor_ori_b, params={"command_name": "motion"}, noise=n(0.05)
        ),
        "base_lin_vel": ObservationTermCfg(func=mdp.base_lin_vel, noise=n(0.5)),
        "base_ang_vel": ObservationTermCfg(func=mdp.base_ang_vel, noise=n(0.2)),
        "joint_pos": ObservationTermCfg(func=mdp.joint_pos_rel, noise=n(0.01)),
        "joint_vel": ObservationTermCfg(func=mdp.joint_vel_rel, noise=n(0.5)),
        "actions": ObservationTermCfg(func=mdp.last_action),
    }
    if not state_estimation:
        terms["motion_anchor_pos_b"] = None
        terms["base_lin_vel"] = None
    if privileged:
        terms["body_pos"] = ObservationTermCfg(
            func=tracking.robot_body_pos_b, params={"command_name": "motion"}
        )
        terms["body_ori"] = ObservationTermCfg(
            func=tracking.robot_body_ori_b, params={"command_name": "motion"}
        )
    return ObservationGroupCfg(terms=terms, enable_corruption=noise)


def _rewards() -> dict[str, RewardTermCfg | None]:
    # BeyondMimic's weights and kernel widths, plus a termination penalty.
    cmd = {"command_name": "motion"}
    return {
        "motion_global_anchor_pos": RewardTermCfg(
            func=tracking.motion_global_anchor_position_error_exp,
            weight=0.5,
            params={**cmd, "std": 0.3},
        ),
        "motion_global_anchor_ori": RewardTermCfg(
            func=tracking.motion_global_anchor_orientation_error_exp,
            weight=0.5,
            params={**cmd, "std": 0.4},
        ),
        "motion_body_pos": RewardTermCfg(
            func=tracking.motion_relative_body_position_error_exp,
            weight=1.0,
            params={**cmd, "std": 0.3},
        ),
        "motion_body_ori": RewardTermCfg(
            func=tracking.motion_relative_body_orientation_error_exp,
            weight=1.0,
            params={**cmd, "std": 0.4},
        ),
        "motion_body_lin_vel": RewardTermCfg(
            func=tracking.motion_global_body_linear_velocity_error_exp,
            weight=1.0,
            params={**cmd, "std": 1.0},
        ),
        "motion_body_ang_vel": RewardTermCfg(
            func=tracking.motion_global_body_angular_velocity_error_exp,
            weight=1.0,
            params={**cmd, "std": 3.14},
        ),
        "action_rate_l2": RewardTermCfg(func=mdp.action_rate_l2, weight=-0.1),
        # Not in BeyondMimic: early on the action-rate penalty outweighs the tracking terms, so
        # without a price on falling PPO learns to end episodes sooner (mean episode length
        # 37 -> 21 steps over the first 20 iterations on the synthetic squat), as the G1
        # velocity task did before its termination penalty.
        "termination_penalty": RewardTermCfg(func=mdp.is_terminated, weight=-200.0),
        "joint_limit": RewardTermCfg(func=mdp.joint_pos_limits, weight=-10.0),
        "undesired_contacts": RewardTermCfg(
            func=mdp.undesired_contacts,
            weight=-0.1,
            params={"sensor_name": "undesired_contact", "threshold": 1.0},
        ),
    }


def _terminations(task: TrackingRobotCfg) -> dict[str, TerminationTermCfg | None]:
    cmd = {"command_name": "motion"}
    return {
        "time_out": TerminationTermCfg(func=mdp.time_out, time_out=True),
        "motion_ended": TerminationTermCfg(func=tracking.motion_ended, params=cmd, time_out=True),
        "anchor_pos": TerminationTermCfg(
            func=tracking.bad_anchor_height, params={**cmd, "threshold": 0.25}
        ),
        "anchor_ori": TerminationTermCfg(
            func=tracking.bad_anchor_orientation, params={**cmd, "threshold": 0.8}
        ),
        "ee_body_pos": TerminationTermCfg(
            func=tracking.bad_body_height,
            params={**cmd, "threshold": 0.25, "body_names": task.end_effectors},
        ),
    }


def tracking_env_cfg(
    task: TrackingRobotCfg,
    state_estimation: bool = True,
    motion_file: str = "synthetic:squat",
    num_envs: int = 1024,
) -> ManagerBasedRlEnvCfg:
    """The training config of the tracking task for one humanoid and one motion.

    Args:
        task: the robot and its named bodies.
        state_estimation: False drops the anchor position error and base linear velocity from
            the actor's observations (a robot without a state estimator).
        motion_file: a motion `.npz`, or "synthetic:<clip>" (see `MotionCommandCfg.motion_file`).
        num_envs: parallel envs.
    """
    return ManagerBasedRlEnvCfg(
        decimation=4,
        episode_length_s=10.0,
        scene=SceneCfg(
            num_envs=num_envs,
            env_spacing=2.5,
            terrain=TerrainImporterCfg(terrain_type="plane"),
            entities={"robot": task.robot.entity_cfg()},
            sensors=(
                ContactSensorCfg(
                    name="undesired_contact",
                    primary=ContactMatch(mode="body", patterns=task.undesired_contacts),
                    secondary=ContactMatch(mode="body", patterns=(TERRAIN_NAME,), entity=None),
                    track_air_time=False,
                ),
            ),
        ),
        sim=SimulationCfg(
            mujoco=MujocoCfg(timestep=0.005, iterations=10, ls_iterations=20), nconmax=64, njmax=256
        ),
        observations={
            "actor": _obs(noise=True, state_estimation=state_estimation, privileged=False),
            "critic": _obs(noise=False, state_estimation=True, privileged=True),
        },
        actions={
            "joint_pos": mdp.JointPositionActionCfg(
                scale=task.robot.action_scale, use_default_offset=True
            )
        },
        commands={
            "motion": tracking.MotionCommandCfg(
                motion_file=motion_file,
                anchor_body_name=task.anchor_body,
                body_names=task.tracked_bodies,
                pose_range={
                    "x": (-0.05, 0.05),
                    "y": (-0.05, 0.05),
                    "z": (-0.01, 0.01),
                    "roll": (-0.1, 0.1),
                    "pitch": (-0.1, 0.1),
                    "yaw": (-0.2, 0.2),
                },
                velocity_range={
                    "x": (-0.5, 0.5),
                    "y": (-0.5, 0.5),
                    "z": (-0.2, 0.2),
                    "roll": (-0.52, 0.52),
                    "pitch": (-0.52, 0.52),
                    "yaw": (-0.78, 0.78),
                },
                joint_position_range=(-0.1, 0.1),
            )
        },
        rewards=_rewards(),
        terminations=_terminations(task),
        events={
            "foot_friction": EventTermCfg(
                func=mdp.randomize_geom_friction,
                mode="startup",
                params={
                    "friction_range": (0.3, 1.6),
                    "asset_cfg": SceneEntityCfg("robot", geom_names=(".*",)),
                },
            ),
            "push": EventTermCfg(
                func=mdp.push_by_setting_velocity,
                mode="interval",
                interval_range_s=(1.0, 3.0),
                params={"velocity_range": {"x": (-0.5, 0.5), "y": (-0.5, 0.5), "z": (-0.2, 0.2)}},
            ),
        },
        viewer=ViewerCfg(distance=3.0, elevation=-10.0, azimuth=90.0),
    )


def tracking_play_env_cfg(
    task: TrackingRobotCfg, state_estimation: bool = True, motion_file: str = "synthetic:squat"
) -> ManagerBasedRlEnvCfg:
    """Play variant: every episode plays the whole motion from its first frame (the episode
    ends with the motion, up to an hour), no noise, no randomization or pushes."""
    cfg = tracking_env_cfg(task, state_estimation, motion_file, num_envs=8)
    cfg.episode_length_s = 3600.0
    motion = cfg.commands["motion"]
    motion.start_at_first_frame = True
    motion.pose_range, motion.velocity_range = {}, {}
    motion.joint_position_range = (0.0, 0.0)
    cfg.events["foot_friction"] = None
    cfg.events["push"] = None
    cfg.observations["actor"].enable_corruption = False
    return cfg

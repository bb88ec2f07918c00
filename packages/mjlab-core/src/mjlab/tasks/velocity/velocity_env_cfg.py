"""Base-velocity tracking for legged robots: 50 Hz policy, 20 s episodes, velocity command
with heading control, asymmetric actor/critic observations, feet air time and contact terms,
pushes, friction/mass randomization and (rough) a terrain curriculum."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any

from mjlab.envs import ManagerBasedRlEnvCfg, ViewerCfg, mdp
from mjlab.managers import (
    CurriculumTermCfg,
    EventTermCfg,
    ObservationGroupCfg,
    ObservationTermCfg,
    RewardTermCfg,
    SceneEntityCfg,
    TerminationTermCfg,
    UniformNoiseCfg,
)
from mjlab.scene import SceneCfg
from mjlab.sensor import ContactMatch, ContactSensorCfg, HeightScanCfg
from mjlab.sim import MujocoCfg, SimulationCfg
from mjlab.tasks.robots import RobotCfg
from mjlab.tasks.velocity.terrains import rough_terrain_cfg
from mjlab.terrains import TerrainImporterCfg
from mjlab.terrains.terrain_importer import TERRAIN_NAME
from mjlab.utils.config import Config


@dataclass(kw_only=True)
class VelocityRobotCfg(Config):
    """A robot in the velocity task: its `RobotCfg` and what the task adds for it."""

    robot: RobotCfg
    """The robot (model, actuators, base and foot names)."""
    illegal: ContactMatch
    """Bodies whose contact with the ground ends the episode (trunk / pelvis)."""
    undesired: ContactMatch | None
    """Contacts penalized, with anything (thighs, shins)."""
    min_base_height: float
    """Terminate below this base height, m."""
    air_time_threshold: float
    """Feet air time reward threshold, s."""
    reward_overrides: dict[str, RewardTermCfg | None] = field(default_factory=dict)
    """Reward terms replaced, added or (None) removed for this robot, by name."""
    clamp_to_joint_limits: bool = False
    """Clamp the joint position targets to the joint range in training, as the robot-side loop
    does (`JointPositionActionCfg.clamp_to_joint_limits`)."""

    @property
    def feet(self) -> ContactMatch:
        """Foot contact slots: the foot geoms, or the subtrees of the foot bodies."""
        if self.robot.foot_geoms:
            return ContactMatch(mode="geom", patterns=self.robot.foot_geoms)
        return ContactMatch(mode="subtree", patterns=self.robot.foot_bodies)


def _obs(noise: bool, height_scan: bool, privileged: bool) -> ObservationGroupCfg:
    def n(a: float) -> UniformNoiseCfg | None:
        return UniformNoiseCfg(n_min=-a, n_max=a) if noise else None

    terms: dict[str, Any] = {
        "base_lin_vel": ObservationTermCfg(func=mdp.base_lin_vel, noise=n(0.1)),
        "base_ang_vel": ObservationTermCfg(func=mdp.base_ang_vel, noise=n(0.2)),
        "projected_gravity": ObservationTermCfg(func=mdp.projected_gravity, noise=n(0.05)),
        "command": ObservationTermCfg(
            func=mdp.generated_commands, params={"command_name": "twist"}
        ),
        "joint_pos": ObservationTermCfg(func=mdp.joint_pos_rel, noise=n(0.01)),
        "joint_vel": ObservationTermCfg(func=mdp.joint_vel_rel, noise=n(1.5)),
        "actions": ObservationTermCfg(func=mdp.last_action),
    }
    if height_scan:
        terms["height_scan"] = ObservationTermCfg(
            func=mdp.height_scan,
            params={"sensor_name": "height_scan"},
            noise=n(0.1),
            clip=(-1.0, 1.0),
        )
    if privileged:
        terms["foot_contact"] = ObservationTermCfg(
            func=mdp.foot_contact, params={"sensor_name": "feet_contact"}
        )
    return ObservationGroupCfg(terms=terms, enable_corruption=noise)


def _sensors(task: VelocityRobotCfg, rough: bool) -> tuple:
    # Feet and the base count contacts with the ground only: a robot with self-collision pairs
    # (the G1's arms against its torso) must not end an episode by touching itself.
    ground = ContactMatch(mode="body", patterns=(TERRAIN_NAME,), entity=None)
    sensors: list = [
        ContactSensorCfg(name="feet_contact", primary=task.feet, secondary=ground),
        ContactSensorCfg(
            name="illegal_contact", primary=task.illegal, secondary=ground, track_air_time=False
        ),
    ]
    if task.undesired is not None:
        sensors.append(
            ContactSensorCfg(name="undesired_contact", primary=task.undesired, track_air_time=False)
        )
    if rough:
        sensors.append(HeightScanCfg(name="height_scan", body_name=task.robot.base_body))
    return tuple(sensors)


def _rewards(task: VelocityRobotCfg, rough: bool) -> dict[str, RewardTermCfg | None]:
    rewards: dict[str, RewardTermCfg | None] = {
        "track_lin_vel_xy_exp": RewardTermCfg(
            func=mdp.track_lin_vel_xy_exp, weight=1.0, params={"std": 0.5}
        ),
        "track_ang_vel_z_exp": RewardTermCfg(
            func=mdp.track_ang_vel_z_exp, weight=0.5, params={"std": 0.5}
        ),
        "lin_vel_z_l2": RewardTermCfg(func=mdp.lin_vel_z_l2, weight=-2.0),
        "ang_vel_xy_l2": RewardTermCfg(func=mdp.ang_vel_xy_l2, weight=-0.05),
        "flat_orientation_l2": RewardTermCfg(
            func=mdp.flat_orientation_l2, weight=-1.0 if not rough else -0.5
        ),
        "joint_torques_l2": RewardTermCfg(func=mdp.joint_torques_l2, weight=-1e-5),
        "joint_acc_l2": RewardTermCfg(func=mdp.joint_acc_l2, weight=-2.5e-7),
        "action_rate_l2": RewardTermCfg(func=mdp.action_rate_l2, weight=-0.01),
        "joint_pos_limits": RewardTermCfg(func=mdp.joint_pos_limits, weight=-1.0),
        "feet_air_time": RewardTermCfg(
            func=mdp.feet_air_time,
            weight=0.25,
            params={"sensor_name": "feet_contact", "threshold": task.air_time_threshold},
        ),
        "undesired_contacts": None
        if task.undesired is None
        else RewardTermCfg(
            func=mdp.undesired_contacts, weight=-1.0, params={"sensor_name": "undesired_contact"}
        ),
    }
    # Copies: every config built from this VelocityRobotCfg gets terms of its own.
    rewards.update(copy.deepcopy(task.reward_overrides))
    return rewards


def _terminations(task: VelocityRobotCfg) -> dict[str, TerminationTermCfg | None]:
    return {
        "time_out": TerminationTermCfg(func=mdp.time_out, time_out=True),
        "illegal_contact": TerminationTermCfg(
            func=mdp.illegal_contact, params={"sensor_name": "illegal_contact"}
        ),
        "bad_orientation": TerminationTermCfg(
            func=mdp.bad_orientation, params={"limit_angle": math.radians(70)}
        ),
        "base_too_low": TerminationTermCfg(
            func=mdp.root_height_below_minimum, params={"minimum_height": task.min_base_height}
        ),
    }


def _events(task: VelocityRobotCfg) -> dict[str, EventTermCfg | None]:
    return {
        "foot_friction": EventTermCfg(
            func=mdp.randomize_geom_friction,
            mode="startup",
            params={
                "friction_range": (0.4, 1.2),
                "asset_cfg": SceneEntityCfg("robot", geom_names=(".*",)),
            },
        ),
        "base_mass": EventTermCfg(
            func=mdp.randomize_body_mass,
            mode="startup",
            params={
                "mass_range": (0.9, 1.1),
                "operation": "scale",
                "asset_cfg": SceneEntityCfg("robot", body_names=(task.robot.base_body,)),
            },
        ),
        "reset_base": EventTermCfg(
            func=mdp.reset_root_state_uniform,
            mode="reset",
            params={
                "pose_range": {"x": (-0.5, 0.5), "y": (-0.5, 0.5), "yaw": (-math.pi, math.pi)},
                "velocity_range": {},
            },
        ),
        "reset_joints": EventTermCfg(
            func=mdp.reset_joints_by_scale,
            mode="reset",
            params={"position_range": (0.8, 1.2), "velocity_range": (0.0, 0.0)},
        ),
        "push": EventTermCfg(
            func=mdp.push_by_setting_velocity,
            mode="interval",
            interval_range_s=(10.0, 15.0),
            params={"velocity_range": {"x": (-0.5, 0.5), "y": (-0.5, 0.5)}},
        ),
    }


def _twist_command() -> mdp.UniformVelocityCommandCfg:
    return mdp.UniformVelocityCommandCfg(
        resampling_time_range=(10.0, 10.0),
        rel_standing_envs=0.1,
        rel_heading_envs=1.0,
        heading_command=True,
        ranges=mdp.VelocityRanges(
            lin_vel_x=(-1.0, 1.0),
            lin_vel_y=(-0.5, 0.5),
            ang_vel_z=(-1.0, 1.0),
            heading=(-math.pi, math.pi),
        ),
    )


def velocity_env_cfg(
    task: VelocityRobotCfg, rough: bool, num_envs: int = 1024
) -> ManagerBasedRlEnvCfg:
    """The training config of a velocity task for one robot, on flat or rough terrain."""
    terrain = rough_terrain_cfg() if rough else TerrainImporterCfg(terrain_type="plane")
    return ManagerBasedRlEnvCfg(
        decimation=4,
        episode_length_s=20.0,
        scene=SceneCfg(
            num_envs=num_envs,
            env_spacing=2.5,
            terrain=terrain,
            entities={"robot": task.robot.entity_cfg()},
            sensors=_sensors(task, rough),
        ),
        sim=SimulationCfg(
            mujoco=MujocoCfg(timestep=0.005, iterations=10, ls_iterations=20), nconmax=64, njmax=256
        ),
        observations={
            "actor": _obs(noise=True, height_scan=False, privileged=False),
            "critic": _obs(noise=False, height_scan=rough, privileged=True),
        },
        actions={
            "joint_pos": mdp.JointPositionActionCfg(
                scale=task.robot.action_scale,
                use_default_offset=True,
                clamp_to_joint_limits=task.clamp_to_joint_limits,
            )
        },
        commands={"twist": _twist_command()},
        rewards=_rewards(task, rough),
        terminations=_terminations(task),
        events=_events(task),
        curriculum={
            "terrain_levels": CurriculumTermCfg(func=mdp.terrain_levels) if rough else None,
        },
        viewer=ViewerCfg(distance=2.0, elevation=-15.0, azimuth=120.0),
    )


def velocity_play_env_cfg(
    task: VelocityRobotCfg, rough: bool, fixed_command: tuple[float, float, float] | None = None
) -> ManagerBasedRlEnvCfg:
    """Play variant: no randomization or pushes, 60 s episodes, optionally a fixed command
    (vx m/s, vy m/s, wz rad/s) without heading control."""
    cfg = velocity_env_cfg(task, rough, num_envs=8)
    cfg.episode_length_s = 60.0
    for name in ("foot_friction", "base_mass", "push"):
        cfg.events[name] = None
    cfg.observations["actor"].enable_corruption = False
    if fixed_command is not None:
        vx, vy, wz = fixed_command
        twist = cfg.commands["twist"]
        twist.heading_command = False
        twist.rel_standing_envs = 0.0
        twist.ranges = mdp.VelocityRanges(
            lin_vel_x=(vx, vx), lin_vel_y=(vy, vy), ang_vel_z=(wz, wz), heading=None
        )
    return cfg


def with_mjlab_dr(cfg: ManagerBasedRlEnvCfg, task: VelocityRobotCfg) -> ManagerBasedRlEnvCfg:
    """A copy of a velocity config with sim-to-real randomization from `mjlab.envs.mdp.dr` added
    on top of the task's own (foot friction, base mass, pushes), as mjlab's velocity recipes
    randomize; `cfg` is left as it was.

    Added startup events, drawn once per env:
    - `encoder_bias`: a joint encoder offset U(-0.015, 0.015) rad per joint, which the actor's
      `joint_pos` term then reads (`joint_pos_rel(biased=True)`); the critic sees true positions.
    - `pd_gains`: the position actuators' kp and kd each scaled by U(0.9, 1.1) per joint.
    - `base_com`: the base body's centre of mass moved by U(-0.025, 0.025) m on each axis.

    The built-in tasks train without them (their committed curves and policies are from the
    recipe as it is); use this for a policy meant for a real robot, e.g.
    `with_mjlab_dr(velocity_env_cfg(G1_VELOCITY, rough=False), G1_VELOCITY)`.
    """
    from mjlab.envs.mdp import dr

    out = copy.deepcopy(cfg)
    out.events = dict(out.events)
    out.events["encoder_bias"] = EventTermCfg(
        func=dr.encoder_bias, mode="startup", params={"bias_range": (-0.015, 0.015)}
    )
    out.events["pd_gains"] = EventTermCfg(
        func=dr.pd_gains,
        mode="startup",
        params={"kp_range": (0.9, 1.1), "kd_range": (0.9, 1.1), "operation": "scale"},
    )
    out.events["base_com"] = EventTermCfg(
        func=dr.body_com_offset,
        mode="startup",
        params={
            "ranges": (-0.025, 0.025),
            "asset_cfg": SceneEntityCfg("robot", body_names=(task.robot.base_body,)),
        },
    )
    joint_pos = out.observations["actor"].terms["joint_pos"]
    joint_pos.params = {**joint_pos.params, "biased": True}
    return out

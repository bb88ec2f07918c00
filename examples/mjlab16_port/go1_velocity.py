"""A velocity task written against mjlab 1.6's public API, brought over with the robot swapped.

The task is built the way mjlab's own velocity tasks are: a robot-agnostic factory
(`make_velocity_env_cfg`) returns a complete config whose terms, sensors and events are keyed
by name, and a per-robot function (`unitree_go1_rough_env_cfg`, `unitree_go1_flat_env_cfg`)
edits it by those names. Every import below but the robot's is an mjlab 1.6 module path.
What differs from mjlab: the robot asset (mjlab's asset zoo `get_go1_robot_cfg()` and
`GO1_ACTION_SCALE`; here mjlab-core's Menagerie Go1, `GO1.entity_cfg()` and
`GO1.action_scale`), `entity=None` on the ground's contact match (this project's
`ContactMatch` defaults to the entity "robot"), and the velocity command config's module
(mjlab: `mjlab.tasks.velocity.mdp`; here `mjlab.envs.mdp`). `docs/guides/migrating.md` lists
what else differs between the two libraries.

`register()` adds the tasks "Port-Velocity-Flat-Unitree-Go1" and
"Port-Velocity-Rough-Unitree-Go1"; called from a module named in your project's `mjlab.tasks`
entry point (see examples/downstream), they train with `train <task>`.
"""

from __future__ import annotations

import math

import torch

from mjlab.envs import ManagerBasedRlEnv, ManagerBasedRlEnvCfg
from mjlab.envs import mdp as envs_mdp
from mjlab.envs.mdp import JointPositionActionCfg, UniformVelocityCommandCfg, VelocityRanges
from mjlab.managers import (
    CurriculumTermCfg,
    EventTermCfg,
    MetricsTermCfg,
    ObservationGroupCfg,
    ObservationTermCfg,
    RewardTermCfg,
    SceneEntityCfg,
    TerminationTermCfg,
)
from mjlab.scene import SceneCfg
from mjlab.sensor import (
    ContactMatch,
    ContactSensorCfg,
    GridPatternCfg,
    ObjRef,
    RayCastSensorCfg,
    RingPatternCfg,
    TerrainHeightSensorCfg,
)
from mjlab.sim import MujocoCfg, SimulationCfg
from mjlab.tasks.registry import register_mjlab_task

# The robot asset: the one swapped import (mjlab: `from mjlab.asset_zoo.robots import
# GO1_ACTION_SCALE, get_go1_robot_cfg`).
from mjlab.tasks.robots.go1 import GO1
from mjlab.terrains import (
    BoxPyramidStairsTerrainCfg,
    BoxRandomGridTerrainCfg,
    HfPyramidSlopedTerrainCfg,
    HfRandomUniformTerrainCfg,
    TerrainEntityCfg,
    TerrainGeneratorCfg,
)
from mjlab.utils.noise import UniformNoiseCfg as Unoise

_ROBOT = SceneEntityCfg("robot")

# -- The task's own terms (mjlab keeps these in `mjlab.tasks.velocity.mdp`) ----------------------


def track_linear_velocity(
    env: ManagerBasedRlEnv, std: float, command_name: str, asset_cfg: SceneEntityCfg = _ROBOT
) -> torch.Tensor:
    """exp(-|v_xy - v*_xy|^2 / std^2) in the base frame. Returns: (num_envs,)."""
    command = env.command_manager.get_command(command_name)
    velocity = env.scene[asset_cfg.name].data.root_link_lin_vel_b[:, :2]
    return torch.exp(-(velocity - command[:, :2]).square().sum(dim=1) / std**2)


def track_angular_velocity(
    env: ManagerBasedRlEnv, std: float, command_name: str, asset_cfg: SceneEntityCfg = _ROBOT
) -> torch.Tensor:
    """exp(-(w_z - w*_z)^2 / std^2), base frame. Returns: (num_envs,)."""
    command = env.command_manager.get_command(command_name)
    rate = env.scene[asset_cfg.name].data.root_link_ang_vel_b[:, 2]
    return torch.exp(-(rate - command[:, 2]).square() / std**2)


def feet_air_time(
    env: ManagerBasedRlEnv, sensor_name: str, threshold: float, command_name: str
) -> torch.Tensor:
    """At each touchdown, the foot's last air time minus `threshold`, summed over feet; zero
    while the command asks to stand. Returns: (num_envs,) s."""
    data = env.scene[sensor_name].data
    touchdown = (data.current_contact_time > 0) & (data.current_contact_time <= env.step_dt)
    reward = ((data.last_air_time - threshold) * touchdown).sum(dim=1)
    moving = env.command_manager.get_command(command_name)[:, :2].norm(dim=1) > 0.1
    return reward * moving


def foot_clearance(
    env: ManagerBasedRlEnv, sensor_name: str, target_height: float, command_name: str
) -> torch.Tensor:
    """Squared shortfall of each foot's height above the terrain below `target_height`,
    summed over feet, while moving (the terrain-height sensor gives one height per foot).
    Returns: (num_envs,) m^2."""
    heights = env.scene[sensor_name].data.heights  # (num_envs, num_feet)
    shortfall = (target_height - heights).clamp(min=0.0).square().sum(dim=1)
    moving = env.command_manager.get_command(command_name)[:, :2].norm(dim=1) > 0.1
    return shortfall * moving


# -- The robot-agnostic factory -------------------------------------------------------------------


def make_velocity_env_cfg() -> ManagerBasedRlEnvCfg:
    """A complete velocity-tracking config for a robot named "robot" on rough terrain; the
    per-robot functions fill in the robot, its frames and its geoms by name."""
    terrain = TerrainEntityCfg(
        terrain_type="generator",
        terrain_generator=TerrainGeneratorCfg(
            size=(8.0, 8.0),
            num_rows=5,
            num_cols=10,
            border_width=4.0,
            curriculum=True,
            sub_terrains={
                "flat_noise": HfRandomUniformTerrainCfg(
                    proportion=0.3, noise_range=(0.01, 0.06), noise_step=0.01
                ),
                "slopes": HfPyramidSlopedTerrainCfg(
                    proportion=0.3, slope_range=(0.0, 0.4), platform_width=2.0
                ),
                "stairs": BoxPyramidStairsTerrainCfg(
                    proportion=0.2, step_height_range=(0.0, 0.1), step_width=0.3
                ),
                "grid": BoxRandomGridTerrainCfg(
                    proportion=0.2, grid_width=0.45, grid_height_range=(0.0, 0.08)
                ),
            },
        ),
        max_init_terrain_level=2,
    )
    sensors = (
        RayCastSensorCfg(
            name="terrain_scan",
            frame=ObjRef(type="body", name="base", entity="robot"),
            pattern=GridPatternCfg(size=(1.0, 0.6), resolution=0.2),
            ray_alignment="yaw",
            max_distance=3.0,
            include_geom_groups=(0,),
        ),
        TerrainHeightSensorCfg(
            name="foot_height_scan",
            frame=(ObjRef(type="body", name="foot", entity="robot"),),
            pattern=RingPatternCfg.single_ring(radius=0.04, num_samples=4),
            max_distance=1.0,
            include_geom_groups=(0,),
            reduction="min",
        ),
    )
    actor_terms = {
        "base_ang_vel": ObservationTermCfg(
            func=envs_mdp.base_ang_vel, noise=Unoise(n_min=-0.2, n_max=0.2)
        ),
        "projected_gravity": ObservationTermCfg(
            func=envs_mdp.projected_gravity, noise=Unoise(n_min=-0.05, n_max=0.05)
        ),
        "command": ObservationTermCfg(
            func=envs_mdp.generated_commands, params={"command_name": "twist"}
        ),
        "joint_pos": ObservationTermCfg(
            func=envs_mdp.joint_pos_rel, noise=Unoise(n_min=-0.01, n_max=0.01)
        ),
        "joint_vel": ObservationTermCfg(
            func=envs_mdp.joint_vel_rel, noise=Unoise(n_min=-1.5, n_max=1.5)
        ),
        "actions": ObservationTermCfg(func=envs_mdp.last_action),
        "height_scan": ObservationTermCfg(
            func=envs_mdp.height_scan,
            params={"sensor_name": "terrain_scan", "offset": 0.0},
            noise=Unoise(n_min=-0.05, n_max=0.05),
            clip=(-1.0, 1.0),
        ),
    }
    critic_terms = {
        **actor_terms,
        "base_lin_vel": ObservationTermCfg(func=envs_mdp.base_lin_vel),
    }
    return ManagerBasedRlEnvCfg(
        decimation=4,
        episode_length_s=20.0,
        scene=SceneCfg(num_envs=1024, terrain=terrain, sensors=sensors),
        sim=SimulationCfg(
            mujoco=MujocoCfg(timestep=0.005, iterations=10, ls_iterations=20),
            nconmax=64,
            njmax=256,
        ),
        observations={
            "actor": ObservationGroupCfg(terms=actor_terms, enable_corruption=True),
            "critic": ObservationGroupCfg(terms=critic_terms, enable_corruption=False),
        },
        actions={
            "joint_pos": JointPositionActionCfg(
                actuator_names=(".*",), scale=0.25, use_default_offset=True
            )
        },
        commands={
            "twist": UniformVelocityCommandCfg(
                resampling_time_range=(10.0, 10.0),
                rel_standing_envs=0.1,
                rel_heading_envs=1.0,
                heading_command=True,
                ranges=VelocityRanges(
                    lin_vel_x=(-1.0, 1.0), lin_vel_y=(-0.5, 0.5), ang_vel_z=(-1.0, 1.0)
                ),
            )
        },
        rewards={
            "track_linear_velocity": RewardTermCfg(
                func=track_linear_velocity,
                weight=1.0,
                params={"std": 0.5, "command_name": "twist"},
            ),
            "track_angular_velocity": RewardTermCfg(
                func=track_angular_velocity,
                weight=0.5,
                params={"std": 0.5, "command_name": "twist"},
            ),
            "pose": RewardTermCfg(func=envs_mdp.posture, weight=0.1, params={"std": 0.5}),
            "flat_orientation": RewardTermCfg(func=envs_mdp.flat_orientation_l2, weight=-0.5),
            "action_rate": RewardTermCfg(func=envs_mdp.action_rate_l2, weight=-0.01),
            "joint_limits": RewardTermCfg(func=envs_mdp.joint_pos_limits, weight=-1.0),
            "power": RewardTermCfg(func=envs_mdp.electrical_power_cost, weight=-1e-4),
            "air_time": RewardTermCfg(
                func=feet_air_time,
                weight=0.25,
                params={
                    "sensor_name": "feet_ground_contact",
                    "threshold": 0.3,
                    "command_name": "twist",
                },
            ),
            "foot_clearance": RewardTermCfg(
                func=foot_clearance,
                weight=-1.0,
                params={
                    "sensor_name": "foot_height_scan",
                    "target_height": 0.05,
                    "command_name": "twist",
                },
            ),
        },
        terminations={
            "time_out": TerminationTermCfg(func=envs_mdp.time_out, time_out=True),
            "fell_over": TerminationTermCfg(
                func=envs_mdp.bad_orientation, params={"limit_angle": math.radians(70.0)}
            ),
        },
        events={
            "foot_friction": EventTermCfg(
                mode="startup",
                func=envs_mdp.dr.geom_friction,
                params={
                    "asset_cfg": SceneEntityCfg("robot", geom_names=("foot",)),
                    "operation": "abs",
                    "ranges": (0.4, 1.2),
                    "axes": [0],
                },
            ),
            "base_com": EventTermCfg(
                mode="startup",
                func=envs_mdp.dr.body_com_offset,
                params={
                    "asset_cfg": SceneEntityCfg("robot", body_names=("base",)),
                    "operation": "add",
                    "ranges": {0: (-0.02, 0.02), 1: (-0.02, 0.02), 2: (-0.02, 0.02)},
                },
            ),
            "reset_base": EventTermCfg(
                mode="reset",
                func=envs_mdp.reset_root_state_uniform,
                params={
                    "pose_range": {"x": (-0.5, 0.5), "y": (-0.5, 0.5), "yaw": (-3.14, 3.14)},
                    "velocity_range": {},
                },
            ),
            "reset_joints": EventTermCfg(
                mode="reset",
                func=envs_mdp.reset_joints_by_offset,
                params={"position_range": (-0.1, 0.1), "velocity_range": (0.0, 0.0)},
            ),
            "push_robot": EventTermCfg(
                mode="interval",
                func=envs_mdp.push_by_setting_velocity,
                interval_range_s=(10.0, 15.0),
                params={"velocity_range": {"x": (-0.5, 0.5), "y": (-0.5, 0.5)}},
            ),
        },
        curriculum={
            "terrain_levels": CurriculumTermCfg(
                func=envs_mdp.terrain_levels, params={"command_name": "twist"}
            )
        },
        metrics={"mean_action_acc": MetricsTermCfg(func=envs_mdp.mean_action_acc)},
    )


# -- Per-robot edits, by name ---------------------------------------------------------------------


def unitree_go1_rough_env_cfg(play: bool = False) -> ManagerBasedRlEnvCfg:
    """Unitree Go1 on rough terrain."""
    cfg = make_velocity_env_cfg()
    cfg.scene.entities = {"robot": GO1.entity_cfg()}

    foot_names = ("FR", "FL", "RR", "RL")
    for sensor in cfg.scene.sensors:
        if sensor.name == "terrain_scan":
            sensor.frame.name = "trunk"
        if sensor.name == "foot_height_scan":
            sensor.frame = tuple(ObjRef(type="geom", name=f, entity="robot") for f in foot_names)
    feet_ground_cfg = ContactSensorCfg(
        name="feet_ground_contact",
        primary=ContactMatch(mode="geom", pattern=foot_names, entity="robot"),
        secondary=ContactMatch(mode="body", pattern="terrain", entity=None),
        fields=("found", "force"),
        reduce="netforce",
        num_slots=1,
        track_air_time=True,
    )
    cfg.scene.sensors = (*cfg.scene.sensors, feet_ground_cfg)

    joint_pos_action = cfg.actions["joint_pos"]
    assert isinstance(joint_pos_action, JointPositionActionCfg)
    joint_pos_action.scale = GO1.action_scale

    cfg.events["foot_friction"].params["asset_cfg"].geom_names = foot_names
    cfg.events["base_com"].params["asset_cfg"].body_names = ("trunk",)
    cfg.rewards["pose"].params["std"] = {
        r".*_(hip|thigh)_joint": 0.3,
        r".*_calf_joint": 0.6,
    }

    if play:
        cfg.episode_length_s = int(1e9)
        cfg.observations["actor"].enable_corruption = False
        cfg.events.pop("push_robot", None)
        cfg.curriculum = {}
        cfg.events["randomize_terrain"] = EventTermCfg(
            func=envs_mdp.randomize_terrain, mode="reset", params={}
        )
        cfg.scene.terrain.terrain_generator.curriculum = False
    return cfg


def unitree_go1_flat_env_cfg(play: bool = False) -> ManagerBasedRlEnvCfg:
    """Unitree Go1 on flat ground: the rough config with the terrain, its scan and its
    curriculum taken out."""
    cfg = unitree_go1_rough_env_cfg(play=play)
    cfg.scene.terrain.terrain_type = "plane"
    cfg.scene.terrain.terrain_generator = None
    cfg.scene.sensors = tuple(s for s in cfg.scene.sensors if s.name != "terrain_scan")
    del cfg.observations["actor"].terms["height_scan"]
    del cfg.observations["critic"].terms["height_scan"]
    cfg.curriculum.pop("terrain_levels", None)
    cfg.events.pop("randomize_terrain", None)
    return cfg


def go1_ppo_runner_cfg():
    """PPO settings (mjlab-rl's runner config, as mjlab's `rl_cfg.py`)."""
    from mjlab.rl import (
        RslRlModelCfg,
        RslRlOnPolicyRunnerCfg,
        RslRlPpoAlgorithmCfg,
    )

    return RslRlOnPolicyRunnerCfg(
        experiment_name="port_go1_velocity",
        num_steps_per_env=24,
        max_iterations=1000,
        save_interval=100,
        actor=RslRlModelCfg(hidden_dims=(512, 256, 128), stochastic=True, init_noise_std=1.0),
        critic=RslRlModelCfg(hidden_dims=(512, 256, 128)),
        algorithm=RslRlPpoAlgorithmCfg(learning_rate=1e-3, entropy_coef=0.01),
    )


def register() -> None:
    """Register the two tasks (call once, e.g. from your project's `mjlab.tasks` entry point)."""
    register_mjlab_task(
        "Port-Velocity-Rough-Unitree-Go1",
        env_cfg=unitree_go1_rough_env_cfg,
        play_env_cfg=lambda: unitree_go1_rough_env_cfg(play=True),
        rl_cfg=go1_ppo_runner_cfg,
    )
    register_mjlab_task(
        "Port-Velocity-Flat-Unitree-Go1",
        env_cfg=unitree_go1_flat_env_cfg,
        play_env_cfg=lambda: unitree_go1_flat_env_cfg(play=True),
        rl_cfg=go1_ppo_runner_cfg,
    )

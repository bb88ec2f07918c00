"""Lift a cube with the Franka Panda: reach, grasp, lift the cube to a sampled height over
where it lay, and hold it there. 50 Hz policy (4 physics steps of 5 ms), 4 s episodes.

Scene: the Panda (Menagerie's MJX model, fixed base at the origin), a 1.1 x 1.2 m table top
whose surface is the base's plane z = 0, and a 4 cm cube on it. Every world is its own
simulation, so every env has its origin at the robot's base (`env_spacing` 0).

The actor reads the arm's joint state, the gripper and cube positions in the base frame, the
target and its last action (`Mjlab-Lift-Cube-Franka`); the image variants replace the cube's
position with a camera image (`lift_rgb_env_cfg`, `lift_depth_env_cfg` below).
"""

from __future__ import annotations

import math

from mjlab.entity import EntityCfg, InitialStateCfg
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
from mjlab.sensor import CameraSensorCfg, ContactMatch, ContactSensorCfg
from mjlab.sim import MujocoCfg, SimulationCfg
from mjlab.tasks.manipulation import mdp as lift
from mjlab.tasks.robots import panda

CUBE_START = (0.5, 0.0)
"""Nominal cube position on the table, base frame x, y, m (under the hand at `home`)."""
CUBE_XY_RANGE = {"x": (-0.1, 0.1), "y": (-0.15, 0.15), "yaw": (-math.pi, math.pi)}
"""Reset offsets of the cube, m and rad."""
ARM = SceneEntityCfg("robot", joint_names=panda.ARM_JOINTS)
CAMERA_POS = (0.95, 0.0, 0.55)
"""The image tasks' fixed camera, base frame, m: over the far end of the table."""
CAMERA_LOOKAT = (0.5, 0.0, 0.1)
"""Where it looks, base frame, m: the middle of the cube's reset area."""
CAMERA_FOVY = 55.0
"""Its vertical field of view, degrees: the reset area and the lift heights fit in it."""
IMAGE_SIZE = 64
"""Width and height of the image tasks' camera images, pixels."""
MAX_DEPTH = 2.0
"""Depth images are clipped to this range and divided by it, m."""
CAMERA_GEOM_GROUPS = (0, 3)
"""What the camera draws: the table and the cube (group 0) and the Panda's convex collision
hulls and finger pads (group 3), not its 112k-triangle visual meshes (group 2), which make
rendering on a CPU 2-6x slower (8 envs, 64 x 64, MuJoCo's OpenGL renderer on Mesa)."""


def _actor_obs(noise: bool, cube_state: bool) -> ObservationGroupCfg:
    def n(a: float) -> UniformNoiseCfg | None:
        return UniformNoiseCfg(n_min=-a, n_max=a) if noise else None

    terms = {
        "joint_pos": ObservationTermCfg(func=mdp.joint_pos_rel, noise=n(0.01)),
        "joint_vel": ObservationTermCfg(func=mdp.joint_vel_rel, noise=n(0.05)),
        "ee_pos": ObservationTermCfg(func=lift.ee_pos_b),
        "cube_pos": ObservationTermCfg(func=lift.cube_pos_b, noise=n(0.005))
        if cube_state
        else None,
        "target": ObservationTermCfg(
            func=mdp.generated_commands, params={"command_name": "lift_target"}
        ),
        "actions": ObservationTermCfg(func=mdp.last_action),
    }
    return ObservationGroupCfg(terms=terms, enable_corruption=noise)


def _critic_obs() -> ObservationGroupCfg:
    group = _actor_obs(noise=False, cube_state=True)
    group.terms["cube_quat"] = ObservationTermCfg(func=lift.cube_quat_b)
    group.terms["cube_lin_vel"] = ObservationTermCfg(func=lift.cube_lin_vel_w)
    return group


def lift_env_cfg(num_envs: int = 1024) -> ManagerBasedRlEnvCfg:
    """`Mjlab-Lift-Cube-Franka`: the cube's position is observed (state)."""
    cube_x, cube_y = CUBE_START
    return ManagerBasedRlEnvCfg(
        decimation=4,
        episode_length_s=4.0,
        scene=SceneCfg(
            num_envs=num_envs,
            env_spacing=0.0,
            entities={
                "robot": panda.panda_entity_cfg(),
                "table": EntityCfg(spec_fn=lift.table_spec),
                "cube": EntityCfg(
                    spec_fn=lift.cube_spec,
                    init_state=InitialStateCfg(pos=(cube_x, cube_y, lift.CUBE_HALF_SIZE)),
                ),
            },
            sensors=(
                ContactSensorCfg(
                    name="finger_contact",
                    primary=ContactMatch(
                        mode="geom", patterns=("left_finger_pad", "right_finger_pad")
                    ),
                    secondary=ContactMatch(mode="geom", patterns=("cube",), entity="cube"),
                    track_air_time=False,
                ),
            ),
        ),
        sim=SimulationCfg(
            mujoco=MujocoCfg(timestep=0.005, iterations=10, ls_iterations=10),
            nconmax=32,
            njmax=128,
        ),
        observations={
            "actor": _actor_obs(noise=True, cube_state=True),
            "critic": _critic_obs(),
        },
        actions={
            # One term for the arm and the gripper (a policy file drives one joint term): arm
            # targets 0.5 rad per unit about `home`; the finger target 0.04 m per unit about
            # open (-1: closed; above 0 the servo's ctrlrange holds it open).
            "joint_pos": mdp.JointPositionActionCfg(
                asset_name="robot",
                actuator_names=(".*",),
                scale={"joint.*": 0.5, "finger_joint1": panda.FINGER_OPEN},
                use_default_offset=True,
            )
        },
        commands={"lift_target": lift.LiftTargetCommandCfg()},
        rewards={
            # Coarse (std 0.3 m: felt from the start pose, 0.35 m away) and fine (5 cm).
            "reaching": RewardTermCfg(func=lift.reaching_cube, weight=1.0, params={"std": 0.3}),
            "reaching_fine": RewardTermCfg(
                func=lift.reaching_cube, weight=1.0, params={"std": 0.05}
            ),
            "grasping": RewardTermCfg(
                func=lift.grasping_cube, weight=0.5, params={"sensor_name": "finger_contact"}
            ),
            "lifting": RewardTermCfg(func=lift.lifting_cube, weight=5.0),
            "goal_tracking": RewardTermCfg(
                func=lift.cube_goal_distance, weight=10.0, params={"std": 0.3}
            ),
            "goal_holding": RewardTermCfg(
                func=lift.cube_goal_distance, weight=5.0, params={"std": 0.05}
            ),
            "action_rate_l2": RewardTermCfg(func=mdp.action_rate_l2, weight=-1e-3),
            "joint_vel_l2": RewardTermCfg(
                func=mdp.joint_vel_l2, weight=-1e-4, params={"asset_cfg": ARM}
            ),
        },
        terminations={
            "time_out": TerminationTermCfg(func=mdp.time_out, time_out=True),
            "cube_dropped": TerminationTermCfg(func=lift.cube_dropped),
        },
        events={
            "cube_mass": EventTermCfg(
                func=mdp.randomize_body_mass,
                mode="startup",
                params={
                    "mass_range": (0.5, 1.5),
                    "asset_cfg": SceneEntityCfg("cube", body_names=("cube",)),
                },
            ),
            "cube_size": EventTermCfg(
                func=lift.randomize_cube_size, mode="startup", params={"scale_range": (0.8, 1.2)}
            ),
            "cube_friction": EventTermCfg(
                func=mdp.randomize_geom_friction,
                mode="startup",
                params={
                    "friction_range": (0.6, 1.2),
                    "asset_cfg": SceneEntityCfg("cube", geom_names=("cube",)),
                },
            ),
            "reset_cube": EventTermCfg(
                func=lift.reset_cube_on_table,
                mode="reset",
                params={"pose_range": dict(CUBE_XY_RANGE)},
            ),
            "reset_arm": EventTermCfg(
                func=mdp.reset_joints_by_offset,
                mode="reset",
                params={"position_range": (-0.1, 0.1), "asset_cfg": ARM},
            ),
            # After the two above: a quarter of the episodes start around the cube.
            "reset_in_grasp_pose": EventTermCfg(
                func=lift.reset_into_grasp_pose, mode="reset", params={"probability": 0.25}
            ),
        },
        viewer=ViewerCfg(body_id=1, distance=1.6, elevation=-25.0, azimuth=150.0),
    )


def lift_play_env_cfg() -> ManagerBasedRlEnvCfg:
    """Play variant: 4 envs, no observation noise, nominal cube."""
    return _play(lift_env_cfg(num_envs=4))


def _play(cfg: ManagerBasedRlEnvCfg) -> ManagerBasedRlEnvCfg:
    cfg.observations["actor"].enable_corruption = False
    for name in ("cube_size", "cube_mass", "cube_friction", "camera_pose", "reset_in_grasp_pose"):
        if name in cfg.events:
            cfg.events[name] = None
    return cfg


def _image_env_cfg(data_type: str, num_envs: int) -> ManagerBasedRlEnvCfg:
    """The lift task seen through a fixed camera: the actor reads the arm's state, the target
    and a `data_type` image (observation group "camera", one (C, 64, 64) term) instead of the
    cube's position; the critic keeps the state (asymmetric actor-critic). The camera's pose is
    jittered per env (2 cm, 2 degrees)."""
    cfg = lift_env_cfg(num_envs=num_envs)
    cfg.scene.sensors = (
        *cfg.scene.sensors,
        CameraSensorCfg(
            name="camera",
            pos=CAMERA_POS,
            lookat=CAMERA_LOOKAT,
            fovy=CAMERA_FOVY,
            width=IMAGE_SIZE,
            height=IMAGE_SIZE,
            data_types=(data_type,),
            max_depth=MAX_DEPTH,
            enabled_geom_groups=CAMERA_GEOM_GROUPS,
        ),
    )
    cfg.observations["actor"] = _actor_obs(noise=True, cube_state=False)
    term = (
        ObservationTermCfg(func=mdp.camera_rgb, params={"sensor_name": "camera"})
        if data_type == "rgb"
        else ObservationTermCfg(func=mdp.camera_depth, params={"sensor_name": "camera"})
    )
    cfg.observations["camera"] = ObservationGroupCfg(
        terms={data_type: term}, enable_corruption=False
    )
    cfg.events["camera_pose"] = EventTermCfg(
        func=lift.randomize_camera_pose,
        mode="startup",
        params={"sensor_name": "camera", "pos_range": 0.02, "rot_range": math.radians(2.0)},
    )
    return cfg


def lift_rgb_env_cfg(num_envs: int = 256) -> ManagerBasedRlEnvCfg:
    """`Mjlab-Lift-Cube-Franka-Rgb`: a 64 x 64 RGB image instead of the cube's position."""
    return _image_env_cfg("rgb", num_envs)


def lift_depth_env_cfg(num_envs: int = 256) -> ManagerBasedRlEnvCfg:
    """`Mjlab-Lift-Cube-Franka-Depth`: a 64 x 64 depth image (m, clipped to 2 m, divided by
    it) instead of the cube's position."""
    return _image_env_cfg("depth", num_envs)


def lift_rgb_play_env_cfg() -> ManagerBasedRlEnvCfg:
    return _play(lift_rgb_env_cfg(num_envs=4))


def lift_depth_play_env_cfg() -> ManagerBasedRlEnvCfg:
    return _play(lift_depth_env_cfg(num_envs=4))

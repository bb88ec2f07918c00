"""Observation terms: `(env, **params) -> (num_envs, dim)` float32.

Names and frames match mjlab / Isaac Lab so exported policies and deploy code agree: base
velocities in the root frame, joint positions relative to the default pose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from mjlab.managers.scene_entity_config import SceneEntityCfg
from mjlab.sensor.ray_cast import RayCastSensor

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

_ROBOT = SceneEntityCfg("robot")


def base_lin_vel(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Root linear velocity in the root frame. Returns: (num_envs, 3) m/s."""
    return env.scene[asset_cfg.name].data.root_link_lin_vel_b


def base_ang_vel(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Root angular velocity in the root frame. Returns: (num_envs, 3) rad/s."""
    return env.scene[asset_cfg.name].data.root_link_ang_vel_b


def projected_gravity(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Unit gravity direction in the root frame ((0, 0, -1) when level). Returns: (num_envs, 3)."""
    return env.scene[asset_cfg.name].data.projected_gravity_b


def joint_pos_rel(
    env: ManagerBasedRlEnv, biased: bool = False, asset_cfg: SceneEntityCfg = _ROBOT
) -> torch.Tensor:
    """Joint positions minus the default pose. Returns: (num_envs, num_selected_joints) rad.

    `biased`: read the positions as the encoders report them, `joint_pos + encoder_bias`
    (`EntityData.joint_pos_biased`; the bias is drawn by `mdp.dr.encoder_bias`), instead of the
    true ones. On the robot the encoders' own offset plays that part, so the exported file reads
    the measured positions either way.
    """
    data = env.scene[asset_cfg.name].data
    sel = asset_cfg.select_joints
    pos = data.joint_pos_biased if biased else data.joint_pos
    return sel(pos) - sel(data.default_joint_pos)


def joint_vel_rel(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Joint velocities minus the default velocities. Returns: (num_envs, num_selected) rad/s."""
    data = env.scene[asset_cfg.name].data
    sel = asset_cfg.select_joints
    return sel(data.joint_vel) - sel(data.default_joint_vel)


def joint_pos(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Absolute joint positions. Returns: (num_envs, num_selected_joints) rad."""
    return asset_cfg.select_joints(env.scene[asset_cfg.name].data.joint_pos)


def joint_vel(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Joint velocities. Returns: (num_envs, num_selected_joints) rad/s."""
    return asset_cfg.select_joints(env.scene[asset_cfg.name].data.joint_vel)


def last_action(env: ManagerBasedRlEnv, action_name: str | None = None) -> torch.Tensor:
    """The raw policy action of the previous step (all terms, or one term's slice).
    Returns: (num_envs, action_dim)."""
    manager = env.action_manager
    if action_name is None:
        return manager.action
    start = 0
    for name, term in manager.terms.items():
        if name == action_name:
            return manager.action[:, start : start + term.action_dim]
        start += term.action_dim
    raise ValueError(f"No action term '{action_name}'. Terms: {manager.active_terms}.")


def generated_commands(env: ManagerBasedRlEnv, command_name: str) -> torch.Tensor:
    """The current command of a command term, e.g. (vx, vy, wz). Returns: (num_envs, dim)."""
    return env.command_manager.get_command(command_name)


def height_scan(
    env: ManagerBasedRlEnv, sensor_name: str, offset: float = 0.5, miss_value: float | None = None
) -> torch.Tensor:
    """Height of the sensor frame above the ground under each ray, minus `offset` (as Isaac
    Lab; mjlab 1.6's default offset is 0.0).

    Works with a `HeightScanCfg` sensor (the ray origin's height above each hit) and with mjlab
    1.6's `RayCastSensorCfg` (each ray's frame height above its hit point; rays of every frame
    in the sensor's order).

    Args:
        sensor_name: the scene sensor.
        offset: subtracted from every height, m.
        miss_value: the value of rays that hit nothing within the sensor's max_distance; None
            reports them as if the ground were max_distance below the frame (minus offset).

    Returns: (num_envs, num_rays) m.
    """
    sensor = env.scene[sensor_name]
    if isinstance(sensor, RayCastSensor):
        data = sensor.data
        frame_z = data.frame_pos_w[..., 2].repeat_interleave(sensor.num_rays_per_frame, dim=1)
        hit = data.distances >= 0
        heights = (
            torch.where(hit, frame_z - data.hit_pos_w[..., 2], float(sensor.cfg.max_distance))
            - offset
        )
    else:
        hit = sensor.hit
        heights = sensor.origin_z[:, None] - sensor.heights - offset
    if miss_value is not None:
        heights = torch.where(hit, heights, miss_value)
    return heights


def projected_gravity_from_sensor(env: ManagerBasedRlEnv, sensor_name: str) -> torch.Tensor:
    """Gravity direction in an IMU's frame from a MuJoCo sensor that reports the world's up
    axis in that frame (mjlab 1.6's term): the negated sensor value. The sensor is a
    `BuiltinSensorCfg` of type "framezaxis" whose object is the world and whose reference
    frame is the IMU site (MJCF ``<framezaxis objtype="xbody" objname="world" reftype="site"
    refname="imu"/>``), so it follows the site's pose, including a randomized one, rather than
    the root body's.

    Returns: (num_envs, 3), (0, 0, -1) when the IMU is level.
    """
    return -env.scene[sensor_name].data


def root_pos_w(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Root position relative to the env origin, world frame. Returns: (num_envs, 3) m."""
    data = env.scene[asset_cfg.name].data
    return data.root_link_pos_w - env.scene.env_origins


def builtin_sensor(env: ManagerBasedRlEnv, sensor_name: str) -> torch.Tensor:
    """A MuJoCo sensor's values. Returns: (num_envs, dim) in the sensor's units."""
    return env.scene[sensor_name].data


def foot_contact(env: ManagerBasedRlEnv, sensor_name: str) -> torch.Tensor:
    """1 where each contact-sensor slot touches. Returns: (num_envs, num_slots)."""
    return env.scene[sensor_name].found.float()


def camera_rgb(env: ManagerBasedRlEnv, sensor_name: str) -> torch.Tensor:
    """A camera sensor's RGB image, channels first (rsl-rl's CNN layout (B, C, H, W)).

    Returns: (num_envs, 3, H, W) float32 in [0, 1] (uint8 / 255).
    """
    return env.scene[sensor_name].rgb.permute(0, 3, 1, 2).float() / 255.0


def camera_depth(
    env: ManagerBasedRlEnv, sensor_name: str, max_depth: float | None = None
) -> torch.Tensor:
    """A camera sensor's depth image (distance along the camera axis), normalized.

    Args:
        max_depth: depth clipped to [0, max_depth] and divided by it, m; None: the sensor's
            `max_depth`.

    Returns: (num_envs, 1, H, W) float32 in [0, 1] (1: at or beyond max_depth, or nothing).
    """
    sensor = env.scene[sensor_name]
    far = sensor.cfg.max_depth if max_depth is None else max_depth
    return (sensor.depth.clamp(0.0, far) / far).unsqueeze(1)

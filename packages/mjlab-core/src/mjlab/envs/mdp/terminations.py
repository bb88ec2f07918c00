"""Termination terms: `(env, **params) -> (num_envs,)` bool."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from mjlab.managers.scene_entity_config import SceneEntityCfg

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

_ROBOT = SceneEntityCfg("robot")


def time_out(env: ManagerBasedRlEnv) -> torch.Tensor:
    """Episode length reached (use with time_out=True). Returns: (num_envs,) bool."""
    return env.episode_length_buf >= env.max_episode_length


def bad_orientation(
    env: ManagerBasedRlEnv, limit_angle: float, asset_cfg: SceneEntityCfg = _ROBOT
) -> torch.Tensor:
    """Tilt from upright above `limit_angle` rad. The tilt is acos(-g_z) with g_z clamped to
    [-1, 1] so float rounding (|g_z| = 1.0000001) never gives NaN.
    Returns: (num_envs,) bool."""
    gz = env.scene[asset_cfg.name].data.projected_gravity_b[:, 2]
    tilt = torch.acos((-gz).clamp(-1.0, 1.0))
    return tilt > limit_angle


def root_height_below_minimum(
    env: ManagerBasedRlEnv, minimum_height: float, asset_cfg: SceneEntityCfg = _ROBOT
) -> torch.Tensor:
    """Root z below `minimum_height` m above the env origin. Returns: (num_envs,) bool."""
    z = env.scene[asset_cfg.name].data.root_link_pos_w[:, 2] - env.scene.env_origins[:, 2]
    return z < minimum_height


def illegal_contact(
    env: ManagerBasedRlEnv, sensor_name: str, threshold: float = 1.0
) -> torch.Tensor:
    """Any contact-sensor slot in contact with net force above `threshold` N.
    Returns: (num_envs,) bool."""
    return env.scene[sensor_name].in_contact_above(threshold).any(dim=1)


def joint_pos_out_of_limit(
    env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT
) -> torch.Tensor:
    """Any selected joint outside its range. Returns: (num_envs,) bool."""
    data = env.scene[asset_cfg.name].data
    ids = asset_cfg.joint_ids
    q, lim = data.joint_pos[:, ids], data.joint_pos_limits[:, ids]
    return ((q < lim[..., 0]) | (q > lim[..., 1])).any(dim=1)

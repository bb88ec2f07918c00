"""Termination terms: `(env, **params) -> (num_envs,)` bool."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np
import torch

from mjlab.managers.scene_entity_config import SceneEntityCfg

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

_ROBOT = SceneEntityCfg("robot")


def time_out(env: ManagerBasedRlEnv) -> torch.Tensor:
    """Episode length reached (use with time_out=True). Returns: (num_envs,) bool."""
    return env.episode_length_buf >= env.max_episode_length


def nan_detection(env: ManagerBasedRlEnv) -> torch.Tensor:
    """Envs whose physics state (qpos, qvel, qacc) holds a NaN or Inf: end them (use with
    time_out=False) so a diverged world is reset instead of feeding the learner. Returns:
    (num_envs,) bool."""
    data = env.sim.data
    bad = ~torch.isfinite(data.qpos).all(dim=1)
    bad |= ~torch.isfinite(data.qvel).all(dim=1)
    bad |= ~torch.isfinite(data.qacc).all(dim=1)
    return bad


def bad_orientation(
    env: ManagerBasedRlEnv, limit_angle: float, asset_cfg: SceneEntityCfg = _ROBOT
) -> torch.Tensor:
    """Tilt from upright above `limit_angle` rad, in [0, pi]. The tilt is acos(-g_z), g_z the
    z of the projected gravity; acos decreasing, the tilt exceeds the limit exactly when
    g_z > -cos(limit_angle), which is what is compared: against the largest float32 at or
    below -cos(limit_angle) for a float32 g_z (so the scalar's rounding to the tensor's dtype
    never moves the decision), and never true at a limit of pi. No acos: no NaN where rounding
    makes |g_z| slightly above 1, and two tensor operations instead of five.

    Returns: (num_envs,) bool.

    Raises:
        ValueError: `limit_angle` outside [0, pi] (a tilt is never negative nor above pi).
    """
    if not 0.0 <= limit_angle <= math.pi:
        raise ValueError(
            f"bad_orientation: limit_angle must be in [0, pi] rad, got {limit_angle} (use "
            "math.radians for degrees)."
        )
    gz = env.scene[asset_cfg.name].data.projected_gravity_b[:, 2]
    threshold = -math.cos(limit_angle)
    if threshold >= 1.0:  # a limit of pi (to float64 rounding): no tilt exceeds it
        return torch.zeros_like(gz, dtype=torch.bool)
    if gz.dtype == torch.float32:
        threshold = _float32_at_most(threshold)
    return gz > threshold


@functools.lru_cache(maxsize=64)
def _float32_at_most(x: float) -> float:
    """The largest float32 <= `x`: for every float32 t, `t > x` exactly when `t > result`."""
    f = np.float32(x)
    if float(f) > x:
        f = np.nextafter(f, np.float32(-np.inf))
    return float(f)


def root_height_below_minimum(
    env: ManagerBasedRlEnv, minimum_height: float, asset_cfg: SceneEntityCfg = _ROBOT
) -> torch.Tensor:
    """Root below `minimum_height` m above the ground under it.

    The ground is the terrain's height at the root's (x, y) (`TerrainImporter.height_at`: on a
    generated terrain the nearest height-field vertex, so a robot walking down a pyramid off its
    top platform is not ended for being below where it started; on a plane z = 0), or the env
    origin's z in a scene without a terrain. Returns: (num_envs,) bool."""
    pos = env.scene[asset_cfg.name].data.root_link_pos_w
    terrain = env.scene.terrain
    ground = env.scene.env_origins[:, 2] if terrain is None else terrain.height_at(pos[:, :2])
    return pos[:, 2] - ground < minimum_height


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
    q, lim = asset_cfg.select_joints(data.joint_pos), asset_cfg.select_joints(data.joint_pos_limits)
    return ((q < lim[..., 0]) | (q > lim[..., 1])).any(dim=1)

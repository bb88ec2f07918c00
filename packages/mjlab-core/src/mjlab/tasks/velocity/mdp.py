"""The velocity task's own reward terms: `(env, **params) -> (num_envs,)` float32, before weight
and step_dt.

The humanoid terms follow the shape of mjlab's velocity recipe: positive kernels for what the
robot should do (track the command, keep the torso upright, keep a posture whose tolerance grows
with the commanded speed) and small penalties on the feet while walking.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import torch

from mjlab.managers.scene_entity_config import SceneEntityCfg
from mjlab.utils.math import projected_gravity

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

_ROBOT = SceneEntityCfg("robot")


def _cache(env: ManagerBasedRlEnv) -> dict:
    """Per-env store for values a term resolves once (per-joint tensors from regex tables)."""
    store = env.__dict__.get("_velocity_mdp_cache")
    if store is None:
        store = env.__dict__["_velocity_mdp_cache"] = {}
    return store


def _posture_stds(
    env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg, tables: tuple[dict[str, float], ...]
) -> torch.Tensor:
    """(len(tables), num_selected) per-joint values of {joint regex: value} tables for the
    selected joints, resolved once per env; the last matching pattern wins.

    Raises:
        ValueError: a selected joint that no pattern of a table matches (names the joint).
    """
    key = (asset_cfg.name, str(asset_cfg.joint_ids), tuple(tuple(t.items()) for t in tables))
    store = _cache(env)
    if key not in store:
        entity = env.scene[asset_cfg.name]
        ids = asset_cfg.joint_ids
        names = (
            entity.joint_names if isinstance(ids, slice) else [entity.joint_names[i] for i in ids]
        )
        rows = []
        for table, what in zip(tables, _POSTURE_TABLES, strict=True):
            row = []
            for name in names:
                hit = [v for p, v in table.items() if re.fullmatch(p, name)]
                if not hit:
                    raise ValueError(
                        f"variable_posture {what}: no pattern matches joint '{name}'; add one "
                        "(e.g. '.*': 0.3)."
                    )
                row.append(float(hit[-1]))
            rows.append(row)
        store[key] = torch.tensor(rows, device=env.device)
    return store[key]


_POSTURE_TABLES = ("std_standing", "std_walking", "std_running")


def upright(env: ManagerBasedRlEnv, std: float, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """exp(-|g_xy|^2 / std^2), g the unit gravity direction in the frame of the first selected
    body (the torso; the root without a selection): 1 when that body's z axis points up.
    Returns: (num_envs,) in (0, 1]."""
    data = env.scene[asset_cfg.name].data
    ids = asset_cfg.body_ids
    quat = data.root_link_quat_w if isinstance(ids, slice) else data.body_link_quat_w[:, ids[0]]
    return torch.exp(-projected_gravity(quat)[:, :2].square().sum(dim=1) / std**2)


def variable_posture(
    env: ManagerBasedRlEnv,
    std_standing: dict[str, float],
    std_walking: dict[str, float],
    std_running: dict[str, float],
    walking_threshold: float = 0.05,
    running_threshold: float = 1.5,
    command_name: str = "twist",
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> torch.Tensor:
    """exp(-mean_j((q_j - q0_j)^2 / std_j^2)) with a per-joint tolerance std_j (rad, {joint
    regex: std} tables) picked by the commanded speed |(vx, vy, wz)|: below `walking_threshold`
    the standing table, above `running_threshold` the running table, else the walking one.
    Returns: (num_envs,) in (0, 1]."""
    data = env.scene[asset_cfg.name].data
    sel = asset_cfg.select_joints
    err = (sel(data.joint_pos) - sel(data.default_joint_pos)).square()
    stds = _posture_stds(env, asset_cfg, (std_standing, std_walking, std_running))
    speed = torch.linalg.vector_norm(env.command_manager.get_command(command_name)[:, :3], dim=1)
    mode = (speed >= walking_threshold).long() + (speed >= running_threshold).long()
    return torch.exp(-(err / stds[mode].square()).mean(dim=1))


def body_ang_vel_xy_l2(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Squared roll/pitch angular velocity of the selected bodies (world x, y), summed.
    Returns: (num_envs,) rad^2/s^2."""
    w = env.scene[asset_cfg.name].data.body_link_ang_vel_w[:, asset_cfg.body_ids, :2]
    return w.square().sum(dim=(1, 2))


def _moving(env: ManagerBasedRlEnv, command_name: str, threshold: float) -> torch.Tensor:
    cmd = env.command_manager.get_command(command_name)
    return (torch.linalg.vector_norm(cmd[:, :3], dim=1) > threshold).float()


def feet_clearance(
    env: ManagerBasedRlEnv,
    target_height: float,
    foot_height_offset: float,
    command_name: str = "twist",
    command_threshold: float = 0.05,
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> torch.Tensor:
    """Sum over feet of |h - target| * |v_xy|, h the foot's height above the ground under it
    (body origin z minus the terrain's height there, `TerrainImporter.height_at`, minus
    `foot_height_offset`, m) and v_xy its horizontal speed: a moving foot should move at the
    target height. Zero when the command is below `command_threshold`.
    Returns: (num_envs,) m^2/s."""
    data = env.scene[asset_cfg.name].data
    ids = asset_cfg.body_ids
    pos = data.body_link_pos_w[:, ids]
    h = pos[..., 2] - foot_height_offset
    if env.scene.terrain is not None:
        h = h - env.scene.terrain.height_at(pos[..., :2])
    v = torch.linalg.vector_norm(data.body_link_lin_vel_w[:, ids, :2], dim=2)
    return ((h - target_height).abs() * v).sum(dim=1) * _moving(
        env, command_name, command_threshold
    )


def feet_slip(
    env: ManagerBasedRlEnv,
    sensor_name: str,
    command_name: str = "twist",
    command_threshold: float = 0.05,
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> torch.Tensor:
    """Sum over feet in contact of their squared horizontal speed (the contact sensor's slots
    and the selected bodies in the same order). Zero when the command is below
    `command_threshold`. Returns: (num_envs,) m^2/s^2."""
    data = env.scene[asset_cfg.name].data
    v2 = data.body_link_lin_vel_w[:, asset_cfg.body_ids, :2].square().sum(dim=2)
    contact = env.scene[sensor_name].found.float()
    return (v2 * contact).sum(dim=1) * _moving(env, command_name, command_threshold)

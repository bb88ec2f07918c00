"""Curriculum terms: `(env, env_ids, **params) -> value to log`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from mjlab.managers.scene_entity_config import SceneEntityCfg

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

_ROBOT = SceneEntityCfg("robot")


def terrain_levels(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    command_name: str = "twist",
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> dict[str, torch.Tensor | float]:
    """Move envs that walked far enough to harder terrain rows and those that walked less than
    half of what their command asked to easier rows (Isaac Lab's rule).

    Only episodes that ran are judged: an env reset before it took a step (episode length 0,
    e.g. `reset()` called twice, or the first reset of a run) keeps its row.

    Returns:
        {"mean": the mean level over all envs (0-d tensor, no host read), "highest": the
        highest level that exists (float, the terrain's rows - 1; 0 on a plane)}, logged as
        `Curriculum/terrain_levels/mean` and `.../highest`, so that a curve shows how far up
        the envs are against how far up they could be.
    """
    terrain = env.scene.terrain
    if terrain is None or getattr(terrain, "terrain_levels", None) is None:
        return {"mean": torch.tensor(0.0), "highest": 0.0}
    data = env.scene[asset_cfg.name].data
    distance = (data.root_link_pos_w[env_ids, :2] - env.scene.env_origins[env_ids, :2]).norm(dim=1)
    size = terrain.cfg.terrain_generator.size
    move_up = distance > size[0] / 2
    cmd = env.command_manager.get_command(command_name)[env_ids, :2]
    move_down = distance < cmd.norm(dim=1) * env.max_episode_length_s * 0.5
    move_down &= ~move_up
    ran = env.episode_length_buf[env_ids] > 0
    move_up &= ran
    move_down &= ran
    terrain.update_env_origins(env_ids, move_up, move_down)
    return {
        "mean": terrain.terrain_levels.float().mean(),
        "highest": float(terrain.max_terrain_level - 1),
    }


def commands_vel(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    command_name: str,
    velocity_stages: list[dict],
) -> dict[str, float]:
    """Grow the velocity command ranges with training: each stage is {"step": env steps,
    "lin_vel_x": (lo, hi), "ang_vel_z": (lo, hi), ...}; the last stage whose step is reached
    applies. Returns the current range bounds for logging."""
    term = env.command_manager.get_term(command_name)
    for stage in velocity_stages:
        if env.common_step_counter >= stage["step"]:
            for key, value in stage.items():
                if key != "step":
                    setattr(term.cfg.ranges, key, tuple(value))
    r = term.cfg.ranges
    return {"lin_vel_x_max": float(r.lin_vel_x[1]), "ang_vel_z_max": float(r.ang_vel_z[1])}

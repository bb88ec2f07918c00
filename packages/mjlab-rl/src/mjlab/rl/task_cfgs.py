"""The built-in tasks' PPO configs under their earlier module path.

Each task folder of mjlab-core now holds its own (`mjlab.tasks.<task>.rl_cfg`); this module only
re-exports them, so code written against `mjlab.rl.task_cfgs` keeps working.
"""

from mjlab.tasks.cartpole.rl_cfg import cartpole_ppo_cfg
from mjlab.tasks.manipulation.rl_cfg import lift_franka_image_ppo_cfg, lift_franka_ppo_cfg
from mjlab.tasks.tracking.rl_cfg import tracking_g1_ppo_cfg
from mjlab.tasks.velocity.rl_cfg import (
    VELOCITY_MIRROR_FUNC,
    velocity_g1_ppo_cfg,
    velocity_go1_ppo_cfg,
    velocity_symmetry_cfg,
    with_symmetry,
)

__all__ = [
    "VELOCITY_MIRROR_FUNC",
    "cartpole_ppo_cfg",
    "lift_franka_image_ppo_cfg",
    "lift_franka_ppo_cfg",
    "tracking_g1_ppo_cfg",
    "velocity_g1_ppo_cfg",
    "velocity_go1_ppo_cfg",
    "velocity_symmetry_cfg",
    "with_symmetry",
]

"""Registers the built-in tasks (imported by the registry on first use)."""

from mjlab.tasks.cartpole.cartpole_env_cfg import (
    cartpole_balance_env_cfg,
    cartpole_swingup_env_cfg,
    play,
)
from mjlab.tasks.registry import register_mjlab_task

register_mjlab_task(
    "Mjlab-Cartpole-Balance",
    env_cfg=cartpole_balance_env_cfg,
    play_env_cfg=lambda: play(cartpole_balance_env_cfg()),
    rl_cfg="mjlab.rl.task_cfgs:cartpole_ppo_cfg",
)
register_mjlab_task(
    "Mjlab-Cartpole-Swingup",
    env_cfg=cartpole_swingup_env_cfg,
    play_env_cfg=lambda: play(cartpole_swingup_env_cfg()),
    rl_cfg="mjlab.rl.task_cfgs:cartpole_ppo_cfg",
)

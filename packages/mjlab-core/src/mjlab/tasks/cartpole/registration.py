"""Registers the Cartpole tasks (found by `mjlab.tasks.builtin`)."""

from mjlab.tasks.cartpole.cartpole_env_cfg import (
    cartpole_balance_env_cfg,
    cartpole_swingup_env_cfg,
    play,
)
from mjlab.tasks.registry import register_mjlab_task

_RL_CFG = "mjlab.tasks.cartpole.rl_cfg:cartpole_ppo_cfg"

register_mjlab_task(
    "Mjlab-Cartpole-Balance",
    env_cfg=cartpole_balance_env_cfg,
    play_env_cfg=lambda: play(cartpole_balance_env_cfg()),
    rl_cfg=_RL_CFG,
)
register_mjlab_task(
    "Mjlab-Cartpole-Swingup",
    env_cfg=cartpole_swingup_env_cfg,
    play_env_cfg=lambda: play(cartpole_swingup_env_cfg()),
    rl_cfg=_RL_CFG,
)

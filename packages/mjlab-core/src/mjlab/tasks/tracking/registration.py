"""Registers the motion tracking tasks (found by `mjlab.tasks.builtin`)."""

from mjlab.tasks.registry import register_mjlab_task
from mjlab.tasks.tracking.config import g1

_RL_CFG = "mjlab.tasks.tracking.rl_cfg:tracking_g1_ppo_cfg"

register_mjlab_task(
    "Mjlab-Tracking-Flat-Unitree-G1",
    env_cfg=g1.flat,
    play_env_cfg=g1.flat_play,
    rl_cfg=_RL_CFG,
)
register_mjlab_task(
    "Mjlab-Tracking-Flat-Unitree-G1-No-State-Estimation",
    env_cfg=g1.flat_no_state_estimation,
    play_env_cfg=g1.flat_no_state_estimation_play,
    rl_cfg=_RL_CFG,
)

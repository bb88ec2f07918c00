"""Registers the Franka lift tasks: from state, RGB and depth (found by `mjlab.tasks.builtin`)."""

from mjlab.tasks.manipulation import lift_env_cfg as lift
from mjlab.tasks.registry import register_mjlab_task

_RL_CFG = "mjlab.tasks.manipulation.rl_cfg"

register_mjlab_task(
    "Mjlab-Lift-Cube-Franka",
    env_cfg=lift.lift_env_cfg,
    play_env_cfg=lift.lift_play_env_cfg,
    rl_cfg=f"{_RL_CFG}:lift_franka_ppo_cfg",
)
for _kind in ("rgb", "depth"):
    register_mjlab_task(
        f"Mjlab-Lift-Cube-Franka-{_kind.capitalize()}",
        env_cfg=getattr(lift, f"lift_{_kind}_env_cfg"),
        play_env_cfg=getattr(lift, f"lift_{_kind}_play_env_cfg"),
        rl_cfg=f"{_RL_CFG}:lift_franka_image_ppo_cfg",
    )

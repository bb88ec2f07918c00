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

from mjlab.tasks.velocity import tasks as _velocity  # noqa: E402

for _robot, _name in (("go1", "Unitree-Go1"), ("g1", "Unitree-G1")):
    for _terrain in ("flat", "rough"):
        register_mjlab_task(
            f"Mjlab-Velocity-{_terrain.capitalize()}-{_name}",
            env_cfg=getattr(_velocity, f"{_robot}_{_terrain}"),
            play_env_cfg=getattr(_velocity, f"{_robot}_{_terrain}_play"),
            rl_cfg=f"mjlab.rl.task_cfgs:velocity_{_robot}_ppo_cfg",
        )

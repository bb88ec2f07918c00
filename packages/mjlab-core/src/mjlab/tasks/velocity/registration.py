"""Registers the velocity tasks, one per robot and terrain (found by `mjlab.tasks.builtin`)."""

from mjlab.tasks.registry import register_mjlab_task
from mjlab.tasks.velocity.config import g1, go1

for _robot, _module, _rl_cfg in (
    ("Unitree-Go1", go1, "velocity_go1_ppo_cfg"),
    ("Unitree-G1", g1, "velocity_g1_ppo_cfg"),
):
    for _terrain in ("flat", "rough"):
        register_mjlab_task(
            f"Mjlab-Velocity-{_terrain.capitalize()}-{_robot}",
            env_cfg=getattr(_module, _terrain),
            play_env_cfg=getattr(_module, f"{_terrain}_play"),
            rl_cfg=f"mjlab.tasks.velocity.rl_cfg:{_rl_cfg}",
        )

"""Task registry and the built-in tasks (Cartpole, Go1 and G1 velocity tracking)."""

from mjlab.tasks.registry import (
    list_tasks,
    load_env_cfg,
    load_rl_cfg,
    load_runner_cls,
    register_mjlab_task,
)

__all__ = ["list_tasks", "load_env_cfg", "load_rl_cfg", "load_runner_cls", "register_mjlab_task"]

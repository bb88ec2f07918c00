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

from mjlab.tasks.velocity.config import g1 as _g1  # noqa: E402
from mjlab.tasks.velocity.config import go1 as _go1  # noqa: E402

_VELOCITY_TASKS = (
    ("Mjlab-Velocity-Flat-Unitree-Go1", _go1.flat, _go1.flat_play, "velocity_go1_ppo_cfg"),
    ("Mjlab-Velocity-Rough-Unitree-Go1", _go1.rough, _go1.rough_play, "velocity_go1_ppo_cfg"),
    ("Mjlab-Velocity-Flat-Unitree-G1", _g1.flat, _g1.flat_play, "velocity_g1_ppo_cfg"),
    ("Mjlab-Velocity-Rough-Unitree-G1", _g1.rough, _g1.rough_play, "velocity_g1_ppo_cfg"),
)
for _task_id, _env_cfg, _play_env_cfg, _ppo_cfg in _VELOCITY_TASKS:
    register_mjlab_task(
        _task_id,
        env_cfg=_env_cfg,
        play_env_cfg=_play_env_cfg,
        rl_cfg=f"mjlab.rl.task_cfgs:{_ppo_cfg}",
    )

from mjlab.tasks.tracking.config import g1 as _g1_tracking  # noqa: E402

register_mjlab_task(
    "Mjlab-Tracking-Flat-Unitree-G1",
    env_cfg=_g1_tracking.flat,
    play_env_cfg=_g1_tracking.flat_play,
    rl_cfg="mjlab.rl.task_cfgs:tracking_g1_ppo_cfg",
)
register_mjlab_task(
    "Mjlab-Tracking-Flat-Unitree-G1-No-State-Estimation",
    env_cfg=_g1_tracking.flat_no_state_estimation,
    play_env_cfg=_g1_tracking.flat_no_state_estimation_play,
    rl_cfg="mjlab.rl.task_cfgs:tracking_g1_ppo_cfg",
)

from mjlab.tasks.manipulation import lift_env_cfg as _lift  # noqa: E402

register_mjlab_task(
    "Mjlab-Lift-Cube-Franka",
    env_cfg=_lift.lift_env_cfg,
    play_env_cfg=_lift.lift_play_env_cfg,
    rl_cfg="mjlab.rl.task_cfgs:lift_franka_ppo_cfg",
)
register_mjlab_task(
    "Mjlab-Lift-Cube-Franka-Rgb",
    env_cfg=_lift.lift_rgb_env_cfg,
    play_env_cfg=_lift.lift_rgb_play_env_cfg,
    rl_cfg="mjlab.rl.task_cfgs:lift_franka_image_ppo_cfg",
)
register_mjlab_task(
    "Mjlab-Lift-Cube-Franka-Depth",
    env_cfg=_lift.lift_depth_env_cfg,
    play_env_cfg=_lift.lift_depth_play_env_cfg,
    rl_cfg="mjlab.rl.task_cfgs:lift_franka_image_ppo_cfg",
)

"""Registers this project's tasks with mjlab.

mjlab imports this module when it first lists or loads tasks, because `pyproject.toml` names it in
the entry-point group `mjlab.tasks`. The rl config is a lazy "module:attribute" reference, so the
env alone (mjlab-core) never imports mjlab-rl.
"""

from downstream_reacher.reach_env_cfg import play, reach_env_cfg
from mjlab.tasks import register_mjlab_task

register_mjlab_task(
    "Downstream-Reach-Planar-Arm",
    env_cfg=reach_env_cfg,
    play_env_cfg=lambda: play(reach_env_cfg()),
    rl_cfg="downstream_reacher.rl_cfg:reach_ppo_cfg",
)

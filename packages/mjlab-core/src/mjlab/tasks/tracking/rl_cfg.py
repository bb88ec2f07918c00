"""PPO settings of the motion tracking tasks (rsl-rl, through mjlab-rl).

Imported only when a task's rl config is loaded (`mjlab.tasks.load_rl_cfg`), never by
`import mjlab.tasks`: it needs mjlab-rl, which mjlab-core does not depend on.
"""

from __future__ import annotations

from mjlab.rl.config import RslRlOnPolicyRunnerCfg
from mjlab.tasks.velocity.rl_cfg import velocity_ppo_cfg


def tracking_g1_ppo_cfg() -> RslRlOnPolicyRunnerCfg:
    """BeyondMimic's PPO settings (24 steps per env, lr 1e-3 adaptive, entropy 0.005) with the
    velocity tasks' smaller networks for a CPU, and an initial action noise of 0.5 (BeyondMimic:
    1.0; with 29 joints that noise alone costs ~5.8 per second in the action-rate penalty, more
    than the tracking terms pay)."""
    cfg = velocity_ppo_cfg("g1_tracking")
    cfg.max_iterations = 1000
    cfg.algorithm.entropy_coef = 0.005
    cfg.actor.init_noise_std = 0.5
    return cfg

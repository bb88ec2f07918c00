"""PPO settings of the Cartpole tasks (rsl-rl, through mjlab-rl).

Imported only when a task's rl config is loaded (`mjlab.tasks.load_rl_cfg`), never by
`import mjlab.tasks`: it needs mjlab-rl, which mjlab-core does not depend on.
"""

from __future__ import annotations

from mjlab.rl.config import RslRlModelCfg, RslRlOnPolicyRunnerCfg, RslRlPpoAlgorithmCfg


def cartpole_ppo_cfg() -> RslRlOnPolicyRunnerCfg:
    """Small networks, short rollouts: Cartpole Balance usually solves in a few dozen
    iterations; 150 leave room for a slow start (a seed's trajectory depends on the host's
    floating-point kernels, docs/guides/reproducibility.md)."""
    return RslRlOnPolicyRunnerCfg(
        experiment_name="cartpole",
        num_steps_per_env=32,
        max_iterations=150,
        save_interval=50,
        actor=RslRlModelCfg(
            hidden_dims=(64, 64), stochastic=True, init_noise_std=0.5, obs_normalization=True
        ),
        critic=RslRlModelCfg(hidden_dims=(64, 64), obs_normalization=True),
        algorithm=RslRlPpoAlgorithmCfg(learning_rate=1e-3, entropy_coef=0.005, num_mini_batches=4),
        logger="tensorboard",
    )

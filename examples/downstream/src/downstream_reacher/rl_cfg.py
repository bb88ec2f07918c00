"""PPO settings of the Reach task (mjlab-rl's runner config)."""

from mjlab.rl import RslRlModelCfg, RslRlOnPolicyRunnerCfg, RslRlPpoAlgorithmCfg


def reach_ppo_cfg() -> RslRlOnPolicyRunnerCfg:
    """Small networks and short rollouts: 200 iterations (2 min on 2 CPU cores) bring the
    fingertip to within a centimetre of held targets."""
    return RslRlOnPolicyRunnerCfg(
        experiment_name="reach_planar_arm",
        num_steps_per_env=24,
        max_iterations=200,
        save_interval=50,
        actor=RslRlModelCfg(
            hidden_dims=(64, 64), stochastic=True, init_noise_std=0.5, obs_normalization=True
        ),
        critic=RslRlModelCfg(hidden_dims=(64, 64), obs_normalization=True),
        algorithm=RslRlPpoAlgorithmCfg(learning_rate=1e-3, entropy_coef=0.005, num_mini_batches=4),
        logger="tensorboard",
    )

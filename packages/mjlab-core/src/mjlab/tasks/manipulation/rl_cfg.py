"""PPO settings of the Franka lift tasks (rsl-rl, through mjlab-rl).

Imported only when a task's rl config is loaded (`mjlab.tasks.load_rl_cfg`), never by
`import mjlab.tasks`: it needs mjlab-rl, which mjlab-core does not depend on.
"""

from __future__ import annotations

from mjlab.rl.config import RslRlModelCfg, RslRlOnPolicyRunnerCfg, RslRlPpoAlgorithmCfg


def lift_franka_ppo_cfg() -> RslRlOnPolicyRunnerCfg:
    """Franka cube lift from state: Isaac Lab's lift PPO settings (24 steps per env, 5 epochs,
    4 mini-batches, entropy 0.006, (256, 128, 64) networks) with its learning rate raised
    from 1e-4 to the adaptive schedule's 1e-3 start, for 1024 envs on a CPU."""
    return RslRlOnPolicyRunnerCfg(
        experiment_name="franka_lift",
        num_steps_per_env=24,
        max_iterations=1500,
        save_interval=50,
        actor=RslRlModelCfg(
            hidden_dims=(256, 128, 64), stochastic=True, init_noise_std=1.0, obs_normalization=True
        ),
        critic=RslRlModelCfg(hidden_dims=(256, 128, 64), obs_normalization=True),
        algorithm=RslRlPpoAlgorithmCfg(learning_rate=1e-3, entropy_coef=0.006),
    )


def lift_franka_image_ppo_cfg() -> RslRlOnPolicyRunnerCfg:
    """Franka cube lift from a camera: the state task's PPO with a CNN actor (rsl-rl's
    CNNModel: three strided convolutions, 16/32/32 channels, flattened: 6 x 6 x 32 features
    of a 64 x 64 image, keeping where things are, which global pooling would lose) that reads the "camera" observation group besides "actor"; the critic reads the state
    ("critic", asymmetric actor-critic), which keeps the value function cheap and exact."""
    cfg = lift_franka_ppo_cfg()
    cfg.experiment_name = "franka_lift_image"
    cfg.actor = RslRlModelCfg(
        class_name="CNNModel",
        hidden_dims=(256, 128, 64),
        stochastic=True,
        init_noise_std=1.0,
        obs_normalization=True,
        cnn_cfg={
            "output_channels": [16, 32, 32],
            "kernel_size": [5, 3, 3],
            "stride": [2, 2, 2],
            "activation": "elu",
        },
    )
    cfg.obs_groups = {"actor": ("actor", "camera"), "critic": ("critic",)}
    return cfg

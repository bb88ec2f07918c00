"""PPO configs of the built-in tasks (referenced lazily by mjlab-core's task registry)."""

from __future__ import annotations

import copy

from mjlab.rl.config import (
    RslRlModelCfg,
    RslRlOnPolicyRunnerCfg,
    RslRlPpoAlgorithmCfg,
    RslRlSymmetryCfg,
)

VELOCITY_MIRROR_FUNC = "mjlab.tasks.velocity.symmetry:mirror_observations_and_actions"
"""The velocity tasks' left/right mirror, as `RslRlSymmetryCfg.data_augmentation_func`."""


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


def _velocity(experiment: str) -> RslRlOnPolicyRunnerCfg:
    # (256, 128, 128), smaller than Isaac Lab's (512, 256, 128): the PPO update is a large share
    # of an iteration on a CPU, and these learn the velocity tasks (docs/results.md).
    return RslRlOnPolicyRunnerCfg(
        experiment_name=experiment,
        num_steps_per_env=24,
        max_iterations=600,
        save_interval=50,
        actor=RslRlModelCfg(
            hidden_dims=(256, 128, 128), stochastic=True, init_noise_std=1.0, obs_normalization=True
        ),
        critic=RslRlModelCfg(hidden_dims=(256, 128, 128), obs_normalization=True),
        algorithm=RslRlPpoAlgorithmCfg(entropy_coef=0.01),
    )


def velocity_symmetry_cfg(
    use_data_augmentation: bool = True,
    use_mirror_loss: bool = False,
    mirror_loss_coeff: float = 0.0,
) -> RslRlSymmetryCfg:
    """Left/right symmetry for the G1 and Go1 velocity tasks (any terrain): their mirror
    (`mjlab.tasks.velocity.symmetry`) with the given flags. Not on by default: set it on a
    velocity runner config (`with_symmetry`) or from the command line,
    `train TASK --agent.algorithm.symmetry-cfg.use-data-augmentation
    --agent.algorithm.symmetry-cfg.data-augmentation-func
    mjlab.tasks.velocity.symmetry:mirror_observations_and_actions`.

    Raises:
        ValueError: mirror_loss_coeff < 0, or use_mirror_loss with a coefficient of 0.
    """
    return RslRlSymmetryCfg(
        use_data_augmentation=use_data_augmentation,
        use_mirror_loss=use_mirror_loss,
        data_augmentation_func=VELOCITY_MIRROR_FUNC,
        mirror_loss_coeff=mirror_loss_coeff,
    )


def with_symmetry(
    cfg: RslRlOnPolicyRunnerCfg, symmetry: RslRlSymmetryCfg | None = None
) -> RslRlOnPolicyRunnerCfg:
    """A copy of the velocity runner config `cfg` with symmetry on (`symmetry`, default:
    `velocity_symmetry_cfg()`, data augmentation only); `cfg` itself is left as it was.

    >>> with_symmetry(velocity_g1_ppo_cfg()).algorithm.symmetry_cfg.use_data_augmentation
    True
    """
    out = copy.deepcopy(cfg)
    out.algorithm.symmetry_cfg = copy.deepcopy(symmetry) if symmetry else velocity_symmetry_cfg()
    return out


def velocity_go1_ppo_cfg() -> RslRlOnPolicyRunnerCfg:
    """The velocity settings with 3 learning epochs (not 5) and a KL target of 0.02 (not 0.01).

    Fewer epochs make each iteration's update cheaper and learned as fast per wall second on the
    Go1 flat task's 512 envs; with KL 0.01 the adaptive learning rate kept falling to its 1e-5
    floor, with 0.02 it stays mostly within 1e-4..1e-3 (docs/results.md, "What makes the
    defaults fast")."""
    cfg = _velocity("go1_velocity")
    cfg.algorithm.num_learning_epochs = 3
    cfg.algorithm.desired_kl = 0.02
    return cfg


def velocity_g1_ppo_cfg() -> RslRlOnPolicyRunnerCfg:
    """The velocity settings for 2000 iterations, with an initial action noise of 0.5 (not 1.0)
    and a KL target of 0.02. With 29 joints, noise 1.0 costs more in the action-rate penalty than
    standing earns, and PPO learns to fall at once; with KL 0.01 the adaptive learning rate sits
    at its 1e-5 floor through the first ~50 iterations. Forward walking is learned by iteration
    1500; sideways steps come later (0.15 m/s for a 0.3 m/s command at 1500, 0.21 at 2000)."""
    cfg = _velocity("g1_velocity")
    cfg.max_iterations = 2000
    cfg.actor.init_noise_std = 0.5
    cfg.algorithm.desired_kl = 0.02
    return cfg


def tracking_g1_ppo_cfg() -> RslRlOnPolicyRunnerCfg:
    """BeyondMimic's PPO settings (24 steps per env, lr 1e-3 adaptive, entropy 0.005) with the
    velocity tasks' smaller networks for a CPU, and an initial action noise of 0.5 (BeyondMimic:
    1.0; with 29 joints that noise alone costs ~5.8 per second in the action-rate penalty, more
    than the tracking terms pay)."""
    cfg = _velocity("g1_tracking")
    cfg.max_iterations = 1000
    cfg.algorithm.entropy_coef = 0.005
    cfg.actor.init_noise_std = 0.5
    return cfg


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

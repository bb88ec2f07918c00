"""PPO settings of the velocity tasks (rsl-rl, through mjlab-rl), and their left/right symmetry.

Imported only when a task's rl config is loaded (`mjlab.tasks.load_rl_cfg`), never by
`import mjlab.tasks`: it needs mjlab-rl, which mjlab-core does not depend on.
"""

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


def velocity_ppo_cfg(experiment: str) -> RslRlOnPolicyRunnerCfg:
    """The locomotion PPO settings shared by the velocity and tracking tasks, logging under
    `experiment`."""
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
    cfg = velocity_ppo_cfg("go1_velocity")
    cfg.algorithm.num_learning_epochs = 3
    cfg.algorithm.desired_kl = 0.02
    return cfg


def velocity_g1_ppo_cfg() -> RslRlOnPolicyRunnerCfg:
    """The velocity settings for 2000 iterations, with an initial action noise of 0.5 (not 1.0)
    and a KL target of 0.02. With 29 joints, noise 1.0 costs more in the action-rate penalty than
    standing earns, and PPO learns to fall at once; with KL 0.01 the adaptive learning rate sits
    at its 1e-5 floor through the first ~50 iterations. Forward walking is learned by iteration
    1500; sideways steps come later (0.15 m/s for a 0.3 m/s command at 1500, 0.21 at 2000)."""
    cfg = velocity_ppo_cfg("g1_velocity")
    cfg.max_iterations = 2000
    cfg.actor.init_noise_std = 0.5
    cfg.algorithm.desired_kl = 0.02
    return cfg

"""PPO with left/right symmetry (rsl-rl's Symmetry extension): the config, its way to rsl-rl
and the command line, and a real training run of a velocity task that learns from mirrored
samples."""

import dataclasses

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.rl import (
    MjlabOnPolicyRunner,
    RslRlOnPolicyRunnerCfg,
    RslRlSymmetryCfg,
    RslRlVecEnvWrapper,
    to_rsl_rl_train_cfg,
)
from mjlab.rl.cli import check_run_config, to_plain
from mjlab.tasks import load_env_cfg
from mjlab.tasks.velocity.rl_cfg import (
    VELOCITY_MIRROR_FUNC,
    velocity_g1_ppo_cfg,
    velocity_go1_ppo_cfg,
    velocity_symmetry_cfg,
    with_symmetry,
)

G1_FLAT = "Mjlab-Velocity-Flat-Unitree-G1"


def test_symmetry_is_off_by_default_and_rsl_rl_then_gets_no_symmetry_cfg():
    for cfg in (RslRlOnPolicyRunnerCfg(), velocity_g1_ppo_cfg(), velocity_go1_ppo_cfg()):
        assert not cfg.algorithm.symmetry_cfg.enabled
        assert "symmetry_cfg" not in to_rsl_rl_train_cfg(cfg)["algorithm"]


def test_the_velocity_helper_turns_it_on_in_a_copy():
    base = velocity_g1_ppo_cfg()
    cfg = with_symmetry(base)
    assert not base.algorithm.symmetry_cfg.enabled, "the given config is left as it was"
    assert to_rsl_rl_train_cfg(cfg)["algorithm"]["symmetry_cfg"] == {
        "use_data_augmentation": True,
        "use_mirror_loss": False,
        "data_augmentation_func": VELOCITY_MIRROR_FUNC,
        "mirror_loss_coeff": 0.0,
    }
    mirror_loss = with_symmetry(base, velocity_symmetry_cfg(False, True, 0.5))
    assert to_rsl_rl_train_cfg(mirror_loss)["algorithm"]["symmetry_cfg"]["mirror_loss_coeff"] == 0.5
    # params/agent.yaml holds the function's name, a callable too.
    assert to_plain(cfg.algorithm)["symmetry_cfg"]["data_augmentation_func"] == VELOCITY_MIRROR_FUNC
    cfg.algorithm.symmetry_cfg.data_augmentation_func = dataclasses.replace  # type: ignore[assignment]
    assert to_plain(cfg.algorithm)["symmetry_cfg"]["data_augmentation_func"] == (
        "dataclasses:replace"
    )


def test_the_helper_names_the_mirror_function_of_the_velocity_package():
    from mjlab.tasks.velocity import symmetry

    assert VELOCITY_MIRROR_FUNC == symmetry.MIRROR_FUNC
    assert symmetry.MIRROR_FUNC.endswith(":" + symmetry.mirror_observations_and_actions.__name__)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: RslRlSymmetryCfg(use_data_augmentation=True), "need data_augmentation_func"),
        (lambda: RslRlSymmetryCfg(data_augmentation_func="no_colon"), "'module:function'"),
        (lambda: RslRlSymmetryCfg(data_augmentation_func="m:f", mirror_loss_coeff=-1.0), ">= 0"),
        (
            lambda: RslRlSymmetryCfg(data_augmentation_func="m:f", use_mirror_loss=True),
            "mirror_loss_coeff is 0",
        ),
    ],
)
def test_a_bad_symmetry_setting_names_the_field(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_a_function_that_does_not_resolve_is_refused_before_anything_is_built():
    env_cfg = load_env_cfg(G1_FLAT)
    cfg = with_symmetry(
        velocity_g1_ppo_cfg(), RslRlSymmetryCfg(data_augmentation_func="mjlab.tasks.nowhere:f")
    )
    with pytest.raises(
        ValueError, match=r"symmetry_cfg\.data_augmentation_func 'mjlab\.tasks\.nowhere"
    ):
        check_run_config(env_cfg, cfg)
    cfg = with_symmetry(velocity_g1_ppo_cfg())
    cfg.actor.class_name = "RNNModel"
    with pytest.raises(ValueError, match=r"agent\.actor is recurrent"):
        check_run_config(env_cfg, cfg)


def test_the_train_command_line_switches_symmetry_on():
    from mjlab.rl.cli import parse_task_cli
    from mjlab.rl.scripts.train import TrainCfg

    flags = [
        "--agent.algorithm.symmetry-cfg.use-data-augmentation",
        "--agent.algorithm.symmetry-cfg.data-augmentation-func",
        VELOCITY_MIRROR_FUNC,
    ]
    _, cfg = parse_task_cli("train", TrainCfg, [G1_FLAT, *flags])
    assert cfg.agent.algorithm.symmetry_cfg == velocity_symmetry_cfg()
    _, cfg = parse_task_cli(
        "train",
        TrainCfg,
        [
            G1_FLAT,
            *flags[1:],
            "--agent.algorithm.symmetry-cfg.use-mirror-loss",
            "--agent.algorithm.symmetry-cfg.mirror-loss-coeff",
            "0.5",
        ],
    )
    assert cfg.agent.algorithm.symmetry_cfg == velocity_symmetry_cfg(False, True, 0.5)


@pytest.mark.slow
def test_ppo_learns_from_mirrored_samples_and_logs_the_symmetry_loss(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from mjlab.tasks.velocity.symmetry import mirror_observations_and_actions

    env_cfg = load_env_cfg(G1_FLAT)
    env_cfg.scene.num_envs = 4
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(env_cfg))
    batches = []

    def mirror(env, obs=None, actions=None):
        out = mirror_observations_and_actions(env=env, obs=obs, actions=actions)
        if obs is not None and actions is not None:
            batches.append((obs.batch_size[0], out[0].batch_size[0], out[1].shape[0]))
        return out

    agent = with_symmetry(
        velocity_g1_ppo_cfg(),
        RslRlSymmetryCfg(use_data_augmentation=True, data_augmentation_func=mirror),  # type: ignore[arg-type]
    )
    agent.num_steps_per_env = 8
    agent.algorithm.num_mini_batches = 1
    agent.algorithm.num_learning_epochs = 1
    agent.logger = "tensorboard"
    runner = MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(agent), str(tmp_path))
    runner.learn(2)
    assert batches == [(32, 64, 64)] * 2, "each update's mini-batch got its mirror appended"
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    losses = [e.value for e in events.Scalars("Loss/symmetry")]
    assert len(losses) == 2 and all(torch.isfinite(torch.tensor(losses)))
    assert all(v > 0 for v in losses), "an untrained policy is not symmetric"


def test_the_earlier_module_path_re_exports_the_task_folders_configs():
    import mjlab.rl.task_cfgs as earlier
    import mjlab.tasks.velocity.rl_cfg as home

    assert earlier.velocity_g1_ppo_cfg is home.velocity_g1_ppo_cfg
    assert earlier.with_symmetry is home.with_symmetry

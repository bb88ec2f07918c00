"""mjlab.rl configs follow the seed API; conversion to rsl-rl 5.x train_cfg (case C09)."""

import dataclasses

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.rl import (
    MjlabOnPolicyRunner,
    RslRlBaseRunnerCfg,
    RslRlModelCfg,
    RslRlOnPolicyRunnerCfg,
    RslRlPpoAlgorithmCfg,
    RslRlVecEnvWrapper,
    to_rsl_rl_train_cfg,
)
from mjlab.tasks import list_tasks, load_env_cfg, load_rl_cfg

SEED_DEFAULTS = {
    RslRlModelCfg: dict(
        hidden_dims=(128, 128, 128),
        activation="elu",
        obs_normalization=False,
        init_noise_std=1.0,
        noise_std_type="scalar",
        stochastic=False,
        cnn_cfg=None,
        class_name="MLPModel",
    ),
    RslRlPpoAlgorithmCfg: dict(
        num_learning_epochs=5,
        num_mini_batches=4,
        learning_rate=1e-3,
        schedule="adaptive",
        gamma=0.99,
        lam=0.95,
        entropy_coef=0.005,
        desired_kl=0.01,
        max_grad_norm=1.0,
        value_loss_coef=1.0,
        use_clipped_value_loss=True,
        clip_param=0.2,
        normalize_advantage_per_mini_batch=False,
        optimizer="adam",
        share_cnn_encoders=False,
        class_name="PPO",
    ),
    RslRlBaseRunnerCfg: dict(
        seed=42,
        num_steps_per_env=24,
        max_iterations=300,
        save_interval=50,
        experiment_name="exp1",
        run_name="",
        logger="wandb",
        wandb_project="mjlab",
        wandb_tags=(),
        resume=False,
        load_run=".*",
        load_checkpoint="model_.*.pt",
        clip_actions=None,
        upload_model=True,
    ),
}


@pytest.mark.parametrize("cls", list(SEED_DEFAULTS), ids=lambda c: c.__name__)
def test_config_fields_and_defaults_match_the_seed(cls):
    fields = {f.name: f for f in dataclasses.fields(cls)}
    assert list(fields) == list(SEED_DEFAULTS[cls])
    instance = cls()
    for name, default in SEED_DEFAULTS[cls].items():
        assert getattr(instance, name) == default, name


def test_on_policy_runner_cfg_adds_models_and_algorithm():
    cfg = RslRlOnPolicyRunnerCfg()
    assert cfg.class_name == "OnPolicyRunner"
    assert isinstance(cfg.actor, RslRlModelCfg) and isinstance(cfg.critic, RslRlModelCfg)
    assert isinstance(cfg.algorithm, RslRlPpoAlgorithmCfg)
    assert issubclass(RslRlOnPolicyRunnerCfg, RslRlBaseRunnerCfg)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: RslRlPpoAlgorithmCfg(learning_rate=-1.0), "learning_rate"),
        (lambda: RslRlModelCfg(activation="swish2"), "activation"),
        (lambda: RslRlModelCfg(cnn_cfg={"output_channels": [8]}), "class_name='CNNModel'"),
        (lambda: RslRlBaseRunnerCfg(logger="neptune"), "logger"),
    ],
)
def test_bad_config_values_name_the_field(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_conversion_drops_none_fields_and_builds_the_5x_distribution():
    train_cfg = to_rsl_rl_train_cfg(RslRlOnPolicyRunnerCfg())
    assert "cnn_cfg" not in train_cfg["actor"] and "cnn_cfg" not in train_cfg["critic"]
    assert train_cfg["actor"]["distribution_cfg"] == {
        "class_name": "GaussianDistribution",
        "init_std": 1.0,
        "std_type": "scalar",
    }
    assert "distribution_cfg" not in train_cfg["critic"]
    assert "share_cnn_encoders" not in train_cfg["algorithm"]
    cnn = RslRlModelCfg(class_name="CNNModel", cnn_cfg={"output_channels": [8], "kernel_size": [3]})
    assert to_rsl_rl_train_cfg(RslRlOnPolicyRunnerCfg(actor=cnn))["actor"]["cnn_cfg"][
        "kernel_size"
    ] == [3]


def test_default_config_builds_a_real_runner():
    # Case C09: the default config (cnn_cfg=None) must reach rsl-rl without stray arguments.
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 4
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
    runner = MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(RslRlOnPolicyRunnerCfg()), None)
    assert runner.alg.get_policy().distribution is not None


@pytest.mark.parametrize("task_id", list_tasks())
def test_every_shipped_task_config_builds_its_runner(task_id):
    env_cfg = load_env_cfg(task_id)
    env_cfg.scene.num_envs = 2
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(env_cfg))
    runner = MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(load_rl_cfg(task_id)), None)
    with torch.inference_mode():
        actions = runner.alg.act(env.get_observations())
    assert actions.shape == (2, env.num_actions)

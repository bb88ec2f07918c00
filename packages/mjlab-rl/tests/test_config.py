"""mjlab.rl configs follow the seed API; conversion to rsl-rl 5.x train_cfg (case C09)."""

import dataclasses

import pytest
import torch
from tensordict import TensorDict

from mjlab.envs import ManagerBasedRlEnv
from mjlab.rl import (
    MjlabOnPolicyRunner,
    RslRlBaseRunnerCfg,
    RslRlModelCfg,
    RslRlOnPolicyRunnerCfg,
    RslRlPpoAlgorithmCfg,
    RslRlSymmetryCfg,
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


ADDITIONS = {RslRlPpoAlgorithmCfg: dict(symmetry_cfg=RslRlSymmetryCfg())}
"""Fields beyond the seed API, after its fields; their defaults keep the seed's behaviour
(symmetry off: rsl-rl gets no symmetry_cfg)."""


@pytest.mark.parametrize("cls", list(SEED_DEFAULTS), ids=lambda c: c.__name__)
def test_config_fields_and_defaults_match_the_seed(cls):
    fields = {f.name: f for f in dataclasses.fields(cls)}
    expected = {**SEED_DEFAULTS[cls], **ADDITIONS.get(cls, {})}
    assert list(fields) == list(expected)
    instance = cls()
    for name, default in expected.items():
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
    cnn = RslRlModelCfg(
        class_name="CNNModel", cnn_cfg={"output_channels": [8], "kernel_size": [3]}, stochastic=True
    )
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


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: RslRlModelCfg(hidden_dims=()), "hidden_dims"),
        (lambda: RslRlModelCfg(hidden_dims=(64, 0)), "hidden_dims"),
        (lambda: RslRlModelCfg(init_noise_std=0.0), "init_noise_std"),
        (lambda: RslRlModelCfg(noise_std_type="exp"), "noise_std_type"),
        (lambda: RslRlPpoAlgorithmCfg(entropy_coef=-0.1), "entropy_coef"),
        (lambda: RslRlPpoAlgorithmCfg(desired_kl=0.0), "desired_kl"),
        (lambda: RslRlPpoAlgorithmCfg(max_grad_norm=-1.0), "max_grad_norm"),
        (lambda: RslRlPpoAlgorithmCfg(gamma=1.5), "gamma"),
        (lambda: RslRlPpoAlgorithmCfg(optimizer="lion"), "optimizer"),
        (lambda: RslRlPpoAlgorithmCfg(num_mini_batches=0), "num_mini_batches"),
        (lambda: RslRlBaseRunnerCfg(save_interval=0), "save_interval"),
        (lambda: RslRlBaseRunnerCfg(experiment_name="a/b"), "experiment_name"),
        (lambda: RslRlBaseRunnerCfg(load_run="model_(["), "load_run"),
        (lambda: RslRlBaseRunnerCfg(clip_actions=0.0), "clip_actions"),
        (lambda: RslRlOnPolicyRunnerCfg(actor=RslRlModelCfg(stochastic=False)), "actor.stochastic"),
        (
            lambda: RslRlOnPolicyRunnerCfg(
                actor=RslRlModelCfg(class_name="CNNModel", stochastic=True)
            ),
            "actor.cnn_cfg",
        ),
        (
            lambda: RslRlOnPolicyRunnerCfg(algorithm=RslRlPpoAlgorithmCfg(share_cnn_encoders=True)),
            "share_cnn_encoders",
        ),
        (lambda: RslRlOnPolicyRunnerCfg(obs_groups={"actor": ("actor",)}), "obs_groups"),
    ],
)
def test_out_of_range_values_are_refused_at_construction_naming_the_field(make, field):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        make()


def test_every_activation_accepted_by_the_config_builds_in_rsl_rl():
    # The config's list must be rsl-rl's: "swish" (not "silu") is rsl-rl's name for SiLU.
    from rsl_rl.modules import MLP

    from mjlab.rl.config import _ACTIVATIONS

    for name in _ACTIVATIONS:
        assert MLP(3, 2, [4], RslRlModelCfg(activation=name).activation)(
            torch.zeros(1, 3)
        ).shape == (1, 2)
    with pytest.raises(ValueError, match="activation"):
        RslRlModelCfg(activation="silu")


def test_conversion_returns_a_fresh_dict_with_lists_and_no_none_values():
    cfg = RslRlOnPolicyRunnerCfg(wandb_tags=("go1", "flat"))
    first, second = to_rsl_rl_train_cfg(cfg), to_rsl_rl_train_cfg(cfg)
    first["obs_groups"]["critic"].append("actor")
    assert second["obs_groups"] == {"actor": ["actor"], "critic": ["critic"]}
    assert "clip_actions" not in second
    assert second["logger"] == {
        "class_name": "mjlab.rl.log_writer:MjlabWandbLogWriter",
        "project_name": "mjlab",
        "tags": ["go1", "flat"],
    }

    def nones(d):
        return [k for k, v in d.items() if v is None] + [
            k for v in d.values() if isinstance(v, dict) for k in nones(v)
        ]

    assert nones(second) == []
    tb = to_rsl_rl_train_cfg(RslRlOnPolicyRunnerCfg(logger="tensorboard", clip_actions=2.0))
    assert tb["logger"] == "tensorboard" and tb["clip_actions"] == 2.0


def test_log_std_noise_becomes_a_log_parameter_in_the_built_actor():
    from rsl_rl.utils import resolve_class

    actor = RslRlModelCfg(stochastic=True, noise_std_type="log", init_noise_std=0.5)
    train_cfg = to_rsl_rl_train_cfg(RslRlOnPolicyRunnerCfg(actor=actor))
    cls, kwargs = resolve_class(train_cfg["actor"])
    obs = TensorDict({"actor": torch.zeros(2, 3)}, batch_size=[2])
    model = cls(obs, {"actor": ["actor"]}, "actor", 4, **kwargs)
    assert torch.allclose(model.distribution.log_std_param, torch.log(torch.full((4,), 0.5)))


def test_cnn_model_config_converts_and_builds_a_real_cnn_model():
    from rsl_rl.utils import resolve_class

    cnn = {"output_channels": [4, 8], "kernel_size": 3, "global_pool": "avg"}
    cfg = RslRlOnPolicyRunnerCfg(
        actor=RslRlModelCfg(class_name="CNNModel", cnn_cfg=cnn, stochastic=True, hidden_dims=(32,)),
        critic=RslRlModelCfg(class_name="CNNModel", hidden_dims=(32,)),
        algorithm=RslRlPpoAlgorithmCfg(share_cnn_encoders=True),
        obs_groups={"actor": ("proprio", "depth"), "critic": ("proprio", "depth")},
    )
    train_cfg = to_rsl_rl_train_cfg(cfg)
    assert train_cfg["algorithm"]["share_cnn_encoders"] is True
    assert "cnn_cfg" not in train_cfg["critic"]  # shared: the critic takes the actor's encoders
    obs = TensorDict(
        {"proprio": torch.zeros(2, 5), "depth": torch.rand(2, 1, 12, 16)}, batch_size=[2]
    )
    cls, kwargs = resolve_class(train_cfg["actor"])
    actor = cls(obs, train_cfg["obs_groups"], "actor", 3, **kwargs)
    assert actor(obs).shape == (2, 3)
    assert set(actor.cnns) == {"depth"}


def test_custom_model_class_gets_only_the_arguments_it_accepts():
    # Case C09 for any class_name: a non-default setting the class cannot take is an error,
    # not silently dropped...
    custom = "rsl_rl.modules:MLP"  # takes hidden_dims and activation, nothing else
    with pytest.raises(ValueError, match=r"critic\.obs_normalization.*no 'obs_normalization'"):
        to_rsl_rl_train_cfg(
            RslRlOnPolicyRunnerCfg(critic=RslRlModelCfg(class_name=custom, obs_normalization=True))
        )
    # ...and defaults it cannot take are left out.
    critic = to_rsl_rl_train_cfg(RslRlOnPolicyRunnerCfg(critic=RslRlModelCfg(class_name=custom)))[
        "critic"
    ]
    assert set(critic) == {"class_name", "hidden_dims", "activation"}
    with pytest.raises(ValueError, match=r"actor\.class_name 'NoSuchModel' cannot be resolved"):
        to_rsl_rl_train_cfg(
            RslRlOnPolicyRunnerCfg(actor=RslRlModelCfg(class_name="NoSuchModel", stochastic=True))
        )


def test_command_line_style_overrides_reach_rsl_rl():
    import tyro

    cfg = tyro.cli(
        RslRlOnPolicyRunnerCfg,
        default=load_rl_cfg("Mjlab-Cartpole-Balance"),
        args=[
            "--algorithm.learning-rate", "3e-4",
            "--actor.hidden-dims", "32", "16",
            "--obs-groups.critic", "actor", "critic",
            "--wandb-tags", "a", "b",
        ],
    )  # fmt: skip
    train_cfg = to_rsl_rl_train_cfg(cfg)
    assert train_cfg["algorithm"]["learning_rate"] == 3e-4
    assert train_cfg["actor"]["hidden_dims"] == [32, 16]
    assert train_cfg["obs_groups"]["critic"] == ["actor", "critic"]
    with pytest.raises(SystemExit):  # validation runs on the overridden config too
        tyro.cli(RslRlPpoAlgorithmCfg, args=["--learning-rate", "-1"])


def test_asymmetric_critic_observation_groups_build_a_runner():
    env_cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    env_cfg.scene.num_envs = 2
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(env_cfg))
    cfg = RslRlOnPolicyRunnerCfg(obs_groups={"actor": ("actor",), "critic": ("actor", "critic")})
    runner = MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(cfg), None)
    obs = env.get_observations()
    assert runner.alg._raw_critic.obs_dim == obs["actor"].shape[1] + obs["critic"].shape[1]


def test_a_misspelt_runner_setting_is_refused_naming_the_field_meant():
    from mjlab.utils.config import UnknownFieldError

    cfg = load_rl_cfg("Mjlab-Cartpole-Balance")
    with pytest.raises(UnknownFieldError, match="did you mean 'learning_rate'"):
        cfg.algorithm.learning_rat = 1e-4
    with pytest.raises(UnknownFieldError, match="RslRlOnPolicyRunnerCfg has no field"):
        cfg.max_iteration = 5
    cfg.algorithm.learning_rate = 1e-4  # declared fields are set as before
    assert to_rsl_rl_train_cfg(cfg)["algorithm"]["learning_rate"] == 1e-4

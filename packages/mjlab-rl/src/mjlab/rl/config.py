"""rsl-rl configs as typed dataclasses, and their conversion to rsl-rl-lib 5.x's `train_cfg`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

_ACTIVATIONS = (
    "elu",
    "selu",
    "relu",
    "crelu",
    "lrelu",
    "tanh",
    "sigmoid",
    "identity",
    "gelu",
    "silu",
    "softplus",
    "mish",
)


@dataclass(kw_only=True)
class RslRlModelCfg:
    """Config for a single neural network model (actor or critic)."""

    hidden_dims: tuple[int, ...] = (128, 128, 128)
    """The hidden dimensions of the network."""
    activation: str = "elu"
    """The activation function."""
    obs_normalization: bool = False
    """Whether to normalize the observations (running mean/std, inside the exported graph)."""
    init_noise_std: float = 1.0
    """The initial noise standard deviation (stochastic models)."""
    noise_std_type: Literal["scalar", "log"] = "scalar"
    """The type of noise standard deviation parameter."""
    stochastic: bool = False
    """Whether the model output is stochastic (a Gaussian over actions)."""
    cnn_cfg: dict[str, Any] | None = None
    """CNN encoder config, passed to rsl_rl.modules.CNN (output_channels, kernel_size, stride,
    padding, activation, global_pool, max_pool). When set, class_name should be "CNNModel"."""
    class_name: str = "MLPModel"
    """Model class name resolved by rsl-rl (MLPModel or CNNModel)."""

    def __post_init__(self) -> None:
        if not self.hidden_dims or any(int(h) <= 0 for h in self.hidden_dims):
            raise ValueError(
                f"RslRlModelCfg.hidden_dims must be positive sizes, got {self.hidden_dims}."
            )
        if self.activation not in _ACTIVATIONS:
            raise ValueError(
                f"RslRlModelCfg.activation '{self.activation}' is not one of {list(_ACTIVATIONS)}."
            )
        if self.init_noise_std <= 0:
            raise ValueError(
                f"RslRlModelCfg.init_noise_std must be > 0, got {self.init_noise_std}."
            )
        if self.noise_std_type not in ("scalar", "log"):
            raise ValueError(
                f"RslRlModelCfg.noise_std_type must be 'scalar' or 'log', got '{self.noise_std_type}'."
            )
        if self.cnn_cfg is not None and self.class_name == "MLPModel":
            raise ValueError(
                "RslRlModelCfg.cnn_cfg is set but class_name is 'MLPModel': set class_name='CNNModel'."
            )


@dataclass(kw_only=True)
class RslRlPpoAlgorithmCfg:
    """Config for the PPO algorithm."""

    num_learning_epochs: int = 5
    """The number of learning epochs per update."""
    num_mini_batches: int = 4
    """The number of mini-batches per update; mini batch size = num_envs * num_steps / num_mini_batches."""
    learning_rate: float = 1e-3
    """The learning rate."""
    schedule: Literal["adaptive", "fixed"] = "adaptive"
    """The learning rate schedule (adaptive: driven by desired_kl)."""
    gamma: float = 0.99
    """The discount factor."""
    lam: float = 0.95
    """The lambda parameter for Generalized Advantage Estimation (GAE)."""
    entropy_coef: float = 0.005
    """The coefficient for the entropy loss."""
    desired_kl: float = 0.01
    """The desired KL divergence between the new and old policies."""
    max_grad_norm: float = 1.0
    """The maximum gradient norm for the policy."""
    value_loss_coef: float = 1.0
    """The coefficient for the value loss."""
    use_clipped_value_loss: bool = True
    """Whether to use clipped value loss."""
    clip_param: float = 0.2
    """The clipping parameter for the policy."""
    normalize_advantage_per_mini_batch: bool = False
    """Normalize the advantage per mini-batch (True) or over the whole rollout (False)."""
    optimizer: Literal["adam", "adamw", "sgd", "rmsprop"] = "adam"
    """The optimizer to use."""
    share_cnn_encoders: bool = False
    """Share CNN encoders between actor and critic."""
    class_name: str = "PPO"
    """Algorithm class name resolved by rsl-rl."""

    def __post_init__(self) -> None:
        for name in ("num_learning_epochs", "num_mini_batches"):
            if getattr(self, name) < 1:
                raise ValueError(
                    f"RslRlPpoAlgorithmCfg.{name} must be >= 1, got {getattr(self, name)}."
                )
        if self.learning_rate <= 0:
            raise ValueError(
                f"RslRlPpoAlgorithmCfg.learning_rate must be > 0, got {self.learning_rate}."
            )
        for name in ("gamma", "lam"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(
                    f"RslRlPpoAlgorithmCfg.{name} must be in [0, 1], got {getattr(self, name)}."
                )
        if self.schedule not in ("adaptive", "fixed"):
            raise ValueError(
                f"RslRlPpoAlgorithmCfg.schedule must be 'adaptive' or 'fixed', got '{self.schedule}'."
            )
        if self.optimizer not in ("adam", "adamw", "sgd", "rmsprop"):
            raise ValueError(
                f"RslRlPpoAlgorithmCfg.optimizer '{self.optimizer}' is not adam/adamw/sgd/rmsprop."
            )
        if self.clip_param <= 0:
            raise ValueError(f"RslRlPpoAlgorithmCfg.clip_param must be > 0, got {self.clip_param}.")


@dataclass(kw_only=True)
class RslRlBaseRunnerCfg:
    """Runner settings shared by rsl-rl runners."""

    seed: int = 42
    """The seed for the experiment."""
    num_steps_per_env: int = 24
    """The number of steps per environment per update (rollout length)."""
    max_iterations: int = 300
    """The maximum number of iterations."""
    save_interval: int = 50
    """The number of iterations between saves."""
    experiment_name: str = "exp1"
    """Directory name used to group runs under logs/rsl_rl/{experiment_name}/."""
    run_name: str = ""
    """Optional label appended to the timestamped run directory
    (e.g. 2025-01-27_14-30-00_{run_name}); also the wandb run's display name."""
    logger: Literal["wandb", "tensorboard"] = "wandb"
    """The logger to use."""
    wandb_project: str = "mjlab"
    """The wandb project name."""
    wandb_tags: tuple[str, ...] = ()
    """Tags for the wandb run."""
    resume: bool = False
    """Whether to resume the experiment."""
    load_run: str = ".*"
    """The run directory to load; a regex: the latest (alphabetical order) matching run."""
    load_checkpoint: str = "model_.*.pt"
    """The checkpoint file to load; a regex: the latest (alphabetical order) matching file."""
    clip_actions: float | None = None
    """The clipping range for action values; None: no clipping."""
    upload_model: bool = True
    """Whether to upload model files (.pt, .onnx) to W&B on save."""

    def __post_init__(self) -> None:
        for name in ("num_steps_per_env", "max_iterations", "save_interval"):
            if getattr(self, name) < 1:
                raise ValueError(
                    f"{type(self).__name__}.{name} must be >= 1, got {getattr(self, name)}."
                )
        if self.logger not in ("wandb", "tensorboard"):
            raise ValueError(
                f"{type(self).__name__}.logger must be 'wandb' or 'tensorboard', got '{self.logger}'."
            )
        if self.clip_actions is not None and self.clip_actions <= 0:
            raise ValueError(
                f"{type(self).__name__}.clip_actions must be > 0 or None, got {self.clip_actions}."
            )


@dataclass(kw_only=True)
class RslRlOnPolicyRunnerCfg(RslRlBaseRunnerCfg):
    """Config of the on-policy (PPO) runner."""

    class_name: str = "OnPolicyRunner"
    """The runner class name."""
    actor: RslRlModelCfg = field(default_factory=lambda: RslRlModelCfg(stochastic=True))
    """The actor configuration."""
    critic: RslRlModelCfg = field(default_factory=RslRlModelCfg)
    """The critic configuration."""
    algorithm: RslRlPpoAlgorithmCfg = field(default_factory=RslRlPpoAlgorithmCfg)
    """The algorithm configuration."""


def _model_cfg(model: RslRlModelCfg) -> dict[str, Any]:
    """One model's rsl-rl 5.x kwargs: only what the chosen class accepts, no None values (C09)."""
    out: dict[str, Any] = {
        "class_name": model.class_name,
        "hidden_dims": list(model.hidden_dims),
        "activation": model.activation,
        "obs_normalization": model.obs_normalization,
    }
    if model.stochastic:
        out["distribution_cfg"] = {
            "class_name": "GaussianDistribution",
            "init_std": model.init_noise_std,
            "std_type": model.noise_std_type,
        }
    if model.cnn_cfg is not None:
        out["cnn_cfg"] = dict(model.cnn_cfg)
    return out


def to_rsl_rl_train_cfg(cfg: RslRlOnPolicyRunnerCfg) -> dict[str, Any]:
    """Convert a runner config to the `train_cfg` dict rsl-rl-lib 5.x's OnPolicyRunner takes.

    The 5.x layout: `actor`/`critic` model dicts (with a `distribution_cfg` for stochastic
    models), an `algorithm` dict, `obs_groups` (actor -> ["actor"], critic -> ["critic"]),
    `num_steps_per_env`, `save_interval`, and the logger as a writer dict. Optional fields left
    as None are dropped so no model receives an argument it does not accept (case C09).
    """
    algorithm = {f.name: getattr(cfg.algorithm, f.name) for f in dataclasses.fields(cfg.algorithm)}
    # PPO only accepts share_cnn_encoders when it is meaningful (CNN models).
    if algorithm.pop("share_cnn_encoders") and cfg.actor.class_name == "CNNModel":
        algorithm["share_cnn_encoders"] = True
    if cfg.logger == "wandb":
        logger: Any = {"class_name": "WandbLogWriter", "project_name": cfg.wandb_project}
    else:
        logger = "tensorboard"
    return {
        "class_name": cfg.class_name,
        "seed": cfg.seed,
        "num_steps_per_env": cfg.num_steps_per_env,
        "max_iterations": cfg.max_iterations,
        "save_interval": cfg.save_interval,
        "experiment_name": cfg.experiment_name,
        "run_name": cfg.run_name,
        "logger": logger,
        "wandb_project": cfg.wandb_project,
        "obs_groups": {"actor": ["actor"], "critic": ["critic"]},
        "actor": _model_cfg(cfg.actor),
        "critic": _model_cfg(cfg.critic),
        "algorithm": algorithm,
        "upload_model": cfg.upload_model,
        "clip_actions": cfg.clip_actions,
    }

"""rsl-rl configs as typed dataclasses, and their conversion to rsl-rl-lib 5.x's `train_cfg`.

The dataclasses are what tasks ship and what the command line overrides; rsl-rl-lib itself takes
an untyped nested dict. `to_rsl_rl_train_cfg` is the one place where the first becomes the second.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from mjlab.utils.config import Config

# Activation names rsl-rl-lib 5.x resolves (rsl_rl.utils.resolve_nn_activation, case-insensitive).
_ACTIVATIONS = (
    "elu",
    "selu",
    "relu",
    "crelu",
    "lrelu",
    "tanh",
    "sigmoid",
    "softplus",
    "gelu",
    "swish",
    "mish",
    "identity",
)
_OPTIMIZERS = ("adam", "adamw", "sgd", "rmsprop")
_WANDB_WRITER = "mjlab.rl.log_writer:MjlabWandbLogWriter"


@dataclass(kw_only=True)
class RslRlModelCfg(Config):
    """Config for a single neural network model (actor or critic).

    Raises:
        ValueError: at construction, for a value rsl-rl would reject later; the message names the
            field.
    """

    hidden_dims: tuple[int, ...] = (128, 128, 128)
    """The hidden dimensions of the network, input side first. -1 means "same as the input
    dimension" (resolved by rsl-rl when the model is built)."""
    activation: str = "elu"
    """The activation function of the hidden layers (and of the CNN encoder): one of elu, selu,
    relu, crelu, lrelu, tanh, sigmoid, softplus, gelu, swish, mish, identity."""
    obs_normalization: bool = False
    """Whether to normalize the observations with running mean/std statistics (updated after each
    PPO update, stored in checkpoints, and kept inside the exported ONNX graph)."""
    init_noise_std: float = 1.0
    """The initial noise standard deviation of a stochastic model, in action units."""
    noise_std_type: Literal["scalar", "log"] = "scalar"
    """How the learned noise standard deviation is parameterized: "scalar" learns std itself,
    "log" learns log(std) (never negative, better for small std)."""
    stochastic: bool = False
    """Whether the model output is stochastic (a diagonal Gaussian around the network output).
    The actor of a PPO runner must be stochastic; the critic is normally not."""
    cnn_cfg: dict[str, Any] | None = None
    """CNN encoder config. When set, class_name should be "CNNModel".

    Passed to rsl_rl.modules.CNN, once per 2D observation group (or a dict of such dicts keyed by
    group). Common keys: output_channels, kernel_size, stride, padding, activation, global_pool,
    max_pool."""
    class_name: str = "MLPModel"
    """Model class name resolved by rsl-rl: "MLPModel", "CNNModel", "RNNModel", or a qualified
    name "module.path:ClassName" for a custom model."""

    def __post_init__(self) -> None:
        self.hidden_dims = tuple(self.hidden_dims)
        if not self.hidden_dims or any(
            not isinstance(h, int) or isinstance(h, bool) or (h <= 0 and h != -1)
            for h in self.hidden_dims
        ):
            raise ValueError(
                f"RslRlModelCfg.hidden_dims must be a non-empty tuple of positive layer sizes "
                f"(or -1 for 'input size'), got {self.hidden_dims}."
            )
        if self.activation.lower() not in _ACTIVATIONS:
            raise ValueError(
                f"RslRlModelCfg.activation '{self.activation}' is unknown to rsl-rl; "
                f"use one of {list(_ACTIVATIONS)}."
            )
        if not self.init_noise_std > 0:
            raise ValueError(
                f"RslRlModelCfg.init_noise_std must be > 0, got {self.init_noise_std}."
            )
        if self.noise_std_type not in ("scalar", "log"):
            raise ValueError(
                f"RslRlModelCfg.noise_std_type must be 'scalar' or 'log', got '{self.noise_std_type}'."
            )
        if self.cnn_cfg is not None and self.class_name == "MLPModel":
            raise ValueError(
                "RslRlModelCfg.cnn_cfg is set but class_name is 'MLPModel', which has no CNN "
                "encoder: set class_name='CNNModel' (or cnn_cfg=None)."
            )
        if not self.class_name:
            raise ValueError("RslRlModelCfg.class_name must name a model class, got ''.")


@dataclass(kw_only=True)
class RslRlSymmetryCfg(Config):
    """Symmetry in PPO updates (rsl-rl's `Symmetry` extension; Mittal et al., ICRA 2024):
    mirrored copies of each mini-batch's samples and/or a mirror loss on the actor.

    Off (the default) while `data_augmentation_func` is None: rsl-rl then gets no symmetry
    config. With a function but both flags False, rsl-rl only logs the mirror loss
    (`Loss/symmetry`) without learning from it.

    Raises:
        ValueError: at construction, a flag on without a function, a negative or unused
            mirror_loss_coeff, or a function that is neither a callable nor a "module:function"
            string; the message names the field.
    """

    use_data_augmentation: bool = False
    """Append the mirrored observations and actions to every mini-batch (the surrogate and the
    value loss see both; the rollout's advantages and returns are repeated for the copies)."""
    use_mirror_loss: bool = False
    """Add `mirror_loss_coeff` times the mean squared difference between the actor's mean
    action on mirrored observations and the mirror of its mean action to the loss."""
    data_augmentation_func: str | None = None
    """The mirror function, called by rsl-rl as `func(env=, obs=, actions=)` with the
    `RslRlVecEnvWrapper`, a TensorDict of observation groups (batch first) or None, and an
    action tensor or None; it returns both with the mirrored samples appended along the batch
    dimension (None stays None). A "module:function" string (resolved when training starts;
    what the command line and params/agent.yaml hold) or, from Python, the callable itself.
    Velocity tasks: "mjlab.tasks.velocity.symmetry:mirror_observations_and_actions"."""
    mirror_loss_coeff: float = 0.0
    """Weight of the mirror loss (used with use_mirror_loss)."""

    def __post_init__(self) -> None:
        func = self.data_augmentation_func
        if (func is not None and not callable(func)) and (
            not isinstance(func, str) or ":" not in func or func.startswith(":")
        ):
            raise ValueError(
                "RslRlSymmetryCfg.data_augmentation_func must be a callable or a "
                f"'module:function' string, got {func!r}."
            )
        if func is None and (self.use_data_augmentation or self.use_mirror_loss):
            raise ValueError(
                "RslRlSymmetryCfg.use_data_augmentation/use_mirror_loss need "
                "data_augmentation_func, e.g. "
                "'mjlab.tasks.velocity.symmetry:mirror_observations_and_actions' for the "
                "velocity tasks."
            )
        if not self.mirror_loss_coeff >= 0:
            raise ValueError(
                f"RslRlSymmetryCfg.mirror_loss_coeff must be >= 0, got {self.mirror_loss_coeff}."
            )
        if self.use_mirror_loss and self.mirror_loss_coeff == 0:
            raise ValueError(
                "RslRlSymmetryCfg.use_mirror_loss is True but mirror_loss_coeff is 0: the loss "
                "would have no effect; set mirror_loss_coeff > 0 (e.g. 1.0)."
            )

    @property
    def enabled(self) -> bool:
        """Whether rsl-rl gets this config (a function is set)."""
        return self.data_augmentation_func is not None


@dataclass(kw_only=True)
class RslRlPpoAlgorithmCfg(Config):
    """Config for the PPO algorithm (Schulman et al. 2017, arXiv:1707.06347).

    Raises:
        ValueError: at construction, for an out-of-range value; the message names the field.
    """

    num_learning_epochs: int = 5
    """The number of passes over the collected rollout per update."""
    num_mini_batches: int = 4
    """The number of mini-batches per update. mini batch size = num_envs * num_steps /
    num_mini_batches."""
    learning_rate: float = 1e-3
    """The (initial) learning rate of the optimizer."""
    schedule: Literal["adaptive", "fixed"] = "adaptive"
    """The learning rate schedule: "adaptive" divides/multiplies the rate by 1.5 when the policy
    KL divergence is above 2x / below 0.5x desired_kl; "fixed" keeps learning_rate."""
    gamma: float = 0.99
    """The discount factor, per environment step."""
    lam: float = 0.95
    """The lambda parameter for Generalized Advantage Estimation (GAE)."""
    entropy_coef: float = 0.005
    """The coefficient for the entropy bonus in the loss."""
    desired_kl: float = 0.01
    """The desired KL divergence between the new and old policies (adaptive schedule)."""
    max_grad_norm: float = 1.0
    """The maximum gradient norm; gradients are clipped to it for the actor and the critic."""
    value_loss_coef: float = 1.0
    """The coefficient for the value loss."""
    use_clipped_value_loss: bool = True
    """Whether to clip the value update to +-clip_param around the rollout's values."""
    clip_param: float = 0.2
    """The clipping parameter for the policy ratio (and the value, when clipped)."""
    normalize_advantage_per_mini_batch: bool = False
    """Whether to normalize the advantage per mini-batch. Default is False. If True, the advantage
    is normalized over each mini-batch only; otherwise over the entire collected rollout."""
    optimizer: Literal["adam", "adamw", "sgd", "rmsprop"] = "adam"
    """The optimizer to use."""
    share_cnn_encoders: bool = False
    """Share CNN encoders between actor and critic (both must be CNNModel)."""
    class_name: str = "PPO"
    """Algorithm class name resolved by rsl-rl."""
    symmetry_cfg: RslRlSymmetryCfg = field(default_factory=RslRlSymmetryCfg)
    """Left/right symmetry (off by default; see `RslRlSymmetryCfg`). Not in the seed API (an
    addition, as in mjlab 1.6 / Isaac Lab, where it is None when off); from the command line:
    `--agent.algorithm.symmetry-cfg.use-data-augmentation
    --agent.algorithm.symmetry-cfg.data-augmentation-func MODULE:FUNCTION`."""

    def __post_init__(self) -> None:
        for name in ("num_learning_epochs", "num_mini_batches"):
            if getattr(self, name) < 1:
                raise ValueError(
                    f"RslRlPpoAlgorithmCfg.{name} must be >= 1, got {getattr(self, name)}."
                )
        for name in ("learning_rate", "desired_kl", "max_grad_norm", "clip_param"):
            if not getattr(self, name) > 0:
                raise ValueError(
                    f"RslRlPpoAlgorithmCfg.{name} must be > 0, got {getattr(self, name)}."
                )
        for name in ("entropy_coef", "value_loss_coef"):
            if getattr(self, name) < 0:
                raise ValueError(
                    f"RslRlPpoAlgorithmCfg.{name} must be >= 0, got {getattr(self, name)}."
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
        if self.optimizer not in _OPTIMIZERS:
            raise ValueError(
                f"RslRlPpoAlgorithmCfg.optimizer '{self.optimizer}' is not one of {list(_OPTIMIZERS)}."
            )


@dataclass(kw_only=True)
class RslRlBaseRunnerCfg(Config):
    """Runner settings shared by rsl-rl runners: rollout length, saving, logging, resuming.

    Raises:
        ValueError: at construction, for an invalid value; the message names the field.
    """

    seed: int = 42
    """The seed of the run, >= 0: the env's generators get it, and torch, numpy and Python's
    `random` get seeds derived from it (`mjlab.rl.seeding`). On CPU the same seed gives the same
    run bit for bit. Default is 42."""
    num_steps_per_env: int = 24
    """The number of steps per environment per update (rollout length)."""
    max_iterations: int = 300
    """The maximum number of iterations (PPO updates)."""
    save_interval: int = 50
    """The number of iterations between saves."""
    experiment_name: str = "exp1"
    """Directory name used to group runs under logs/rsl_rl/{experiment_name}/."""
    run_name: str = ""
    """Optional label appended to the timestamped run directory (e.g.
    2025-01-27_14-30-00_{run_name}). Also becomes the display name for the run in wandb."""
    logger: Literal["wandb", "tensorboard"] = "wandb"
    """The logger to use: wandb or tensorboard (the class default is wandb; a task may set
    another, which `--help` shows)."""
    wandb_project: str = "mjlab"
    """The wandb project name."""
    wandb_tags: tuple[str, ...] = ()
    """Tags for the wandb run. Default is empty tuple."""
    resume: bool = False
    """Whether to resume the experiment from a checkpoint (see load_run, load_checkpoint)."""
    load_run: str = ".*"
    """Regex of the run folder to resume from (default ".*": any); the newest match (run folders
    start with their timestamp) that has a checkpoint is loaded."""
    load_checkpoint: str = "model_.*.pt"
    """Regex of the checkpoint file to load (default "model_.*.pt": any); of the matches, the one
    with the highest iteration is loaded (model_10.pt after model_9.pt)."""
    clip_actions: float | None = None
    """The clipping range for action values: actions are clamped to [-clip_actions, clip_actions].
    If None (default), no clipping is applied."""
    upload_model: bool = True
    """Whether to upload model files (.pt, .onnx) to W&B on save. Set to False to keep metric
    logging but avoid storage usage. Default is True."""

    def __post_init__(self) -> None:
        cls = type(self).__name__
        for name in ("num_steps_per_env", "max_iterations", "save_interval"):
            if getattr(self, name) < 1:
                raise ValueError(f"{cls}.{name} must be >= 1, got {getattr(self, name)}.")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"{cls}.seed must be an integer >= 0, got {self.seed!r}.")
        if not self.experiment_name or "/" in self.experiment_name or "\\" in self.experiment_name:
            raise ValueError(
                f"{cls}.experiment_name must be a non-empty folder name without path separators, "
                f"got '{self.experiment_name}'."
            )
        if "/" in self.run_name or "\\" in self.run_name:
            raise ValueError(
                f"{cls}.run_name must not contain path separators, got '{self.run_name}'."
            )
        if self.logger not in ("wandb", "tensorboard"):
            raise ValueError(f"{cls}.logger must be 'wandb' or 'tensorboard', got '{self.logger}'.")
        self.wandb_tags = tuple(self.wandb_tags)
        for name in ("load_run", "load_checkpoint"):
            try:
                re.compile(getattr(self, name))
            except re.error as err:
                raise ValueError(
                    f"{cls}.{name} '{getattr(self, name)}' is not a valid regular expression: {err}."
                ) from err
        if self.clip_actions is not None and not self.clip_actions > 0:
            raise ValueError(f"{cls}.clip_actions must be > 0 or None, got {self.clip_actions}.")


def _default_obs_groups() -> dict[str, tuple[str, ...]]:
    return {"actor": ("actor",), "critic": ("critic",)}


@dataclass(kw_only=True)
class RslRlOnPolicyRunnerCfg(RslRlBaseRunnerCfg):
    """Config of the on-policy (PPO) runner: the base settings plus actor, critic and algorithm.

    Raises:
        ValueError: at construction, for models and algorithm that do not fit together (a CNN
            model without cnn_cfg, shared CNN encoders without CNN models, a deterministic actor).
    """

    class_name: str = "OnPolicyRunner"
    """The runner class name. Default is OnPolicyRunner."""
    actor: RslRlModelCfg = field(default_factory=lambda: RslRlModelCfg(stochastic=True))
    """The actor configuration (stochastic: PPO samples its actions)."""
    critic: RslRlModelCfg = field(default_factory=RslRlModelCfg)
    """The critic configuration."""
    algorithm: RslRlPpoAlgorithmCfg = field(default_factory=RslRlPpoAlgorithmCfg)
    """The algorithm configuration."""
    obs_groups: dict[str, tuple[str, ...]] = field(default_factory=_default_obs_groups)
    """Which environment observation groups feed which model (rsl-rl 5.x `obs_groups`): the
    default gives the actor the "actor" group and the critic the "critic" group. An asymmetric
    critic that also sees the actor's observations: {"actor": ("actor",), "critic": ("actor",
    "critic")}."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.algorithm.class_name == "PPO" and not self.actor.stochastic:
            raise ValueError(
                "RslRlOnPolicyRunnerCfg.actor.stochastic must be True: PPO samples actions from "
                "the actor's distribution (set stochastic=True on the actor's RslRlModelCfg)."
            )
        for role in ("actor", "critic"):
            model: RslRlModelCfg = getattr(self, role)
            shared = role == "critic" and self.algorithm.share_cnn_encoders
            if model.class_name == "CNNModel" and model.cnn_cfg is None and not shared:
                raise ValueError(
                    f"RslRlOnPolicyRunnerCfg.{role}.cnn_cfg is None but class_name is 'CNNModel': "
                    "give the CNN encoder config (output_channels, kernel_size, ...)."
                )
        if self.algorithm.share_cnn_encoders and not (
            self.actor.class_name == "CNNModel" and self.critic.class_name == "CNNModel"
        ):
            raise ValueError(
                "RslRlOnPolicyRunnerCfg.algorithm.share_cnn_encoders needs CNNModel for both the "
                "actor and the critic; set both class_name='CNNModel' or share_cnn_encoders=False."
            )
        self.obs_groups = {k: tuple(v) for k, v in self.obs_groups.items()}
        for role in ("actor", "critic"):
            if not self.obs_groups.get(role):
                raise ValueError(
                    f"RslRlOnPolicyRunnerCfg.obs_groups must map '{role}' to at least one "
                    f"observation group, got {self.obs_groups}."
                )


def _accepted_kwargs(class_name: str, where: str) -> set[str] | None:
    """Constructor keyword names of the rsl-rl class `class_name`; None if it takes **kwargs."""
    from rsl_rl.utils import resolve_callable

    try:
        cls = resolve_callable(class_name)
    except (ValueError, ImportError, AttributeError) as err:
        raise ValueError(f"{where}.class_name '{class_name}' cannot be resolved: {err}") from err
    params = inspect.signature(cls).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return None
    return {p.name for p in params}


def _model_train_cfg(model: RslRlModelCfg, where: str) -> dict[str, Any]:
    """One model's rsl-rl 5.x kwargs: only what the chosen class accepts, no None values."""
    # rsl-rl kwarg -> (value, the config field it comes from)
    candidates: dict[str, tuple[Any, str]] = {
        "hidden_dims": (list(model.hidden_dims), "hidden_dims"),
        "activation": (model.activation, "activation"),
        "obs_normalization": (model.obs_normalization, "obs_normalization"),
    }
    if model.stochastic:
        # rsl-rl 5.x moved the noise settings of 3.x/4.x into a distribution module.
        candidates["distribution_cfg"] = (
            {
                "class_name": "GaussianDistribution",
                "init_std": model.init_noise_std,
                "std_type": model.noise_std_type,
            },
            "stochastic",
        )
    if model.cnn_cfg is not None:
        candidates["cnn_cfg"] = (dict(model.cnn_cfg), "cnn_cfg")

    accepted = _accepted_kwargs(model.class_name, where)
    defaults = RslRlModelCfg()
    out: dict[str, Any] = {"class_name": model.class_name}
    for key, (value, field_name) in candidates.items():
        if accepted is None or key in accepted:
            out[key] = value
        elif getattr(model, field_name) != getattr(defaults, field_name):
            # A non-default setting the class cannot take would be silently lost: refuse it.
            raise ValueError(
                f"{where}.{field_name} is set but {model.class_name} has no '{key}' argument; "
                f"remove the setting or choose a model class that supports it."
            )
    return out


def check_symmetry(cfg: RslRlOnPolicyRunnerCfg) -> None:
    """The run-time checks of `cfg.algorithm.symmetry_cfg` (nothing when it is off): its
    function resolves ("module:function" imported now, so a typo is one error before anything
    is built) and no model is recurrent (rsl-rl mirrors single steps, not trajectories).

    Raises:
        ValueError: naming the field `agent.algorithm.symmetry_cfg...` and the fix.
    """
    symmetry = cfg.algorithm.symmetry_cfg
    if not symmetry.enabled:
        return
    where = "agent.algorithm.symmetry_cfg.data_augmentation_func"
    func = symmetry.data_augmentation_func
    if not callable(func):
        from rsl_rl.utils import resolve_callable

        try:
            resolved = resolve_callable(func)
        except (ImportError, AttributeError, ValueError) as err:
            raise ValueError(f"{where} '{func}' cannot be resolved: {err}") from err
        if not callable(resolved):
            raise ValueError(f"{where} '{func}' is not a function.")
    for role in ("actor", "critic"):
        if is_recurrent_model(getattr(cfg, role).class_name):
            raise ValueError(
                f"agent.algorithm.symmetry_cfg is set but agent.{role} is recurrent "
                f"({getattr(cfg, role).class_name}): rsl-rl's symmetry augmentation supports "
                "feed-forward models only; unset data_augmentation_func or use an MLP."
            )


def to_rsl_rl_train_cfg(cfg: RslRlOnPolicyRunnerCfg) -> dict[str, Any]:
    """Convert a runner config to the `train_cfg` dict of rsl-rl-lib 5.x's OnPolicyRunner.

    The 5.x layout: `actor`/`critic` model dicts (stochastic/init_noise_std/noise_std_type become
    a `distribution_cfg`), an `algorithm` dict, `obs_groups` (lists), the rollout and saving
    settings, and the logger (`"tensorboard"`, or a writer dict for wandb with project and
    tags). Optional fields left as None are dropped, and each model dict holds only arguments its
    class accepts, so no model receives a keyword it does not take. mjlab's own keys
    (`upload_model`, `clip_actions` when set) ride along at the top level; rsl-rl ignores them.
    `algorithm.symmetry_cfg` is sent only when its `data_augmentation_func` is set (rsl-rl adds
    the env to it).

    Args:
        cfg: the runner config.

    Returns:
        A fresh dict on every call (rsl-rl writes into it, e.g. `obs_groups`, `multi_gpu`).

    Raises:
        ValueError: a model class_name or symmetry function that cannot be resolved, or a
            non-default model setting that the chosen class cannot take; the message names the
            field.
    """
    algorithm = {f.name: getattr(cfg.algorithm, f.name) for f in dataclasses.fields(cfg.algorithm)}
    # PPO.construct_algorithm consumes share_cnn_encoders itself; only send it when in use.
    if algorithm.pop("share_cnn_encoders"):
        algorithm["share_cnn_encoders"] = True
    symmetry: RslRlSymmetryCfg = algorithm.pop("symmetry_cfg")
    if symmetry.enabled:
        check_symmetry(cfg)
        # rsl-rl adds the env (resolve_symmetry_config) and resolves a string function itself.
        algorithm["symmetry_cfg"] = {
            "use_data_augmentation": symmetry.use_data_augmentation,
            "use_mirror_loss": symmetry.use_mirror_loss,
            "data_augmentation_func": symmetry.data_augmentation_func,
            "mirror_loss_coeff": symmetry.mirror_loss_coeff,
        }
    if cfg.logger == "wandb":
        logger: Any = {
            "class_name": _WANDB_WRITER,
            "project_name": cfg.wandb_project,
            "tags": list(cfg.wandb_tags),
        }
    else:
        logger = "tensorboard"
    train_cfg: dict[str, Any] = {
        "class_name": cfg.class_name,
        "seed": cfg.seed,
        "num_steps_per_env": cfg.num_steps_per_env,
        "max_iterations": cfg.max_iterations,
        "save_interval": cfg.save_interval,
        "experiment_name": cfg.experiment_name,
        "run_name": cfg.run_name,
        "logger": logger,
        "wandb_project": cfg.wandb_project,
        "obs_groups": {k: list(v) for k, v in cfg.obs_groups.items()},
        "actor": _model_train_cfg(cfg.actor, "RslRlOnPolicyRunnerCfg.actor"),
        "critic": _model_train_cfg(cfg.critic, "RslRlOnPolicyRunnerCfg.critic"),
        "algorithm": algorithm,
        "upload_model": cfg.upload_model,
    }
    if cfg.clip_actions is not None:
        train_cfg["clip_actions"] = cfg.clip_actions
    return train_cfg


MIN_SENSIBLE_MINIBATCH = 64
"""Fewer samples than this per PPO minibatch give gradient steps too noisy to learn from:
`check_minibatch` warns (rsl-rl's task defaults have thousands)."""


def is_recurrent_model(class_name: str) -> bool:
    """Whether the rsl-rl model class `class_name` (e.g. "RNNModel") is recurrent (its
    `is_recurrent` flag); False for a name that does not resolve (reported elsewhere)."""
    from rsl_rl.utils import resolve_callable

    try:
        cls = resolve_callable(class_name)
    except (ValueError, ImportError, AttributeError):
        return False
    return bool(getattr(cls, "is_recurrent", False))


def check_minibatch(
    num_envs: int, num_steps_per_env: int, num_mini_batches: int, recurrent: bool = False
) -> int:
    """The PPO minibatch size, checked. rsl-rl splits an update's `num_envs * num_steps_per_env`
    samples into `num_mini_batches` minibatches, or, when the actor or the critic is recurrent,
    its `num_envs` whole trajectories (`num_envs // num_mini_batches` envs per minibatch).

    Args:
        num_envs: environments collecting the rollout (per process in a multi-GPU run).
        num_steps_per_env: `agent.num_steps_per_env`.
        num_mini_batches: `agent.algorithm.num_mini_batches`.
        recurrent: the actor or the critic is recurrent (`is_recurrent_model`).

    Returns:
        Samples per minibatch (a warning below `MIN_SENSIBLE_MINIBATCH`).

    Raises:
        ValueError: a minibatch of 0 samples, or of 0 envs for a recurrent model (PPO would
            never change the networks); the message names the fields and how to fix them.
    """
    n = max(num_mini_batches, 1)
    if recurrent and num_envs // n < 1:
        raise ValueError(
            f"agent.algorithm.num_mini_batches {num_mini_batches} splits an update's {num_envs} "
            "envs (a recurrent actor or critic learns from whole trajectories, one per env) "
            f"into minibatches of 0 envs: PPO would never update. Use at most {num_envs} "
            "minibatches, or more envs (--env.scene.num-envs)."
        )
    samples = num_envs * num_steps_per_env
    size = (num_envs // n) * num_steps_per_env if recurrent else samples // n
    if size < 1:
        raise ValueError(
            f"agent.algorithm.num_mini_batches {num_mini_batches} splits an update's {samples} "
            f"samples ({num_envs} envs x {num_steps_per_env} steps, agent.num_steps_per_env) "
            f"into minibatches of 0 samples: PPO would never update. Use at most {samples} "
            "minibatches, or more envs (--env.scene.num-envs) or steps per env."
        )
    if size < MIN_SENSIBLE_MINIBATCH:
        import warnings

        warnings.warn(
            f"PPO minibatches of {size} samples ({num_envs} envs x {num_steps_per_env} steps / "
            f"{num_mini_batches} minibatches) are very small (< {MIN_SENSIBLE_MINIBATCH}): "
            "learning will be noisy; use more envs or fewer minibatches.",
            stacklevel=2,
        )
    return size

"""Configuration of a policy (what it is) and of a training run (how long, where to save)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

_REQUIRED_TRAIN_CFG_KEYS = ("algorithm", "actor", "critic", "num_steps_per_env")


class PolicyConfig(BaseModel):
    """What a policy is: its model/algorithm description and where it runs.

    Unknown fields are rejected, so a misspelled option fails here instead of being ignored.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    train_cfg: dict[str, Any] = Field(default_factory=dict)
    """The rsl-rl-lib ``train_cfg`` dict, laid out exactly as ``rsl_rl.runners.OnPolicyRunner``
    takes it: ``"algorithm"`` (PPO arguments plus ``"class_name"``), ``"actor"`` and ``"critic"``
    (model arguments plus ``"class_name"``), ``"obs_groups"`` (observation set -> groups) and
    ``"num_steps_per_env"``. Other runner keys (``"save_interval"``, ``"logger"``...) are allowed
    and ignored. May stay empty when a config is passed to ``construct_network`` directly."""

    device: str | None = None
    """Torch device of the networks, e.g. ``"cpu"`` or ``"cuda:0"``; ``None`` picks ``"cuda"`` when
    a GPU is visible and ``"cpu"`` otherwise."""

    rollout_mode: Literal["sync"] = "sync"
    """How an EVAL policy serves requests. Only ``"sync"`` (one request at a time behind the idle
    gate) exists in this package."""

    weight_update_thread: bool = True
    """EVAL role: apply pushed weights from a background thread that waits for the idle gate. When
    False, ``push_weights`` loads them at once in the caller's thread (still behind the gate)."""

    optim_cfg: dict[str, Any] | None = None
    """TRAIN role: optimizer override given to ``setup_optimizer``; keys ``"optimizer"`` (``"adam"``,
    ``"adamw"``, ``"sgd"``, ``"rmsprop"``) and ``"learning_rate"``. ``None`` keeps the optimizer the
    algorithm config asks for."""

    @field_validator("train_cfg")
    @classmethod
    def _check_train_cfg(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value:
            missing = [key for key in _REQUIRED_TRAIN_CFG_KEYS if key not in value]
            if missing:
                raise ValueError(
                    f"PolicyConfig.train_cfg lacks {missing}; it must be an rsl-rl-lib train_cfg "
                    f"dict with keys {list(_REQUIRED_TRAIN_CFG_KEYS)} (and optionally 'obs_groups')."
                )
        return value


Config = PolicyConfig | dict[str, Any]
"""What `RSLRLPolicy.construct_network` builds from: the policy's :class:`PolicyConfig` (its
``train_cfg``) or an rsl-rl ``train_cfg`` dict."""


class TrainConfig(BaseModel):
    """How a training run goes: length, checkpoints, seed, console output."""

    model_config = ConfigDict(extra="forbid")

    max_iterations: int = Field(default=300, ge=1)
    """Number of rollout -> update -> weight-sync iterations ``Engine.run()`` performs."""

    save_interval: int = Field(default=50, ge=0)
    """Save a learner checkpoint every this many iterations (and after the last); 0 disables."""

    save_dir: str | None = None
    """Folder for ``model_<iteration>.pt`` checkpoints; ``None`` saves nothing."""

    seed: int | None = 42
    """Seed of torch's global RNG before the networks are built; rollout workers add their index."""

    log_interval: int = Field(default=1, ge=0)
    """Print a one-line report every this many iterations; 0 keeps the engine quiet."""

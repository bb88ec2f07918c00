"""Configuration of a policy (what it is) and of a training run (how long, where to save)."""

from __future__ import annotations

import difflib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

_REQUIRED_TRAIN_CFG_KEYS = ("algorithm", "actor", "critic", "num_steps_per_env")


class UnknownFieldError(AttributeError, ValueError):
    """An assignment to an attribute that a config does not declare (a misspelt or nonexistent
    setting). A ValueError too, as pydantic's own refusal was."""


class _StrictModel(BaseModel):
    """A pydantic config whose unknown attributes are refused at assignment with the closest
    field named (pydantic's `extra="forbid"` refuses them at construction)."""

    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        if (
            not name.startswith("_")
            and name not in cls.model_fields
            and not isinstance(getattr(cls, name, None), property)
        ):
            fields = list(cls.model_fields)
            close = difflib.get_close_matches(name, fields, n=1, cutoff=0.6)
            hint = (
                f"did you mean '{close[0]}'?" if close else f"its fields are: {', '.join(fields)}."
            )
            raise UnknownFieldError(
                f"{cls.__name__} has no field '{name}'; {hint} (An attribute a config does not "
                "declare would be stored and never read.)",
                name=name,
                obj=self,
            )
        super().__setattr__(name, value)


class PolicyConfig(_StrictModel):
    """What a policy is: its model/algorithm description and where it runs.

    Unknown fields are rejected, at construction and at assignment, so a misspelled option fails
    here instead of being ignored.
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


class TrainConfig(_StrictModel):
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

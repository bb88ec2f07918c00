"""Term configs of every manager (Isaac Lab / mjlab names and semantics)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from mjlab.managers.scene_entity_config import SceneEntityCfg  # noqa: F401  (re-exported)
from mjlab.utils.config import Config, check_int, check_range

# The noise configs live in `mjlab.utils.noise` (mjlab 1.6's module); re-exported here.
from mjlab.utils.noise import (
    ConstantNoiseCfg,  # noqa: F401
    GaussianNoiseCfg,  # noqa: F401
    NoiseCfg,
    NoiseModelCfg,
    UniformNoiseCfg,  # noqa: F401
)


@dataclass(kw_only=True)
class ManagerTermBaseCfg(Config):
    """A term: a function `(env, **params) -> Tensor`, or a class constructed once as
    `cls(cfg, env)` whose instances are called like the function and may define
    `reset(env_ids)`."""

    func: Callable[..., Any] | type
    """The term function or class."""
    params: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments; `SceneEntityCfg` values are resolved against the scene at start."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when the term config is invalid (called at
        construction and by `validate_config` when an env is built)."""
        if not callable(self.func):
            raise ValueError(
                f"{type(self).__name__}.func must be a function or class, got {self.func!r} "
                f"({type(self.func).__name__}); e.g. func=mdp.joint_pos_rel."
            )
        if not isinstance(self.params, dict):
            raise ValueError(
                f"{type(self).__name__}.params must be a dict of keyword arguments, got "
                f"{type(self.params).__name__}."
            )


# -- observations ---------------------------------------------------------------------------------
@dataclass(kw_only=True)
class ObservationTermCfg(ManagerTermBaseCfg):
    """One observation term. Processing order: func -> noise -> clip -> scale -> delay ->
    history (as Isaac Lab / mjlab)."""

    noise: NoiseCfg | NoiseModelCfg | None = None
    """Noise applied when the group has `enable_corruption` (`mjlab.utils.noise`)."""
    clip: tuple[float, float] | None = None
    """Clamp to (min, max) after noise."""
    scale: float | tuple[float, ...] | None = None
    """Multiplier after clipping (scalar or per dimension)."""
    delay: int = 0
    """Steps of latency: the policy sees the value from `delay` env steps ago."""
    history_length: int = 0
    """Keep this many past values (0: none); filled with the current value on reset."""
    flatten_history_dim: bool = True
    """Flatten (num_envs, history, dim) to (num_envs, history * dim), oldest first."""

    def validate(self) -> None:
        super().validate()
        check_int(self.delay, "ObservationTermCfg.delay", 0, "env steps of latency; 0: none")
        check_int(
            self.history_length, "ObservationTermCfg.history_length", 0, "past values; 0: none"
        )
        if self.clip is not None:
            try:
                lo, hi = self.clip
                ok = lo <= hi
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ValueError(
                    f"ObservationTermCfg.clip must be (min, max) with min <= max, got {self.clip!r}."
                )


@dataclass(kw_only=True)
class ObservationGroupCfg(Config):
    """A group of terms, e.g. "actor" or "critic"."""

    terms: dict[str, ObservationTermCfg | None] = field(default_factory=dict)
    """Terms in order; a None value disables a term."""
    concatenate_terms: bool = True
    """Concatenate terms into one (num_envs, D) tensor (else a dict of term tensors)."""
    enable_corruption: bool = False
    """Apply the terms' noise."""
    history_length: int | None = None
    """If set, overrides every term's history_length."""
    flatten_history_dim: bool = True
    """Group-level override used with `history_length`."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when the group is invalid."""
        if not isinstance(self.terms, dict):
            raise ValueError(
                f"ObservationGroupCfg.terms must be a dict of name -> ObservationTermCfg, got "
                f"{type(self.terms).__name__}."
            )
        for name, term in self.terms.items():
            if term is not None and not isinstance(term, ObservationTermCfg):
                raise ValueError(
                    f"ObservationGroupCfg.terms['{name}'] is {term!r} ({type(term).__name__}); "
                    "give ObservationTermCfg(func=...) (e.g. func=mdp.base_lin_vel), or None "
                    "to disable the term."
                )
        if self.history_length is not None:
            check_int(
                self.history_length, "ObservationGroupCfg.history_length", 0, "None: per term"
            )


# -- actions ----------------------------------------------------------------------------------------
@dataclass(kw_only=True)
class ActionTermCfg(Config):
    """An action term maps part of the policy action to actuator commands of one entity."""

    class_type: type
    """The term class, constructed as `class_type(cfg, env)`."""
    asset_name: str = "robot"
    """Entity the term drives."""
    clip: tuple[float, float] | None = None
    """Clamp the processed action to (min, max)."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when the term config is invalid."""
        if not isinstance(self.class_type, type):
            raise ValueError(
                f"{type(self).__name__}.class_type must be an action term class, got "
                f"{self.class_type!r}."
            )
        if self.clip is not None:
            check_range(self.clip, f"{type(self).__name__}.clip")


# -- rewards, terminations, curriculum, metrics --------------------------------------------------
@dataclass(kw_only=True)
class RewardTermCfg(ManagerTermBaseCfg):
    """A reward term: returns (num_envs,) float; the manager multiplies by weight * step_dt."""

    weight: float | None = None
    """Multiplier on the term (required; 0 disables the term)."""

    def validate(self) -> None:
        super().validate()
        w = self.weight
        if w is not None and (
            isinstance(w, bool) or not isinstance(w, numbers.Real) or not math.isfinite(w)
        ):
            raise ValueError(f"RewardTermCfg.weight must be a finite number, got {w!r}.")


@dataclass(kw_only=True)
class TerminationTermCfg(ManagerTermBaseCfg):
    """A termination term: returns (num_envs,) bool."""

    time_out: bool = False
    """True: the episode is truncated (bootstrapped), not terminated."""


@dataclass(kw_only=True)
class CurriculumTermCfg(ManagerTermBaseCfg):
    """Called as `func(env, env_ids, **params)` when envs reset; returns a value to log
    (float, tensor or dict of them) under `Curriculum/<term>`."""


@dataclass(kw_only=True)
class MetricsTermCfg(ManagerTermBaseCfg):
    """Returns (num_envs,) each step; the episode mean is logged as `Metrics/<term>`."""


# -- events ---------------------------------------------------------------------------------------
EventMode = Literal["startup", "reset", "interval", "step"]
"""When an event term runs (`EventTermCfg.mode`)."""


@dataclass(kw_only=True)
class EventTermCfg(ManagerTermBaseCfg):
    """Called as `func(env, env_ids, **params)`."""

    mode: EventMode
    """startup: once after construction, all envs; reset: when envs reset; interval: every
    random interval; step: every env step, all envs (after the commands, before the interval
    events; e.g. `mdp.apply_body_impulse`, which keeps its own per-env timers)."""
    interval_range_s: tuple[float, float] | None = None
    """interval mode: the time between calls is drawn from this range, s."""
    is_global_time: bool = False
    """interval mode: one timer for all envs (True) or one per env (False)."""
    min_step_count_between_reset: int = 0
    """reset mode: apply to an env only if at least this many env steps (counted by
    `env.common_step_counter`) passed since the term last applied to it; its first reset always
    applies. 0: at every reset."""

    def validate(self) -> None:
        super().validate()
        check_int(
            self.min_step_count_between_reset,
            "EventTermCfg.min_step_count_between_reset",
            0,
            "env steps",
        )
        if self.mode not in ("startup", "reset", "interval", "step"):
            raise ValueError(
                f"EventTermCfg.mode is {self.mode!r}; use 'startup', 'reset', 'interval' or 'step'."
            )
        if self.mode == "interval":
            if self.interval_range_s is None:
                raise ValueError(
                    "EventTermCfg.interval_range_s is required with mode='interval', e.g. "
                    "(10.0, 15.0) s."
                )
            check_range(self.interval_range_s, "EventTermCfg.interval_range_s", " (s)", True)


# -- commands ---------------------------------------------------------------------------------------
@dataclass(kw_only=True)
class CommandTermCfg(Config):
    """A command generator (e.g. a velocity command), resampled every `resampling_time_range`."""

    class_type: type
    """The term class, constructed as `class_type(cfg, env)`."""
    resampling_time_range: tuple[float, float] = (10.0, 10.0)
    """Time between resamples, s, drawn per env."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when the command config is invalid."""
        if not isinstance(self.class_type, type):
            raise ValueError(
                f"{type(self).__name__}.class_type must be a command term class, got "
                f"{self.class_type!r}."
            )
        check_range(
            self.resampling_time_range, f"{type(self).__name__}.resampling_time_range", " (s)", True
        )

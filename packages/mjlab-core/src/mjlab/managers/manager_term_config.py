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
NanPolicy = Literal["disabled", "warn", "sanitize", "error"]
"""What an observation group does about NaN/Inf values (`ObservationGroupCfg.nan_policy`)."""
NAN_POLICIES: tuple[str, ...] = ("disabled", "warn", "sanitize", "error")


def _check_flag(value: object, name: str) -> None:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}.")


@dataclass(kw_only=True)
class ObservationTermCfg(ManagerTermBaseCfg):
    """One observation term. Processing order: func -> noise -> clip -> scale -> delay ->
    history (as Isaac Lab / mjlab).

    Two kinds of delay, which add up:

    - `delay`: a fixed latency that belongs to the policy's input; a deployed policy
      (`ObservationManager.describe`, mjlab-export) reads its inputs this many steps old too.
    - `delay_min_lag` .. `delay_max_lag` (mjlab's fields): a simulated sensor latency, drawn
      per env (or shared) from that range and resampled as the other `delay_*` fields say. A
      training-time corruption, like noise: it is not part of the description a deployment
      gets, where the real sensor's latency takes its place. It applies whatever the group's
      `enable_corruption` says (as in mjlab).

    A lag reaches back at most to the first value of the episode: the delay line is filled
    with it at a reset.
    """

    noise: NoiseCfg | NoiseModelCfg | None = None
    """Noise applied when the group has `enable_corruption` (`mjlab.utils.noise`)."""
    clip: tuple[float, float] | None = None
    """Clamp to (min, max) after noise."""
    scale: float | tuple[float, ...] | None = None
    """Multiplier after clipping (scalar or per dimension)."""
    delay: int = 0
    """Steps of latency that a deployed policy reproduces: the policy sees the value from
    `delay` env steps ago (plus the simulated lag of the `delay_*` fields)."""
    delay_min_lag: int = 0
    """Smallest simulated sensor lag, env steps (>= 0). The lag is drawn uniformly from the
    integers `delay_min_lag` .. `delay_max_lag`; one step is `env.step_dt` s."""
    delay_max_lag: int = 0
    """Largest simulated sensor lag, env steps (>= `delay_min_lag`); 0: no simulated lag. Equal
    bounds give a constant lag (and draw no random numbers)."""
    delay_per_env: bool = True
    """True: every env draws its own lag; False: one lag is drawn for all envs at each draw
    (envs whose refresh is due, or not held, take it)."""
    delay_hold_prob: float = 0.0
    """Probability in [0, 1] that an env keeps its lag at a refresh instead of taking the new
    draw (temporally correlated latency)."""
    delay_update_period: int = 0
    """Refresh the lag every this many env steps of an env's episode (0: at every step)."""
    delay_per_env_phase: bool = True
    """With `delay_update_period` > 0: each env refreshes at its own random offset within the
    period (drawn again at every reset), so refreshes are spread over the steps; False: every
    env refreshes at steps 0, N, 2N, ... of its episode."""
    history_length: int = 0
    """Keep this many past values (0: none); filled with the current value on reset."""
    flatten_history_dim: bool = True
    """Flatten (num_envs, history, dim) to (num_envs, history * dim), oldest first."""

    def validate(self) -> None:
        super().validate()
        check_int(self.delay, "ObservationTermCfg.delay", 0, "env steps of latency; 0: none")
        check_int(self.delay_min_lag, "ObservationTermCfg.delay_min_lag", 0, "env steps")
        check_int(self.delay_max_lag, "ObservationTermCfg.delay_max_lag", 0, "env steps")
        if self.delay_max_lag < self.delay_min_lag:
            raise ValueError(
                f"ObservationTermCfg.delay_max_lag ({self.delay_max_lag}) must be >= "
                f"delay_min_lag ({self.delay_min_lag}); for a constant lag give both the same "
                "value."
            )
        check_int(
            self.delay_update_period,
            "ObservationTermCfg.delay_update_period",
            0,
            "env steps between lag refreshes; 0: every step",
        )
        p = self.delay_hold_prob
        if (
            isinstance(p, bool)
            or not isinstance(p, numbers.Real)
            or not math.isfinite(p)
            or not 0.0 <= p <= 1.0
        ):
            raise ValueError(
                f"ObservationTermCfg.delay_hold_prob must be a probability in [0, 1], got {p!r}."
            )
        _check_flag(self.delay_per_env, "ObservationTermCfg.delay_per_env")
        _check_flag(self.delay_per_env_phase, "ObservationTermCfg.delay_per_env_phase")
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
    concatenate_dim: int = -1
    """Axis of the terms' values (the env axis not counted: 0 is the first axis of one env's
    value) along which they are concatenated; -1: the last. The other axes must agree. In a
    group of images (C, H, W), -1 keeps joining along the channels (axis 0, the layout
    rsl-rl's CNN takes); give 1 or 2 (or -2) to join along H or W."""
    enable_corruption: bool = False
    """Apply the terms' noise."""
    history_length: int | None = None
    """If set, overrides every term's history_length."""
    flatten_history_dim: bool = True
    """Group-level override used with `history_length`."""
    nan_policy: NanPolicy = "disabled"
    """What to do about NaN/Inf values the terms return. The values are replaced by 0 and
    counted (`ObservationManager.nonfinite`, logged as `Metrics/nonfinite_observations`) under
    every policy, so none reaches the policy network:

    - "disabled" and "sanitize": only that; no host read on a GPU.
    - "warn": also a `RuntimeWarning` naming the term (or group) and the envs. On the CPU at
      once; on a GPU without stalling `step`: the envs' flags are copied to the host
      asynchronously and warned about at a later step (a copy per group and step; a copy
      still late after 50 steps is waited for, and closing the env issues the last ones).
    - "error": raise ValueError naming the term (or group) and the envs, before the step
      returns the values (the group's delay and history buffers have already taken them in).
      It reads a flag back to the host in every step: one device sync per group on a GPU.

    A "warn" or "error" group computes its terms itself rather than copying the ones an
    earlier group shares, so such a term's non-finite values are counted once per group.
    """
    nan_check_per_term: bool = True
    """With "warn"/"error": check each term (the message names the term) instead of the
    group as a whole (one check, the message names the group). No effect otherwise."""

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
        if isinstance(self.concatenate_dim, bool) or not isinstance(
            self.concatenate_dim, numbers.Integral
        ):
            raise ValueError(
                "ObservationGroupCfg.concatenate_dim must be an integer axis (-1: the last), "
                f"got {self.concatenate_dim!r}."
            )
        if self.nan_policy not in NAN_POLICIES:
            raise ValueError(
                f"ObservationGroupCfg.nan_policy is {self.nan_policy!r}; use one of "
                f"{', '.join(repr(p) for p in NAN_POLICIES)}."
            )
        _check_flag(self.nan_check_per_term, "ObservationGroupCfg.nan_check_per_term")


# -- actions ----------------------------------------------------------------------------------------
@dataclass(kw_only=True)
class ActionTermCfg(Config):
    """An action term maps part of the policy action to actuator commands of one entity."""

    class_type: type
    """The term class, constructed as `class_type(cfg, env)`."""
    entity_name: str | None = None
    """Entity the term drives (mjlab's name for `asset_name`; give either). None with
    `asset_name` None too: "robot"."""
    asset_name: str | None = None
    """Entity the term drives (Isaac Lab's name for `entity_name`; give either)."""
    clip: tuple[float, float] | None = None
    """Clamp the processed action to (min, max)."""

    def __post_init__(self) -> None:
        self.validate()

    def resolved_entity_name(self) -> str:
        """The entity the term drives: `entity_name` or `asset_name`, whichever is given
        ("robot" when neither is). The action manager writes it into both fields of the term's
        own copy of the config, so a term may read either.

        Raises:
            ValueError: both are given and name different entities.
        """
        entity, asset = self.entity_name, self.asset_name
        if entity is not None and asset is not None and entity != asset:
            raise ValueError(
                f"{type(self).__name__}.entity_name is {entity!r} but asset_name is {asset!r}: "
                "they are two names of one setting (mjlab's and Isaac Lab's); give one, or "
                "the same entity in both."
            )
        name = entity if entity is not None else asset
        return "robot" if name is None else name

    def validate(self) -> None:
        """Raise ValueError naming the field when the term config is invalid."""
        if not isinstance(self.class_type, type):
            raise ValueError(
                f"{type(self).__name__}.class_type must be an action term class, got "
                f"{self.class_type!r}."
            )
        for name in ("entity_name", "asset_name"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(
                    f"{type(self).__name__}.{name} must be an entity name (a non-empty "
                    f"string) or None, got {value!r}."
                )
        self.resolved_entity_name()
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


MetricsReduce = Literal["mean", "sum", "max", "last"]
"""How a metric's per-step values make its episode value (`MetricsTermCfg.reduce`)."""
METRICS_REDUCTIONS: tuple[str, ...] = ("mean", "sum", "max", "last")


@dataclass(kw_only=True)
class MetricsTermCfg(ManagerTermBaseCfg):
    """Returns (num_envs,) each step; the episode value (`reduce`) is logged as
    `Metrics/<term>` when the env resets, averaged over the envs reset."""

    per_substep: bool = False
    """Evaluate the term after every physics substep of an env step and use the mean of those
    values as the step's value. Only the integrated state (qpos, qvel, act) is current between
    substeps: positions of bodies and sites, contacts and sensors describe the substep before.
    With such a term the physics runs substep by substep (one backend call each, slower than
    the env step's single call)."""
    reduce: MetricsReduce = "mean"
    """The episode value: "mean" over its steps, "sum" of them, "max" of them, or the "last"
    step's value (e.g. a success flag). An episode without steps reports 0."""

    def validate(self) -> None:
        super().validate()
        if not isinstance(self.per_substep, bool):
            raise ValueError(
                f"MetricsTermCfg.per_substep must be True or False, got {self.per_substep!r}."
            )
        if self.reduce not in METRICS_REDUCTIONS:
            raise ValueError(
                f"MetricsTermCfg.reduce is {self.reduce!r}; use one of "
                f"{', '.join(repr(r) for r in METRICS_REDUCTIONS)}."
            )


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
    debug_vis: bool = False
    """Ask for the command to be drawn in a viewer (mjlab's switch). A term draws it only if
    it implements drawing (`CommandTerm.has_debug_vis_implementation`); none of the built-in
    terms does yet, so for them this changes nothing."""

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
        if not isinstance(self.debug_vis, bool):
            raise ValueError(
                f"{type(self).__name__}.debug_vis must be True or False, got {self.debug_vis!r}."
            )

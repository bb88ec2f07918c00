"""Config of a manager-based RL environment."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from mjlab.managers import (
    ActionTermCfg,
    CommandTermCfg,
    CurriculumTermCfg,
    EventTermCfg,
    MetricsTermCfg,
    ObservationGroupCfg,
    RecorderTermCfg,
    RewardTermCfg,
    TerminationTermCfg,
)
from mjlab.scene import SceneCfg
from mjlab.sim import SimulationCfg
from mjlab.utils.config import Config, check_int

_TERM_DICTS = {
    "observations": ObservationGroupCfg,
    "actions": ActionTermCfg,
    "rewards": RewardTermCfg,
    "terminations": TerminationTermCfg,
    "events": EventTermCfg,
    "commands": CommandTermCfg,
    "curriculum": CurriculumTermCfg,
    "metrics": MetricsTermCfg,
    "recorders": RecorderTermCfg,
}


@dataclass(kw_only=True)
class ViewerCfg(Config):
    """How `ManagerBasedRlEnv.render` (and `play --video`) frames env 0."""

    camera: str | None = None
    """A named MJCF camera (e.g. "cartpole/side"); None: a camera tracking `body_id`."""
    body_id: int = 1
    """Body the tracking camera follows (1: the first body after the world, usually the robot's
    root)."""
    distance: float = 2.5
    """Tracking camera distance from the body, m."""
    elevation: float = -20.0
    """Tracking camera elevation, degrees (negative: looking down)."""
    azimuth: float = 135.0
    """Tracking camera azimuth, degrees."""
    width: int = 640
    """Frame width, pixels."""
    height: int = 480
    """Frame height, pixels."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid (called at construction
        and by `mjlab.utils.config.validate_config` when an env is built)."""
        if self.width < 1 or self.height < 1:
            raise ValueError(
                f"ViewerCfg.width and height must be >= 1 pixel, got {self.width}x{self.height}."
            )


@dataclass(kw_only=True)
class ManagerBasedRlEnvCfg(Config):
    """A task as data: scene, physics, and the term dicts of every manager.

    step_dt = sim.mujoco.timestep * decimation; max_episode_length = ceil(episode_length_s /
    step_dt). Setting a term to None in any dict disables it.
    """

    decimation: int
    """Physics steps per env (policy) step."""
    episode_length_s: float
    """Episode duration, s."""
    scene: SceneCfg
    """What the world holds (num_envs lives here: scene.num_envs)."""
    sim: SimulationCfg = field(default_factory=SimulationCfg)
    """Physics and backend."""
    observations: dict[str, ObservationGroupCfg | None] = field(default_factory=dict)
    """Observation groups, e.g. "actor" and "critic"."""
    actions: dict[str, ActionTermCfg | None] = field(default_factory=dict)
    """Action terms; the policy action is their concatenation, in order."""
    rewards: dict[str, RewardTermCfg | None] = field(default_factory=dict)
    """Reward terms."""
    terminations: dict[str, TerminationTermCfg | None] = field(default_factory=dict)
    """Termination terms (time_out=True ones truncate)."""
    events: dict[str, EventTermCfg | None] = field(default_factory=dict)
    """Event terms (startup / reset / interval)."""
    commands: dict[str, CommandTermCfg | None] = field(default_factory=dict)
    """Command generators."""
    curriculum: dict[str, CurriculumTermCfg | None] = field(default_factory=dict)
    """Curriculum terms, called on reset."""
    metrics: dict[str, MetricsTermCfg | None] = field(default_factory=dict)
    """Per-step diagnostics logged as episode means."""
    recorders: dict[str, RecorderTermCfg | None] = field(default_factory=dict)
    """Recorder terms (`RecorderTerm` subclasses) that capture what a rollout does: their hooks
    run at the end of `reset` and around the resets and at the end of `step`. Empty: the env
    uses a `NullRecorderManager` and does no recording work."""
    seed: int | None = None
    """Seed of the env's torch and numpy generators (None: 0)."""
    is_finite_horizon: bool = False
    """True: reaching the time limit is a true end of the task (no bootstrapping)."""
    viewer: ViewerCfg = field(default_factory=ViewerCfg)
    """Rendering options (camera, frame size)."""
    auto_reset: bool = True
    """Reset envs whose episode ended inside `step` (as mjlab and Isaac Lab). False: `step`
    leaves them as they ended (their observation is the terminal one) and the caller resets
    them with `env.reset(env_ids=...)`; stepping an env that ended and was not reset raises."""
    scale_rewards_by_dt: bool = True
    """Multiply the weighted reward terms by `step_dt` (reward = sum of weight x term x
    step_dt, so a term's episode sum does not depend on the control rate; as mjlab). False:
    reward = sum of weight x term, and the logged `Episode_Reward/<term>` (episode sum over
    the episode length in seconds) is then per step over seconds rather than a mean rate."""
    nonfinite_rewards: Literal["count", "raise"] = "count"
    """A reward term returning NaN/Inf: "count" (0 in the reward, counted and logged per term,
    warned once) or "raise" (FloatingPointError at once; syncs the device every step)."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid (called at construction
        and by `mjlab.utils.config.validate_config` when an env is built)."""
        check_int(
            self.decimation, "ManagerBasedRlEnvCfg.decimation", 1, "physics steps per policy step"
        )
        length = self.episode_length_s
        if (
            isinstance(length, bool)
            or not isinstance(length, (int, float))
            or not (math.isfinite(length) and length > 0)
        ):
            raise ValueError(
                f"ManagerBasedRlEnvCfg.episode_length_s must be a finite number of seconds > 0, "
                f"got {length!r}."
            )
        if self.nonfinite_rewards not in ("count", "raise"):
            raise ValueError(
                f"ManagerBasedRlEnvCfg.nonfinite_rewards is {self.nonfinite_rewards!r}; use "
                "'count' or 'raise'."
            )
        if self.seed is not None:
            check_int(self.seed, "ManagerBasedRlEnvCfg.seed", 0, "None: 0")
        for name in ("auto_reset", "is_finite_horizon", "scale_rewards_by_dt"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(
                    f"ManagerBasedRlEnvCfg.{name} must be True or False, got "
                    f"{getattr(self, name)!r}."
                )
        for name, kind in _TERM_DICTS.items():
            terms = getattr(self, name)
            if terms is None:  # no terms of this kind, as an empty dict
                continue
            if not isinstance(terms, dict):
                raise ValueError(
                    f"ManagerBasedRlEnvCfg.{name} must be a dict of name -> {kind.__name__} "
                    "(or None), got "
                    f"{type(terms).__name__}."
                )
            for key, term in terms.items():
                if term is not None and not isinstance(term, kind):
                    raise ValueError(
                        f"ManagerBasedRlEnvCfg.{name}['{key}'] is {term!r} "
                        f"({type(term).__name__}); expected a "
                        f"{kind.__name__}, or None to disable it."
                    )

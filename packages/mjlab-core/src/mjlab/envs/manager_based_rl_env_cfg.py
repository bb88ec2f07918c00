"""Config of a manager-based RL environment."""

from __future__ import annotations

from dataclasses import dataclass, field

from mjlab.managers import (
    ActionTermCfg,
    CommandTermCfg,
    CurriculumTermCfg,
    EventTermCfg,
    MetricsTermCfg,
    ObservationGroupCfg,
    RewardTermCfg,
    TerminationTermCfg,
)
from mjlab.scene import SceneCfg
from mjlab.sim import SimulationCfg


@dataclass(kw_only=True)
class ViewerCfg:
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
    width: int = 320
    """Frame width, pixels."""
    height: int = 240
    """Frame height, pixels."""

    def __post_init__(self) -> None:
        if self.width < 1 or self.height < 1:
            raise ValueError(
                f"ViewerCfg.width and height must be >= 1 pixel, got {self.width}x{self.height}."
            )


@dataclass(kw_only=True)
class ManagerBasedRlEnvCfg:
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
    seed: int | None = None
    """Seed of the env's torch and numpy generators (None: 0)."""
    is_finite_horizon: bool = False
    """True: reaching the time limit is a true end of the task (no bootstrapping)."""
    viewer: ViewerCfg = field(default_factory=ViewerCfg)
    """Rendering options (camera, frame size)."""

    def __post_init__(self) -> None:
        if self.decimation < 1:
            raise ValueError(
                f"ManagerBasedRlEnvCfg.decimation must be >= 1, got {self.decimation}."
            )
        if not self.episode_length_s > 0:
            raise ValueError(
                f"ManagerBasedRlEnvCfg.episode_length_s must be > 0, got {self.episode_length_s}."
            )

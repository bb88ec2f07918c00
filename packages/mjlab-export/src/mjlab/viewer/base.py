"""`BaseViewer`: the loop every env viewer runs (mjlab 1.6's names): step the env with the
policy at real time x speed, draw at a fixed frame rate, and act on the controls (pause, single
step, speed, reset) between ticks.

Pacing: each tick adds the real time since the previous tick, times the speed, to a budget of
simulated time; the env is stepped while the budget holds a whole `step_dt`, so the simulation
advances at the chosen speed whatever the machine, and the frame rate is independent of the
control rate. Steps that cannot keep up within one frame are dropped (`ViewerStatus.capped`)
instead of piling up.

Controls arrive from other threads (a page's button, a window's key) as requests
(`request_reset`, ...) and are carried out on the loop's thread at the start of the next tick,
so the env is only ever touched there.
"""

from __future__ import annotations

import contextlib
import time
import traceback
from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from mjlab.viewer.config import ViewerConfig, viewer_config_of

if TYPE_CHECKING:
    import torch


class VerbosityLevel(IntEnum):
    """How much a viewer prints."""

    SILENT = 0
    """Only errors of the env or policy."""
    INFO = 1
    """Also pause/resume and setting changes."""
    DEBUG = 2
    """Also frame rate, real-time factor and per-stage timings, once a second."""


@runtime_checkable
class EnvProtocol(Protocol):
    """What a viewer needs of an env: a `ManagerBasedRlEnv` behind a wrapper with
    `get_observations` (mjlab.rl's `RslRlVecEnvWrapper`, a video recorder around it, ...)."""

    num_envs: int

    @property
    def device(self) -> Any: ...

    @property
    def cfg(self) -> Any: ...

    @property
    def unwrapped(self) -> Any: ...

    def get_observations(self) -> Any: ...

    def step(self, actions: torch.Tensor) -> tuple[Any, ...]: ...

    def reset(self) -> Any: ...

    def close(self) -> None: ...


@runtime_checkable
class PolicyProtocol(Protocol):
    """A policy: observations in, actions (num_envs, num_actions) out. A `reset()` method, if
    it has one, is called when the viewer resets the env."""

    def __call__(self, obs: Any) -> torch.Tensor: ...


@dataclass(frozen=True)
class ViewerStatus:
    """A snapshot of the loop, for status lines."""

    paused: bool
    step_count: int
    """Env steps since the start or the last reset."""
    speed_multiplier: float
    """Simulated seconds per real second asked for."""
    speed_label: str
    """`speed_multiplier` as shown ("1x", "1/4x", "2x")."""
    target_realtime: float
    """Same as `speed_multiplier`."""
    actual_realtime: float
    """Simulated seconds per real second reached over the last half second."""
    smoothed_fps: float
    """Frames drawn per second over the last half second."""
    capped: bool
    """The last tick dropped steps that did not fit in one frame (the machine is too slow for
    the speed asked)."""
    last_error: str | None
    """Traceback of the exception that paused the loop, or None."""


class ViewerAction(Enum):
    """A control request, queued by any thread and carried out by the loop."""

    RESET = "reset"
    TOGGLE_PAUSE = "toggle_pause"
    SINGLE_STEP = "single_step"
    RESET_SPEED = "reset_speed"
    SPEED_UP = "speed_up"
    SPEED_DOWN = "speed_down"
    PREV_ENV = "prev_env"
    NEXT_ENV = "next_env"
    TOGGLE_PLOTS = "toggle_plots"
    TOGGLE_DEBUG_VIS = "toggle_debug_vis"
    TOGGLE_SHOW_ALL_ENVS = "toggle_show_all_envs"
    CUSTOM = "custom"


STATUS_WINDOW_S = 0.5
"""Seconds over which `ViewerStatus.smoothed_fps` and `actual_realtime` are measured."""


def _no_grad():
    """torch.no_grad() when torch is installed (policies are torch modules), else nothing."""
    try:
        import torch
    except ImportError:
        return contextlib.nullcontext()
    return torch.no_grad()


class BaseViewer(ABC):
    """Runs `policy` in `env` and shows it; subclasses draw (`sync_env_to_viewer`), feed user
    input back (`sync_viewer_to_env`), and say when they are done (`is_running`).

    Args:
        env: the env (`EnvProtocol`), stepped with `policy(env.get_observations())`; its
            `unwrapped.step_dt` sets the pace. Its `cfg.viewer` gives the `ViewerConfig`
            (`self.cfg`; mjlab-core's `ViewerCfg` is translated, see
            `mjlab.viewer.config.viewer_config_of`).
        policy: observations -> actions (`PolicyProtocol`).
        frame_rate: frames drawn per second, > 0.
        verbosity: a `VerbosityLevel`.

    Raises:
        TypeError: `env` lacks a method the loop calls, or `policy` is not callable.
        ValueError: a frame rate that is not > 0, or an invalid `env.cfg.viewer`.
    """

    SPEED_MULTIPLIERS: ClassVar[list[float]] = [
        1 / 32,
        1 / 16,
        1 / 8,
        1 / 4,
        1 / 2,
        1.0,
        2.0,
        4.0,
        8.0,
    ]
    """The speeds `increase_speed` / `decrease_speed` move between."""

    def __init__(
        self,
        env: EnvProtocol,
        policy: PolicyProtocol,
        frame_rate: float = 30.0,
        verbosity: int = VerbosityLevel.SILENT,
    ):
        missing = [m for m in ("get_observations", "step", "reset") if not hasattr(env, m)]
        if missing:
            raise TypeError(
                f"The viewer's env has no {', '.join(missing)}(); give it a wrapped env, e.g. "
                "mjlab.rl.RslRlVecEnvWrapper(env)."
            )
        if not callable(policy):
            raise TypeError(f"policy must be callable (obs -> actions), got {type(policy)}.")
        if not (isinstance(frame_rate, (int, float)) and 0 < frame_rate < float("inf")):
            raise ValueError(f"frame_rate must be a number > 0 frames/s, got {frame_rate!r}.")
        self.env = env
        self.policy = policy
        self.frame_rate = float(frame_rate)
        self.frame_time = 1.0 / self.frame_rate
        self.verbosity = VerbosityLevel(verbosity)
        self.cfg: ViewerConfig = viewer_config_of(env)

        self._is_paused = False
        self._step_count = 0
        self._last_error: str | None = None
        self._stop_requested = False
        self._step_limit: int | None = None
        """`run`'s num_steps: no step past it, even when a tick owes several."""
        self._speed_index = self.SPEED_MULTIPLIERS.index(1.0)
        self._time_multiplier = 1.0
        # Pacing: simulated time owed, time to the next frame, when the last tick ran.
        self._sim_budget = 0.0
        self._time_until_next_render = 0.0
        self._last_tick_time = time.perf_counter()
        self._was_capped = False
        # Counters behind ViewerStatus's rates.
        self._stats_frames = 0
        self._stats_steps = 0
        self._stats_last_time = time.perf_counter()
        self._fps = 0.0
        self._sps = 0.0
        self._actions: deque[tuple[ViewerAction, Any]] = deque()

    # -- what a viewer implements ---------------------------------------------------------------
    @abstractmethod
    def setup(self) -> None:
        """Open the window / start serving (called by `run`)."""

    @abstractmethod
    def sync_env_to_viewer(self) -> None:
        """Draw the env's current state (once per frame)."""

    @abstractmethod
    def sync_viewer_to_env(self) -> None:
        """Apply user input to the env (e.g. perturbation forces) before it is stepped."""

    @abstractmethod
    def close(self) -> None:
        """Release the window / server (called by `run` when the loop ends)."""

    @abstractmethod
    def is_running(self) -> bool:
        """False once the user closed the viewer (the loop then ends)."""

    def _forward_paused(self) -> None:  # noqa: B027 (optional hook)
        """Called every tick while paused (e.g. to recompute kinematics for a perturbation)."""

    def _handle_custom_action(self, action: ViewerAction, payload: Any) -> bool:
        """Carry out a viewer-specific action; True if it was handled."""
        del action, payload
        return False

    # -- messages -------------------------------------------------------------------------------
    def log(self, message: str, level: VerbosityLevel = VerbosityLevel.INFO) -> None:
        """Print `message` when the verbosity is at least `level`."""
        if self.verbosity >= level:
            print(message, flush=True)

    # -- requests (any thread) ------------------------------------------------------------------
    def request_reset(self) -> None:
        """Reset the env at the next tick."""
        self._actions.append((ViewerAction.RESET, None))

    def request_toggle_pause(self) -> None:
        """Pause, or resume, at the next tick."""
        self._actions.append((ViewerAction.TOGGLE_PAUSE, None))

    def request_single_step(self) -> None:
        """Advance exactly one env step at the next tick (only while paused)."""
        self._actions.append((ViewerAction.SINGLE_STEP, None))

    def request_speed_up(self) -> None:
        """Next faster speed at the next tick."""
        self._actions.append((ViewerAction.SPEED_UP, None))

    def request_speed_down(self) -> None:
        """Next slower speed at the next tick."""
        self._actions.append((ViewerAction.SPEED_DOWN, None))

    def request_reset_speed(self) -> None:
        """Real time (1x) at the next tick."""
        self._actions.append((ViewerAction.RESET_SPEED, None))

    def request_action(self, name: str, payload: Any = None) -> None:
        """Queue the `ViewerAction` called `name` (any other name: CUSTOM, with `payload`)."""
        action = ViewerAction.__members__.get(name, ViewerAction.CUSTOM)
        self._actions.append((action, payload))

    def request_stop(self) -> None:
        """End `run`'s loop at its next check (`mjlab.viewer.stop_on_interrupt` calls it on
        Ctrl-C)."""
        self._stop_requested = True

    # -- speed, pause, reset (the loop's thread) ------------------------------------------------
    def increase_speed(self) -> None:
        """Next entry of `SPEED_MULTIPLIERS` (none past the last)."""
        if self._speed_index < len(self.SPEED_MULTIPLIERS) - 1:
            self._set_speed_index(self._speed_index + 1)

    def decrease_speed(self) -> None:
        """Previous entry of `SPEED_MULTIPLIERS` (none before the first)."""
        if self._speed_index > 0:
            self._set_speed_index(self._speed_index - 1)

    def reset_speed(self) -> None:
        """Real time."""
        self._set_speed_index(self.SPEED_MULTIPLIERS.index(1.0))

    def _set_speed_index(self, index: int) -> None:
        self._speed_index = index
        self._time_multiplier = self.SPEED_MULTIPLIERS[index]
        self.log(f"[INFO] Speed: {self._format_speed(self._time_multiplier)}")

    def pause(self) -> None:
        """Stop stepping (frames are still drawn)."""
        self._is_paused = True
        self.log("[INFO] Simulation paused")

    def resume(self) -> None:
        """Step again, from now: the time spent paused is not made up."""
        self._is_paused = False
        self._last_error = None
        self._sim_budget = 0.0
        self._last_tick_time = time.perf_counter()
        self.log("[INFO] Simulation resumed")

    def toggle_pause(self) -> None:
        """`resume` when paused, else `pause`."""
        if self._is_paused:
            self.resume()
        else:
            self.pause()

    def reset_environment(self) -> None:
        """Reset the env (all worlds) and the policy (its `reset()`, if any)."""
        self.env.reset()
        reset = getattr(self.policy, "reset", None)
        if callable(reset):
            reset()
        self._step_count = 0
        self._sim_budget = 0.0
        self._last_error = None
        self._last_tick_time = time.perf_counter()

    # -- the loop -------------------------------------------------------------------------------
    def _execute_step(self) -> bool:
        """One observation -> policy -> env step. An exception pauses the loop (its traceback
        is printed and kept in `last_error`) instead of ending it; returns False then."""
        try:
            with _no_grad():
                actions = self.policy(self.env.get_observations())
                self.env.step(actions)
        except Exception:
            self._last_error = traceback.format_exc()
            self.log(f"[ERROR] The step failed; paused:\n{self._last_error}", VerbosityLevel.SILENT)
            self.pause()
            return False
        self._step_count += 1
        self._stats_steps += 1
        return True

    def _step_physics(self, dt: float) -> None:
        """Step the env for `dt` s of real time at the current speed."""
        step_dt = float(self.env.unwrapped.step_dt)
        self._sim_budget += dt * self._time_multiplier
        self._was_capped = False
        if self._sim_budget < step_dt:
            return
        self.sync_viewer_to_env()
        deadline = time.perf_counter() + self.frame_time
        while self._sim_budget >= step_dt:
            if self._step_limit is not None and self._step_count >= self._step_limit:
                self._sim_budget = 0.0
                return
            if not self._execute_step():
                self._sim_budget = 0.0
                return
            self._sim_budget -= step_dt
            if time.perf_counter() > deadline:
                # Out of time for this frame: what is left is dropped, not owed (a slow machine
                # would otherwise fall further behind every frame). One step's worth is kept.
                self._was_capped = self._sim_budget >= step_dt
                self._sim_budget = min(self._sim_budget, step_dt)
                return

    def _single_step(self) -> None:
        """One step while paused (ignored while running)."""
        if self._is_paused:
            self.sync_viewer_to_env()
            self._execute_step()

    def _process_actions(self) -> None:
        """Carry out the queued requests, oldest first."""
        while self._actions:
            action, payload = self._actions.popleft()
            if action is ViewerAction.RESET:
                self.reset_environment()
            elif action is ViewerAction.TOGGLE_PAUSE:
                self.toggle_pause()
            elif action is ViewerAction.SINGLE_STEP:
                self._single_step()
            elif action is ViewerAction.RESET_SPEED:
                self.reset_speed()
            elif action is ViewerAction.SPEED_UP:
                self.increase_speed()
            elif action is ViewerAction.SPEED_DOWN:
                self.decrease_speed()
            elif not self._handle_custom_action(action, payload):
                self.log(f"[INFO] Viewer action {action.name} is not handled here")

    def tick(self) -> bool:
        """Carry out the requests, step what the elapsed time owes, and draw a frame when one
        is due. Returns True when a frame was drawn."""
        now = time.perf_counter()
        dt = now - self._last_tick_time
        self._last_tick_time = now
        self._process_actions()
        if self._is_paused:
            self._forward_paused()
        else:
            self._step_physics(dt)
        self._time_until_next_render -= dt
        if self._time_until_next_render > 0:
            return False
        self._time_until_next_render += self.frame_time
        if self._time_until_next_render < -self.frame_time:  # far behind: no burst of frames
            self._time_until_next_render = 0.0
        self.sync_env_to_viewer()
        self._stats_frames += 1
        return True

    def run(self, num_steps: int | None = None, catch_sigint: bool = True) -> None:
        """`setup`, then tick until the viewer is closed, `num_steps` env steps ran (None: no
        limit) or Ctrl-C (`catch_sigint`: the first ends the loop, see
        `mjlab.viewer.stop_on_interrupt`); `close` in any case."""
        from mjlab.viewer import stop_on_interrupt

        self._stop_requested = False
        self._step_limit = num_steps
        self.setup()
        now = time.perf_counter()
        self._stats_last_time = self._last_tick_time = now
        interrupts = stop_on_interrupt(self) if catch_sigint else contextlib.nullcontext([])
        try:
            with interrupts as interrupted:
                while (
                    self.is_running()
                    and not self._stop_requested
                    and (num_steps is None or self._step_count < num_steps)
                ):
                    if not self.tick():
                        time.sleep(0.001)
                    self._update_stats()
                if interrupted:
                    print("\n[mjlab] Ctrl-C: viewer stopped", flush=True)
        finally:
            self._step_limit = None
            self.close()

    # -- status ---------------------------------------------------------------------------------
    def _update_stats(self) -> None:
        if self._is_paused:
            return
        now = time.perf_counter()
        span = now - self._stats_last_time
        if span < STATUS_WINDOW_S:
            return
        self._fps = self._stats_frames / span
        self._sps = self._stats_steps / span
        self._stats_frames = self._stats_steps = 0
        self._stats_last_time = now
        if self.verbosity >= VerbosityLevel.DEBUG:
            s = self.get_status()
            print(
                f"[{'PAUSED' if s.paused else 'RUNNING'}] step {s.step_count} | "
                f"{s.smoothed_fps:.0f} FPS | speed {s.speed_label} | real time "
                f"{s.actual_realtime:.2f}x of {s.target_realtime:.2f}x",
                flush=True,
            )

    @property
    def target_realtime(self) -> float:
        """The speed asked for."""
        return self._time_multiplier

    @property
    def actual_realtime(self) -> float:
        """The speed reached over the last half second."""
        return self._sps * float(self.env.unwrapped.step_dt)

    @staticmethod
    def _format_speed(multiplier: float) -> str:
        if multiplier == 1.0:
            return "1x"
        inverse = 1.0 / multiplier
        if multiplier < 1.0 and abs(inverse - round(inverse)) < 1e-9:
            return f"1/{round(inverse)}x"
        return f"{multiplier:.3g}x"

    def get_status(self) -> ViewerStatus:
        """The loop's state now."""
        return ViewerStatus(
            paused=self._is_paused,
            step_count=self._step_count,
            speed_multiplier=self._time_multiplier,
            speed_label=self._format_speed(self._time_multiplier),
            target_realtime=self.target_realtime,
            actual_realtime=self.actual_realtime,
            smoothed_fps=self._fps,
            capped=self._was_capped,
            last_error=self._last_error,
        )

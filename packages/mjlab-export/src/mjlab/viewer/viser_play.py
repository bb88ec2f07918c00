"""`ViserPlayViewer`: `BaseViewer`'s loop shown in a browser through our `WebViewer` (viser):
the watched world's bodies, the pause / step / reset buttons, the speed and env sliders, the
reward plot and a status line. It listens on 127.0.0.1 unless told otherwise."""

from __future__ import annotations

import math
import warnings
from typing import Any

from mjlab.viewer.base import BaseViewer, EnvProtocol, PolicyProtocol, VerbosityLevel, ViewerAction
from mjlab.viewer.config import track_body
from mjlab.viewer.offscreen import host_array
from mjlab.viewer.web import DEFAULT_HOST, DEFAULT_PORT, SPEED_RANGE, WebViewer

_SET_SPEED = "set_speed"
"""Payload tag of the CUSTOM action the speed slider queues."""


class ViserPlayViewer(BaseViewer):
    """Play `policy` in `env` and watch it in any browser.

    `run()` starts serving (the address is `web.url`), steps the env at real time x speed and
    sends the watched world `frame_rate` times a second (nothing is read or sent while no page
    is connected), until Ctrl-C or `num_steps`; then it stops serving.

    From `self.cfg` (`ViewerConfig`): the first view (origin, distance, elevation, azimuth,
    fovy, lookat), the world watched first (`env_idx`), the geom groups drawn (`geom_group`)
    and the most reward terms plotted (`reward_bar_max_terms`).

    Args:
        env: the env (see `BaseViewer`).
        policy: observations -> actions.
        frame_rate: frames sent per second.
        verbosity: a `VerbosityLevel`.
        host: the interface to listen on (127.0.0.1: this machine only; 0.0.0.0: every one).
        port: the port; the next free one when it is taken, any free one for 0.

    Raises:
        ImportError (at `run`/`setup`): viser is missing (pip install 'mjlab-export[viewer]').
    """

    def __init__(
        self,
        env: EnvProtocol,
        policy: PolicyProtocol,
        frame_rate: float = 60.0,
        verbosity: VerbosityLevel = VerbosityLevel.SILENT,
        *,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
    ) -> None:
        super().__init__(env, policy, frame_rate, verbosity)
        self.host = host
        self.port = port
        self._web: WebViewer | None = None
        self._reward_terms: list[str] = []
        self._steps_run = 0
        """Env steps since `setup`, resets included (the reward plot's time axis)."""
        self._drawn_steps = -1
        self._seen_paused = False
        self._seen_speed = 1.0

    # -- BaseViewer hooks -----------------------------------------------------------------------
    def setup(self) -> None:
        """Start serving the env's model (prints the address at INFO verbosity).

        Raises:
            RuntimeError: already set up.
            ValueError: the host/port cannot be listened on, or `cfg` names an unknown entity
                or body.
        """
        if self._web is not None and self._web.running:
            raise RuntimeError("ViserPlayViewer is already set up; close() it first.")
        env = self.env.unwrapped
        model = env.sim.mj_model
        cfg = self.cfg
        body = track_body(cfg, model, getattr(env.scene, "entities", None))
        terms = list(getattr(getattr(env, "reward_manager", None), "active_terms", ()))
        if len(terms) > cfg.reward_bar_max_terms:
            warnings.warn(
                f"The reward plot shows the first {cfg.reward_bar_max_terms} of {len(terms)} "
                f"reward terms (left out: {', '.join(terms[cfg.reward_bar_max_terms :])}); "
                "raise ViewerConfig.reward_bar_max_terms to see them all.",
                stacklevel=2,
            )
            terms = terms[: cfg.reward_bar_max_terms]
        self._reward_terms = terms
        web = WebViewer(
            model,
            step_dt=float(env.step_dt),
            host=self.host,
            port=self.port,
            num_envs=int(self.env.num_envs),
            reward_terms=terms,
            track_body=body,
            camera=(cfg.distance, cfg.elevation, cfg.azimuth),
            groups=tuple(g for g, on in enumerate(cfg.geom_group) if on),
            title="mjlab",
        )
        self._web = web
        if body is None:  # a free camera: no following, centred on cfg.lookat
            if web._follow_checkbox is not None:
                web._follow_checkbox.value = False
            web.follow = False
            web.look_at(
                cfg.lookat, distance=cfg.distance, elevation=cfg.elevation, azimuth=cfg.azimuth
            )
        if cfg.fovy is not None:
            web.server.initial_camera.fov = math.radians(cfg.fovy)
        self._select_env(min(cfg.env_idx, int(self.env.num_envs) - 1))
        self._steps_run = 0
        self._drawn_steps = 0  # rewards are plotted from the first step on
        self._seen_speed = web.speed
        self._show_state(web)
        self.log(f"[INFO] Viser viewer: {web.url}")

    def sync_env_to_viewer(self) -> None:
        """Send the watched world's poses, this step's rewards (after a step) and the status."""
        web = self.web
        index = self.env_idx
        env = self.env.unwrapped
        data = env.sim.data
        rewards = None
        if self._steps_run != self._drawn_steps and self._reward_terms:
            manager = env.reward_manager

            def rewards() -> dict[str, float]:
                values = manager.step_reward[index].tolist()
                return dict(zip(self._reward_terms, values, strict=False))

        self._drawn_steps = self._steps_run
        web.update(
            lambda name: host_array(getattr(data, name)[index]),
            rewards=rewards,
            status=self._status_line,
            step=self._steps_run,
        )

    def sync_viewer_to_env(self) -> None:
        """Nothing: the page has no input that acts on the env between steps (its reset and
        pause go through the request queue)."""

    def is_running(self) -> bool:
        """False before `setup` and after Ctrl-C / `request_stop` / `close`."""
        return self._web is not None and self._web.running

    def close(self) -> None:
        """Stop serving (idempotent)."""
        if self._web is not None:
            self._web.close()

    def request_stop(self) -> None:
        super().request_stop()
        if self._web is not None:
            self._web.request_stop()

    # -- the page's controls --------------------------------------------------------------------
    @property
    def web(self) -> WebViewer:
        """The `WebViewer` serving the page (its `url`, `server`, `num_clients`).

        Raises:
            RuntimeError: before `setup` / `run`.
        """
        if self._web is None:
            raise RuntimeError("ViserPlayViewer is not set up; call run() or setup() first.")
        return self._web

    @property
    def env_idx(self) -> int:
        """The world watched (the page's env slider)."""
        if self._web is None:
            return min(self.cfg.env_idx, int(self.env.num_envs) - 1)
        return min(int(self._web.env_index), int(self.env.num_envs) - 1)

    def _execute_step(self) -> bool:
        stepped = super()._execute_step()
        self._steps_run += stepped
        return stepped

    def _process_actions(self) -> None:
        """Turn what the page changed since the last tick into requests, carry out every
        request, then show the resulting state on the page."""
        web = self._web
        if web is not None:
            self._read_controls(web)
        super()._process_actions()
        if web is not None:
            self._show_state(web)

    def _read_controls(self, web: WebViewer) -> None:
        # The page's pause button flips web.paused; the loop's own pause (a failed step) is
        # shown there too, so only a change since the last look is the user's.
        if web.paused != self._seen_paused and web.paused != self._is_paused:
            self.request_toggle_pause()
        if web.take_step():
            self.request_single_step()
        if web.take_reset():
            self.request_reset()
        if web.speed != self._seen_speed:
            self.request_action("CUSTOM", (_SET_SPEED, float(web.speed)))

    def _show_state(self, web: WebViewer) -> None:
        if web.paused != self._is_paused:
            web._set_paused(self._is_paused)
        self._seen_paused = web.paused
        low, high = SPEED_RANGE
        shown = min(max(self._time_multiplier, low), high)
        if not math.isclose(web.speed, shown):
            web._speed_slider.value = round(shown, 1)  # the slider's callback sets web.speed
        self._seen_speed = web.speed

    def _select_env(self, index: int) -> None:
        web = self.web
        if web._env_slider is not None:
            web._env_slider.value = index  # the slider's callback sets web.env_index
        web.env_index = index

    def _handle_custom_action(self, action: ViewerAction, payload: Any) -> bool:
        if (
            action is ViewerAction.CUSTOM
            and isinstance(payload, tuple)
            and payload[0] == _SET_SPEED
        ):
            speed = payload[1]
            self._time_multiplier = speed
            # The nearest preset, so that increase_speed / decrease_speed go on from there.
            self._speed_index = min(
                range(len(self.SPEED_MULTIPLIERS)),
                key=lambda i: abs(math.log(self.SPEED_MULTIPLIERS[i] / speed)),
            )
            self.log(f"[INFO] Speed: {self._format_speed(speed)}")
            return True
        if action in (ViewerAction.PREV_ENV, ViewerAction.NEXT_ENV):
            step = 1 if action is ViewerAction.NEXT_ENV else -1
            self._select_env((self.env_idx + step) % int(self.env.num_envs))
            return True
        return False

    def _status_line(self) -> str:
        s = self.get_status()
        state = "paused" if s.paused else "running"
        line = (
            f"env {self.env_idx}: step {s.step_count}, {state}, speed {s.speed_label} "
            f"({s.actual_realtime:.2f}x real time{', capped' if s.capped else ''})"
        )
        if s.last_error:
            line += f"; error: {s.last_error.strip().splitlines()[-1]}"
        return line

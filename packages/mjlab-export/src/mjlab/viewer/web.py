"""A viser web viewer for one MuJoCo world: the model's geometry, body poses per control step,
playback controls, live command sliders and a reward plot, in any browser.

The caller owns the loop::

    viewer = WebViewer(model, step_dt=0.02)
    while viewer.running:
        viewer.wait()                  # paces to real time x speed; blocks while paused
        if viewer.take_reset():
            ...                        # reset the world being watched
        ...                            # one control step
        viewer.update(lambda name: getattr(data, name), rewards=lambda: {...})

Nothing is read, computed or sent while no browser is connected: `update` returns at once and
`wait` does not pace, so a viewer nobody watches costs nothing (`bench/viewer_overhead.py`).

Every value a page sends is checked against its control's range (speed, env, each command
component) before it is used: a value outside it, or not a finite number, is dropped with a
warning on the `mjlab.viewer.web` logger, and the control goes back to the last value accepted
on every page. Such a value cannot come from the sliders themselves, only from a modified page
or a hand-made WebSocket message, so it is not clamped into a value nobody chose.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from mjlab.viewer.geometry import DEFAULT_GROUPS, moving_bodies, root_body, visual_geoms

DEFAULT_HOST = "127.0.0.1"
"""The viewer listens on this machine only unless told otherwise."""

DEFAULT_PORT = 8080
"""viser's port; when it is taken, viser takes the next free one (`WebViewer.port` says which)."""

PLOT_WINDOW_S = 10.0
"""Seconds of reward history the plot shows."""

PANEL_REFRESH_S = 0.2
"""Seconds between updates of the status text and the reward plot."""

SPEED_RANGE = (0.1, 4.0)
"""The real-time factors the speed slider offers (and the only ones accepted)."""

_log = logging.getLogger(__name__)


@dataclass
class CommandSlider:
    """One component of a command the viewer lets the user set."""

    name: str
    """The component's name, e.g. `lin_vel_x`."""
    low: float
    """Slider minimum."""
    high: float
    """Slider maximum."""
    value: float = 0.0
    """Initial value (clipped into [low, high])."""

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ValueError(
                f"CommandSlider '{self.name}': low must be below high, got [{self.low}, {self.high}]."
            )


def _check_host(host: str) -> None:
    """Raise ValueError unless this machine can listen on `host`."""
    try:
        infos = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.bind(address)
    except OSError as err:
        raise ValueError(
            f"The web viewer cannot listen on host {host!r} ({err.strerror or err}); use an "
            "address of this machine: 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)."
        ) from None


def _quat_rotate(wxyz: np.ndarray, v: np.ndarray) -> np.ndarray:
    out = np.zeros(3)
    mujoco.mju_rotVecQuat(out, np.asarray(v, dtype=np.float64), np.asarray(wxyz, dtype=np.float64))
    return out


def _subtree_radius(model: mujoco.MjModel, data: mujoco.MjData, root: int) -> float:
    """Largest distance from body `root` to a body of its subtree plus that body's geom
    bounding radius, m (how big the tracked robot is)."""
    radius = 0.1
    for body in range(root, model.nbody):
        if int(model.body_rootid[body]) != int(model.body_rootid[root]):
            continue
        reach = float(np.linalg.norm(data.xpos[body] - data.xpos[root]))
        geoms = model.body_geomadr[body], model.body_geomnum[body]
        bound = float(model.geom_rbound[geoms[0] : geoms[0] + geoms[1]].max(initial=0.0))
        radius = max(radius, reach + bound)
    return radius


def camera_position(
    target: np.ndarray | Sequence[float], distance: float, elevation: float, azimuth: float
) -> np.ndarray:
    """Where MuJoCo's free camera sits when it looks at `target` from `distance` m, with
    `elevation` deg (negative: from above) and `azimuth` deg (about +z, from +x)."""
    el, az = np.radians(elevation), np.radians(azimuth)
    forward = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
    return np.asarray(target, dtype=np.float64) - distance * forward


def _rgb(rgba: np.ndarray) -> tuple[int, int, int]:
    r, g, b = (round(float(c) * 255) for c in np.clip(rgba[:3], 0.0, 1.0))
    return r, g, b


class WebViewer:
    """Serve `model` with viser and stream one world's body poses to every connected browser.

    Args:
        model: the compiled model whose geometry is drawn (geom groups `groups`, colours from
            `geom_rgba`/materials; textures are not drawn).
        step_dt: the control period, s (real-time pacing and the plot's time axis).
        host: the interface to listen on; 127.0.0.1 (this machine only) by default. Use
            "0.0.0.0" to serve other machines, or keep it and forward the port over ssh.
        port: the port; the next free one is taken when it is busy, any free one for 0 (see
            `port`).
        num_envs: worlds the user can pick from (an "env" slider when above 1).
        commands: command components to offer as sliders.
        command_toggle: show a "set command" checkbox (off: the task's own commands run, on:
            the sliders' values are held); False: the sliders always apply.
        reward_terms: names of the reward terms to plot (per step, as passed to `update`).
        track_body: the body the view follows; None: the first body with a free joint (no
            following for a fixed-base model).
        camera: the first view as MuJoCo's free camera (distance m, elevation deg, azimuth
            deg) around `track_body` (`ViewerCfg`'s values); None: a distance from the
            tracked body's size, elevation -20, azimuth 135.
        groups: geom groups to draw.
        title: the page's title.

    Raises:
        ImportError: viser is not installed (pip install 'mjlab-export[viewer]').
        ValueError: `step_dt` <= 0, a port outside 0..65535, or a host this machine cannot
            listen on.
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        *,
        step_dt: float,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        num_envs: int = 1,
        commands: Sequence[CommandSlider] = (),
        command_toggle: bool = False,
        reward_terms: Sequence[str] = (),
        track_body: int | None = None,
        camera: tuple[float, float, float] | None = None,
        groups: Sequence[int] = DEFAULT_GROUPS,
        title: str = "mjlab",
    ):
        import viser

        if step_dt <= 0:
            raise ValueError(f"step_dt must be > 0 s, got {step_dt}.")
        self.model = model
        self.step_dt = float(step_dt)
        self.num_envs = int(num_envs)
        self.running = True
        """False after `close` or `request_stop` (Ctrl-C); callers loop `while viewer.running`."""
        self._closed = False
        self.paused = False
        """Set by the pause button; `wait` blocks while it is True (except for single steps)."""
        self.speed = 1.0
        """Real-time factor `wait` paces to while a browser is connected, in `SPEED_RANGE`."""
        self.env_index = 0
        """The world being watched, in 0..num_envs - 1."""
        self.follow = True
        """Keep the tracked body in view: the scene is shifted horizontally so that the body
        stays where the view started (the cameras are never moved: orbiting stays free)."""
        self._step_once = False
        self._reset = False
        self._next_due: float | None = None
        self._lock = threading.Lock()
        self._history: np.ndarray = np.zeros((0, 0))
        """(1 + len(reward_terms), window): time, then each term, the newest last."""

        if not 0 <= int(port) <= 65535:
            raise ValueError(f"The viewer port must be in 0..65535 (0: any free one), got {port}.")
        _check_host(host)  # viser would retry a host it cannot bind forever
        with contextlib.redirect_stdout(io.StringIO()):  # its banner; open_viewer prints ours
            self.server = viser.ViserServer(host=host, port=port, label=title, verbose=False)
        self._report_unusable_messages()
        self.server.gui.configure_theme(show_logo=False, show_share_button=False)
        self.server.gui.main_panel.dock_right()
        self._bodies = moving_bodies(model)
        self._root = root_body(model) if track_body is None else int(track_body)
        if self._root is not None and not 0 < self._root < model.nbody:
            raise ValueError(
                f"track_body must be a body id in 1..{model.nbody - 1}, got {track_body}."
            )
        self._watched = 0  # the env whose steps fill the plot
        self._build_scene(groups, camera)
        self._build_gui(commands, command_toggle, reward_terms)
        self._panel_due = 0.0
        self._last_status: Callable[[], str] | None = None
        self._steps = 0

    # -- public ---------------------------------------------------------------------------------
    @property
    def host(self) -> str:
        """The interface the viewer listens on."""
        return self.server.get_host()

    @property
    def port(self) -> int:
        """The port the viewer listens on."""
        return self.server.get_port()

    @property
    def url(self) -> str:
        """The page's address (for 0.0.0.0: this machine's, via 127.0.0.1)."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://{host}:{self.port}"

    @property
    def num_clients(self) -> int:
        """Browsers connected now."""
        return len(self.server.get_clients())

    @property
    def command(self) -> np.ndarray | None:
        """(num_components,) float64 slider values while they apply, else None (the task's own
        commands run: no sliders, or the "set command" box is off)."""
        if not self._command_sliders:
            return None
        if self._command_toggle is not None and not self._command_toggle.value:
            return None
        return self._command_values.copy()

    def take_step(self) -> bool:
        """True once after the step button was pressed (for a caller that runs its own pause;
        `wait` takes the press itself otherwise)."""
        with self._lock:
            pressed, self._step_once = self._step_once, False
        return pressed

    def take_reset(self) -> bool:
        """True once after the reset button was pressed (the caller resets the watched world)."""
        with self._lock:
            pressed, self._reset = self._reset, False
        return pressed

    def wait(self) -> None:
        """Return when the next control step is due: at once while nobody is connected,
        otherwise `step_dt / speed` after the previous one; while paused, only when "step" or
        "reset" is pressed (or the viewer is closed). A pause ends when the last browser
        leaves."""
        if self.running and self.paused:
            self._refresh_panels()  # show the state it paused in
        while self.running and self.paused:
            with self._lock:
                if self._step_once or self._reset:
                    self._step_once = False
                    self._next_due = None
                    return
            if not self.server.get_clients():
                self._set_paused(False)
                break
            time.sleep(0.02)
        if not self.running or not self.server.get_clients():
            self._next_due = None
            return
        now = time.perf_counter()
        period = self.step_dt / max(self.speed, 1e-3)
        if self._next_due is None or now - self._next_due > period:
            self._next_due = now  # first step, or fell behind: no catching up
        elif self._next_due > now:
            time.sleep(self._next_due - now)
        self._next_due += period

    def update(
        self,
        fields: Callable[[str], np.ndarray],
        rewards: Callable[[], Mapping[str, float]] | None = None,
        status: Callable[[], str] | None = None,
        step: int | None = None,
    ) -> bool:
        """Send the watched world's body poses (and, a few times a second, the status line and
        reward plot) to every connected browser.

        Args:
            fields: `fields(name)` returns the watched world's `MjData` field `name`; only
                "xpos" (nbody, 3) m and "xquat" (nbody, 4) wxyz, world frame, are read.
            rewards: returns this step's reward per term (the names given as `reward_terms`).
            status: returns a line of text for the status panel.
            step: the number of the step shown, for the plot's time axis (a caller that does
                not update after every step); None: one more than at the previous update.

        Returns:
            False (reading nothing, calling nothing) when no browser is connected.
        """
        self._steps = self._steps + 1 if step is None else int(step)
        if not self.server.get_clients():
            return False
        if self.env_index != self._watched:  # another env: its own history
            self._watched = self.env_index
            self._history[:] = np.nan
        xpos = np.asarray(fields("xpos"), dtype=np.float64)
        xquat = np.asarray(fields("xquat"), dtype=np.float64)
        with self.server.atomic():
            for handle, body in zip(self._body_handles, self._bodies, strict=True):
                handle.position = xpos[body]
                handle.wxyz = xquat[body]
            if self._root is not None and self.follow:
                shift = self._anchor - xpos[self._root, :2]
                self._world.position = (float(shift[0]), float(shift[1]), 0.0)
        if rewards is not None and self._plot is not None:
            values = rewards()
            self._history = np.roll(self._history, -1, axis=1)
            self._history[0, -1] = self._steps * self.step_dt
            for i, name in enumerate(self._reward_terms):
                self._history[i + 1, -1] = float(values.get(name, np.nan))
        self._last_status = status
        if time.perf_counter() >= self._panel_due or self.paused:
            self._refresh_panels()
        return True

    def _refresh_panels(self) -> None:
        """Send the status line and the reward plot (a few times a second, and when pausing)."""
        self._panel_due = time.perf_counter() + PANEL_REFRESH_S
        if not self.server.get_clients():
            return
        if self._plot is not None:
            filled = self._history[:, np.isfinite(self._history[0])]
            self._plot.data = tuple(np.ascontiguousarray(row) for row in filled)
        if self._last_status is not None:
            self._status.content = self._last_status()

    def request_stop(self) -> None:
        """End the caller's loop at its next `running` check (`stop_on_interrupt` calls it on
        Ctrl-C); the page is served until `close`."""
        self.running = False

    def close(self) -> None:
        """Stop serving (idempotent)."""
        self.running = False
        if not self._closed:
            self._closed = True
            with contextlib.redirect_stdout(io.StringIO()):  # "(viser) Server stopped"
                self.server.stop()

    def __enter__(self) -> WebViewer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- scene ----------------------------------------------------------------------------------
    def _build_scene(
        self, groups: Sequence[int], camera: tuple[float, float, float] | None
    ) -> None:
        model = self.model
        data = mujoco.MjData(model)
        mujoco.mj_kinematics(model, data)  # static bodies' poses, and a first pose of the rest
        scene = self.server.scene
        scene.set_up_direction("+z")
        # Everything hangs under /world, which `update` shifts to keep the tracked body in view.
        self._world = scene.add_frame("/world", show_axes=False)
        frames = {}
        for body in range(model.nbody):
            frames[body] = scene.add_frame(
                f"/world/body{body}",
                show_axes=False,
                position=data.xpos[body].copy(),
                wxyz=data.xquat[body].copy(),
            )
        self._body_handles = [frames[int(b)] for b in self._bodies]
        self.geoms = visual_geoms(model, groups)
        """The drawn geoms (`mjlab.viewer.geometry.GeomMesh`)."""
        for g in self.geoms:
            name = f"/world/body{g.body_id}/geom{g.geom_id}"
            scene.add_mesh_simple(
                name,
                vertices=g.vertices,
                faces=g.faces,
                color=_rgb(g.rgba),
                opacity=float(g.rgba[3]) if g.rgba[3] < 1 else None,
                side="double" if g.is_plane else "front",
                cast_shadow=not g.is_plane,
            )
            if g.is_plane:  # a grid on the plane, in the plane's own frame
                width, height = (2 * float(v) for v in g.half_size[:2])
                scene.add_grid(
                    f"{name}_grid",
                    width=width,
                    height=height,
                    cell_size=0.5,
                    section_size=1.0,
                    position=g.pos + _quat_rotate(g.quat, np.array([0.0, 0.0, 1e-3])),
                    wxyz=g.quat,
                    shadow_opacity=0.0,
                )
        # The first view: MuJoCo's free camera (distance, elevation, azimuth) around the tracked
        # body, or around the model's centre.
        if self._root is not None:
            target = data.xpos[self._root].copy()
            self._anchor = target[:2].copy()
            size = _subtree_radius(model, data, self._root)
        else:
            target = np.asarray(model.stat.center, dtype=np.float64)
            self._anchor = np.zeros(2)
            size = float(model.stat.extent) / 2
        distance, elevation, azimuth = camera or (float(np.clip(4 * size, 1.0, 6.0)), -20, 135)
        self.look_at(target, distance=distance, elevation=elevation, azimuth=azimuth)

    def look_at(
        self, target: Sequence[float], *, distance: float, elevation: float, azimuth: float
    ) -> None:
        """Set the view a page opens with: MuJoCo's free camera around `target` (world frame,
        m) at `distance` m, `elevation` deg and `azimuth` deg."""
        center = np.asarray(target, dtype=np.float64)
        self.server.initial_camera.position = camera_position(center, distance, elevation, azimuth)
        self.server.initial_camera.look_at = center

    # -- controls -------------------------------------------------------------------------------
    def _set_paused(self, paused: bool) -> None:
        self.paused = paused
        self._pause_button.label = "Resume" if paused else "Pause"
        self._step_button.disabled = not paused

    def _report_unusable_messages(self) -> None:
        """A control message viser cannot apply at all (a value of the wrong type, a property
        the control lacks) raises inside viser's handler, which has then dropped it, and
        asyncio prints the traceback: make that one warning line instead."""
        try:
            from viser import _messages
        except ImportError:
            return  # a viser without these internals: its own reporting stays

        gui = self.server.gui
        sock = getattr(gui, "_websock_interface", None)
        handler = getattr(gui, "_handle_gui_updates", None)
        update = getattr(_messages, "GuiUpdateMessage", None)
        if sock is None or handler is None or update is None:
            return

        async def reported(client_id, message) -> None:
            try:
                await handler(client_id, message)
            except Exception as err:  # whatever a page sends must not end the run
                updates = repr(getattr(message, "updates", None))
                _log.warning(
                    "web viewer: dropped a control message from a page (%s; %s).",
                    updates if len(updates) <= 80 else updates[:77] + "...",
                    type(err).__name__ + (f": {err}" if str(err) else ""),
                )

        sock.unregister_handler(update, handler)
        sock.register_handler(update, reported)

    def _accept(
        self,
        handle,
        low: float,
        high: float,
        apply: Callable[[float], None],
        integer: bool = False,
    ) -> None:
        """Call `apply(value)` on each new value of the slider `handle` that is a finite number
        in [low, high] (a whole number for `integer`); drop any other with a warning and set
        the slider back to the last accepted value, on every page."""
        accepted = [float(handle.value)]

        @handle.on_update
        def _(_event) -> None:
            value = handle.value
            try:
                number = float(value)
            except (TypeError, ValueError, OverflowError):
                number = math.nan
            if not (low <= number <= high and (not integer or number.is_integer())):
                kind = "a whole number" if integer else "a number"
                _log.warning(
                    "web viewer: dropped %s = %r from a page (%s in %g..%g expected); keeping %g.",
                    handle.label,
                    value,
                    kind,
                    low,
                    high,
                    accepted[0],
                )
                handle.value = accepted[0]  # viser casts it to the slider's type
                return
            accepted[0] = number
            apply(number)

    def _build_gui(
        self,
        commands: Sequence[CommandSlider],
        command_toggle: bool,
        reward_terms: Sequence[str],
    ) -> None:
        gui = self.server.gui
        with gui.add_folder("Playback"):
            self._status = gui.add_markdown("waiting for the first step")
            pause = gui.add_button("Pause", icon=None)
            step = gui.add_button("Step", disabled=True)
            reset = gui.add_button("Reset")
            low, high = SPEED_RANGE
            speed = gui.add_slider("Speed", min=low, max=high, step=0.1, initial_value=1.0)
            self._accept(speed, low, high, lambda v: setattr(self, "speed", v))
            self._speed_slider = speed
            self._env_slider = None
            self._follow_checkbox = None
            if self.num_envs > 1:
                env = gui.add_slider("Env", min=0, max=self.num_envs - 1, step=1, initial_value=0)
                self._accept(
                    env,
                    0,
                    self.num_envs - 1,
                    lambda v: setattr(self, "env_index", int(v)),
                    integer=True,
                )
                self._env_slider = env

            if self._root is not None:
                follow = gui.add_checkbox("Follow", initial_value=True)
                self._follow_checkbox = follow

                @follow.on_update
                def _(_event) -> None:
                    self.follow = bool(follow.value)

        self._pause_button, self._step_button = pause, step

        @pause.on_click
        def _(_event) -> None:
            self._set_paused(not self.paused)

        @step.on_click
        def _(_event) -> None:
            with self._lock:
                self._step_once = True

        @reset.on_click
        def _(_event) -> None:
            with self._lock:
                self._reset = True

        self._command_sliders = []
        self._command_toggle = None
        # The accepted slider values: what `command` returns (a handle's own value may hold a
        # rejected one for a moment).
        self._command_values = np.array([float(np.clip(c.value, c.low, c.high)) for c in commands])
        if commands:
            with gui.add_folder("Command"):
                if command_toggle:
                    self._command_toggle = gui.add_checkbox("Set command", initial_value=False)
                for i, c in enumerate(commands):
                    span = c.high - c.low
                    slider = gui.add_slider(
                        c.name,
                        min=float(c.low),
                        max=float(c.high),
                        step=float(10 ** np.floor(np.log10(span / 100))),
                        initial_value=float(self._command_values[i]),
                    )

                    def set_component(value: float, i: int = i) -> None:
                        self._command_values[i] = value

                    self._accept(slider, c.low, c.high, set_component)
                    self._command_sliders.append(slider)
        self._reward_terms = list(reward_terms)
        self._plot = None
        if self._reward_terms:
            from viser import uplot

            window = max(2, round(PLOT_WINDOW_S / self.step_dt))
            self._history = np.full((1 + len(self._reward_terms), window), np.nan)
            palette = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4"]
            series = [uplot.Series(label="t (s)")] + [
                uplot.Series(label=name, stroke=palette[i % len(palette)], width=1.5)
                for i, name in enumerate(self._reward_terms)
            ]
            with gui.add_folder("Reward terms (per s)"):
                self._plot = gui.add_uplot(
                    data=tuple(np.zeros((1 + len(self._reward_terms), 1))),
                    series=tuple(series),
                    scales={"x": {"time": False}},
                    legend={"live": False},
                    aspect=1.2,
                )

"""MuJoCo's own interactive viewer (`mujoco.viewer.launch_passive`) for one world, on a machine
with a display. Same loop as `WebViewer`: `wait()`, one step, `update(fields)`."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

import mujoco
import numpy as np

from mjlab.deploy.headless import HeadlessGLError


class NoDisplayError(HeadlessGLError):
    """`--viewer native` on a machine without a display (a command prints it as one line)."""


def has_display() -> bool:
    """Whether a window can be opened here (Linux: DISPLAY or WAYLAND_DISPLAY is set; macOS and
    Windows: always; on macOS MuJoCo's passive viewer also needs the program run with
    `mjpython`)."""
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


class NativeViewer:
    """A passive `mujoco.viewer` window showing one world of `model`, paced to real time.

    Args:
        model: the compiled model.
        step_dt: the control period, s.
        key_callback: called with the GLFW key code of each key pressed in the window (on
            the window's thread).

    Raises:
        NoDisplayError: no display here (the message points to `--viewer web`).
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        *,
        step_dt: float,
        key_callback: Callable[[int], None] | None = None,
    ):
        if not has_display():
            raise NoDisplayError(
                "--viewer native needs a display (DISPLAY or WAYLAND_DISPLAY is not set); on a "
                "headless machine use --viewer web and open the printed address (forward the "
                "port over ssh: ssh -L 8080:127.0.0.1:8080 HOST)."
            )
        import mujoco.viewer

        self.model = model
        self.data = mujoco.MjData(model)
        self.step_dt = float(step_dt)
        self.env_index = 0
        self.command: np.ndarray | None = None
        self._handle = mujoco.viewer.launch_passive(model, self.data, key_callback=key_callback)
        self._next_due: float | None = None
        self._stop = False

    @property
    def handle(self):
        """The `mujoco.viewer.Handle` of the window (its camera `cam`, options `opt`, the
        extra geoms `user_scn`)."""
        return self._handle

    @property
    def running(self) -> bool:
        """False once the window was closed or `request_stop` was called."""
        return not self._stop and self._handle.is_running()

    def request_stop(self) -> None:
        """End the caller's loop at its next `running` check."""
        self._stop = True

    def take_reset(self) -> bool:
        """Always False (the native window has no reset button)."""
        return False

    def wait(self) -> None:
        """Return when the next control step is due (real time)."""
        now = time.perf_counter()
        if self._next_due is None or now - self._next_due > self.step_dt:
            self._next_due = now
        elif self._next_due > now:
            time.sleep(self._next_due - now)
        self._next_due += self.step_dt

    def update(self, fields: Callable[[str], np.ndarray], rewards=None, status=None) -> bool:
        """Copy the world's state (qpos, qvel, mocap poses) in, run `mj_forward` (contacts and
        forces for MuJoCo's visualisation), redraw."""
        with self._handle.lock():
            self.data.qpos[:] = fields("qpos")
            self.data.qvel[:] = fields("qvel")
            if self.model.nmocap:
                self.data.mocap_pos[:] = fields("mocap_pos")
                self.data.mocap_quat[:] = fields("mocap_quat")
            mujoco.mj_forward(self.model, self.data)
        self._handle.sync()
        return True

    def close(self) -> None:
        """Close the window."""
        self._handle.close()

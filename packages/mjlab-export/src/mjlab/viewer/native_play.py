"""`NativeMujocoViewer`: `BaseViewer`'s loop shown in MuJoCo's own window through our
`NativeViewer` (a display is needed), with keyboard controls and mouse perturbations."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import mujoco
import numpy as np

from mjlab.viewer.base import BaseViewer, EnvProtocol, PolicyProtocol, VerbosityLevel, ViewerAction
from mjlab.viewer.config import track_body
from mjlab.viewer.offscreen import host_array

if TYPE_CHECKING:
    from mjlab.viewer.native import NativeViewer

# GLFW key codes (glfw3.h) of the window's controls.
KEY_SPACE, KEY_COMMA, KEY_MINUS, KEY_PERIOD, KEY_EQUAL = 32, 44, 45, 46, 61
KEY_ENTER, KEY_RIGHT = 257, 262

KEYS = {
    KEY_SPACE: "TOGGLE_PAUSE",
    KEY_RIGHT: "SINGLE_STEP",
    KEY_ENTER: "RESET",
    KEY_MINUS: "SPEED_DOWN",
    KEY_EQUAL: "SPEED_UP",
    KEY_COMMA: "PREV_ENV",
    KEY_PERIOD: "NEXT_ENV",
}
"""Key -> the `ViewerAction` it requests: space pauses/resumes, right arrow steps once while
paused, enter resets, - and = change the speed, comma and period pick the previous/next world."""


class NativeMujocoViewer(BaseViewer):
    """Play `policy` in `env` in MuJoCo's passive viewer window, one world at a time.

    Keys: see `KEYS`. With `enable_perturbations`, a body dragged with the mouse (double-click
    it, then Ctrl + drag) is pushed in the watched world: the window's perturbation force is
    written to that world's `xfrc_applied` before each step, and cleared once released.

    From `self.cfg` (`ViewerConfig`): the camera (origin, distance, elevation, azimuth, fovy,
    lookat), the world watched first (`env_idx`) and `enable_shadows`.

    Args:
        env: the env (see `BaseViewer`).
        policy: observations -> actions.
        frame_rate: frames drawn per second.
        key_callback: also called with every key code pressed in the window (on the window's
            thread: it must not touch the env; queue a `request_*` instead).
        plot_cfg: must be None: this window draws no reward plots (the web viewer,
            `ViserPlayViewer`, plots them).
        enable_perturbations: apply the window's mouse perturbations to the env.
        verbosity: a `VerbosityLevel`.

    Raises:
        ValueError: a `plot_cfg`.
        mjlab.viewer.native.NoDisplayError (at `run`/`setup`): no display here.
    """

    def __init__(
        self,
        env: EnvProtocol,
        policy: PolicyProtocol,
        frame_rate: float = 60.0,
        key_callback: Callable[[int], None] | None = None,
        plot_cfg: Any | None = None,
        enable_perturbations: bool = True,
        verbosity: VerbosityLevel = VerbosityLevel.SILENT,
    ):
        super().__init__(env, policy, frame_rate, verbosity)
        if plot_cfg is not None:
            raise ValueError(
                "NativeMujocoViewer draws no reward plots, so plot_cfg must be None; "
                "ViserPlayViewer plots the reward terms."
            )
        self.user_key_callback = key_callback
        self.enable_perturbations = bool(enable_perturbations)
        self.env_idx = min(self.cfg.env_idx, int(env.num_envs) - 1)
        """The world shown."""
        self._native: NativeViewer | None = None
        self._pushing = False

    @property
    def native(self) -> NativeViewer:
        """The `mjlab.viewer.native.NativeViewer` (its `handle`, `data`), after `setup`."""
        if self._native is None:
            raise RuntimeError("NativeMujocoViewer is not set up; call run() or setup() first.")
        return self._native

    # -- BaseViewer hooks -----------------------------------------------------------------------
    def setup(self) -> None:
        """Open the window, with the config's camera."""
        from mjlab.viewer.native import NativeViewer

        env = self.env.unwrapped
        cfg = self.cfg
        model = env.sim.mj_model
        if cfg.fovy is not None:  # on a copy: the simulation's model stays as it is
            model = copy.copy(model)
            model.vis.global_.fovy = cfg.fovy
        body = track_body(cfg, model, getattr(env.scene, "entities", None))
        self._native = NativeViewer(model, step_dt=float(env.step_dt), key_callback=self._on_key)
        handle = self._native.handle
        with handle.lock():
            if not cfg.enable_shadows:
                handle.user_scn.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = 0
            camera = handle.cam
            camera.fixedcamid = -1
            if body is None:
                camera.type = mujoco.mjtCamera.mjCAMERA_FREE
                camera.trackbodyid = -1
                camera.lookat[:] = cfg.lookat
            else:
                camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
                camera.trackbodyid = body
            camera.distance = cfg.distance
            camera.elevation = cfg.elevation
            camera.azimuth = cfg.azimuth
        self._pushing = False

    def sync_env_to_viewer(self) -> None:
        """Show the watched world's state and the status in the window."""
        native = self.native
        if not native.running:
            return
        data = self.env.unwrapped.sim.data
        index = self.env_idx
        set_texts = getattr(native.handle, "set_texts", None)
        if set_texts is not None:  # mujoco >= 3.3
            s = self.get_status()
            values = (
                f"{index + 1}/{self.env.num_envs}\n{s.step_count}\n"
                f"{'PAUSED' if s.paused else 'RUNNING'}{' [CAPPED]' if s.capped else ''}\n"
                f"{s.speed_label}\n{s.actual_realtime:.2f}x"
            )
            set_texts(
                (
                    mujoco.mjtFontScale.mjFONTSCALE_150,
                    mujoco.mjtGridPos.mjGRID_TOPLEFT,
                    "Env\nStep\nStatus\nSpeed\nReal time",
                    values,
                )
            )
        native.update(lambda name: host_array(getattr(data, name)[index]))

    def sync_viewer_to_env(self) -> None:
        """Write the window's perturbation force into the watched world (only while one is
        applied, and once more to clear it, so that the env's own pushes are left alone)."""
        if not self.enable_perturbations or self._native is None or self._is_paused:
            return
        with self._native.handle.lock():
            force = np.array(self._native.data.xfrc_applied)
        pushing = bool(np.any(force))
        if pushing or self._pushing:
            import torch

            view = self.env.unwrapped.sim.data.xfrc_applied
            view[self.env_idx] = torch.as_tensor(force, dtype=view.dtype, device=view.device)
        self._pushing = pushing

    def is_running(self) -> bool:
        """False before `setup` and once the window was closed."""
        return self._native is not None and self._native.running

    def close(self) -> None:
        """Close the window (idempotent)."""
        native, self._native = self._native, None
        if native is not None and native.handle.is_running():
            native.close()
        self.log("[INFO] MuJoCo viewer closed")

    def request_stop(self) -> None:
        super().request_stop()
        if self._native is not None:
            self._native.request_stop()

    # -- controls -------------------------------------------------------------------------------
    def _on_key(self, key: int) -> None:
        """The window's key callback (its thread): queue the key's action, then call the
        user's callback."""
        action = KEYS.get(key)
        if action is not None:
            self.request_action(action)
        if self.user_key_callback is not None:
            try:
                self.user_key_callback(key)
            except Exception as error:  # an exception would end the window's thread
                self.log(f"[WARN] key_callback raised {type(error).__name__}: {error}")

    def _handle_custom_action(self, action: ViewerAction, payload: Any) -> bool:
        if action in (ViewerAction.PREV_ENV, ViewerAction.NEXT_ENV):
            step = 1 if action is ViewerAction.NEXT_ENV else -1
            if self._pushing:  # the push ends with the world it was applied to
                self.env.unwrapped.sim.data.xfrc_applied[self.env_idx] = 0.0
                self._pushing = False
            self.env_idx = (self.env_idx + step) % int(self.env.num_envs)
            self.log(f"[INFO] Watching env {self.env_idx}")
            return True
        return False

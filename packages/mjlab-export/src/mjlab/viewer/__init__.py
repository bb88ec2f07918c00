"""Watch one world of a MuJoCo simulation live: `WebViewer` serves it to a browser with viser
(headless machines: forward the port), `NativeViewer` opens MuJoCo's own window where a display
exists. `play --viewer web|native` and `deploy sim2sim --viewer web|native` use them; both need
`mjlab-export[viewer]` (viser, mujoco).

mjlab 1.6's env viewers are built on them: `BaseViewer` (the loop that steps an env with a
policy: pause, single step, speed, reset), `ViserPlayViewer` (over `WebViewer`),
`NativeMujocoViewer` (over `NativeViewer`), `OffscreenRenderer` (headless frames of an env's
worlds) and their `ViewerConfig`."""

import contextlib
import signal
import threading

from mjlab.viewer.base import BaseViewer, EnvProtocol, PolicyProtocol, VerbosityLevel
from mjlab.viewer.config import ViewerConfig
from mjlab.viewer.native_play import NativeMujocoViewer
from mjlab.viewer.offscreen import OffscreenRenderer
from mjlab.viewer.viser_play import ViserPlayViewer
from mjlab.viewer.web import DEFAULT_HOST, DEFAULT_PORT, CommandSlider, WebViewer

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "BaseViewer",
    "CommandSlider",
    "EnvProtocol",
    "NativeMujocoViewer",
    "OffscreenRenderer",
    "PolicyProtocol",
    "VerbosityLevel",
    "ViewerConfig",
    "ViserPlayViewer",
    "WebViewer",
    "open_viewer",
    "stop_on_interrupt",
]


@contextlib.contextmanager
def stop_on_interrupt(viewer):
    """While inside, Ctrl-C (SIGINT) ends `viewer`'s loop (`viewer.request_stop()`) instead of
    raising KeyboardInterrupt, and further SIGINTs are ignored: `uv run` forwards the signal
    that the terminal also sends, and the second one must not cut the summary short. Yields a
    list that holds True once it happened. Main thread only (elsewhere it changes nothing)."""
    interrupted: list[bool] = []

    def handler(signum, frame) -> None:
        interrupted.append(True)
        viewer.request_stop()
        # Ignored from now on, at the OS level, so that the twin cannot kill the process while
        # it writes its summary or exits (Python restores SIG_DFL for its own handlers then).
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield interrupted
    finally:
        if not interrupted:  # after a Ctrl-C, a forwarded twin may still be on its way
            signal.signal(signal.SIGINT, previous)


def open_viewer(
    kind: str,
    model,
    *,
    step_dt: float,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    **web_options,
):
    """A `WebViewer` (kind "web") or `NativeViewer` ("native") of `model`; prints where to look.

    Args:
        kind: "web" or "native".
        model: the compiled `mujoco.MjModel` to draw.
        step_dt: the control period, s.
        host: where the web viewer listens (127.0.0.1 by default).
        port: its port (8080 by default).
        web_options: further `WebViewer` arguments (num_envs, commands, reward_terms, ...).

    Raises:
        ValueError: an unknown kind.
        mjlab.viewer.native.NoDisplayError: "native" without a display.
        ImportError: viser is missing for "web" (pip install 'mjlab-export[viewer]').
    """
    if kind == "web":
        viewer = WebViewer(model, step_dt=step_dt, host=host, port=port, **web_options)
        print(
            f"[mjlab] web viewer: {viewer.url}  (listening on {viewer.host}:{viewer.port}; "
            f"remote machine: ssh -L {viewer.port}:127.0.0.1:{viewer.port} HOST, then open "
            f"http://127.0.0.1:{viewer.port} on your computer; Ctrl-C stops)",
            flush=True,
        )
        return viewer
    if kind == "native":
        from mjlab.viewer.native import NativeViewer

        return NativeViewer(model, step_dt=step_dt)
    raise ValueError(f"Unknown viewer {kind!r}; choose web or native.")

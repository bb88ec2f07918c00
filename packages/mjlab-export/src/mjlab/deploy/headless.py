"""MuJoCo's OpenGL backend for rendering without a display, chosen before mujoco is imported.

MuJoCo's Python bindings read `MUJOCO_GL` once, when `mujoco` is first imported: `egl` (a GPU
driver or Mesa), `osmesa` (software) or, unset, GLFW, which needs a display. A command that
renders (`play --video`, `deploy sim2sim --video`) calls `choose_gl_backend()` first, so that it
renders headless with nothing set. Code that needs a context after mujoco is imported (the
camera sensor, the offscreen renderer) calls `gl_context()`, which picks a context class from
the same `BACKENDS` itself. Standard library only at import (`gl_context` imports mujoco).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence

BACKENDS = ("egl", "osmesa")
"""Headless backends in the order they are tried."""

INSTALL = "EGL (libegl1 with a GPU driver or Mesa) or OSMesa (libosmesa6)"
"""What a machine without a display needs installed for MuJoCo to render."""

AFTER_IMPORT_FIX = (
    f"Headless: install {INSTALL}, or set MUJOCO_GL=egl/osmesa before mujoco is imported; "
    "with a display, MUJOCO_GL=glfw."
)
"""The fix when no context could be made in a process where mujoco is already imported."""

_PROBE = (
    "import mujoco; c = mujoco.GLContext(16, 16); c.make_current(); "
    "m = mujoco.MjModel.from_xml_string('<mujoco/>'); "
    "mujoco.MjrContext(m, mujoco.mjtFontScale.mjFONTSCALE_100); c.free()"
)


class HeadlessGLError(RuntimeError):
    """No OpenGL backend that MuJoCo can render with here; the message says what to install."""


def display_missing() -> bool:
    """Whether this is Linux without a window system (neither DISPLAY nor WAYLAND_DISPLAY set),
    where GLFW cannot make a context and only `BACKENDS` can."""
    return sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    )


def no_context_message(what: str, errors: Sequence[str]) -> str:
    """The error text for "no OpenGL context": `what (error; error). <AFTER_IMPORT_FIX>`.

    Args:
        what: the failure, e.g. "No OpenGL context for the camera sensor".
        errors: one "backend: first line of its error" per backend tried.
    """
    return f"{what} ({'; '.join(errors)}). {AFTER_IMPORT_FIX}"


def _works(backend: str) -> tuple[bool, str]:
    """Whether a fresh Python can make a MuJoCo rendering context with `backend`, and the last
    line of its error output if not."""
    env = {**os.environ, "MUJOCO_GL": backend, "PYOPENGL_PLATFORM": backend}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return False, str(error)
    lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
    return done.returncode == 0, lines[-1] if lines else f"exit status {done.returncode}"


def choose_gl_backend() -> str:
    """Set `MUJOCO_GL` (and `PYOPENGL_PLATFORM`) to the first headless backend that renders
    here, EGL then OSMesa, unless `MUJOCO_GL` is set already (the user's choice is kept).

    Call it before `mujoco` is first imported; each candidate is tried in a short-lived
    subprocess (a few seconds), since a process cannot switch backends once mujoco is loaded.

    Returns:
        The backend in effect (`MUJOCO_GL`'s value).

    Raises:
        HeadlessGLError: neither backend works (the message names both errors and the fix), or
            mujoco was already imported without `MUJOCO_GL` (so GLFW was chosen).
    """
    chosen = os.environ.get("MUJOCO_GL")
    if chosen:
        return chosen
    if "mujoco" in sys.modules:
        raise HeadlessGLError(
            "mujoco was imported before a headless OpenGL backend was chosen: set MUJOCO_GL=egl "
            "(or osmesa) in the environment, or call "
            "mjlab.deploy.headless.choose_gl_backend() before importing mujoco."
        )
    errors = []
    for backend in BACKENDS:
        ok, error = _works(backend)
        if ok:
            os.environ["MUJOCO_GL"] = backend
            os.environ["PYOPENGL_PLATFORM"] = backend  # as probed (mujoco's import needs both)
            return backend
        errors.append(f"{backend}: {error}")
    raise HeadlessGLError(
        "No headless OpenGL for MuJoCo's renderer ("
        + "; ".join(errors)
        + f"). Install {INSTALL}, or on a machine with a display set MUJOCO_GL=glfw."
    )


def renderer_error(error: Exception) -> Exception:
    """`error` from creating a `mujoco.Renderer`, turned into a HeadlessGLError with the fix
    when it is MuJoCo's "no OpenGL context" failure; other errors are returned unchanged."""
    text = str(error)
    if "OpenGL" in text or "GLFW" in text or "gladLoadGL" in text or "EGL" in text:
        return HeadlessGLError(
            f"MuJoCo could not render ({text.strip().splitlines()[0]}). On a machine without a "
            "display set MUJOCO_GL=egl (or osmesa) before mujoco is imported; the commands "
            "that render choose one themselves (mjlab.deploy.headless.choose_gl_backend)."
        )
    return error


def gl_context(width: int, height: int, what: str = "No OpenGL context for MuJoCo's renderer"):
    """A current MuJoCo GL context (`mujoco.GLContext`) of at least `width` x `height` pixels,
    made in a process where mujoco may already be imported.

    `MUJOCO_GL` set: MuJoCo's choice from it (`mujoco.gl_context`). Unset on Linux without a
    display (`display_missing`): `BACKENDS` in order, EGL then OSMesa, each context class
    picked directly (`choose_gl_backend` can only choose before mujoco is imported). Otherwise
    GLFW (a window system).

    Args:
        width, height: the smallest framebuffer the caller needs, pixels.
        what: the start of the error message, naming the caller.

    Raises:
        HeadlessGLError: no backend could make a context; the message
            (`no_context_message(what, ...)`) names each backend's error and the fix.
    """
    if os.environ.get("MUJOCO_GL") or not display_missing():
        from mujoco import gl_context as chosen

        candidates = [(os.environ.get("MUJOCO_GL") or "glfw", lambda: chosen.GLContext)]
    else:
        candidates = [(name, _context_class(name)) for name in BACKENDS]
    errors = []
    for name, get_class in candidates:
        try:
            context = get_class()(width, height)
            context.make_current()
            return context
        except Exception as error:  # each backend fails in its own way; all are reported
            lines = str(error).strip().splitlines()
            errors.append(f"{name}: {lines[0] if lines else type(error).__name__}")
    raise HeadlessGLError(no_context_message(what, errors))


def _context_class(name: str):
    def get():
        if name == "egl":
            from mujoco.egl import GLContext
        else:
            from mujoco.osmesa import GLContext
        return GLContext

    return get

"""Camera images of C MuJoCo worlds with MuJoCo's OpenGL renderer (mjv_updateScene, mjr_render).

One offscreen GL context per camera sensor. The worlds are drawn as tiles of one framebuffer and
read back with one `mjr_readPixels` per chunk of tiles (RGB and depth in the same read). Each
world's drawing state comes from the batch without allocation: `Simulation.get_data(i, data)`
copies that world's persistent MjData into one host MjData (including its camera pose, so
per-world `cam_pos`/`cam_quat` are honoured) and `Simulation.get_model(i, model)` writes its
per-world model fields (geom_rgba, geom_size, cam_fovy, ...) into one host model. Both copies
are small next to the drawing itself (docs/results.md, "What image tasks cost").
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from mjlab.deploy import headless
from mjlab.deploy.headless import HeadlessGLError

if TYPE_CHECKING:
    import torch

MAX_FRAMEBUFFER_SIDE = 2048
"""Largest side of the tiled framebuffer, pixels (below every GL's GL_MAX_RENDERBUFFER_SIZE)."""


class CameraRenderError(HeadlessGLError):
    """No OpenGL context that MuJoCo can render with here; the message says what to do (a
    `mjlab.deploy.headless.HeadlessGLError`, a RuntimeError)."""


def gl_context(width: int, height: int):
    """A current MuJoCo GL context of at least `width` x `height` for the camera sensor:
    `mjlab.deploy.headless.gl_context` (MuJoCo's choice when `MUJOCO_GL` is set; EGL, then
    OSMesa, on Linux without a display; GLFW otherwise), which works after mujoco is imported.

    Raises:
        CameraRenderError: no backend could make a context (the message names each error and
            suggests the MuJoCo Warp backend, whose camera renderer needs no OpenGL).
    """
    try:
        return headless.gl_context(width, height, "No OpenGL context for the camera sensor")
    except HeadlessGLError as error:
        raise CameraRenderError(
            f"{error} Or use the MuJoCo Warp backend, whose camera renderer needs no OpenGL."
        ) from error


class OpenGlCameraRenderer:
    """Renders one camera of every world of a C MuJoCo simulation.

    Args:
        sim: the `Simulation` (backend "mujoco").
        camera_id: the camera's id in `sim.mj_model`.
        width, height: image size, pixels.
        geom_groups: geom groups drawn.

    What is drawn: geoms of `geom_groups` with their materials and textures, lit by the
    model's lights and headlight, without shadows, reflections, skybox (background black),
    sites, or multisampling, so that images match MuJoCo Warp's ray tracer as far as a
    rasterizer can.
    """

    def __init__(self, sim, camera_id: int, width: int, height: int, geom_groups):
        self.sim = sim
        self.camera_id = camera_id
        self.width, self.height = width, height
        n = sim.num_envs
        self.cols = max(1, min(n, MAX_FRAMEBUFFER_SIDE // width))
        self.rows = max(1, min(-(-n // self.cols), MAX_FRAMEBUFFER_SIDE // height))
        model = copy.copy(sim.mj_model)
        model.vis.global_.offwidth = max(model.vis.global_.offwidth, self.cols * width)
        model.vis.global_.offheight = max(model.vis.global_.offheight, self.rows * height)
        model.vis.quality.offsamples = 0
        self.model = model
        self.data = mujoco.MjData(model)
        self.context = gl_context(self.cols * width, self.rows * height)
        self.mjr = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_150)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self.mjr)
        self.scene = mujoco.MjvScene(model, maxgeom=max(1000, 2 * model.ngeom))
        for flag in ("mjRND_SHADOW", "mjRND_REFLECTION", "mjRND_SKYBOX"):
            self.scene.flags[getattr(mujoco.mjtRndFlag, flag)] = 0
        self.option = mujoco.MjvOption()
        self.option.sitegroup[:] = 0
        self.option.geomgroup[:] = 0
        for group in geom_groups:
            self.option.geomgroup[group] = 1
        self.camera = mujoco.MjvCamera()
        self.camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self.camera.fixedcamid = camera_id
        self._rgb = np.zeros((self.rows * height, self.cols * width, 3), np.uint8)
        self._depth = np.zeros((self.rows * height, self.cols * width), np.float32)
        # MuJoCo's depth buffer holds 1/z mapped to [0, 1] between the clip planes; inverted as
        # mujoco.Renderer does (renderer.py).
        extent = model.stat.extent
        self._near = float(model.vis.map.znear * extent)
        self._far = float(model.vis.map.zfar * extent)

    def render(
        self, env_ids: np.ndarray, rgb: torch.Tensor | None, depth: torch.Tensor | None
    ) -> None:
        """Render the worlds `env_ids` into rows `env_ids` of `rgb` (num_envs, H, W, 3) uint8
        and `depth` (num_envs, H, W) float32 z-depth, m (inf where nothing was drawn); None
        skips one.
        """
        self.context.make_current()  # another renderer may have made its own current
        w, h, per_chunk = self.width, self.height, self.cols * self.rows
        rgb_np = None if rgb is None else rgb.numpy()
        depth_np = None if depth is None else depth.numpy()
        for start in range(0, len(env_ids), per_chunk):
            chunk = env_ids[start : start + per_chunk]
            for k, env_id in enumerate(chunk):
                self.sim.get_model(int(env_id), self.model)
                self.sim.get_data(int(env_id), self.data)
                mujoco.mjv_updateScene(
                    self.model,
                    self.data,
                    self.option,
                    None,
                    self.camera,
                    mujoco.mjtCatBit.mjCAT_ALL,
                    self.scene,
                )
                row, col = divmod(k, self.cols)
                viewport = mujoco.MjrRect(col * w, (self.rows - 1 - row) * h, w, h)
                mujoco.mjr_render(viewport, self.scene, self.mjr)
            rows_used = -(-len(chunk) // self.cols)
            # Read only the rows of tiles drawn (GL rows count from the bottom).
            bottom = (self.rows - rows_used) * h
            rect = mujoco.MjrRect(0, bottom, self.cols * w, rows_used * h)
            rgb_buf = self._rgb[: rows_used * h]
            depth_buf = self._depth[: rows_used * h]
            mujoco.mjr_readPixels(
                rgb_buf if rgb is not None else None,
                depth_buf,  # always read: cheap, and some drivers want a depth target
                rect,
                self.mjr,
            )
            for k, env_id in enumerate(chunk):
                row, col = divmod(k, self.cols)
                # Flip: the buffer's first row is the bottom of the image.
                top = (rows_used - 1 - row) * h
                tile = (slice(top, top + h), slice(col * w, (col + 1) * w))
                if rgb_np is not None:
                    rgb_np[env_id] = rgb_buf[tile][::-1]
                if depth_np is not None:
                    z = depth_buf[tile][::-1]
                    near, far = self._near, self._far
                    with np.errstate(divide="ignore"):
                        linear = near / (1.0 - z * (1.0 - near / far))
                    depth_np[env_id] = np.where(z < 1.0, linear, np.inf)  # 1: nothing drawn

    def close(self) -> None:
        """Free the GL resources."""
        if self.context is not None:
            self.mjr.free()
            self.context.free()
            self.context = None

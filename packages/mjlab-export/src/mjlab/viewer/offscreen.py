"""`OffscreenRenderer`: RGB frames of an env's worlds with MuJoCo's OpenGL renderer, without a
window (videos, thumbnails), as a `ViewerConfig` frames them.

Headless machines need nothing set: the OpenGL context comes from
`mjlab.deploy.headless.gl_context`, which takes EGL, then OSMesa, when there is no display and
`MUJOCO_GL` is unset (it works after mujoco was imported, unlike
`mjlab.deploy.headless.choose_gl_backend`), and MuJoCo's own choice otherwise.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any

import mujoco
import numpy as np

from mjlab.deploy.headless import gl_context
from mjlab.viewer.config import ViewerConfig, track_body

MIN_RENDER_EXTENT = 4.0
"""Smallest `stat.extent` the renderer's model copy gets, m (see `_render_extent`)."""


def _render_extent(distance: float) -> float:
    """The extent the renderer's copy of the model uses. MuJoCo scales the clip planes and the
    shadow map's reach by `stat.extent`; a terrain of many worlds makes it hundreds of metres
    and the shadows of a robot a few metres away blur. What a frame shows is set by the
    camera distance, so the extent follows that instead."""
    return max(MIN_RENDER_EXTENT, 2.0 * float(distance))


def host_array(array: Any) -> np.ndarray:
    """A torch tensor (any device) or array as a numpy array."""
    detach = getattr(array, "detach", None)
    if detach is not None:
        return detach().cpu().numpy()
    return np.asarray(array)


class OffscreenRenderer:
    """Renders world `cfg.env_idx` of a batched simulation, plus up to `cfg.max_extra_envs`
    neighbouring worlds (nearest env origins), into (height, width, 3) uint8 frames.

    Usage::

        renderer = OffscreenRenderer(env.sim.mj_model, cfg, env.scene)
        renderer.initialize()
        renderer.update(env.sim.data)
        frame = renderer.render()
        renderer.close()

    Args:
        model: the compiled model of one world (`sim.mj_model`); the renderer works on its own
            copy (render settings never reach the simulation).
        cfg: size, camera and what is drawn (validated here).
        scene: the env's `Scene`: `entities` (for ASSET_ROOT / ASSET_BODY cameras),
            `env_origins` (which worlds are neighbours) and `num_envs`.
        sim_model: a source of per-world model values (randomized colours, sizes, masses):
            the `Simulation`, whose `get_model(env_id, model)` writes world env_id's values;
            None: every world is drawn with `model`'s.
        expanded_fields: with `sim_model`, the only fields taken from it (e.g.
            {"geom_rgba"}); None: all of its per-world fields.

    Raises:
        ValueError: an invalid `cfg` (naming the field), or a camera origin that does not
            resolve in `scene` (unknown entity or body).
    """

    def __init__(
        self,
        model: mujoco.MjModel,
        cfg: ViewerConfig,
        scene: Any,
        sim_model: Any | None = None,
        expanded_fields: Iterable[str] | None = None,
    ) -> None:
        cfg.validate()
        self._cfg = cfg
        self._scene = scene
        self._sim_model = sim_model
        self._expanded_fields = None if expanded_fields is None else sorted(expanded_fields)
        self._model = copy.copy(model)
        self._model.vis.global_.offwidth = max(int(model.vis.global_.offwidth), cfg.width)
        self._model.vis.global_.offheight = max(int(model.vis.global_.offheight), cfg.height)
        self._apply_view_settings()
        self._source = None if expanded_fields is None else copy.copy(model)
        self._data = mujoco.MjData(self._model)

        self._option = mujoco.MjvOption()
        self._option.geomgroup[:] = np.asarray(cfg.geom_group, dtype=np.uint8)
        self._option.sitegroup[:] = np.asarray(cfg.site_group, dtype=np.uint8)
        self._perturb = mujoco.MjvPerturb()
        self._camera = mujoco.MjvCamera()
        mujoco.mjv_defaultFreeCamera(self._model, self._camera)
        body = track_body(cfg, model, getattr(scene, "entities", None))
        if body is None:
            self._camera.type = mujoco.mjtCamera.mjCAMERA_FREE
            self._camera.trackbodyid = -1
            self._camera.lookat[:] = cfg.lookat
        else:
            self._camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
            self._camera.trackbodyid = body
        self._camera.distance = cfg.distance
        self._camera.elevation = cfg.elevation
        self._camera.azimuth = cfg.azimuth
        self.tracked_body: int | None = body
        """The body id the camera follows, None for a free camera."""
        self._env_ids: tuple[int, ...] | None = None

        self._context: Any = None  # a GLContext of MuJoCo's (egl, osmesa or glfw)
        self._mjr: mujoco.MjrContext | None = None
        # Room for the extra worlds' geoms, which are added to the primary world's scene.
        maxgeom = max(10000, (2 + cfg.max_extra_envs) * (model.ngeom + model.nsite))
        self._mjv_scene = mujoco.MjvScene(self._model, maxgeom=maxgeom)
        self._mjv_scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = int(cfg.enable_shadows)
        self._mjv_scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = int(cfg.enable_reflections)
        self._rect = mujoco.MjrRect(0, 0, cfg.width, cfg.height)
        self._pixels = np.zeros((cfg.height, cfg.width, 3), dtype=np.uint8)

    def _apply_view_settings(self) -> None:
        """The render-only values of the model copy (again after per-world values were
        written into it, which may overwrite them)."""
        self._model.stat.extent = _render_extent(self._cfg.distance)
        if self._cfg.fovy is not None:
            self._model.vis.global_.fovy = self._cfg.fovy

    @property
    def scene(self) -> mujoco.MjvScene:
        """The `MjvScene` drawn by `render` (after `update`, a debug callback may add geoms)."""
        return self._mjv_scene

    @property
    def env_ids(self) -> tuple[int, ...] | None:
        """The worlds drawn, the followed one first (fixed at the first `update`)."""
        return self._env_ids

    def initialize(self) -> None:
        """Make the OpenGL context and MuJoCo's render context.

        Raises:
            RuntimeError: already initialized (`close` first).
            mjlab.deploy.headless.HeadlessGLError: no OpenGL backend works here (the message
                names each backend's error and what to install).
        """
        if self._mjr is not None:
            raise RuntimeError("OffscreenRenderer is already initialized; close() it first.")
        self._context = gl_context(
            self._cfg.width, self._cfg.height, "The offscreen renderer found no OpenGL context"
        )
        self._mjr = mujoco.MjrContext(self._model, mujoco.mjtFontScale.mjFONTSCALE_150)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._mjr)

    def update(
        self,
        data: Any,
        debug_vis_callback: Callable[[mujoco.MjvScene], None] | None = None,
        camera: str | int | None = None,
    ) -> None:
        """Build the scene from the worlds' current state.

        Args:
            data: the batched state, `sim.data`: `qpos`, `qvel` (and `mocap_pos`,
                `mocap_quat` when the model has mocap bodies), each (num_envs, ...), torch
                tensors on any device or arrays.
            debug_vis_callback: called with the `MjvScene` once the followed world is in it,
                to add markers (`mujoco.mjv_initGeom` into `scene.geoms[scene.ngeom]`).
            camera: a camera of the model (name or id) to render from instead of the
                config's.

        Raises:
            RuntimeError: not initialized.
            ValueError: no camera `camera` in the model.
        """
        self._require_initialized()
        if self._env_ids is None:
            worlds = int(data.qpos.shape[0]) if self._model.nq else int(self._scene.num_envs)
            self._env_ids = self._choose_envs(worlds)
        view = self._camera if camera is None else self._model_camera(camera)
        first, *others = self._env_ids
        self._load_world(data, first)
        mujoco.mjv_updateScene(
            self._model,
            self._data,
            self._option,
            self._perturb,
            view,
            mujoco.mjtCatBit.mjCAT_ALL,
            self._mjv_scene,
        )
        if debug_vis_callback is not None:
            debug_vis_callback(self._mjv_scene)
        for env_id in others:
            self._load_world(data, env_id)
            mujoco.mjv_addGeoms(
                self._model,
                self._data,
                self._option,
                self._perturb,
                mujoco.mjtCatBit.mjCAT_DYNAMIC,
                self._mjv_scene,
            )

    def render(self) -> np.ndarray:
        """The frame of the last `update`: (height, width, 3) uint8, a new array.

        Raises:
            RuntimeError: not initialized.
        """
        self._require_initialized()
        self._context.make_current()  # another renderer may have made its own current
        mujoco.mjr_render(self._rect, self._mjv_scene, self._mjr)
        mujoco.mjr_readPixels(self._pixels, None, self._rect, self._mjr)
        return np.flipud(self._pixels).copy()  # OpenGL's first row is the bottom one

    def close(self) -> None:
        """Free the OpenGL resources (idempotent; `initialize` may be called again)."""
        if self._mjr is not None:
            self._context.make_current()
            self._mjr.free()
            self._mjr = None
        if self._context is not None:
            self._context.free()
            self._context = None

    def __enter__(self) -> OffscreenRenderer:
        self.initialize()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- helpers --------------------------------------------------------------------------------
    def _require_initialized(self) -> None:
        if self._mjr is None:
            raise RuntimeError("OffscreenRenderer is not initialized; call initialize() first.")

    def _choose_envs(self, worlds: int) -> tuple[int, ...]:
        """`cfg.env_idx` (clipped to the worlds there are), then its `cfg.max_extra_envs`
        nearest worlds by env origin. Chosen once: a curriculum that moves origins would
        otherwise swap the neighbours in and out of a video."""
        primary = min(self._cfg.env_idx, worlds - 1)
        extra = min(self._cfg.max_extra_envs, worlds - 1)
        if extra <= 0:
            return (primary,)
        origins = getattr(self._scene, "env_origins", None)
        if origins is None:
            others = [i for i in range(worlds) if i != primary]
            return (primary, *others[:extra])
        origins = host_array(origins).reshape(worlds, -1).astype(np.float64)
        squared = np.sum((origins - origins[primary]) ** 2, axis=1)
        squared[primary] = np.inf
        nearest = np.argsort(squared, kind="stable")[:extra]
        return (primary, *(int(i) for i in nearest))

    def _model_camera(self, camera: str | int) -> mujoco.MjvCamera:
        index = camera
        if isinstance(camera, str):
            index = mujoco.mj_name2id(self._model, mujoco.mjtObj.mjOBJ_CAMERA, camera)
        if not isinstance(index, (int, np.integer)) or not 0 <= index < self._model.ncam:
            names = [self._model.camera(i).name for i in range(self._model.ncam)]
            raise ValueError(
                f"No camera {camera!r} in the model; its cameras: {', '.join(names) or 'none'}."
            )
        view = mujoco.MjvCamera()
        view.type = mujoco.mjtCamera.mjCAMERA_FIXED
        view.fixedcamid = int(index)
        return view

    def _load_world(self, data: Any, env_id: int) -> None:
        """World `env_id`'s model values (with `sim_model`) and state into the render copies,
        then its kinematics."""
        if self._sim_model is not None:
            if self._expanded_fields is None:
                self._sim_model.get_model(env_id, self._model)
                self._apply_view_settings()
            else:
                source = self._sim_model.get_model(env_id, self._source)
                for name in self._expanded_fields:
                    getattr(self._model, name)[...] = getattr(source, name)
        if self._model.nq:
            self._data.qpos[:] = host_array(data.qpos[env_id])
            self._data.qvel[:] = host_array(data.qvel[env_id])
        if self._model.nmocap:
            self._data.mocap_pos[:] = host_array(data.mocap_pos[env_id])
            self._data.mocap_quat[:] = host_array(data.mocap_quat[env_id])
        mujoco.mj_forward(self._model, self._data)

"""Camera sensor: RGB and depth images of one camera in every world.

Backends (chosen by the simulation's):

- C MuJoCo: MuJoCo's OpenGL renderer (`OpenGlCameraRenderer`), world by world, on an offscreen
  context. Headless (no display, `MUJOCO_GL` unset) it picks EGL, then OSMesa, itself.
- MuJoCo Warp: mujoco_warp's batch ray tracer (`WarpCameraRenderer`), all worlds in one launch,
  on CUDA or on Warp's CPU device.

What each costs per env and frame: `bench/camera_throughput.py` and docs/results.md (on a
CPU without a GPU the ray tracer on Warp's CPU device is the faster of the two; on a GPU it
renders all worlds in one launch and the images stay on the device).

The two agree on depth to float32 precision (mean |diff| 3e-6 m on the Panda lift scene); RGB
differs in
shading (per-vertex OpenGL lighting against per-pixel ray tracing; the textured floor most):
docs/results/camera_backends.png.

Domain randomization of the camera pose: a world's camera pose is the model's `cam_pos` /
`cam_quat` (relative to the parent body) in that world, so give them per-world values and the
next `sim.forward()` / step moves the camera in that world only, on both backends:

    cam = env.scene["wrist_cam"].camera_id
    pos = env.sim.expand_model_field("cam_pos")      # (num_envs, ncam, 3), live
    pos[env_ids, cam] += noise                       # then sim.forward(env_ids) or step
    quat = env.sim.expand_model_field("cam_quat")    # (num_envs, ncam, 4) wxyz

Per-world `geom_rgba`, `geom_size`, `mat_rgba` are honoured too; a per-world `cam_fovy` only on C
MuJoCo (MuJoCo Warp's rays are precomputed from the compiled model).

mjlab 1.6's interface: `CameraSensor.data` returns a `CameraSensorData` (rgb (B, H, W, 3) uint8,
depth (B, H, W, 1) float32, segmentation None: no renderer here produces it yet), and
`CameraSensorCfg` takes `use_textures`, `use_shadows`, `orthographic`, `clone_data`. Unlike
mjlab, where every camera of a scene shares one MuJoCo Warp render context (so all must agree on
textures, shadows and geom groups), each camera sensor here has its own renderer, and the
settings may differ between cameras. Both renderers draw textures and no shadows, mjlab's
defaults, which are the only values of `use_textures` / `use_shadows` accepted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mujoco
import numpy as np
import torch

from mjlab.sensor.sensor_base import Sensor, SensorCfg
from mjlab.utils.env_ids import resolve_env_ids

DATA_TYPES = ("rgb", "depth")
"""Images a camera sensor can produce. (mjlab 1.6 also names "segmentation", which neither
renderer here produces.)"""


@dataclass(kw_only=True)
class CameraSensorCfg(SensorCfg):
    """A camera rendering RGB and/or depth images of every world.

    Either an existing MJCF camera (`camera_name`) or one the sensor adds to the scene, named
    after the sensor, at `pos`/`quat` (or looking at `lookat`) in `parent_body`'s frame.
    """

    camera_name: str | None = None
    """An existing camera by its full scene name, e.g. "robot/wrist_cam"; None: the sensor adds
    a camera named after the sensor (and `parent_body`, `pos`, `quat`, `lookat`, `fovy` place
    it)."""
    parent_body: str | None = None
    """Added camera: full scene name of the body it is attached to, e.g. "robot/hand"; None:
    the world body."""
    pos: tuple[float, float, float] = (0.0, 0.0, 1.0)
    """Added camera: position in the parent frame, m."""
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    """Added camera: orientation in the parent frame, wxyz. MuJoCo cameras look along their
    -z axis with +y up, so the identity looks straight down (-z) with image up = +y."""
    lookat: tuple[float, float, float] | None = None
    """Added camera: a point (parent frame, m) to look at, with world +z up in the image (image
    up = +y when looking straight down); overrides `quat`."""
    fovy: float = 45.0
    """Added camera: vertical field of view, degrees; with `orthographic`, the height of the
    view, m."""
    width: int = 64
    """Image width, pixels."""
    height: int = 64
    """Image height, pixels."""
    data_types: tuple[str, ...] = ("rgb",)
    """Images to render: any of "rgb", "depth"."""
    update_period: int = 1
    """Render every k-th env step; images are held in between (envs that reset are rendered
    again at the next read)."""
    max_depth: float = 10.0
    """Depth beyond this (and pixels that hit nothing) reads as this, m."""
    enabled_geom_groups: tuple[int, ...] = (0, 1, 2)
    """Geom groups the camera sees (0-5). Menagerie models put visual meshes in group 2 and
    collision geoms in group 3."""
    use_textures: bool = True
    """Draw the materials' textures (mjlab 1.6). Both renderers here always do: only True is
    accepted."""
    use_shadows: bool = False
    """Draw shadows (mjlab 1.6). Neither renderer here does: only False is accepted."""
    orthographic: bool = False
    """Orthographic projection (parallel rays, no perspective): the camera's fovy is then the
    height of the view in m (MuJoCo's reading), and depth is the distance along the camera
    axis, as in perspective. Sets the projection of the added camera (whose fovy is `fovy`),
    or of the MJCF camera `camera_name` (whose own fovy is kept, now read in m)."""
    clone_data: bool = False
    """Every read (`data`, `rgb`, `depth`) returns a new copy of the images instead of the
    sensor's own buffers; set it when the images are modified in place."""

    def __post_init__(self) -> None:
        super().__post_init__()
        name = type(self).__name__
        for field_name in ("width", "height", "update_period"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}.{field_name} must be an integer >= 1, got {value!r}.")
        if isinstance(self.data_types, str):
            raise ValueError(
                f"{name}.data_types must be a tuple, got the string {self.data_types!r}; "
                f"write ({self.data_types!r},)."
            )
        if "segmentation" in self.data_types:
            raise ValueError(
                f"{name}.data_types: 'segmentation' (mjlab 1.6) is not rendered by this "
                f"library's camera renderers; ask for {DATA_TYPES} only."
            )
        bad = [t for t in self.data_types if t not in DATA_TYPES]
        if bad or not self.data_types or len(set(self.data_types)) != len(self.data_types):
            raise ValueError(
                f"{name}.data_types must be a non-empty tuple of distinct values from "
                f"{DATA_TYPES}, got {tuple(self.data_types)!r}."
            )
        if not self.max_depth > 0:
            raise ValueError(f"{name}.max_depth must be > 0 m, got {self.max_depth!r}.")
        for field_name in ("use_textures", "use_shadows", "orthographic", "clone_data"):
            if not isinstance(getattr(self, field_name), bool):
                raise ValueError(
                    f"{name}.{field_name} must be True or False, got {getattr(self, field_name)!r}."
                )
        for field_name, supported in (("use_textures", True), ("use_shadows", False)):
            if getattr(self, field_name) != supported:
                raise ValueError(
                    f"{name}.{field_name}={not supported} is not supported: the camera "
                    f"renderers here (OpenGL on C MuJoCo, the MuJoCo Warp ray tracer) always "
                    f"draw textures and never shadows; leave {field_name}={supported}."
                )
        if self.orthographic:
            if not (isinstance(self.fovy, (int, float)) and math.isfinite(self.fovy)) or (
                self.fovy <= 0
            ):
                raise ValueError(
                    f"{name}.fovy is the height of an orthographic view, m, and must be > 0; "
                    f"got {self.fovy!r}."
                )
        elif not 0 < self.fovy < 180:
            raise ValueError(f"{name}.fovy must be in (0, 180) degrees, got {self.fovy!r}.")
        groups = tuple(self.enabled_geom_groups)
        if not groups or any(not isinstance(g, int) or not 0 <= g <= 5 for g in groups):
            raise ValueError(
                f"{name}.enabled_geom_groups must be a non-empty tuple of geom groups 0-5, "
                f"got {groups!r}."
            )
        if len(self.pos) != 3 or len(self.quat) != 4:
            raise ValueError(f"{name}.pos needs 3 values and quat 4 (wxyz).")
        if not math.isclose(float(np.linalg.norm(self.quat)), 1.0, abs_tol=1e-3):
            raise ValueError(
                f"{name}.quat must be a unit quaternion (wxyz), got {tuple(self.quat)!r}."
            )
        if self.lookat is not None:
            if len(self.lookat) != 3:
                raise ValueError(f"{name}.lookat needs 3 values (x, y, z), got {self.lookat!r}.")
            if np.linalg.norm(np.subtract(self.lookat, self.pos)) < 1e-9:
                raise ValueError(f"{name}.lookat must differ from pos ({tuple(self.pos)!r}).")
        if self.camera_name is not None and (
            self.parent_body is not None or self.lookat is not None
        ):
            raise ValueError(
                f"{name}: parent_body and lookat place an added camera; with camera_name="
                f"'{self.camera_name}' the MJCF camera is used as it is. Set one or the other."
            )

    def build(self) -> CameraSensor:
        return CameraSensor(self)


@dataclass
class CameraSensorData:
    """A camera sensor's images (mjlab 1.6); None for an image not in `data_types`. On the
    simulation's device; the sensor's own buffers unless `CameraSensorCfg.clone_data`."""

    rgb: torch.Tensor | None = None
    """(num_envs, H, W, 3) uint8 RGB, rows top to bottom."""
    depth: torch.Tensor | None = None
    """(num_envs, H, W, 1) float32 depth along the camera axis, m, in (0, max_depth]."""
    segmentation: torch.Tensor | None = None
    """mjlab 1.6: (num_envs, H, W, 2) int32 object id and type per pixel. Not rendered here:
    always None."""


def lookat_quat(
    pos: tuple[float, float, float], target: tuple[float, float, float]
) -> tuple[float, float, float, float]:
    """wxyz orientation of a MuJoCo camera at `pos` looking at `target` (its -z axis towards
    it), image up as close to +z as possible; looking straight down, image up is +y."""
    forward = np.subtract(target, pos).astype(np.float64)
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    if np.linalg.norm(right) < 1e-6:  # straight down or up: +y (or -y) is image up
        right = np.cross(forward, [0.0, 1.0, 0.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    mat = np.stack([right, up, -forward], axis=1)  # columns: camera x, y, z in the parent frame
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, mat.reshape(-1))
    return tuple(float(q) for q in quat)


class CameraSensor(Sensor):
    """`rgb`: (num_envs, H, W, 3) uint8; `depth`: (num_envs, H, W) float32 z-depth (distance
    along the camera axis, as `mujoco.Renderer`'s depth), m, clipped to `max_depth`. Both on
    the simulation's device.

    Images are rendered when first read after an env step (every `update_period`-th) or a
    reset, so that an observation computed after a reset shows the reset state. A reset renders
    the reset envs again at the next read; the other envs keep their held images.
    """

    cfg: CameraSensorCfg
    requires_sensor_context = True
    _snapshot_exclude = ("_renderer", "sensor_context")  # GL / Warp resources, not env state

    def edit_spec(self, spec: mujoco.MjSpec, entities: dict) -> None:
        cfg = self.cfg
        ortho = mujoco.mjtProjection.mjPROJ_ORTHOGRAPHIC
        if cfg.camera_name is not None:
            camera = spec.camera(cfg.camera_name)
            if cfg.orthographic and camera is not None:  # a missing one is named in initialize
                camera.proj = ortho
            return
        parent = spec.worldbody
        if cfg.parent_body is not None:
            parent = spec.body(cfg.parent_body)
            if parent is None:
                names = [b.name for b in spec.bodies if b.name]
                raise ValueError(
                    f"CameraSensorCfg '{cfg.name}': no body '{cfg.parent_body}' to attach the "
                    f"camera to. Bodies (full scene names): {names}."
                )
        quat = cfg.quat if cfg.lookat is None else lookat_quat(cfg.pos, cfg.lookat)
        camera = parent.add_camera(
            name=cfg.name, pos=list(cfg.pos), quat=list(quat), fovy=float(cfg.fovy)
        )
        if cfg.orthographic:
            camera.proj = ortho

    def initialize(self, model, sim, scene) -> None:
        super().initialize(model, sim, scene)
        cfg = self.cfg
        name = cfg.camera_name or cfg.name
        self.camera_id: int = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, name)
        """The camera's id: its row in `cam_pos`, `cam_quat`, `cam_xpos`, ..."""
        if self.camera_id < 0:
            names = [
                mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_CAMERA, i) for i in range(model.ncam)
            ]
            raise ValueError(
                f"CameraSensorCfg '{cfg.name}': no camera '{name}' in the model. Cameras: "
                f"{names} (entity cameras are prefixed '<entity>/'), or leave camera_name "
                "None to add one."
            )
        self._orthographic = int(model.cam_projection[self.camera_id]) == int(
            mujoco.mjtProjection.mjPROJ_ORTHOGRAPHIC
        )
        n, h, w = self.num_envs, cfg.height, cfg.width
        want_rgb, want_depth = "rgb" in cfg.data_types, "depth" in cfg.data_types
        self._rgb = torch.zeros(n, h, w, 3, dtype=torch.uint8, device=self.device)
        self._depth = torch.zeros(n, h, w, dtype=torch.float32, device=self.device)
        self._stale = torch.ones(n, dtype=torch.bool, device=self.device)
        self._any_stale = True
        self._steps = 0
        if sim.backend == "warp":
            from mjlab.sensor.camera_render_warp import WarpCameraRenderer

            self._renderer = WarpCameraRenderer(
                sim, self.camera_id, w, h, cfg.enabled_geom_groups, want_rgb, want_depth
            )
        else:
            from mjlab.sensor.camera_render_opengl import OpenGlCameraRenderer

            self._renderer = OpenGlCameraRenderer(
                sim, self.camera_id, w, h, cfg.enabled_geom_groups
            )
            # MuJoCo's depth buffer maps [near, far] (m) to [0, 1]; the renderer inverts the
            # perspective mapping, an orthographic camera's is undone in `_render`.
            extent = float(model.stat.extent)
            self._near = float(model.vis.map.znear) * extent
            self._far = float(model.vis.map.zfar) * extent

    def update(self, dt: float) -> None:
        self._steps += 1
        if self._steps % self.cfg.update_period == 0:
            self._stale.fill_(True)
            self._any_stale = True

    def close(self) -> None:
        """Free the renderer (the GL context and framebuffer on C MuJoCo)."""
        renderer = getattr(self, "_renderer", None)
        if renderer is not None and hasattr(renderer, "close"):
            renderer.close()
        self._renderer = None

    def reset(self, env_ids) -> None:
        env_ids = resolve_env_ids(env_ids, self.num_envs, self.device)
        self._stale[env_ids] = True
        self._any_stale = True

    def _render(self) -> None:
        cfg = self.cfg
        want_rgb = "rgb" in cfg.data_types
        want_depth = "depth" in cfg.data_types
        if self.sim.backend == "warp":
            rgb, depth = self._renderer.render()  # every world: one launch
            mask = self._stale
            if want_rgb:
                self._rgb.copy_(torch.where(mask[:, None, None, None], rgb, self._rgb))
            if want_depth:
                self._depth.copy_(torch.where(mask[:, None, None], self._clip(depth), self._depth))
        else:
            ids = self._stale.nonzero().flatten().numpy()
            self._renderer.render(
                ids, self._rgb if want_rgb else None, self._depth if want_depth else None
            )
            if want_depth:
                depth = self._depth[ids]
                if self._orthographic:
                    depth = self._orthographic_depth(depth)
                self._depth[ids] = self._clip(depth)
        self._stale.zero_()
        self._any_stale = False

    def _orthographic_depth(self, depth: torch.Tensor) -> torch.Tensor:
        """The OpenGL renderer's depth of an orthographic camera, which it converted with the
        perspective formula `near / (1 - z (1 - near / far))`, back to the buffer value z and on
        to an orthographic camera's depth `near + z (far - near)`, m (inf stays inf)."""
        near, far = self._near, self._far
        linear = depth.double()
        z = (1.0 - near / linear) / (1.0 - near / far)
        ortho = near + z * (far - near)
        return torch.where(torch.isinf(linear), linear, ortho).float()

    def _clip(self, depth: torch.Tensor) -> torch.Tensor:
        # Misses come as 0 (Warp) or inf (OpenGL); NaN fails both tests.
        valid = (depth > 0) & (depth <= self.cfg.max_depth)
        return torch.where(valid, depth, self.cfg.max_depth)

    @property
    def rgb(self) -> torch.Tensor:
        """(num_envs, H, W, 3) uint8 RGB image, rows top to bottom. The sensor's own buffer,
        rewritten in place by the next render: `.clone()` what you keep (or set
        `clone_data`)."""
        self._require("rgb")
        if self._any_stale:
            self._render()
        return self._rgb.clone() if self.cfg.clone_data else self._rgb

    @property
    def depth(self) -> torch.Tensor:
        """(num_envs, H, W) float32 depth along the camera axis, m, in (0, max_depth]; a miss
        (nothing within max_depth) reads max_depth. The sensor's own buffer, rewritten in place
        by the next render: `.clone()` what you keep (or set `clone_data`)."""
        self._require("depth")
        if self._any_stale:
            self._render()
        return self._depth.clone() if self.cfg.clone_data else self._depth

    @property
    def data(self) -> CameraSensorData:
        """The images of `data_types` (mjlab 1.6): rgb (num_envs, H, W, 3) uint8 and depth
        (num_envs, H, W, 1) float32, m; see `rgb` and `depth` for when they are rendered."""
        types = self.cfg.data_types
        return CameraSensorData(
            rgb=self.rgb if "rgb" in types else None,
            depth=self.depth.unsqueeze(-1) if "depth" in types else None,
        )

    @property
    def camera_name(self) -> str:
        """The camera's full scene name (mjlab 1.6)."""
        return self.cfg.camera_name or self.cfg.name

    @property
    def camera_idx(self) -> int:
        """mjlab 1.6's name for `camera_id`."""
        return self.camera_id

    def _require(self, data_type: str) -> None:
        if data_type not in self.cfg.data_types:
            raise ValueError(
                f"Camera sensor '{self.name}' does not render {data_type}: its data_types are "
                f"{self.cfg.data_types}. Add '{data_type}' to CameraSensorCfg.data_types."
            )

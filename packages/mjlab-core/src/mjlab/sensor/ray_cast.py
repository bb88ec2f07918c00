"""Ray-cast sensor (mjlab 1.6 API): rays laid out by a pattern, attached to one or more frames.

A frame is a body, site or geom (`ObjRef`). Each frame carries the same pattern of rays: an
offset from the frame origin and a unit direction per ray, both given in the frame's axes
(`GridPatternCfg`, `RingPatternCfg`, `PinholeCameraPatternCfg`). `RayCastSensorCfg.ray_alignment`
picks which rotation turns them into world vectors: the frame's full rotation ("base"), its
heading only ("yaw"), or none ("world"). The rays start at the frame position plus the rotated
offset; they are cast in every env world on the simulation's own backend (C MuJoCo's batched
`mj_ray`, or MuJoCo Warp's `rays` kernel), so hits see exactly the geometry the physics sees.

Rays are ordered frame-major: ray `f * num_rays_per_frame + i` is pattern ray `i` of frame `f`.

When the rays are cast: on the first read of `RayCastSensor.data` after the physics state
changed (a `Simulation.step`, `forward`, `reset` or `set_state`), or after the sensor's own
`update` / `reset`; later reads in the same state return the same tensors. An observation read
after an env reset thus describes the reset state, and a sensor nobody reads costs nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import mujoco
import numpy as np
import torch

from mjlab.sensor.sensor_base import Sensor, SensorCfg
from mjlab.utils.config import Config
from mjlab.utils.env_ids import resolve_env_ids
from mjlab.utils.math import quat_from_matrix

RayAlignment = Literal["base", "yaw", "world"]
"""How pattern vectors are turned into world vectors (see `RayCastSensorCfg.ray_alignment`)."""

_ALIGNMENTS = ("base", "yaw", "world")
_FRAME_TYPES = ("body", "site", "geom")
_OBJ_TYPES = ("body", "xbody", "joint", "geom", "site", "actuator", "tendon", "camera")
_MJ_OBJ = {
    "body": mujoco.mjtObj.mjOBJ_BODY,
    "site": mujoco.mjtObj.mjOBJ_SITE,
    "geom": mujoco.mjtObj.mjOBJ_GEOM,
}
# MjData fields holding each frame type's world position and rotation matrix.
_POSE_FIELDS = {
    "body": ("xpos", "xmat"),
    "site": ("site_xpos", "site_xmat"),
    "geom": ("geom_xpos", "geom_xmat"),
}
_YAW_FALLBACK = 0.1
"""Below this length of the frame x axis projected on the world xy plane (the frame's x axis
is within ~6 degrees of vertical), the heading is taken from the y axis instead."""


# ----------------------------------------------------------------------------------------------
# Object references
# ----------------------------------------------------------------------------------------------
@dataclass
class ObjRef(Config):
    """A named MuJoCo object of the scene, optionally inside an entity.

    `ObjRef("site", "left_foot", entity="robot")` is the site "robot/left_foot" of the compiled
    scene (entities are attached under the prefix "<entity>/"); with `entity=None` the name is
    taken as it is (an object the scene or terrain added). Ray-cast sensors accept "body",
    "site" and "geom"; the other types exist for sensors that read joints, actuators, ...
    """

    type: Literal["body", "xbody", "joint", "geom", "site", "actuator", "tendon", "camera"]
    """Kind of MuJoCo object."""
    name: str
    """Its name inside the entity (without the "<entity>/" prefix), or in the scene."""
    entity: str | None = None
    """The entity owning it, or None for a scene-level name."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid."""
        if self.type not in _OBJ_TYPES:
            raise ValueError(f"ObjRef.type must be one of {list(_OBJ_TYPES)}, got {self.type!r}.")
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"ObjRef.name must be a non-empty string, got {self.name!r}.")
        if self.entity is not None and (not isinstance(self.entity, str) or not self.entity):
            raise ValueError(
                f"ObjRef.entity must be an entity name or None (a scene-level object), "
                f"got {self.entity!r}."
            )

    def prefixed_name(self) -> str:
        """The object's name in the compiled scene: "<entity>/<name>", or `name` alone."""
        return f"{self.entity}/{self.name}" if self.entity else self.name


# ----------------------------------------------------------------------------------------------
# Patterns
# ----------------------------------------------------------------------------------------------
def _unit_direction(direction: tuple[float, float, float], owner: str) -> torch.Tensor:
    """`direction` as a (3,) float64 unit vector; ValueError when it has no length."""
    try:
        vec = torch.tensor([float(c) for c in direction], dtype=torch.float64)
    except (TypeError, ValueError):
        vec = None
    if vec is None or vec.shape != (3,) or not bool(torch.isfinite(vec).all()):
        raise ValueError(f"{owner}.direction must be 3 finite numbers, got {direction!r}.")
    norm = float(vec.norm())
    if norm < 1e-9:
        raise ValueError(
            f"{owner}.direction {tuple(direction)!r} has zero length: give the ray direction "
            "in the frame's axes, e.g. (0.0, 0.0, -1.0) for straight down."
        )
    return vec / norm


@dataclass
class GridPatternCfg(Config):
    """Parallel rays from the points of a regular grid in the frame's xy plane.

    The grid holds the points `x = -size[0]/2 + k * resolution`, k = 0, 1, ..., for which
    `x < size[0]/2 + resolution/2` (so the far edge is included when the size is a multiple of
    the resolution), likewise for y; e.g. size (1.6, 1.0)
    at 0.1 m gives 17 x 11 = 187 rays. Rays are ordered with x varying fastest: ray
    `j * nx + i` starts at (x_i, y_j, 0). Every ray has the unit direction `direction`.
    """

    size: tuple[float, float] = (1.0, 1.0)
    """Extent of the grid along the frame's x and y axes, m (>= 0; 0 gives one row)."""
    resolution: float = 0.1
    """Spacing between neighbouring rays, m (> 0)."""
    direction: tuple[float, float, float] = (0.0, 0.0, -1.0)
    """Direction of every ray in the frame's axes (normalized here)."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid."""
        try:
            sx, sy = (float(s) for s in self.size)
            ok = math.isfinite(sx) and math.isfinite(sy) and sx >= 0 and sy >= 0
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(
                f"GridPatternCfg.size must be two finite numbers >= 0 (m, along the frame's x "
                f"and y), got {self.size!r}."
            )
        res = self.resolution
        if isinstance(res, bool) or not isinstance(res, (int, float)) or not res > 0:
            raise ValueError(
                f"GridPatternCfg.resolution must be a number > 0 (m between rays), got {res!r}."
            )
        if not math.isfinite(res):
            raise ValueError(f"GridPatternCfg.resolution must be finite, got {res!r}.")
        _unit_direction(self.direction, "GridPatternCfg")

    def generate_rays(
        self, mj_model: mujoco.MjModel | None, device: str | torch.device
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The pattern in the frame's axes.

        Args:
            mj_model: unused (the grid depends on nothing in the model).
            device: device of the result.

        Returns:
            offsets (num_rays, 3), m, and unit directions (num_rays, 3), float32.
        """
        del mj_model
        res = float(self.resolution)

        def axis(extent: float) -> torch.Tensor:
            half = float(extent) / 2
            # The points -half + k * res with k * res < extent + res / 2.
            count = max(1, math.ceil(float(extent) / res + 0.5))
            return -half + res * torch.arange(count, dtype=torch.float64)

        xs, ys = axis(self.size[0]), axis(self.size[1])
        gy, gx = torch.meshgrid(ys, xs, indexing="ij")  # (ny, nx): x varies fastest
        offsets = torch.stack([gx.flatten(), gy.flatten(), torch.zeros(gx.numel())], dim=-1)
        direction = _unit_direction(self.direction, "GridPatternCfg")
        directions = direction.expand(offsets.shape[0], 3)
        return (
            offsets.to(device, torch.float32),
            directions.to(device, torch.float32).contiguous(),
        )


@dataclass
class PinholeCameraPatternCfg(Config):
    """Rays from the frame origin through the pixels of a pinhole camera, MuJoCo's convention:
    the camera looks along the frame's -z axis, x is the image's horizontal axis.

    Ray `r * width + c` (row r of `height`, column c of `width`) has the direction
    `normalize(u_c * tan(fovx / 2), v_r * tan(fovy / 2), -1)`, where `u` and `v` run evenly
    from -1 to 1 over the columns and rows (so the outermost rays lie on the edges of the field
    of view, and row 0 is on the frame's -y side), and `tan(fovx / 2) = tan(fovy / 2) * width /
    height`. All rays start at the frame origin (zero offsets).

    `from_mujoco_camera(name)` takes width, height and field of view from a camera of the
    compiled model when the sensor is initialized; `from_intrinsic_matrix` from a 3 x 3
    intrinsic matrix.
    """

    width: int = 16
    """Number of rays across (image columns), >= 1."""
    height: int = 12
    """Number of rays down (image rows), >= 1."""
    fovy: float = 45.0
    """Vertical field of view, degrees, in (0, 180) (MuJoCo's `fovy`)."""
    _camera_name: str | None = field(default=None, repr=False)
    """Set by `from_mujoco_camera`: the camera (its full name in the compiled scene) whose
    resolution and field of view are used instead of the three fields above."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid."""
        if self._camera_name is not None:
            if not isinstance(self._camera_name, str) or not self._camera_name:
                raise ValueError(
                    "PinholeCameraPatternCfg.from_mujoco_camera needs a camera name, got "
                    f"{self._camera_name!r}."
                )
            return
        for name in ("width", "height"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"PinholeCameraPatternCfg.{name} must be an integer >= 1 (rays), got {value!r}."
                )
        fovy = self.fovy
        if isinstance(fovy, bool) or not isinstance(fovy, (int, float)) or not 0 < fovy < 180:
            raise ValueError(
                f"PinholeCameraPatternCfg.fovy must be in (0, 180) degrees, got {fovy!r}."
            )

    @classmethod
    def from_mujoco_camera(cls, camera_name: str) -> PinholeCameraPatternCfg:
        """A pattern that takes its resolution and field of view from the camera
        `camera_name` of the compiled scene (entity cameras are named "<entity>/<camera>"),
        read when the sensor is initialized.

        The camera's `resolution` gives width and height; the field of view is its `fovy`, or,
        for a camera with a physical sensor size, the one its focal lengths and sensor size
        imply.
        """
        return cls(width=0, height=0, fovy=0.0, _camera_name=camera_name)

    @classmethod
    def from_intrinsic_matrix(
        cls, intrinsic_matrix: list[float], width: int, height: int
    ) -> PinholeCameraPatternCfg:
        """A pattern of `width` x `height` rays whose vertical field of view is that of the
        row-major 3 x 3 intrinsic matrix `[fx, 0, cx, 0, fy, cy, 0, 0, 1]` (pixels):
        `fovy = 2 atan(height / (2 fy))`.

        Raises:
            ValueError: the matrix does not have 9 entries or fy <= 0.
        """
        if len(intrinsic_matrix) != 9:
            raise ValueError(
                "PinholeCameraPatternCfg.from_intrinsic_matrix: intrinsic_matrix must have 9 "
                f"entries (row-major 3 x 3), got {len(intrinsic_matrix)}."
            )
        fy = float(intrinsic_matrix[4])
        if not fy > 0:
            raise ValueError(
                "PinholeCameraPatternCfg.from_intrinsic_matrix: fy (entry 4) must be > 0 "
                f"pixels, got {fy}."
            )
        fovy = math.degrees(2.0 * math.atan(height / (2.0 * fy)))
        return cls(width=width, height=height, fovy=fovy)

    def _resolve(self, mj_model: mujoco.MjModel | None) -> tuple[int, int, float, float]:
        """(width, height, tan(fovx / 2), tan(fovy / 2))."""
        if self._camera_name is None:
            half_y = math.tan(math.radians(self.fovy) / 2)
            return self.width, self.height, half_y * self.width / self.height, half_y
        if mj_model is None:
            raise ValueError(
                "PinholeCameraPatternCfg.from_mujoco_camera needs the compiled model to read "
                f"camera '{self._camera_name}' from."
            )
        cam = mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_CAMERA, self._camera_name)
        if cam < 0:
            names = [
                mujoco.mj_id2name(mj_model, mujoco.mjtObj.mjOBJ_CAMERA, i)
                for i in range(mj_model.ncam)
            ]
            raise ValueError(
                f"PinholeCameraPatternCfg.from_mujoco_camera: no camera "
                f"'{self._camera_name}' in the scene; its cameras are {names} (an entity's "
                "camera is named '<entity>/<camera>')."
            )
        width, height = (int(v) for v in mj_model.cam_resolution[cam])
        if width < 1 or height < 1:
            raise ValueError(
                f"PinholeCameraPatternCfg.from_mujoco_camera: camera '{self._camera_name}' "
                f"has resolution {width} x {height}; give it a resolution in the MJCF."
            )
        sensor = mj_model.cam_sensorsize[cam]
        if sensor[0] > 0 and sensor[1] > 0:
            fx, fy = (float(v) for v in mj_model.cam_intrinsic[cam][:2])
            return width, height, float(sensor[0]) / (2 * fx), float(sensor[1]) / (2 * fy)
        half_y = math.tan(math.radians(float(mj_model.cam_fovy[cam])) / 2)
        return width, height, half_y * width / height, half_y

    def generate_rays(
        self, mj_model: mujoco.MjModel | None, device: str | torch.device
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The pattern in the frame's axes.

        Args:
            mj_model: the compiled model (needed for `from_mujoco_camera` only).
            device: device of the result.

        Returns:
            offsets (width * height, 3), all zero, m, and unit directions (width * height, 3),
            float32.

        Raises:
            ValueError: `from_mujoco_camera` names no camera of `mj_model`.
        """
        width, height, half_x, half_y = self._resolve(mj_model)

        def spread(count: int) -> torch.Tensor:
            # One ray looks straight ahead (0); more span [-1, 1] evenly.
            if count == 1:
                return torch.zeros(1, dtype=torch.float64)
            return torch.linspace(-1.0, 1.0, count, dtype=torch.float64)

        v, u = torch.meshgrid(spread(height), spread(width), indexing="ij")  # (height, width)
        raw = torch.stack(
            [u.flatten() * half_x, v.flatten() * half_y, -torch.ones(u.numel())], dim=-1
        )
        directions = raw / raw.norm(dim=-1, keepdim=True)
        offsets = torch.zeros_like(directions)
        return offsets.to(device, torch.float32), directions.to(device, torch.float32)


@dataclass
class RingPatternCfg(Config):
    """Parallel rays from points on concentric circles in the frame's xy plane (e.g. around a
    foot), optionally plus one from the frame origin.

    Ray order: the centre ray (when `include_center`), then each ring in turn; ring points are
    at angles `2 pi k / num_samples` from the frame's +x axis towards +y, k = 0, 1, ...
    """

    @dataclass
    class Ring(Config):
        """One circle of ray origins."""

        radius: float
        """Circle radius, m (>= 0)."""
        num_samples: int
        """Number of evenly spaced rays on it (>= 1)."""

        def __post_init__(self) -> None:
            self.validate()

        def validate(self) -> None:
            """Raise ValueError naming the field when a value is invalid."""
            r = self.radius
            if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 <= r < math.inf:
                raise ValueError(
                    f"RingPatternCfg.Ring.radius must be a finite number >= 0 (m), got {r!r}."
                )
            n = self.num_samples
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise ValueError(
                    f"RingPatternCfg.Ring.num_samples must be an integer >= 1, got {n!r}."
                )

    rings: tuple[Ring, ...]
    """The circles (any number, including none with `include_center`)."""
    include_center: bool = True
    """Add a ray from the frame origin, first."""
    direction: tuple[float, float, float] = (0.0, 0.0, -1.0)
    """Direction of every ray in the frame's axes (normalized here)."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid."""
        if not isinstance(self.rings, (tuple, list)) or not all(
            isinstance(r, RingPatternCfg.Ring) for r in self.rings
        ):
            raise ValueError(
                "RingPatternCfg.rings must be a tuple of RingPatternCfg.Ring(radius, "
                f"num_samples), got {self.rings!r}."
            )
        if not self.rings and not self.include_center:
            raise ValueError(
                "RingPatternCfg has no ray: give RingPatternCfg.rings at least one ring, or set "
                "RingPatternCfg.include_center=True."
            )
        _unit_direction(self.direction, "RingPatternCfg")

    @classmethod
    def single_ring(
        cls,
        radius: float = 0.1,
        num_samples: int = 8,
        include_center: bool = True,
        direction: tuple[float, float, float] = (0.0, 0.0, -1.0),
    ) -> RingPatternCfg:
        """A pattern of one circle of `num_samples` rays at `radius` m (plus the centre ray when
        `include_center`)."""
        return cls(
            rings=(cls.Ring(radius, num_samples),),
            include_center=include_center,
            direction=direction,
        )

    def generate_rays(
        self, mj_model: mujoco.MjModel | None, device: str | torch.device
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The pattern in the frame's axes.

        Args:
            mj_model: unused.
            device: device of the result.

        Returns:
            offsets (num_rays, 3), m, and unit directions (num_rays, 3), float32, with
            num_rays = include_center + sum of the rings' num_samples.
        """
        del mj_model
        parts = [torch.zeros(1, 3, dtype=torch.float64)] if self.include_center else []
        for ring in self.rings:
            angle = 2.0 * math.pi * torch.arange(ring.num_samples, dtype=torch.float64)
            angle = angle / ring.num_samples
            parts.append(
                torch.stack(
                    [
                        ring.radius * torch.cos(angle),
                        ring.radius * torch.sin(angle),
                        torch.zeros_like(angle),
                    ],
                    dim=-1,
                )
            )
        offsets = torch.cat(parts, dim=0)
        direction = _unit_direction(self.direction, "RingPatternCfg")
        directions = direction.expand(offsets.shape[0], 3)
        return (
            offsets.to(device, torch.float32),
            directions.to(device, torch.float32).contiguous(),
        )


PatternCfg = GridPatternCfg | PinholeCameraPatternCfg | RingPatternCfg
"""Any ray pattern."""


# ----------------------------------------------------------------------------------------------
# Sensor
# ----------------------------------------------------------------------------------------------
@dataclass
class RayCastData:
    """One cast of a `RayCastSensor`, float32 on the sim device. B = num_envs, F = number of
    frames, N = F * num_rays_per_frame (frame-major: ray `f * num_rays_per_frame + i` is
    pattern ray i of frame f). Positions world frame, m; quaternions wxyz, frame to world.

    The tensors are made by this cast and not written afterwards.
    """

    distances: torch.Tensor
    """(B, N) distance from each ray's origin to its first hit, m; -1 where the ray hit
    nothing within `max_distance` (or the world's state is not finite)."""
    normals_w: torch.Tensor
    """(B, N, 3) unit outward surface normal of the surface hit, world frame; zero where the
    ray missed. A ray that starts inside a geom hits its far side from within: the normal then
    points along the ray (e.g. normal z < 0 for a downward ray)."""
    hit_pos_w: torch.Tensor
    """(B, N, 3) hit point, world frame, m; the ray's origin where it missed."""
    pos_w: torch.Tensor
    """(B, 3) position of the first frame, world frame, m."""
    quat_w: torch.Tensor
    """(B, 4) orientation of the first frame, wxyz (w >= 0)."""
    frame_pos_w: torch.Tensor
    """(B, F, 3) positions of all frames, world frame, m."""
    frame_quat_w: torch.Tensor
    """(B, F, 4) orientations of all frames, wxyz (w >= 0)."""


@dataclass(kw_only=True)
class RayCastSensorCfg(SensorCfg):
    """Rays of a pattern attached to one or more frames (bodies, sites or geoms), cast against
    the scene's geoms in every env. See `RayCastSensor` for what it reports and when.
    """

    @dataclass
    class VizCfg(Config):
        """Look of the rays when drawn for debugging (kept for mjlab 1.6 configs; this library
        has no debug-drawing hook yet, so nothing is drawn)."""

        hit_color: tuple[float, float, float, float] = (0.0, 1.0, 0.0, 0.8)
        """RGBA of rays that hit."""
        miss_color: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.4)
        """RGBA of rays that missed."""
        hit_sphere_color: tuple[float, float, float, float] = (0.0, 1.0, 1.0, 1.0)
        """RGBA of the spheres marking hit points."""
        hit_sphere_radius: float = 0.5
        """Hit-point sphere radius, in units of the model's mean body size."""
        show_rays: bool = False
        """Draw the rays themselves."""
        show_normals: bool = False
        """Draw the surface normals at the hit points."""
        normal_color: tuple[float, float, float, float] = (1.0, 1.0, 0.0, 1.0)
        """RGBA of the normal arrows."""
        normal_length: float = 5.0
        """Normal arrow length, in units of the model's mean body size."""

    frame: ObjRef | tuple[ObjRef, ...]
    """The body, site or geom the rays are attached to, or several (e.g. one site per foot):
    each frame casts the whole pattern, and the outputs list the frames in this order."""
    pattern: PatternCfg = field(default_factory=GridPatternCfg)
    """Ray origins and directions in the frame's axes."""
    ray_alignment: RayAlignment = "base"
    """Which rotation turns pattern offsets and directions into world vectors (the ray origin
    is always at the frame's actual position):

    - "base": the frame's full rotation; rays tilt and turn with it.
    - "yaw": the frame's heading only (rotation about world z), ignoring roll and pitch; e.g.
      a height map that stays level. The heading is that of the frame's x axis projected on
      the world xy plane, or, when that axis is within ~6 degrees of vertical, of its y axis
      turned by -90 degrees.
    - "world": none; offsets and directions are world vectors.
    """
    max_distance: float = 10.0
    """Longest distance a hit is reported at, m (> 0); farther hits count as misses (-1)."""
    exclude_parent_body: bool = True
    """Each frame's rays ignore the geoms of the body the frame belongs to (the body itself,
    a site's or a geom's body), so that a sensor inside a foot does not see the foot."""
    include_geom_groups: tuple[int, ...] | None = (0, 1, 2)
    """Geom groups (0-5) the rays see; None for all groups."""
    debug_vis: bool = False
    """Draw the rays for debugging (kept for mjlab 1.6 configs; nothing is drawn here yet)."""
    viz: VizCfg = field(default_factory=VizCfg)
    """How the rays are drawn when `debug_vis` is on."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid."""
        cls = type(self).__name__
        frames = self.frames
        if not frames:
            raise ValueError(
                f"{cls}.frame is empty: give an ObjRef (or a tuple of them) naming the body, "
                "site or geom the rays are attached to."
            )
        for i, frame in enumerate(frames):
            where = f"{cls}.frame" if isinstance(self.frame, ObjRef) else f"{cls}.frame[{i}]"
            if not isinstance(frame, ObjRef):
                raise ValueError(
                    f"{where} must be an ObjRef, e.g. ObjRef('site', 'left_foot', "
                    f"entity='robot'), got {frame!r}."
                )
            if frame.type not in _FRAME_TYPES:
                raise ValueError(
                    f"{where}.type must be 'body', 'site' or 'geom' (rays need a position and "
                    f"orientation), got {frame.type!r}."
                )
        if not isinstance(self.pattern, (GridPatternCfg, PinholeCameraPatternCfg, RingPatternCfg)):
            raise ValueError(
                f"{cls}.pattern must be a GridPatternCfg, RingPatternCfg or "
                f"PinholeCameraPatternCfg, got {type(self.pattern).__name__}."
            )
        self.pattern.validate()
        if self.ray_alignment not in _ALIGNMENTS:
            raise ValueError(
                f"{cls}.ray_alignment must be one of {list(_ALIGNMENTS)}, got "
                f"{self.ray_alignment!r}."
            )
        dist = self.max_distance
        if isinstance(dist, bool) or not isinstance(dist, (int, float)) or not dist > 0:
            raise ValueError(
                f"{cls}.max_distance must be a number > 0 (m; math.inf for no limit), got {dist!r}."
            )
        if not isinstance(self.exclude_parent_body, bool):
            raise ValueError(
                f"{cls}.exclude_parent_body must be True or False, got "
                f"{self.exclude_parent_body!r}."
            )
        groups = self.include_geom_groups
        if groups is not None:
            ok = isinstance(groups, (tuple, list)) and all(
                isinstance(g, int) and not isinstance(g, bool) and 0 <= g <= 5 for g in groups
            )
            if not ok:
                raise ValueError(
                    f"{cls}.include_geom_groups must be a tuple of geom groups 0-5 or None "
                    f"(all groups), got {groups!r}."
                )
            if not groups:
                raise ValueError(
                    f"{cls}.include_geom_groups is empty, so the rays would see nothing: give "
                    "the groups to see, e.g. (0,), or None for all groups."
                )

    @property
    def frames(self) -> tuple[ObjRef, ...]:
        """`frame` as a tuple."""
        if isinstance(self.frame, ObjRef):
            return (self.frame,)
        return tuple(self.frame) if isinstance(self.frame, (tuple, list)) else (self.frame,)

    def build(self) -> RayCastSensor:
        return RayCastSensor(self)


class RayCastSensor(Sensor):
    """Casts `cfg.pattern` from every frame of `cfg.frame` in every env; `data` is a
    `RayCastData` (shapes, frames and units there).

    When: the rays are cast on the first read of `data` in a new physics state (after a
    `Simulation.step`, `forward`, `reset` or `set_state`) or after this sensor's
    `update` / `reset`, and the result is reused until then. The frame poses are the
    simulation's current `xpos` / `site_xpos` / `geom_xpos` (and rotations), so state written
    to `sim.data` shows once `sim.forward()` (or a step) has run, as for every other sensor.

    Backends: C MuJoCo casts with the batch's `mj_ray` (CPU, float64); MuJoCo Warp with its
    `rays` kernel (float32, on the sim device, no host transfer). Both give the hit distance and
    the surface normal. Invisible geoms (rgba alpha 0) are not seen, as in MuJoCo.
    """

    cfg: RayCastSensorCfg
    requires_sensor_context = True
    """Listed in the simulation's `SensorContext` (its ray-cast sensors)."""

    def __init__(self, cfg: RayCastSensorCfg):
        super().__init__(cfg)
        self._data: RayCastData | None = None
        self._key: tuple | None = None

    # -- setup ----------------------------------------------------------------------------------
    def initialize(self, model: mujoco.MjModel, sim, scene) -> None:
        """Resolve the frames in the compiled model and lay out the rays.

        Raises:
            ValueError: a frame names an unknown entity or an object the model lacks, or the
                simulation's backend cannot cast rays.
        """
        super().initialize(model, sim, scene)
        cfg = self.cfg
        frames = cfg.frames
        kinds: list[str] = []
        ids: list[int] = []
        bodies: list[int] = []
        for i, ref in enumerate(frames):
            obj_id = self._resolve_frame(model, scene, ref, i)
            kinds.append(ref.type)
            ids.append(obj_id)
            if ref.type == "body":
                bodies.append(obj_id)
            elif ref.type == "site":
                bodies.append(int(model.site_bodyid[obj_id]))
            else:
                bodies.append(int(model.geom_bodyid[obj_id]))
        self._num_frames = len(frames)
        self._frame_body_ids = bodies
        """Per frame, the body it belongs to (the one `exclude_parent_body` hides)."""

        # Frames grouped by kind (one gather per kind), then put back in the configured order.
        self._groups: list[tuple[str, str, torch.Tensor]] = []
        order: list[int] = []
        for kind in _FRAME_TYPES:
            members = [f for f in range(len(frames)) if kinds[f] == kind]
            if members:
                pos_name, mat_name = _POSE_FIELDS[kind]
                index = torch.tensor([ids[f] for f in members], device=self.device)
                self._groups.append((pos_name, mat_name, index))
                order.extend(members)
        self._unsort: torch.Tensor | None = None
        if order != sorted(order):
            self._unsort = torch.tensor(np.argsort(order), device=self.device)

        offsets, directions = cfg.pattern.generate_rays(model, self.device)
        self._dtype = sim.data.xpos.dtype
        self.pattern_offsets = offsets.to(self._dtype)
        """(num_rays_per_frame, 3) ray origins in the frame's axes, m."""
        self.pattern_directions = directions.to(self._dtype)
        """(num_rays_per_frame, 3) unit ray directions in the frame's axes."""
        self._num_rays_per_frame = offsets.shape[0]
        self._num_rays = self._num_frames * self._num_rays_per_frame

        per_ray_body = np.repeat(np.asarray(bodies, dtype=np.int32), self._num_rays_per_frame)
        exclude = per_ray_body if cfg.exclude_parent_body else np.full(self._num_rays, -1)
        groups = cfg.include_geom_groups
        flags = None if groups is None else tuple(1 if g in groups else 0 for g in range(6))
        self._caster = sim.ray_caster(self._num_rays, flags, exclude.astype(np.int32))
        self._data = None
        self._key = None

    def _resolve_frame(self, model: mujoco.MjModel, scene, ref: ObjRef, index: int) -> int:
        cls = type(self.cfg).__name__
        where = f"{cls}.frame" if isinstance(self.cfg.frame, ObjRef) else f"{cls}.frame[{index}]"
        if ref.entity is not None and scene is not None:
            entities = getattr(scene, "entities", None)
            if entities is not None and ref.entity not in entities:
                raise ValueError(
                    f"{where}: sensor '{self.name}' refers to entity '{ref.entity}', which the "
                    f"scene does not have; its entities are {sorted(entities)}."
                )
        full = ref.prefixed_name()
        obj_id = mujoco.mj_name2id(model, _MJ_OBJ[ref.type], full)
        if obj_id < 0:
            count = {"body": model.nbody, "site": model.nsite, "geom": model.ngeom}[ref.type]
            names = [mujoco.mj_id2name(model, _MJ_OBJ[ref.type], i) or "" for i in range(count)]
            prefix = f"{ref.entity}/" if ref.entity else ""
            names = [
                n.removeprefix(prefix)
                for n in names
                if n and (n.startswith(prefix) if prefix else "/" not in n)
            ]
            owner = f"entity '{ref.entity}'" if ref.entity else "the scene (outside entities)"
            raise ValueError(
                f"{where}: no {ref.type} named '{ref.name}' in {owner}; its {ref.type}s are "
                f"{names[:40]}{' ...' if len(names) > 40 else ''}."
            )
        return int(obj_id)

    # -- lifecycle ------------------------------------------------------------------------------
    def update(self, dt: float) -> None:
        """Mark the last cast stale (the next read of `data` casts again)."""
        self._key = None

    def reset(self, env_ids) -> None:
        """Mark the last cast stale. The sensor keeps no per-env state: the reset envs' values
        are those of their new state, read on the next `data` access.

        Raises:
            ValueError / TypeError: invalid `env_ids` (see `mjlab.utils.env_ids`).
        """
        resolve_env_ids(env_ids, self.num_envs, self.device)
        self._key = None

    # -- sizes ----------------------------------------------------------------------------------
    @property
    def num_frames(self) -> int:
        """Number of frames the pattern is attached to (F)."""
        return self._num_frames

    @property
    def num_rays_per_frame(self) -> int:
        """Number of rays of the pattern."""
        return self._num_rays_per_frame

    @property
    def num_rays(self) -> int:
        """All rays of one env: num_frames * num_rays_per_frame (N)."""
        return self._num_rays

    # -- reading --------------------------------------------------------------------------------
    @property
    def data(self) -> RayCastData:
        """The rays cast in the current physics state (see the class docstring for when a cast
        happens; the result is shared by every reader of that state).

        Raises:
            RuntimeError: the sensor was not initialized by a scene.
        """
        if not hasattr(self, "_caster"):
            raise RuntimeError(
                f"Sensor '{self.name}' is not initialized: put its config in "
                "SceneCfg(sensors=...) and call scene.initialize(sim) before reading it."
            )
        key = (self.sim.state_count, torch.is_inference_mode_enabled())
        if self._data is None or self._key != key:
            self._data = self._compute_data()
            self._key = key
        return self._data

    def _frame_poses(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, F, 3) positions and (B, F, 3, 3) rotation matrices of the frames, world, in
        the simulation's dtype."""
        data = self.sim.data
        pos_parts, mat_parts = [], []
        for pos_name, mat_name, index in self._groups:
            pos_parts.append(getattr(data, pos_name)[:, index])
            mat_parts.append(getattr(data, mat_name)[:, index])
        pos = pos_parts[0] if len(pos_parts) == 1 else torch.cat(pos_parts, dim=1)
        mat = mat_parts[0] if len(mat_parts) == 1 else torch.cat(mat_parts, dim=1)
        if self._unsort is not None:
            pos, mat = pos[:, self._unsort], mat[:, self._unsort]
        return pos, mat

    def _alignment(self, mat: torch.Tensor) -> torch.Tensor:
        """(..., 3, 3) rotations applied to the pattern, per `cfg.ray_alignment`."""
        mode = self.cfg.ray_alignment
        if mode == "base":
            return mat
        if mode == "yaw":
            return _heading_rotation(mat)
        eye = torch.eye(3, dtype=mat.dtype, device=mat.device)
        return eye.expand(mat.shape)

    def _compute_data(self) -> RayCastData:
        pos, mat = self._frame_poses()
        rot = self._alignment(mat)
        n = pos.shape[0]
        origins = pos[:, :, None, :] + torch.einsum("bfij,rj->bfri", rot, self.pattern_offsets)
        dirs = torch.einsum("bfij,rj->bfri", rot, self.pattern_directions)
        origins = origins.reshape(n, self._num_rays, 3)
        dirs = dirs.reshape(n, self._num_rays, 3)
        dist, normal = self._caster(origins, dirs)
        # A NaN distance (a world whose state is not finite) fails both comparisons: a miss.
        hit = (dist >= 0) & (dist <= self.cfg.max_distance)
        dist = torch.where(hit, dist, torch.full_like(dist, -1.0))
        normal = torch.where(hit[..., None], normal, torch.zeros_like(normal))
        origins32, dirs32 = origins.float(), dirs.float()
        hit_pos = origins32 + dirs32 * dist.clamp(min=0.0)[..., None]
        frame_pos = pos.float()
        frame_quat = quat_from_matrix(mat).float()
        return RayCastData(
            distances=dist,
            normals_w=normal,
            hit_pos_w=hit_pos,
            pos_w=frame_pos[:, 0],
            quat_w=frame_quat[:, 0],
            frame_pos_w=frame_pos,
            frame_quat_w=frame_quat,
        )


# ----------------------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------------------
def _heading_rotation(mat: torch.Tensor) -> torch.Tensor:
    """Rotations about world z that keep the heading of rotations `mat` (..., 3, 3).

    The heading is the direction of the x axis (first column) projected on the world xy
    plane; where that projection is shorter than `_YAW_FALLBACK` (x axis near vertical), the
    y axis's projection turned by -90 degrees is used. Branch-free (no host sync).
    """
    x_proj = mat[..., :2, 0]
    y_proj = mat[..., :2, 1]
    from_y = torch.stack([y_proj[..., 1], -y_proj[..., 0]], dim=-1)
    use_y = x_proj.norm(dim=-1, keepdim=True) < _YAW_FALLBACK
    heading = torch.where(use_y, from_y, x_proj)
    heading = heading / heading.norm(dim=-1, keepdim=True).clamp(min=1e-9)
    c, s = heading[..., 0], heading[..., 1]
    zero, one = torch.zeros_like(c), torch.ones_like(c)
    rows = torch.stack([c, -s, zero, s, c, zero, zero, zero, one], dim=-1)
    return rows.reshape(*mat.shape[:-2], 3, 3)

"""MuJoCo's own sensors (IMU, frame, joint, actuator, ... sensors) as (num_envs, dim) tensors.

Two ways to name what a sensor measures:

- mjlab 1.6: `obj` (and, for frame sensors, `ref`) as `ObjRef`s, e.g. the world's z axis seen
  from an IMU site (what `mdp.projected_gravity_from_sensor` negates)::

      BuiltinSensorCfg(
          name="up_in_imu",
          sensor_type="framezaxis",
          obj=ObjRef(type="xbody", name="world"),
          ref=ObjRef(type="site", name="imu", entity="robot"),
      )

- `obj_type` / `obj_name` / `entity`, e.g. `BuiltinSensorCfg(name="gyro", sensor_type="gyro",
  obj_name="imu")` (a site of the entity "robot").

With `sensor_type=None` the sensor is not added: `obj_name` names a sensor already in an
entity's MJCF, read as it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import mujoco
import torch

from mjlab.sensor.ray_cast import ObjRef
from mjlab.sensor.sensor_base import Sensor, SensorCfg, sensordata_slice

_TYPES = {
    "accelerometer": mujoco.mjtSensor.mjSENS_ACCELEROMETER,
    "velocimeter": mujoco.mjtSensor.mjSENS_VELOCIMETER,
    "gyro": mujoco.mjtSensor.mjSENS_GYRO,
    "force": mujoco.mjtSensor.mjSENS_FORCE,
    "torque": mujoco.mjtSensor.mjSENS_TORQUE,
    "magnetometer": mujoco.mjtSensor.mjSENS_MAGNETOMETER,
    "rangefinder": mujoco.mjtSensor.mjSENS_RANGEFINDER,
    "touch": mujoco.mjtSensor.mjSENS_TOUCH,
    "jointpos": mujoco.mjtSensor.mjSENS_JOINTPOS,
    "jointvel": mujoco.mjtSensor.mjSENS_JOINTVEL,
    "tendonpos": mujoco.mjtSensor.mjSENS_TENDONPOS,
    "tendonvel": mujoco.mjtSensor.mjSENS_TENDONVEL,
    "actuatorpos": mujoco.mjtSensor.mjSENS_ACTUATORPOS,
    "actuatorvel": mujoco.mjtSensor.mjSENS_ACTUATORVEL,
    "actuatorfrc": mujoco.mjtSensor.mjSENS_ACTUATORFRC,
    "jointlimitpos": mujoco.mjtSensor.mjSENS_JOINTLIMITPOS,
    "jointlimitvel": mujoco.mjtSensor.mjSENS_JOINTLIMITVEL,
    "jointlimitfrc": mujoco.mjtSensor.mjSENS_JOINTLIMITFRC,
    "framepos": mujoco.mjtSensor.mjSENS_FRAMEPOS,
    "framequat": mujoco.mjtSensor.mjSENS_FRAMEQUAT,
    "framexaxis": mujoco.mjtSensor.mjSENS_FRAMEXAXIS,
    "frameyaxis": mujoco.mjtSensor.mjSENS_FRAMEYAXIS,
    "framezaxis": mujoco.mjtSensor.mjSENS_FRAMEZAXIS,
    "framelinvel": mujoco.mjtSensor.mjSENS_FRAMELINVEL,
    "frameangvel": mujoco.mjtSensor.mjSENS_FRAMEANGVEL,
    "framelinacc": mujoco.mjtSensor.mjSENS_FRAMELINACC,
    "frameangacc": mujoco.mjtSensor.mjSENS_FRAMEANGACC,
    "subtreecom": mujoco.mjtSensor.mjSENS_SUBTREECOM,
    "subtreelinvel": mujoco.mjtSensor.mjSENS_SUBTREELINVEL,
    "subtreeangmom": mujoco.mjtSensor.mjSENS_SUBTREEANGMOM,
    "e_potential": mujoco.mjtSensor.mjSENS_E_POTENTIAL,
    "e_kinetic": mujoco.mjtSensor.mjSENS_E_KINETIC,
    "clock": mujoco.mjtSensor.mjSENS_CLOCK,
}
_OBJ = {
    "body": mujoco.mjtObj.mjOBJ_BODY,
    "xbody": mujoco.mjtObj.mjOBJ_XBODY,
    "joint": mujoco.mjtObj.mjOBJ_JOINT,
    "geom": mujoco.mjtObj.mjOBJ_GEOM,
    "site": mujoco.mjtObj.mjOBJ_SITE,
    "actuator": mujoco.mjtObj.mjOBJ_ACTUATOR,
    "tendon": mujoco.mjtObj.mjOBJ_TENDON,
    "camera": mujoco.mjtObj.mjOBJ_CAMERA,
}
_SPATIAL = ("body", "xbody", "geom", "site", "camera")
"""Object types with a pose: what frame sensors measure and measure in."""
_FRAME_SENSORS = tuple(t for t in _TYPES if t.startswith("frame"))
_SITE_SENSORS = (
    "accelerometer",
    "velocimeter",
    "gyro",
    "force",
    "torque",
    "magnetometer",
    "rangefinder",
    "touch",
)
_OBJECT_TYPES: dict[str, tuple[str, ...]] = {}
for _t in _TYPES:
    if _t in _SITE_SENSORS:
        _OBJECT_TYPES[_t] = ("site",)
    elif _t in _FRAME_SENSORS:
        _OBJECT_TYPES[_t] = _SPATIAL
    elif _t.startswith(("joint", "tendon", "actuator")):  # jointpos -> joint, ...
        _OBJECT_TYPES[_t] = (next(k for k in ("joint", "tendon", "actuator") if _t.startswith(k)),)
    elif _t.startswith("subtree"):
        _OBJECT_TYPES[_t] = ("body",)
    else:  # energies and the clock
        _OBJECT_TYPES[_t] = ()
"""Object types each sensor type accepts; () for the sensors of the whole model."""

SensorType = Literal[
    "accelerometer",
    "velocimeter",
    "gyro",
    "force",
    "torque",
    "magnetometer",
    "rangefinder",
    "touch",
    "jointpos",
    "jointvel",
    "tendonpos",
    "tendonvel",
    "actuatorpos",
    "actuatorvel",
    "actuatorfrc",
    "jointlimitpos",
    "jointlimitvel",
    "jointlimitfrc",
    "framepos",
    "framequat",
    "framexaxis",
    "frameyaxis",
    "framezaxis",
    "framelinvel",
    "frameangvel",
    "framelinacc",
    "frameangacc",
    "subtreecom",
    "subtreelinvel",
    "subtreeangmom",
    "e_potential",
    "e_kinetic",
    "clock",
]
"""MuJoCo sensor types a `BuiltinSensorCfg` can add (MJCF element names)."""

ObjType = Literal["body", "xbody", "joint", "geom", "site", "actuator", "tendon", "camera"]


@dataclass(kw_only=True)
class BuiltinSensorCfg(SensorCfg):
    """A MuJoCo sensor: added to the scene (`sensor_type` set) or already in an entity's MJCF
    (`sensor_type=None`, then `obj_name` is that sensor's name).

    The measured object is `obj` (mjlab 1.6) or `obj_type`/`obj_name`/`entity`; give one way.
    Frames and units are MuJoCo's: gyro rad/s, velocimeter m/s and accelerometer m/s^2
    (including gravity) in the site frame; frame sensors (framepos, framequat wxyz, frame*axis,
    framelinvel, ...) in the world frame, or in `ref`'s frame when `ref` is given.
    """

    sensor_type: SensorType | None = None
    """MuJoCo sensor type to add, or None to read an MJCF sensor named `obj_name`."""
    obj: ObjRef | None = None
    """mjlab 1.6: the object the sensor is attached to / measures, e.g. `ObjRef(type="site",
    name="imu", entity="robot")` or the world `ObjRef(type="xbody", name="world")`. Site
    sensors (accelerometer, gyro, ...) need a site, joint sensors a joint, subtree sensors a
    body, frame sensors a body, xbody, geom, site or camera; energy and clock sensors none."""
    ref: ObjRef | None = None
    """mjlab 1.6, frame sensors only: the frame (body, xbody, geom, site or camera) the values
    are expressed in; None: the world frame. E.g. framezaxis of the world with `ref` an IMU
    site gives the world's up axis in the IMU frame (minus the projected gravity)."""
    cutoff: float = 0.0
    """When > 0, MuJoCo clamps each value of the sensor to [-cutoff, cutoff] (in the sensor's
    units); 0: no limit."""
    obj_type: ObjType = "site"
    """With `obj_name`: type of the object the sensor is attached to."""
    obj_name: str | None = None
    """Object name in `entity` (no prefix), or the MJCF sensor's name (`sensor_type=None`).
    Leave None when `obj` names the object."""
    entity: str | None = "robot"
    """With `obj_name`: entity owning the object (or the MJCF sensor); None for scene-level
    names. (`obj` and `ref` carry their own entity.)"""

    def __post_init__(self) -> None:
        super().__post_init__()
        name = type(self).__name__
        if self.sensor_type is not None and self.sensor_type not in _TYPES:
            raise ValueError(f"{name}.sensor_type '{self.sensor_type}' not in {sorted(_TYPES)}.")
        for field_name in ("obj", "ref"):
            value = getattr(self, field_name)
            if value is not None and not isinstance(value, ObjRef):
                raise ValueError(
                    f"{name}.{field_name} must be an ObjRef(type=..., name=..., entity=...), "
                    f"got {value!r}."
                )
        if self.obj_type not in _OBJ:
            raise ValueError(f"{name}.obj_type must be one of {list(_OBJ)}, got {self.obj_type!r}.")
        if (
            isinstance(self.cutoff, bool)
            or not isinstance(self.cutoff, (int, float))
            or not math.isfinite(self.cutoff)
            or self.cutoff < 0
        ):
            raise ValueError(f"{name}.cutoff must be a finite number >= 0, got {self.cutoff!r}.")
        if self.sensor_type is None:
            if self.obj_name is None:
                raise ValueError(
                    f"{name} '{self.name}': with sensor_type=None, obj_name names the MJCF "
                    "sensor to read; set it, or set sensor_type to add a sensor."
                )
            if self.obj is not None or self.ref is not None or self.cutoff:
                raise ValueError(
                    f"{name} '{self.name}': obj, ref and cutoff describe a sensor to add, but "
                    "sensor_type=None reads an MJCF sensor as it is; set sensor_type or drop them."
                )
            return
        allowed = _OBJECT_TYPES[self.sensor_type]
        if self.obj is not None and self.obj_name is not None:
            raise ValueError(
                f"{name} '{self.name}': give the object once, by obj (an ObjRef) or by "
                f"obj_type/obj_name, not both (obj={self.obj!r}, obj_name={self.obj_name!r})."
            )
        kind = self.obj.type if self.obj is not None else self.obj_type
        given = self.obj is not None or self.obj_name is not None
        if not allowed and given:
            raise ValueError(
                f"{name} '{self.name}': a '{self.sensor_type}' sensor measures the whole model "
                "and takes no object; leave obj and obj_name None."
            )
        if allowed and not given:
            raise ValueError(
                f"{name} '{self.name}': a '{self.sensor_type}' sensor needs an object of type "
                f"{' / '.join(allowed)}: set obj=ObjRef(type=..., name=...) (or obj_name)."
            )
        if allowed and kind not in allowed:
            which = "obj.type" if self.obj is not None else "obj_type"
            raise ValueError(
                f"{name}.{which} must be {' / '.join(allowed)} for a '{self.sensor_type}' "
                f"sensor, got '{kind}'."
            )
        if self.ref is not None:
            if self.sensor_type not in _FRAME_SENSORS:
                raise ValueError(
                    f"{name}.ref: only frame sensors {list(_FRAME_SENSORS)} are measured in a "
                    f"reference frame, not '{self.sensor_type}'; drop ref."
                )
            if self.ref.type not in _SPATIAL:
                raise ValueError(
                    f"{name}.ref.type must be one of {list(_SPATIAL)} (an object with a "
                    f"frame), got '{self.ref.type}'."
                )

    def build(self) -> BuiltinSensor:
        return BuiltinSensor(self)


class BuiltinSensor(Sensor):
    """`data`: (num_envs, dim) float32 view of this sensor's part of sensordata (a view on
    MuJoCo Warp, a float32 copy on C MuJoCo, whose sensordata is float64)."""

    cfg: BuiltinSensorCfg

    def _full(self, name: str) -> str:
        return f"{self.cfg.entity}/{name}" if self.cfg.entity else name

    def _object(self) -> ObjRef | None:
        """The measured object, whichever way the config named it."""
        cfg = self.cfg
        if cfg.obj is not None:
            return cfg.obj
        if cfg.obj_name is None:
            return None
        return ObjRef(type=cfg.obj_type, name=cfg.obj_name, entity=cfg.entity)

    def _check_exists(self, spec: mujoco.MjSpec, ref: ObjRef, field_name: str) -> str:
        full = ref.prefixed_name()
        kind = "body" if ref.type == "xbody" else ref.type
        if getattr(spec, kind)(full) is None:
            raise ValueError(
                f"BuiltinSensorCfg '{self.name}': {field_name} names no {kind} '{full}' in the "
                f"scene ({field_name}={ref!r}); entity objects are named '<entity>/<name>' and "
                "scene-level ones (the world body: 'world') take entity=None."
            )
        return full

    def edit_spec(self, spec, entities) -> None:
        cfg = self.cfg
        if cfg.sensor_type is None:
            return
        if any(s.name == cfg.name for s in spec.sensors):
            raise ValueError(
                f"BuiltinSensorCfg '{cfg.name}': the scene already has a sensor of that name "
                "(an entity's MJCF sensor?). Rename one, or read the MJCF sensor with "
                "sensor_type=None and obj_name=<its name>."
            )
        kwargs = {"name": cfg.name, "type": _TYPES[cfg.sensor_type]}
        obj = self._object()
        if obj is not None:
            kwargs["objtype"] = _OBJ[obj.type]
            kwargs["objname"] = self._check_exists(spec, obj, "obj")
        if cfg.ref is not None:
            kwargs["reftype"] = _OBJ[cfg.ref.type]
            kwargs["refname"] = self._check_exists(spec, cfg.ref, "ref")
        if cfg.cutoff > 0:
            kwargs["cutoff"] = float(cfg.cutoff)
        spec.add_sensor(**kwargs)

    def initialize(self, model, sim, scene) -> None:
        super().initialize(model, sim, scene)
        name = self.cfg.name if self.cfg.sensor_type is not None else self._full(self.cfg.obj_name)
        self._slice = sensordata_slice(model, name)

    @property
    def data(self) -> torch.Tensor:
        """(num_envs, dim) sensor values, float32, in the sensor's units and frame."""
        return self.sim.data.sensordata[:, self._slice].float()

"""MuJoCo's own sensors (IMU and others), by name, as (num_envs, dim) tensors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import mujoco
import torch

from mjlab.sensor.sensor_base import Sensor, SensorCfg, sensordata_slice

_TYPES = {
    "gyro": mujoco.mjtSensor.mjSENS_GYRO,
    "accelerometer": mujoco.mjtSensor.mjSENS_ACCELEROMETER,
    "velocimeter": mujoco.mjtSensor.mjSENS_VELOCIMETER,
    "framequat": mujoco.mjtSensor.mjSENS_FRAMEQUAT,
    "framepos": mujoco.mjtSensor.mjSENS_FRAMEPOS,
    "framelinvel": mujoco.mjtSensor.mjSENS_FRAMELINVEL,
    "frameangvel": mujoco.mjtSensor.mjSENS_FRAMEANGVEL,
    "framezaxis": mujoco.mjtSensor.mjSENS_FRAMEZAXIS,
    "jointpos": mujoco.mjtSensor.mjSENS_JOINTPOS,
    "jointvel": mujoco.mjtSensor.mjSENS_JOINTVEL,
    "touch": mujoco.mjtSensor.mjSENS_TOUCH,
}
_OBJ = {
    "site": mujoco.mjtObj.mjOBJ_SITE,
    "body": mujoco.mjtObj.mjOBJ_BODY,
    "xbody": mujoco.mjtObj.mjOBJ_XBODY,
    "joint": mujoco.mjtObj.mjOBJ_JOINT,
}


@dataclass(kw_only=True)
class BuiltinSensorCfg(SensorCfg):
    """A MuJoCo sensor: added here (`sensor_type` set) or already in the entity's MJCF
    (`sensor_type=None`, then `obj_name` is that sensor's name).

    Frames and units are MuJoCo's: gyro rad/s and velocimeter m/s in the site frame,
    accelerometer m/s^2 in the site frame (includes gravity), framequat wxyz in world.
    """

    sensor_type: (
        Literal[
            "gyro",
            "accelerometer",
            "velocimeter",
            "framequat",
            "framepos",
            "framelinvel",
            "frameangvel",
            "framezaxis",
            "jointpos",
            "jointvel",
            "touch",
        ]
        | None
    ) = None
    """MuJoCo sensor type to add, or None to read an MJCF sensor named `obj_name`."""
    obj_type: Literal["site", "body", "xbody", "joint"] = "site"
    """Type of the object the sensor is attached to."""
    obj_name: str
    """Object name in the entity (no prefix), or the MJCF sensor's name."""
    entity: str | None = "robot"
    """Entity owning the object; None for scene-level names."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.sensor_type is not None and self.sensor_type not in _TYPES:
            raise ValueError(
                f"BuiltinSensorCfg.sensor_type '{self.sensor_type}' not in {sorted(_TYPES)}."
            )

    def build(self) -> BuiltinSensor:
        return BuiltinSensor(self)


class BuiltinSensor(Sensor):
    """`data`: (num_envs, dim) float32 view of this sensor's part of sensordata."""

    cfg: BuiltinSensorCfg

    def _full(self, name: str) -> str:
        return f"{self.cfg.entity}/{name}" if self.cfg.entity else name

    def edit_spec(self, spec, entities) -> None:
        cfg = self.cfg
        if cfg.sensor_type is None:
            return
        spec.add_sensor(
            name=cfg.name,
            type=_TYPES[cfg.sensor_type],
            objtype=_OBJ[cfg.obj_type],
            objname=self._full(cfg.obj_name),
        )

    def initialize(self, model, sim, scene) -> None:
        super().initialize(model, sim, scene)
        name = self.cfg.name if self.cfg.sensor_type is not None else self._full(self.cfg.obj_name)
        self._slice = sensordata_slice(model, name)

    @property
    def data(self) -> torch.Tensor:
        """(num_envs, dim) sensor values, float32."""
        return self.sim.data.sensordata[:, self._slice].float()

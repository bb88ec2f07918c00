"""Scene sensors: MuJoCo built-in sensors, contact sensors with air time, ray casting (mjlab
1.6's `RayCastSensor` with grid / ring / pinhole patterns, `TerrainHeightSensor`, and the
height scan), cameras."""

from mjlab.sensor.builtin_sensor import BuiltinSensor, BuiltinSensorCfg
from mjlab.sensor.camera_sensor import CameraSensor, CameraSensorCfg, CameraSensorData
from mjlab.sensor.contact_sensor import ContactData, ContactMatch, ContactSensor, ContactSensorCfg
from mjlab.sensor.ray_cast import (
    GridPatternCfg,
    ObjRef,
    PinholeCameraPatternCfg,
    RayCastData,
    RayCastSensor,
    RayCastSensorCfg,
    RingPatternCfg,
)
from mjlab.sensor.ray_cast_sensor import HeightScan, HeightScanCfg
from mjlab.sensor.sensor_base import Sensor, SensorCfg
from mjlab.sensor.sensor_context import SensorContext
from mjlab.sensor.terrain_height import (
    TerrainHeightData,
    TerrainHeightSensor,
    TerrainHeightSensorCfg,
)

__all__ = [
    "BuiltinSensor",
    "BuiltinSensorCfg",
    "CameraSensor",
    "CameraSensorCfg",
    "CameraSensorData",
    "ContactData",
    "ContactMatch",
    "ContactSensor",
    "ContactSensorCfg",
    "GridPatternCfg",
    "HeightScan",
    "HeightScanCfg",
    "ObjRef",
    "PinholeCameraPatternCfg",
    "RayCastData",
    "RayCastSensor",
    "RayCastSensorCfg",
    "RingPatternCfg",
    "Sensor",
    "SensorCfg",
    "SensorContext",
    "TerrainHeightData",
    "TerrainHeightSensor",
    "TerrainHeightSensorCfg",
]

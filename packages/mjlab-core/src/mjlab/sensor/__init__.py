"""Scene sensors: MuJoCo built-in sensors, contact sensors with air time, height scans, cameras."""

from mjlab.sensor.builtin_sensor import BuiltinSensor, BuiltinSensorCfg
from mjlab.sensor.camera_sensor import CameraSensor, CameraSensorCfg
from mjlab.sensor.contact_sensor import ContactMatch, ContactSensor, ContactSensorCfg
from mjlab.sensor.ray_cast_sensor import HeightScan, HeightScanCfg
from mjlab.sensor.sensor_base import Sensor, SensorCfg

__all__ = [
    "BuiltinSensor",
    "BuiltinSensorCfg",
    "CameraSensor",
    "CameraSensorCfg",
    "ContactMatch",
    "ContactSensor",
    "ContactSensorCfg",
    "HeightScan",
    "HeightScanCfg",
    "Sensor",
    "SensorCfg",
]

"""Actuator configs that replace or add MuJoCo actuators on an entity's joints, by regex."""

from mjlab.actuator.actuator_cfg import (
    ActuatorCfg,
    MotorActuatorCfg,
    PositionActuatorCfg,
    VelocityActuatorCfg,
)

__all__ = ["ActuatorCfg", "MotorActuatorCfg", "PositionActuatorCfg", "VelocityActuatorCfg"]

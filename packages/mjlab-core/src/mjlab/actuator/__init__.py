"""Actuators of an entity's joints, selected by joint-name regex (mjlab 1.6 names).

Builtin actuators are MuJoCo actuators written into the spec; explicit ones (`IdealPd`,
`DcMotor`, `LearnedMlp`) compute torques in torch before every physics step; `XmlActuatorCfg`
keeps the MJCF's own. `PositionActuatorCfg`, `VelocityActuatorCfg` and `MotorActuatorCfg` are
this project's earlier names of the builtin position, velocity and motor configs.

Swapping a built-in task's actuators: set `cfg.scene.entities["robot"].articulation.actuators`
to a tuple of the new configs; where configs overlap, the last one owns a joint. A task's
action scale does not follow: the velocity tasks compute theirs from the robot config's
stiffness and effort limits (`RobotCfg.action_scale`, rad of target per unit action), so after
changing gains set `cfg.actions["joint_pos"].scale` to match the new ones.
"""

from mjlab.actuator.actuator import (
    Actuator,
    ActuatorCmd,
    BuiltinActuatorGroup,
    DelayBuffer,
    FusedActuatorGroup,
)
from mjlab.actuator.actuator_cfg import (
    ActuatorCfg,
    CommandField,
    MotorActuatorCfg,
    PositionActuatorCfg,
    TransmissionType,
    VelocityActuatorCfg,
)
from mjlab.actuator.builtin import (
    BuiltinDcMotorActuator,
    BuiltinDcMotorActuatorCfg,
    BuiltinMotorActuator,
    BuiltinMotorActuatorCfg,
    BuiltinMuscleActuator,
    BuiltinMuscleActuatorCfg,
    BuiltinPdActuator,
    BuiltinPdActuatorCfg,
    BuiltinPositionActuator,
    BuiltinPositionActuatorCfg,
    BuiltinVelocityActuator,
    BuiltinVelocityActuatorCfg,
    DcMotorInputMode,
)
from mjlab.actuator.explicit import (
    DcMotorActuator,
    DcMotorActuatorCfg,
    DcMotorDatasheetParams,
    DcMotorPhysicalParams,
    IdealPdActuator,
    IdealPdActuatorCfg,
    LearnedMlpActuator,
    LearnedMlpActuatorCfg,
)
from mjlab.actuator.xml import XmlActuator, XmlActuatorCfg

__all__ = [
    "Actuator",
    "ActuatorCfg",
    "ActuatorCmd",
    "BuiltinActuatorGroup",
    "BuiltinDcMotorActuator",
    "BuiltinDcMotorActuatorCfg",
    "BuiltinMotorActuator",
    "BuiltinMotorActuatorCfg",
    "BuiltinMuscleActuator",
    "BuiltinMuscleActuatorCfg",
    "BuiltinPdActuator",
    "BuiltinPdActuatorCfg",
    "BuiltinPositionActuator",
    "BuiltinPositionActuatorCfg",
    "BuiltinVelocityActuator",
    "BuiltinVelocityActuatorCfg",
    "CommandField",
    "DcMotorActuator",
    "DcMotorActuatorCfg",
    "DcMotorDatasheetParams",
    "DcMotorInputMode",
    "DcMotorPhysicalParams",
    "DelayBuffer",
    "FusedActuatorGroup",
    "IdealPdActuator",
    "IdealPdActuatorCfg",
    "LearnedMlpActuator",
    "LearnedMlpActuatorCfg",
    "MotorActuatorCfg",
    "PositionActuatorCfg",
    "TransmissionType",
    "VelocityActuatorCfg",
    "XmlActuator",
    "XmlActuatorCfg",
]

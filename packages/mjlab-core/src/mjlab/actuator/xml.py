"""`XmlActuatorCfg`: keep the MJCF's own actuators on the selected joints."""

from __future__ import annotations

from dataclasses import dataclass

from mjlab.actuator.actuator import Actuator
from mjlab.actuator.actuator_cfg import ActuatorCfg, CommandField


@dataclass(kw_only=True)
class XmlActuatorCfg(ActuatorCfg):
    """The MJCF's actuators on the selected joints, as written (the regexes select joints
    whose MJCF actuator is kept; a joint without one raises ValueError). Joint properties
    (armature, frictionloss, viscous_damping) are still applied."""

    command_field: CommandField = CommandField.POSITION
    """Which target drives ctrl: position, velocity or effort."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.effort_limit is not None:
            raise ValueError(
                "XmlActuatorCfg.effort_limit must be None: XML actuators keep the MJCF's own "
                "forcerange; edit the MJCF, or use a Builtin*ActuatorCfg to set a limit."
            )

    def target_field(self) -> CommandField:
        return self.command_field

    def apply(self, spec, joints) -> None:
        values = self._per_joint([j.name for j in joints])
        have = {a.target for a in spec.actuators}
        missing = [j.name for j in joints if j.name not in have]
        if missing:
            raise ValueError(
                f"XmlActuatorCfg: joints {missing} have no actuator in the MJCF; select only "
                "joints that have one, or use a Builtin*ActuatorCfg for them."
            )
        for i, joint in enumerate(joints):
            if values["armature"] is not None:
                joint.armature = values["armature"][i]
            if values["frictionloss"] is not None:
                joint.frictionloss = values["frictionloss"][i]
            if values["viscous_damping"] is not None:
                joint.damping[0] = values["viscous_damping"][i]


class XmlActuator(Actuator):
    """Runtime of `XmlActuatorCfg`."""


XmlActuatorCfg._runtime = XmlActuator

"""Joint action terms: position (PD targets), velocity, effort."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import torch

from mjlab.envs.mdp.action_base import BaseAction, BaseActionCfg
from mjlab.managers.description import ActionTermDescription


class JointAction(BaseAction):
    """processed = raw * scale + offset (then clip), for the selected actuated joints in joint
    order (`BaseAction` with the joint transmission)."""

    cfg: JointActionCfg
    action_type: str | None = None
    """What the processed action is: "joint_position", "joint_velocity" or "joint_effort"."""

    def __init__(self, cfg: JointActionCfg, env):
        super().__init__(cfg, env)
        e = self.entity
        self.joint_names = self.target_names
        self._joint_ids = list(self._target_list)
        if getattr(cfg, "use_default_offset", False):
            default = (
                e.data.default_joint_vel
                if self.action_type == "joint_velocity"
                else e.data.default_joint_pos
            )
            self.offset = default[:, self._joint_ids].clone()

    @property
    def joint_ids(self) -> list[int]:
        """Entity joint indices this term drives, in action order."""
        return self._joint_ids

    def describe(self) -> ActionTermDescription:
        """Joints in action order with their scale, offset (first env), clip, the compiled
        model's nominal gains (before randomization), default pose, joint range and speed
        limit (`EntityCfg.joint_vel_limit`; None where unknown)."""
        e, ids = self.entity, self._joint_ids
        data = e.data
        gains = data.nominal_gains
        model = self.env.sim.mj_model
        dofs = [int(model.jnt_dofadr[e.joint_ids_global[j]]) for j in ids]
        description = super().describe()
        description.update(
            action_type=self.action_type,
            joint_names=list(self.joint_names),
            scale=[float(v) for v in self.scale.tolist()],
            offset=[float(v) for v in self.offset[0].tolist()],
            stiffness=[float(gains["stiffness"][j]) for j in ids],
            damping=[float(gains["damping"][j]) for j in ids],
            effort_limit=[float(gains["effort_limit"][j]) for j in ids],
            armature=[float(model.dof_armature[d]) for d in dofs],
            default_joint_pos=[float(v) for v in data.default_joint_pos[0, ids].tolist()],
            joint_pos_limits=[
                [float(v) for v in lim] for lim in data.joint_pos_limits[0, ids].tolist()
            ],
            joint_vel_limit=[
                None if math.isnan(v) else float(v) for v in gains["velocity_limit"][ids].tolist()
            ],
        )
        return description


class JointPositionAction(JointAction):
    action_type = "joint_position"
    cfg: JointPositionActionCfg

    def __init__(self, cfg: JointPositionActionCfg, env):
        super().__init__(cfg, env)
        self._joint_ids_t = torch.tensor(self._joint_ids, dtype=torch.long, device=env.device)

    def process_actions(self, actions: torch.Tensor) -> None:
        super().process_actions(actions)
        if self.cfg.clamp_to_joint_limits:
            # Read each step, per env: a task may give its envs different ranges.
            limits = self.entity.data.joint_pos_limits[:, self._joint_ids_t]
            torch.maximum(self.processed_actions, limits[..., 0], out=self.processed_actions)
            torch.minimum(self.processed_actions, limits[..., 1], out=self.processed_actions)

    def describe(self) -> ActionTermDescription:
        """`JointAction.describe` plus `clamp_to_joint_limits`."""
        description = super().describe()
        description["clamp_to_joint_limits"] = bool(self.cfg.clamp_to_joint_limits)
        return description

    def apply_actions(self) -> None:
        self.entity.set_joint_position_target(self.processed_actions, joint_ids=self._joint_ids)


class JointVelocityAction(JointAction):
    action_type = "joint_velocity"

    def apply_actions(self) -> None:
        self.entity.set_joint_velocity_target(self.processed_actions, joint_ids=self._joint_ids)


class JointEffortAction(JointAction):
    action_type = "joint_effort"

    def apply_actions(self) -> None:
        self.entity.set_joint_effort_target(self.processed_actions, joint_ids=self._joint_ids)


@dataclass(kw_only=True)
class JointActionCfg(BaseActionCfg):
    """Selects actuated joints by regex; scale/offset per joint (scalar or {regex: value})."""

    _transmission: ClassVar[str | None] = "joint"
    actuator_names: tuple[str, ...] = (".*",)
    """Regexes over the entity's actuated joint names."""
    scale: float | Mapping[str, float] = 1.0
    """Multiplier on the raw action."""
    offset: float | Mapping[str, float] = 0.0
    """Added after scaling."""


@dataclass(kw_only=True)
class JointPositionActionCfg(JointActionCfg):
    """target q = default_q + scale * action (with use_default_offset), rad."""

    class_type: type = JointPositionAction
    """Term class."""
    use_default_offset: bool = True
    """Use the entity's default joint positions as the offset."""
    clamp_to_joint_limits: bool = False
    """Clamp the targets to each joint's range (`EntityData.joint_pos_limits`, per env) after
    scale, offset and clip. The robot-side loop does the same by default
    (`mjlab.deploy.SafetyCfg.clamp_to_joint_limits`): a policy trained without it may ask for
    targets past the range, which there pull less hard than in training."""


@dataclass(kw_only=True)
class JointVelocityActionCfg(JointActionCfg):
    """target qdot = offset + scale * action, rad/s."""

    class_type: type = JointVelocityAction
    """Term class."""
    use_default_offset: bool = False
    """Use the entity's default joint velocities as the offset (in place of `offset`)."""


@dataclass(kw_only=True)
class JointEffortActionCfg(JointActionCfg):
    """effort = offset + scale * action, N m."""

    class_type: type = JointEffortAction
    """Term class."""

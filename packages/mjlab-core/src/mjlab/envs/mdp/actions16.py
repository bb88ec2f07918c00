"""mjlab 1.6's relative joint, tendon and site action terms.

- `RelativeJointPositionAction`: joint position targets relative to the current positions.
- `TendonLengthAction`, `TendonVelocityAction`, `TendonEffortAction`: commands of the MJCF
  actuators whose transmission is one of the entity's tendons (`<position tendon=...>`,
  `<velocity tendon=...>`, `<motor tendon=...>` / `<general tendon=...>`).
- `SiteEffortAction`: forces / torques of the MJCF actuators whose transmission is one of the
  entity's sites (`<motor site=...>`, along the actuator's gear in the site frame, or relative
  to its `refsite`).

The actuator library (`mjlab.actuator`) builds joint actuators only, so the tendon and site
terms drive the actuators the MJCF declares: each selected tendon or site must have exactly
one actuator of the term's kind (classified from its bias: a position servo has a position
term, a velocity servo only a velocity term, a motor neither), and the term writes the
processed action into that actuator's `ctrl` column, which MuJoCo reads as the length target
(m), velocity target (m/s, tendon length rate) or force (N along the tendon; for a site, the
gear's force / torque per unit of ctrl). The entity's actuator machinery writes only the ctrl
of joint actuators, so nothing else overwrites these columns. Values are written once per env
step and held over the decimation, as the joint terms do.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

import mujoco
import numpy as np
import torch

from mjlab.actuator import TransmissionType
from mjlab.envs.mdp.action_base import SITE, TENDON, BaseAction, BaseActionCfg, transmission_name
from mjlab.envs.mdp.actions import JointAction, JointActionCfg

Command = Literal["position", "velocity", "effort"]

_TRN = {"tendon": mujoco.mjtTrn.mjTRN_TENDON, "site": mujoco.mjtTrn.mjTRN_SITE}
_AFFINE = mujoco.mjtBias.mjBIAS_AFFINE
_NO_BIAS = mujoco.mjtBias.mjBIAS_NONE
_INTEGRATOR = mujoco.mjtDyn.mjDYN_INTEGRATOR


# -- relative joint positions ---------------------------------------------------------------------
class RelativeJointPositionAction(JointAction):
    """Position targets relative to where the joints are: target = q + clip(scale * raw), rad
    (m for slides), with q the joint positions when the action is applied (once per env step,
    held over the decimation). Needs position actuators on the joints.

    `describe()` reports `action_type` None: the exporter's robot loop sends absolute targets
    only.
    """

    cfg: RelativeJointPositionActionCfg
    action_type = None

    def apply_actions(self) -> None:
        current = self.entity.data.joint_pos[:, self._target_ids]
        self.entity.set_joint_position_target(
            current + self.processed_actions, joint_ids=self._joint_ids
        )


@dataclass(kw_only=True)
class RelativeJointPositionActionCfg(JointActionCfg):
    """target = current joint position + action * scale (rad). `offset` must stay 0 (a fixed
    offset on a relative target would only drift the joints); `clip` clamps the delta."""

    class_type: type = RelativeJointPositionAction
    """Term class."""

    def validate(self) -> None:
        super().validate()
        if isinstance(self.offset, Mapping) or self.offset != 0:
            raise ValueError(
                f"{type(self).__name__}.offset must be 0, got {self.offset!r}: the target is "
                "the current position + action * scale, where a fixed offset has no meaning."
            )


# -- MJCF actuators on tendons and sites ----------------------------------------------------------
def actuator_command(model: mujoco.MjModel, actuator: int) -> str:
    """What an actuator's ctrl means, from its bias and dynamics: "position" (an affine bias
    with a position term: `<position>`), "velocity" (only a velocity term: `<velocity>`; or an
    integrator feeding a position servo: `<intvelocity>`), "effort" (no bias: `<motor>`, a plain
    `<general>`), or "other" (muscles, user bias)."""
    bias = int(model.actuator_biastype[actuator])
    if bias == _NO_BIAS:
        return "effort"
    if bias != _AFFINE:
        return "other"
    prm = model.actuator_biasprm[actuator]
    if prm[1] != 0:
        integrated = int(model.actuator_dyntype[actuator]) == _INTEGRATOR
        return "velocity" if integrated else "position"
    return "velocity" if prm[2] != 0 else "effort"


def transmission_actuators(
    model: mujoco.MjModel,
    kind: str,
    global_ids: list[int],
    names: list[str],
    command: str,
    owner: str,
) -> list[int]:
    """The actuator of `command` kind driving each tendon / site, in the given order.

    Args:
        model: the compiled scene model.
        kind: "tendon" or "site".
        global_ids: model ids of the tendons / sites.
        names: their names (for messages).
        command: "position", "velocity" or "effort" (see `actuator_command`).
        owner: who asks, for messages ("entity 'robot'").

    Returns:
        One model actuator id per tendon / site.

    Raises:
        ValueError: a tendon / site has no actuator of that kind, or more than one; the message
            names it and lists its actuators with their kinds.
    """
    trn = _TRN[kind]
    by_target: dict[int, list[int]] = {}
    for a in range(model.nu):
        if int(model.actuator_trntype[a]) == trn:
            by_target.setdefault(int(model.actuator_trnid[a, 0]), []).append(a)
    chosen = []
    for gid, name in zip(global_ids, names, strict=True):
        acts = by_target.get(gid, [])
        fit = [a for a in acts if actuator_command(model, a) == command]
        if len(fit) != 1:
            listed = [
                f"{mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or a} "
                f"({actuator_command(model, a)})"
                for a in acts
            ]
            problem = "no" if not fit else f"{len(fit)}"
            raise ValueError(
                f"The {kind} '{name}' of {owner} has {problem} {command} actuators (its "
                f"actuators: {listed or 'none'}); the term needs exactly one: an MJCF actuator "
                f"with {kind}='{name}' of that kind."
            )
        chosen.append(fit[0])
    return chosen


class TransmissionAction(BaseAction):
    """Writes `processed_actions` into the ctrl of one MJCF actuator per selected tendon or
    site (see the module docstring). `actuator_ids` lists those actuators (model ids), in
    action order."""

    command: ClassVar[str] = "effort"
    """The kind of actuator driven: "position", "velocity" or "effort"."""
    _snapshot_exclude = (*BaseAction._snapshot_exclude, "_ctrl_sel", "_ctrl_ids", "actuator_ids")

    def __init__(self, cfg: BaseActionCfg, env):
        super().__init__(cfg, env)
        e = self.entity
        kind = transmission_name(cfg.transmission_type)
        if kind not in _TRN:
            raise ValueError(
                f"{type(self).__name__} drives tendons or sites; its config's "
                f"transmission_type is {cfg.transmission_type!r}."
            )
        global_all = e.tendon_ids_global if kind == "tendon" else e.site_ids_global
        global_ids = [int(global_all[i]) for i in self._target_list]
        model = e.sim.mj_model
        self.actuator_ids = transmission_actuators(
            model, kind, global_ids, self.target_names, self.command, f"entity '{e.name}'"
        )
        """Model ids of the driven actuators (their ctrl columns), in action order."""
        cols = np.asarray(self.actuator_ids, dtype=np.int64)
        self._ctrl_ids = torch.as_tensor(cols, device=env.device)
        consecutive = np.array_equal(cols, np.arange(cols[0], cols[0] + cols.size))
        self._ctrl_sel = slice(int(cols[0]), int(cols[-1]) + 1) if consecutive else None

    def apply_actions(self) -> None:
        data = self.env.sim.data
        if self._ctrl_sel is not None:  # one copy into a kept view
            data.columns("ctrl", self._ctrl_sel).copy_(self.processed_actions)
        else:
            data.ctrl[:, self._ctrl_ids] = self.processed_actions.to(data.ctrl.dtype)


class TendonLengthAction(TransmissionAction):
    """Length targets of tendon position servos: ctrl = clip(raw * scale + offset), m."""

    cfg: TendonLengthActionCfg
    command = "position"


class TendonVelocityAction(TransmissionAction):
    """Length-rate targets of tendon velocity servos: ctrl = clip(raw * scale + offset), m/s."""

    cfg: TendonVelocityActionCfg
    command = "velocity"


class TendonEffortAction(TransmissionAction):
    """Tendon motor commands: ctrl = clip(raw * scale + offset); the tendon force is gain *
    gear * ctrl, N (a `<motor>`: gain 1)."""

    cfg: TendonEffortActionCfg
    command = "effort"


class SiteEffortAction(TransmissionAction):
    """Site motor commands: ctrl = clip(raw * scale + offset); MuJoCo applies gain * ctrl times
    the actuator's 6-D gear (force, torque) in the site frame (or relative to its refsite)."""

    cfg: SiteEffortActionCfg
    command = "effort"


@dataclass(kw_only=True)
class _TendonActionCfg(BaseActionCfg):
    """Base of the tendon action configs: `actuator_names` are regexes over the entity's
    tendon names."""

    transmission_type: TransmissionType | str = TENDON
    """Tendons (fixed)."""
    _transmission: ClassVar[str | None] = "tendon"


@dataclass(kw_only=True)
class TendonLengthActionCfg(_TendonActionCfg):
    """Tendon length targets, m."""

    class_type: type = TendonLengthAction
    """Term class."""


@dataclass(kw_only=True)
class TendonVelocityActionCfg(_TendonActionCfg):
    """Tendon length-rate targets, m/s."""

    class_type: type = TendonVelocityAction
    """Term class."""


@dataclass(kw_only=True)
class TendonEffortActionCfg(_TendonActionCfg):
    """Tendon motor commands."""

    class_type: type = TendonEffortAction
    """Term class."""


@dataclass(kw_only=True)
class SiteEffortActionCfg(BaseActionCfg):
    """Site motor commands (`actuator_names`: regexes over the entity's site names)."""

    class_type: type = SiteEffortAction
    """Term class."""
    transmission_type: TransmissionType | str = SITE
    """Sites (fixed)."""
    _transmission: ClassVar[str | None] = "site"


__all__ = [
    "RelativeJointPositionAction",
    "RelativeJointPositionActionCfg",
    "SiteEffortAction",
    "SiteEffortActionCfg",
    "TendonEffortAction",
    "TendonEffortActionCfg",
    "TendonLengthAction",
    "TendonLengthActionCfg",
    "TendonVelocityAction",
    "TendonVelocityActionCfg",
]

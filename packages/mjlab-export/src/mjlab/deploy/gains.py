"""Per-joint PD gains read from a compiled MuJoCo model, in joint order (never actuator declaration order).

A MuJoCo `position` actuator with joint transmission applies
`force = gainprm[0] * ctrl + biasprm[1] * q + biasprm[2] * qd`, so kp = gainprm[0] = -biasprm[1]
and kd = -biasprm[2] (MuJoCo documentation, "position" actuator shortcut). Actuators are matched
to joints by their transmission target, never by declaration order.

mujoco is imported inside the functions: `import mjlab.deploy` needs only numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import mujoco


@dataclass(frozen=True)
class JointGains:
    """PD parameters of a list of joints, each array in the order of `joint_names`."""

    joint_names: tuple[str, ...]
    """The joints, in the order asked for."""
    stiffness: np.ndarray
    """(n,) kp, N m/rad."""
    damping: np.ndarray
    """(n,) kd, N m s/rad (actuator velocity feedback; joint passive damping not included)."""
    effort_limit: np.ndarray
    """(n,) torque limit, N m: the tighter of the actuator force range and the joint's
    actuator-force range; inf when neither is limited."""
    armature: np.ndarray
    """(n,) reflected rotor inertia of the joint's dof, kg m^2."""


def find_joint(model: mujoco.MjModel, name: str) -> int:
    """Id of the joint called `name`, or of the only joint whose name ends with "/" + `name`
    (mjlab scenes prefix entity names, e.g. "robot/FR_hip_joint").

    Raises:
        ValueError: no such joint, or several prefixed joints match.
    """
    import mujoco

    jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
    if jid >= 0:
        return int(jid)
    names = [model.joint(j).name for j in range(model.njnt)]
    matches = [j for j, full in enumerate(names) if full.endswith("/" + name)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ValueError(
            f"Joint '{name}' is ambiguous in the model: {[names[j] for j in matches]}."
        )
    raise ValueError(f"Joint '{name}' is not in the model; its joints are {names}.")


def actuator_for_joint(model: mujoco.MjModel, joint_id: int) -> int:
    """Id of the one actuator whose transmission drives joint `joint_id`.

    Raises:
        ValueError: no actuator, or more than one, drives the joint (names them).
    """
    import mujoco

    ids = [
        a
        for a in range(model.nu)
        if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT
        and model.actuator_trnid[a, 0] == joint_id
    ]
    joint = model.joint(joint_id).name
    if not ids:
        raise ValueError(f"Joint '{joint}' has no actuator with a joint transmission in the model.")
    if len(ids) > 1:
        raise ValueError(
            f"Joint '{joint}' is driven by several actuators {[model.actuator(a).name for a in ids]}; "
            "keep one position actuator per joint."
        )
    return ids[0]


def joint_gains_from_model(model: mujoco.MjModel, joint_names: Sequence[str]) -> JointGains:
    """PD gains, effort limits and armature of `joint_names`, read from their position actuators.

    Args:
        model: compiled model whose joints are driven by `position`-type actuators (fixed gain,
            affine bias with biasprm[1] == -gainprm[0]) with gear 1.
        joint_names: joint names in control order (scene prefixes such as "robot/" optional).

    Returns:
        `JointGains` with every array in the order of `joint_names`.

    Raises:
        ValueError: a joint is missing, has no or several actuators, or its actuator is not a
            PD position actuator with gear 1 (the message names the joint and the actuator).
    """
    import mujoco

    kp, kd, limit, armature = [], [], [], []
    for name in joint_names:
        jid = find_joint(model, name)
        aid = actuator_for_joint(model, jid)
        actuator = model.actuator(aid).name
        gain, bias = model.actuator_gainprm[aid], model.actuator_biasprm[aid]
        if (
            model.actuator_gaintype[aid] != mujoco.mjtGain.mjGAIN_FIXED
            or model.actuator_biastype[aid] != mujoco.mjtBias.mjBIAS_AFFINE
            or not np.isclose(bias[1], -gain[0])
        ):
            raise ValueError(
                f"Actuator '{actuator}' of joint '{name}' is not a position (PD) actuator "
                "(fixed gain, affine bias, biasprm[1] = -kp); use <position kp=... kv=...>."
            )
        if model.actuator_gear[aid, 0] != 1.0:
            raise ValueError(
                f"Actuator '{actuator}' of joint '{name}' has gear {model.actuator_gear[aid, 0]}; "
                "joint-space gains need gear 1."
            )
        effort = np.inf
        if model.actuator_forcelimited[aid]:
            effort = min(effort, *np.abs(model.actuator_forcerange[aid]))
        if model.jnt_actfrclimited[jid]:
            effort = min(effort, *np.abs(model.jnt_actfrcrange[jid]))
        kp.append(gain[0])
        kd.append(-bias[2])
        limit.append(effort)
        armature.append(model.dof_armature[model.jnt_dofadr[jid]])
    return JointGains(
        joint_names=tuple(joint_names),
        stiffness=np.asarray(kp, dtype=np.float64),
        damping=np.asarray(kd, dtype=np.float64),
        effort_limit=np.asarray(limit, dtype=np.float64),
        armature=np.asarray(armature, dtype=np.float64),
    )

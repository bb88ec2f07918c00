"""Deployment descriptions: what a manager computes, as plain data (dicts, lists, numbers, strings).

`ObservationManager.describe(group)` and `ActionManager.describe()` return these. They say
everything a robot needs to reproduce a group's observation vector and an action term's joint
commands, and nothing that exists only in training (noise, randomization). mjlab-export turns
them into the metadata of an ONNX file; nothing here imports torch types into the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from mjlab.managers.scene_entity_config import SceneEntityCfg


class ObservationTermDescription(TypedDict):
    """One observation term. The env computes, per step: func -> (noise) -> clip -> scale, then
    pushes the value into a line of `delay + max(history_length, 1)` slots that is filled with
    the current value at an episode start; it reads the value `delay` steps old (history 0) or
    the `history_length` values ending there, oldest first."""

    name: str
    """Term name in its group, e.g. "joint_pos"."""
    func: str
    """Function (or class) name of the term, e.g. "joint_pos_rel"."""
    shape: list[int]
    """Shape of one step's value per env, e.g. [12]."""
    clip: list[float] | None
    """[min, max] applied before scaling, or None."""
    scale: float | list[float] | None
    """Multiplier after clipping (one number or one per value), or None."""
    delay: int
    """Steps of latency (0: the current value): the term's `delay`. The simulated sensor
    latency of its `delay_min_lag` .. `delay_max_lag` is a training-time corruption and is
    not included (a robot's sensors bring their own)."""
    history_length: int
    """Past values kept (0: none)."""
    flatten_history_dim: bool
    """True: history flattened to (history_length * dim,), oldest first; False: (history_length,
    dim)."""
    params: dict[str, Any]
    """The term's parameters as plain data; an entity selection is {"entity": name, and the
    resolved "joint_names"/"body_names"/"geom_names" when it selects some}."""


class ObservationGroupDescription(TypedDict):
    """An observation group in term order."""

    group: str
    """Group name, e.g. "actor"."""
    concatenate_terms: bool
    """True: the group is one vector, the terms concatenated in order along the last axis."""
    terms: list[ObservationTermDescription]
    """Terms in order."""


class ActionTermDescription(TypedDict, total=False):
    """One action term. The policy's slice `a` of the action becomes
    `processed = clip(offset + scale * a)` (float32, as the term computes it)."""

    name: str
    """Term name, e.g. "joint_pos"."""
    type: str
    """Class name of the term, e.g. "JointPositionAction"."""
    action_type: str | None
    """"joint_position" (PD targets, rad), "joint_velocity" (rad/s), "joint_effort" (N m), or
    None for a term that does not command joints."""
    entity: str
    """Entity the term drives."""
    dim: int
    """Values of the policy action this term reads."""
    joint_names: list[str]
    """Joints in action order (names as in the entity's MJCF, no scene prefix)."""
    scale: list[float]
    """Per-joint multiplier."""
    offset: list[float]
    """Per-joint offset of the first env (the default pose when the term uses it), in the
    command's unit."""
    clip: list[float] | None
    """[min, max] of the processed action, or None."""
    stiffness: list[float]
    """Per-joint PD kp of the compiled model, N m/rad."""
    damping: list[float]
    """Per-joint PD kd of the compiled model, N m s/rad."""
    effort_limit: list[float]
    """Per-joint actuator force limit, N m (inf: none)."""
    armature: list[float]
    """Per-joint armature of the compiled model, kg m^2."""
    default_joint_pos: list[float]
    """Per-joint default position of the first env, rad."""
    joint_pos_limits: list[list[float]]
    """Per-joint [lower, upper] range of the MJCF, rad (+-inf: unlimited)."""
    joint_vel_limit: list[float | None]
    """Per-joint speed limit of the entity's config, rad/s (inf: none stated; None: unknown)."""
    clamp_to_joint_limits: bool
    """Position terms: the targets are clamped to `joint_pos_limits` (per env) after `clip`."""


def plain_value(value: Any, scene: Any = None) -> Any:
    """`value` as JSON-able plain data: numbers, strings, bools, None, lists and dicts of them.

    A `SceneEntityCfg` becomes {"entity": name} plus the names it selects (resolved against
    `scene` when given); anything else that is not plain becomes its `repr`.
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, SceneEntityCfg):
        out: dict[str, Any] = {"entity": value.name}
        target = None
        if scene is not None:
            try:
                target = scene[value.name]
            except KeyError:
                target = None
        for kind in ("joint", "body", "geom"):
            regexes = getattr(value, f"{kind}_names")
            if regexes is None:
                continue
            ids = getattr(value, f"{kind}_ids")
            names = getattr(target, f"{kind}_names", None) if target is not None else None
            if names is not None and not isinstance(ids, slice):
                out[f"{kind}_names"] = [names[i] for i in ids]
            else:
                out[f"{kind}_names"] = list(regexes)
        return out
    if isinstance(value, Mapping):
        return {str(k): plain_value(v, scene) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [plain_value(v, scene) for v in value]
    tolist = getattr(value, "tolist", None)
    if callable(tolist):  # numpy arrays and scalars, torch tensors
        return plain_value(tolist(), scene)
    return repr(value)


def func_name(func: Any) -> str:
    """Name of a term function, or of the class of a class-based term instance."""
    name = getattr(func, "__name__", None)
    return name if isinstance(name, str) else type(func).__name__

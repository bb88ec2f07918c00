"""`BaseAction` / `BaseActionCfg` (mjlab 1.6's names): an action term that maps its slice of the
policy action affinely onto one kind of actuator transmission of an entity (joints, tendons or
sites); the joint, tendon and site action terms derive from it.

The transmission of a term (`BaseActionCfg.transmission_type`) decides what `actuator_names`
selects:

- joint: the entity's actuated joints (`Entity.actuator_names`, joints driven by an actuator
  with a joint transmission), in joint order;
- tendon: the entity's tendons (`Entity.tendon_names`), in model order;
- site: the entity's sites (`Entity.site_names`), in model order.

`preserve_order=True` orders them as the regexes are listed instead.
"""

from __future__ import annotations

import enum
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import torch

from mjlab.actuator import TransmissionType
from mjlab.managers.action_manager import ActionTerm
from mjlab.managers.manager_term_config import ActionTermCfg
from mjlab.utils.config import copy_config
from mjlab.utils.string import resolve_matching_values

TRANSMISSIONS = ("joint", "tendon", "site")
"""The transmission kinds an action term can drive (`BaseActionCfg.transmission_type`)."""

JOINT = TransmissionType.JOINT
TENDON = TransmissionType.TENDON
SITE = TransmissionType.SITE


def transmission_name(value: object) -> str | None:
    """ "joint", "tendon" or "site" for a `TransmissionType` member (or any enum whose value is
    one of these strings) or such a string (any case); None for anything else."""
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, str) and value.lower() in TRANSMISSIONS:
        return value.lower()
    return None


class _FromBuild:
    """`class_type` of a `BaseActionCfg` that gives no term class: constructing it returns
    `cfg.build(env)`, so a config subclass written the mjlab 1.6 way (overriding `build`) works
    with the action manager, which constructs `class_type(cfg, env)`."""

    def __new__(cls, cfg, env):
        return cfg.build(env)


def _declared_term(cls: type) -> object:
    """The `class_type` default a config class declares."""
    return cls.__dataclass_fields__["class_type"].default


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclass(kw_only=True)
class BaseActionCfg(ActionTermCfg):
    """An affine action on one kind of transmission: processed = clip(raw * scale + offset),
    one value per selected joint, tendon or site (see the module docstring for the selection).

    A subclass names its term in `class_type`, or (as in mjlab 1.6) overrides `build(env)`
    and leaves `class_type` at its default, which then calls `build`.
    """

    class_type: type = _FromBuild
    """The term class, constructed as `class_type(cfg, env)`; the default calls `build(env)`."""
    transmission_type: TransmissionType | str = JOINT
    """What `actuator_names` selects: `TransmissionType.JOINT`, `TENDON` or `SITE` (or the
    strings "joint", "tendon", "site")."""
    actuator_names: tuple[str, ...] | list[str]
    """Regexes (full match) over the names of the selected kind: actuated joints, tendons or
    sites of the entity."""
    scale: float | Mapping[str, float] = 1.0
    """Multiplier on the raw action: a scalar, or a {regex: value} dict that gives every
    selected target a value."""
    offset: float | Mapping[str, float] = 0.0
    """Added after scaling, in the command's unit: a scalar or a {regex: value} dict."""
    preserve_order: bool = False
    """Order the targets (and so the action's columns) as the `actuator_names` regexes are
    listed (each regex's matches in model order) instead of model order."""

    _transmission: ClassVar[str | None] = None
    """The only transmission a subclass drives (None: any)."""

    def __post_init__(self) -> None:
        # mjlab 1.6 constructs a term by `cfg.build(env)`: a subclass that overrides `build`
        # (and keeps the declared class_type) is constructed through it by the action manager.
        if type(self).build is not BaseActionCfg.build and self.class_type is _declared_term(
            type(self)
        ):
            self.class_type = _FromBuild
        super().__post_init__()

    def build(self, env) -> ActionTerm:
        """The term for `env` (mjlab 1.6's way of constructing a term from its config):
        `class_type(copy, env)` on a copy of this config (the term resolves names in its own
        copy; this config stays as it is), with the class the config declares when
        `class_type` defers to `build`."""
        term = self.class_type
        if term is _FromBuild:
            term = _declared_term(type(self))
        if not isinstance(term, type) or term is _FromBuild:
            raise ValueError(
                f"{type(self).__name__}.class_type is not set: give the action term class, or "
                "override build(env) to construct the term."
            )
        return term(copy_config(self), env)

    def validate(self) -> None:
        super().validate()
        name = type(self).__name__
        kind = transmission_name(self.transmission_type)
        if kind is None:
            raise ValueError(
                f"{name}.transmission_type must be a TransmissionType or one of "
                f"{list(TRANSMISSIONS)}, got {self.transmission_type!r}."
            )
        if self._transmission is not None and kind != self._transmission:
            raise ValueError(
                f"{name}.transmission_type is {self.transmission_type!r}; this term drives "
                f"{self._transmission}s only (leave the field at its default)."
            )
        names = self.actuator_names
        if not isinstance(names, str) and not (
            isinstance(names, (tuple, list))
            and len(names) > 0
            and all(isinstance(n, str) for n in names)
        ):
            raise ValueError(
                f"{name}.actuator_names must be a regex or a non-empty tuple of regexes over "
                f"the entity's {kind} names, got {names!r}."
            )
        for field_name in ("scale", "offset"):
            value = getattr(self, field_name)
            ok = _is_number(value) or (
                isinstance(value, Mapping)
                and all(isinstance(k, str) and _is_number(v) for k, v in value.items())
            )
            if not ok:
                raise ValueError(
                    f"{name}.{field_name} must be a number or a {{regex: number}} dict, got "
                    f"{value!r}."
                )
        if not isinstance(self.preserve_order, bool):
            raise ValueError(f"{name}.preserve_order must be a bool, got {self.preserve_order!r}.")


class BaseAction(ActionTerm):
    """Affine action on the targets of one transmission kind (see the module docstring).

    Per env step, `process_actions(raw)` stores `raw_actions` and computes
    `processed_actions = clip(raw * scale + offset)`, both (num_envs, action_dim), in the
    command's unit; a subclass's `apply_actions` writes the processed values to its actuators.

    Attributes: `scale` (action_dim,) and `offset` (num_envs, action_dim) tensors; `target_ids`
    (action_dim,) long tensor of entity-local joint, tendon or site indices and `target_names`,
    in action order. mjlab 1.6's spellings are kept for subclasses written against it:
    `raw_action`, `_raw_actions`, `_processed_actions`, `_scale`, `_offset`, `_target_ids`,
    `_target_names`, `_entity`, `_env`, `num_envs`, `device`.
    """

    cfg: BaseActionCfg

    _snapshot_exclude: tuple[str, ...] = ("_target_list", "_target_ids")
    """Fixed lookups, not env state (subclasses add theirs to this tuple)."""

    def __init__(self, cfg: BaseActionCfg, env):
        super().__init__(cfg, env)
        ids, names = self._find_targets(cfg)
        self._target_names = list(names)
        self._target_list = [int(i) for i in ids]
        n, dev = env.num_envs, env.device
        self._target_ids = torch.tensor(self._target_list, dtype=torch.long, device=dev)
        kind = transmission_name(cfg.transmission_type)
        owner = f"action term for '{self.entity.name}'"
        scale = resolve_matching_values(_as_values(cfg.scale), names, what=kind, owner=owner)
        self.scale = torch.tensor(scale, device=dev)
        offset = resolve_matching_values(_as_values(cfg.offset), names, what=kind, owner=owner)
        self.offset = torch.tensor(offset, device=dev).repeat(n, 1)
        self.raw_actions = torch.zeros(n, len(names), device=dev)
        self.processed_actions = torch.zeros_like(self.raw_actions)

    # -- target selection --------------------------------------------------------------------
    def _find_targets(self, cfg: BaseActionCfg) -> tuple[list[int], list[str]]:
        """Entity-local indices and names of the selected joints, tendons or sites.

        Raises:
            ValueError: a regex matches nothing (the message lists what there is), or the entity
                has nothing of that kind.
        """
        e = self.entity
        kind = transmission_name(cfg.transmission_type)
        if kind == "joint":
            if len(e.actuated_joint_ids) == 0:
                raise ValueError(f"Entity '{e.name}' has no actuated joints.")
            ids, names = _select(e.find_actuators, cfg.actuator_names, cfg.preserve_order)
            return [int(e.actuated_joint_ids[i]) for i in ids], names
        if kind == "tendon":
            if not e.tendon_names:
                raise ValueError(f"Entity '{e.name}' has no tendons.")
            return _select(e.find_tendons, cfg.actuator_names, cfg.preserve_order)
        if kind == "site":
            if not e.site_names:
                raise ValueError(f"Entity '{e.name}' has no sites.")
            return _select(e.find_sites, cfg.actuator_names, cfg.preserve_order)
        raise ValueError(f"Unknown transmission_type {cfg.transmission_type!r}.")

    # -- mjlab 1.6 spellings -------------------------------------------------------------------
    @property
    def action_dim(self) -> int:
        return len(self._target_names)

    @property
    def target_ids(self) -> torch.Tensor:
        """(action_dim,) entity-local indices of the joints, tendons or sites, action order."""
        return self._target_ids

    @property
    def target_names(self) -> list[str]:
        """Names of the joints, tendons or sites, action order."""
        return self._target_names

    @property
    def raw_action(self) -> torch.Tensor:
        """(num_envs, action_dim) the last raw action (before scale and offset)."""
        return self.raw_actions

    @property
    def _raw_actions(self) -> torch.Tensor:
        return self.raw_actions

    @_raw_actions.setter
    def _raw_actions(self, value: torch.Tensor) -> None:
        self.raw_actions = value

    @property
    def _processed_actions(self) -> torch.Tensor:
        return self.processed_actions

    @_processed_actions.setter
    def _processed_actions(self, value: torch.Tensor) -> None:
        self.processed_actions = value

    @property
    def _scale(self) -> torch.Tensor:
        return self.scale

    @_scale.setter
    def _scale(self, value) -> None:
        self.scale = value

    @property
    def _offset(self) -> torch.Tensor:
        return self.offset

    @_offset.setter
    def _offset(self, value) -> None:
        self.offset = value

    @property
    def _entity(self):
        return self.entity

    @property
    def _env(self):
        return self.env

    @property
    def num_envs(self) -> int:
        return self.env.num_envs

    @property
    def device(self):
        return self.env.device

    # -- per step ---------------------------------------------------------------------------------
    def process_actions(self, actions: torch.Tensor) -> None:
        self.raw_actions[:] = actions
        # actions * scale + offset (then clipped), computed in place in the kept buffer.
        processed = torch.mul(actions, self.scale, out=self.processed_actions).add_(self.offset)
        if self.cfg.clip is not None:
            processed.clamp_(*self.cfg.clip)

    def apply_actions(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define apply_actions().")

    def reset(self, env_ids: torch.Tensor | slice | None = None) -> None:
        self.raw_actions[slice(None) if env_ids is None else env_ids] = 0.0


def _as_values(value: float | Mapping[str, float]) -> float | dict[str, float]:
    return dict(value) if isinstance(value, Mapping) else float(value)


def _select(find, patterns, preserve_order: bool) -> tuple[list[int], list[str]]:
    """`find(patterns)`, or with `preserve_order` each pattern's matches in turn (a target
    matched twice keeps its first place)."""
    if not preserve_order or isinstance(patterns, str):
        return find(patterns)
    ids: list[int] = []
    names: list[str] = []
    for pattern in patterns:
        for i, name in zip(*find(pattern), strict=True):
            if i not in ids:
                ids.append(i)
                names.append(name)
    return ids, names


__all__ = ["TRANSMISSIONS", "BaseAction", "BaseActionCfg", "transmission_name"]

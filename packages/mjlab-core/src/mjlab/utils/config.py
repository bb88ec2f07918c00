"""Configs as values: strict config classes (`Config`), copies (`copy_config`), validation
(`validate_config`) and the read-only config of a built env (`freeze_config`)."""

from __future__ import annotations

import copy
import dataclasses
import difflib
import math
import numbers
import re
import weakref
from typing import Any, TypeVar

from mjlab.deploy.strict import settable_names

T = TypeVar("T")


class UnknownFieldError(AttributeError):
    """An assignment to an attribute that a config class does not declare: a misspelt or
    nonexistent setting, which would otherwise be stored and never read."""


class FrozenConfigError(dataclasses.FrozenInstanceError):
    """An assignment to (part of) the config that a built env owns, `env.cfg`."""


_SETTABLE: dict[type, frozenset[str]] = {}
"""Config class -> the attribute names an instance may be given: its dataclass fields and the
class's own settable descriptors (properties with a setter)."""

_FROZEN: dict[int, tuple[weakref.ref, str]] = {}
"""id of a frozen config -> (a weak reference to it, its path, e.g. "env.cfg.sim"). Kept
outside the instance: a deep copy (`copy.deepcopy`, pickle, `copy_config`) is editable
throughout; a shallow one (`copy.copy`, `dataclasses.replace`) only at its top level, as it
shares the frozen nested configs."""


class Config:
    """Base of every mjlab config dataclass: assigning an attribute the class does not declare
    raises `UnknownFieldError` naming the class, the attribute and the closest field, so a typo
    (`cfg.episode_lenght_s = 5`) or a setting this version does not have fails where it is
    written instead of being ignored. Declared fields are set as on any dataclass; copies,
    pickling, `dataclasses.replace`, tyro and subclassing work as usual (a subclass's own
    fields are declared fields).

    A config that `freeze_config` froze (a built env's `env.cfg`) refuses every assignment with
    `FrozenConfigError`; only a deep copy of it (`copy.deepcopy`, `copy_config`) is editable
    throughout.
    """

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any):
        # A misspelt keyword at construction gets the closest field named, as an assignment
        # does (the dataclass's own __init__ would only say "unexpected keyword argument").
        if kwargs:
            accepted = _INIT_NAMES.get(cls)
            if accepted is None:
                accepted = _INIT_NAMES[cls] = (
                    frozenset(f.name for f in dataclasses.fields(cls) if f.init)
                    if dataclasses.is_dataclass(cls)
                    else None
                )
            for name in kwargs:
                if accepted is not None and name not in accepted:
                    raise TypeError(
                        f"{cls.__name__}() got an unexpected keyword argument '{name}'; "
                        f"{_closest(name, sorted(accepted))}"
                    )
        return super().__new__(cls)

    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        settable = _SETTABLE.get(cls)
        if settable is None:
            settable = _SETTABLE[cls] = settable_names(cls)
        if name not in settable:
            raise _unknown_field(cls, name, settable, self)
        if _FROZEN and id(self) in _FROZEN:
            raise FrozenConfigError(_frozen_message(f"{_FROZEN[id(self)][1]}.{name}"))
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if _FROZEN and id(self) in _FROZEN:
            raise FrozenConfigError(_frozen_message(f"{_FROZEN[id(self)][1]}.{name}"))
        object.__delattr__(self, name)


_INIT_NAMES: dict[type, frozenset[str] | None] = {}
"""The keyword arguments each config class's __init__ takes (its init fields)."""


def _unknown_field(cls: type, name: str, settable: frozenset[str], obj: object) -> Exception:
    fields = [f.name for f in dataclasses.fields(cls)] if dataclasses.is_dataclass(cls) else []
    hint = _closest(name, fields or sorted(settable), fields)
    return UnknownFieldError(
        f"{cls.__name__} has no field '{name}'; {hint} (An attribute a config does not "
        "declare would be stored and never read.)",
        name=name,
        obj=obj,
    )


def _closest(name: str, candidates: list[str], listed: list[str] | None = None) -> str:
    """ "did you mean 'x'?" for the closest of `candidates`, else the `listed` names (default:
    the candidates)."""
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    if close:
        return f"did you mean '{close[0]}'?"
    return f"its fields are: {', '.join(candidates if listed is None else listed)}."


def _frozen_message(path: str) -> str:
    return (
        f"{path} cannot be changed: this config belongs to a built env, which read it when it "
        "was built, so a change now would not reach it. Change the config you built the env "
        "from (or an editable copy, copy.deepcopy(env.cfg)) and build a new env."
    )


class _FrozenDict(dict):
    """A dict of a frozen config: refuses changes; its copies (copy, deepcopy, pickle,
    `copy_config`) are plain dicts."""

    _where = "env.cfg"

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise FrozenConfigError(_frozen_message(self._where))

    def __setitem__(self, key: Any, value: Any) -> None:
        raise FrozenConfigError(_frozen_message(f"{self._where}[{key!r}]"))

    def __delitem__(self, key: Any) -> None:
        raise FrozenConfigError(_frozen_message(f"{self._where}[{key!r}]"))

    __ior__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __copy__(self) -> dict:
        return dict(self)

    def __deepcopy__(self, memo: dict) -> dict:
        return copy.deepcopy(dict(self), memo)

    def __reduce_ex__(self, protocol: Any) -> tuple:
        return dict, (dict(self),)


class _FrozenList(list):
    """A list of a frozen config: refuses changes; its copies are plain lists."""

    _where = "env.cfg"

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise FrozenConfigError(_frozen_message(self._where))

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse  # type: ignore[assignment]
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse  # type: ignore[assignment]

    def __copy__(self) -> list:
        return list(self)

    def __deepcopy__(self, memo: dict) -> list:
        return copy.deepcopy(list(self), memo)

    def __reduce_ex__(self, protocol: Any) -> tuple:
        return list, (list(self),)


def freeze_config(cfg: T, root: str = "env.cfg") -> T:
    """Make `cfg` read-only in place: every `Config` in it (dataclass fields, dicts, lists and
    tuples, all the way down) refuses assignments, and its dicts and lists refuse changes,
    with `FrozenConfigError` naming the path from `root`. A deep copy of a frozen config
    (`copy.deepcopy`, pickle, `copy_config`) is editable throughout; a shallow one (`copy.copy`,
    `dataclasses.replace`) only at its top level: its nested configs are the frozen ones. Objects that are not mjlab configs (term
    functions, tensors, other libraries' objects in params) are left as they are.

    Returns `cfg`.
    """
    return _freeze(cfg, root)


def _freeze(value: Any, path: str) -> Any:
    if isinstance(value, Config):
        key = id(value)
        if key not in _FROZEN:
            _FROZEN[key] = (weakref.ref(value, lambda _, key=key: _FROZEN.pop(key, None)), path)
            for f in dataclasses.fields(value):
                item = getattr(value, f.name)
                frozen = _freeze(item, f"{path}.{f.name}")
                if frozen is not item:
                    object.__setattr__(value, f.name, frozen)
        return value
    if type(value) is dict:
        new_dict = _FrozenDict({k: _freeze(v, f"{path}[{k!r}]") for k, v in value.items()})
        new_dict._where = path
        return new_dict
    if type(value) is list:
        new_list = _FrozenList(_freeze(v, f"{path}[{i}]") for i, v in enumerate(value))
        new_list._where = path
        return new_list
    if type(value) is tuple:
        items = tuple(_freeze(v, f"{path}[{i}]") for i, v in enumerate(value))
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def is_frozen(cfg: object) -> bool:
    """True for a config that `freeze_config` made read-only (not for its copies)."""
    return id(cfg) in _FROZEN or isinstance(cfg, (_FrozenDict, _FrozenList))


def copy_config(value: T) -> T:
    """A copy of a config's structure: dataclass instances, dicts, lists and tuples are copied
    all the way down (so resolving or editing the copy never reaches the original, and an
    object shared by two entries becomes two objects); everything else (functions, classes,
    callable objects, tensors, other live objects in params) is shared, not copied."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        new = copy.copy(value)
        for f in dataclasses.fields(value):
            object.__setattr__(new, f.name, copy_config(getattr(value, f.name)))
        return new
    if isinstance(value, dict):
        new_dict = copy.copy(value)  # keeps the dict's type (a frozen one's copy is a dict)
        for key, item in value.items():
            new_dict[key] = copy_config(item)
        return new_dict
    if isinstance(value, list):
        kind = list if isinstance(value, _FrozenList) else type(value)
        return kind(copy_config(v) for v in value)  # type: ignore[return-value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(copy_config(v) for v in value)  # type: ignore[return-value]
    return value


class ConfigError(ValueError):
    """An invalid config field; the message starts with the field's path from the root config
    (e.g. `cfg.observations['actor'].terms['joint_pos']`) and says how to fix it."""


def validate_config(cfg: object, root: str = "cfg") -> None:
    """Check a whole config: call `validate()` on every dataclass in it that has one (parents
    before their fields), walking dataclass fields, dicts, lists and tuples; and check every
    float in it (term params included):

    - NaN is refused everywhere (no setting means "not a number");
    - +-inf is refused except in fields whose name says it is a bound (`clip`, `*limit*`,
      `*threshold*`, `*bound*`, or the word max/min/maximum/minimum: `max_force`,
      `height_min`), where "unbounded" is meaningful;
    - a (lo, hi) pair of numbers under a name with the word "range(s)" (`resampling_time_range`,
      `ranges.lin_vel_x`, `params["pose_range"]["yaw"]`) or named `clip` needs lo <= hi; in
      the params of a term with `distribution="gaussian"` (`mjlab.envs.mdp.dr`) the pairs
      under its range names ("ranges", "roll_range", ...) are (mean, std) instead and need
      std >= 0.

    Each config class has one `validate()`, also called by its `__post_init__`, so a value
    edited after construction (the normal way to change a task) is checked again here, when the
    env is built.

    Args:
        cfg: the config (normally a `ManagerBasedRlEnvCfg`).
        root: the name its paths start with in messages ("cfg"; the commands use "env").

    Raises:
        ConfigError: the first invalid field, named by its path from `root`, e.g.
            `env.actions['effort'].scale is nan ...`.
    """
    _validate(cfg, root, set(), "", (False, False))


def _check_std(ranges: object, path: str) -> None:
    """Every (mean, std) pair in a gaussian term's `ranges` has std >= 0."""
    items = ranges.items() if isinstance(ranges, dict) else [(None, ranges)]
    for key, pair in items:
        where = path if key is None else f"{path}[{key!r}]"
        pair_of_numbers = isinstance(pair, (list, tuple)) and len(pair) == 2
        if pair_of_numbers and all(map(_is_real, pair)) and pair[1] < 0:
            raise ConfigError(
                f"{where} is {tuple(pair)!r}: with distribution='gaussian' a range is "
                "(mean, std) and std must be >= 0."
            )


_BOUND_NAME = re.compile(
    r"clip|limit|threshold|bound|(?<![a-z0-9])(?:max|min|maximum|minimum)(?![a-z0-9])",
    re.IGNORECASE,
)
"""A name where inf means "unbounded": a clip, limit, threshold or bound anywhere in it, or the
whole word max/min/maximum/minimum (`max_force`, `height_min`, `minimum_height`)."""
_RANGE_NAME = re.compile(r"(?<![a-z0-9])ranges?(?![a-z0-9])", re.IGNORECASE)
"""A name of (lo, hi) pairs: the whole word range(s) (`pose_range`, `ranges`; not `arrange`)."""


def _validate(value: object, path: str, seen: set[int], name: str, ctx: tuple[bool, bool]) -> None:
    """`ctx`: (under a range's name, under a bound's name), inherited by everything inside."""
    if id(value) in seen:
        return
    in_range = ctx[0] or bool(_RANGE_NAME.search(name))
    in_bound = ctx[1] or bool(_BOUND_NAME.search(name))
    inner = (in_range, in_bound)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        seen.add(id(value))
        check = getattr(value, "validate", None)
        # mjlab's config classes only: a dataclass of another library in a term's params may
        # have a `validate` that means something else.
        if callable(check) and type(value).__module__.startswith("mjlab."):
            try:
                check()
            except ConfigError:
                raise
            except (ValueError, TypeError) as err:  # TypeError: a value of the wrong type
                raise ConfigError(f"{path}: {err}") from None
        for f in dataclasses.fields(value):
            _validate(getattr(value, f.name), f"{path}.{f.name}", seen, f.name, inner)
    elif isinstance(value, dict):
        seen.add(id(value))
        # A randomization term's params with distribution="gaussian" give (mean, std) pairs
        # under "ranges" (and "roll_range", ...), not (lo, hi) ones.
        gaussian = getattr(value.get("distribution"), "name", value.get("distribution"))
        for key, item in value.items():
            if gaussian == "gaussian" and _RANGE_NAME.search(str(key)):
                _validate(item, f"{path}[{key!r}]", seen, "", (False, in_bound))
                _check_std(item, f"{path}[{key!r}]")
            else:
                _validate(item, f"{path}[{key!r}]", seen, str(key), inner)
    elif isinstance(value, (list, tuple)):
        seen.add(id(value))
        for i, item in enumerate(value):
            _validate(item, f"{path}[{i}]", seen, "", inner)
        if (in_range or name == "clip") and len(value) == 2 and all(map(_is_real, value)):
            lo, hi = value
            if lo > hi:
                raise ConfigError(
                    f"{path} is {tuple(value)!r}: a (lo, hi) range needs lo <= hi; swap them."
                )
    elif _is_real(value) and not isinstance(value, numbers.Integral):
        number = float(value)
        if math.isnan(number):
            raise ConfigError(f"{path} is nan: give a number (NaN is no valid setting).")
        if math.isinf(number) and not in_bound:
            raise ConfigError(
                f"{path} is {number}: give a finite number (inf is meaningful only for clips, "
                "limits, thresholds and max/min bounds)."
            )


def _is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_int(value: object, name: str, minimum: int, meaning: str = "") -> None:
    """Raise ValueError unless `value` is an int (not a bool) >= `minimum`; `meaning` says what
    the field is, for the message."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        hint = f" ({meaning})" if meaning else ""
        raise ValueError(f"{name} must be an integer >= {minimum}{hint}, got {value!r}.")


def check_range(value: object, name: str, unit: str = "", nonnegative: bool = False) -> None:
    """Raise ValueError unless `value` is a pair (lo, hi) of finite numbers with lo <= hi (and
    lo >= 0 with `nonnegative`)."""
    import math

    try:
        lo, hi = value  # type: ignore[misc]
        ok = math.isfinite(lo) and math.isfinite(hi) and lo <= hi and (lo >= 0 or not nonnegative)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        need = "0 <= lo <= hi" if nonnegative else "lo <= hi"
        raise ValueError(
            f"{name} must be a (lo, hi) pair of numbers{unit} with {need}, got {value!r}."
        )

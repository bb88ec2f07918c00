"""Copying configs as values."""

from __future__ import annotations

import copy
import dataclasses
import math
import numbers
import re
from typing import TypeVar

T = TypeVar("T")


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
        new_dict = copy.copy(value)  # keeps the dict's type
        for key, item in value.items():
            new_dict[key] = copy_config(item)
        return new_dict
    if isinstance(value, list):
        return type(value)(copy_config(v) for v in value)  # type: ignore[return-value]
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
      `*threshold*`, `*bound*`), where "unbounded" is meaningful;
    - a (lo, hi) pair of numbers under a name with "range" (`resampling_time_range`,
      `ranges.lin_vel_x`, `params["pose_range"]["yaw"]`) or named `clip` needs lo <= hi.

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


_BOUND_NAME = re.compile(r"clip|limit|threshold|bound", re.IGNORECASE)


def _validate(value: object, path: str, seen: set[int], name: str, ctx: tuple[bool, bool]) -> None:
    """`ctx`: (under a range's name, under a bound's name), inherited by everything inside."""
    if id(value) in seen:
        return
    in_range = ctx[0] or "range" in name.lower()
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
        for key, item in value.items():
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
        number = float(value)  # type: ignore[arg-type]
        if math.isnan(number):
            raise ConfigError(f"{path} is nan: give a number (NaN is no valid setting).")
        if math.isinf(number) and not in_bound:
            raise ConfigError(
                f"{path} is {number}: give a finite number (inf is meaningful only for clips, "
                "limits and thresholds)."
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

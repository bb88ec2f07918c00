"""Copying configs as values."""

from __future__ import annotations

import copy
import dataclasses
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

"""`Config`: the base of mjlab-export's config dataclasses (deploy settings, command-line
commands, deployment metadata), which refuses attributes a class does not declare.

mjlab-core's configs have a richer base in `mjlab.utils.config` (frozen copies, constructor
checks) that accepts the same names (`settable_names`); this one is mjlab-export's own, so that
the robot-side install (numpy + onnxruntime) needs nothing else.
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any

_SETTABLE: dict[type, frozenset[str]] = {}
"""Config class -> its dataclass fields and its settable descriptors (properties with a
setter)."""


class UnknownFieldError(AttributeError):
    """An assignment to an attribute that a config class does not declare: a misspelt or
    nonexistent setting, which would otherwise be stored and never read."""


class Config:
    """Base of mjlab-export's config dataclasses: assigning an attribute the class does not
    declare raises `UnknownFieldError` naming the class, the attribute and the closest field.
    Declared fields are set as on any dataclass; copies, pickling, `dataclasses.replace`, tyro
    and subclassing work as usual."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        cls = type(self)
        settable = _SETTABLE.get(cls)
        if settable is None:
            settable = _SETTABLE[cls] = settable_names(cls)
        if name not in settable:
            fields: list[str] = (
                [f.name for f in dataclasses.fields(cls)] if dataclasses.is_dataclass(cls) else []
            )
            close = difflib.get_close_matches(name, fields, n=1, cutoff=0.6)
            hint = (
                f"did you mean '{close[0]}'?" if close else f"its fields are: {', '.join(fields)}."
            )
            raise UnknownFieldError(
                f"{cls.__name__} has no field '{name}'; {hint} (An attribute a config does not "
                "declare would be stored and never read.)",
                name=name,
                obj=self,
            )
        object.__setattr__(self, name, value)


def settable_names(cls: type) -> frozenset[str]:
    """The attribute names a config class accepts: its dataclass fields and the descriptors
    with a setter (properties) anywhere in its MRO, dunders excluded. mjlab-core's strict
    `mjlab.utils.config.Config` uses the same rule."""
    names = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    for klass in cls.__mro__:
        names.update(
            k for k, v in vars(klass).items() if hasattr(type(v), "__set__") and k[:2] != "__"
        )
    return frozenset(names)

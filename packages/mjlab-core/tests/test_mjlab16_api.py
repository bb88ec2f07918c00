"""mjlab 1.6's public names, under its module paths, with its parameter and field names.

The table `data/mjlab16_api.md` lists mjlab 1.6.0's public names per module with the parameter
names of each function and the field names of each config dataclass. Every row but the known
gaps is checked: each name imports from the same module, a function takes the listed parameters
in the listed order, a dataclass has the listed fields (the behaviour is tested where each name
is implemented). The known gaps are checked to still be gaps, so the list cannot go stale.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import pytest

TABLE = Path(__file__).parent / "data" / "mjlab16_api.md"

OTHER_DISTRIBUTIONS = {"mjlab.viewer": "mjlab-export"}
"""Modules of the table that a distribution other than mjlab-core installs."""

KNOWN_GAPS = {
    ("mjlab.entity", "EntityData"): "a class of views, not a dataclass; lacks mjlab's targets",
    ("mjlab.entity", "VariantEntityCfg"): "no variant entities",
    ("mjlab.entity", "VariantMetadata"): "no variant entities",
}
"""The rows of the table that do not hold here, with why (docs/guides/migrating.md lists them
too). Every other row is checked."""


def _rows() -> list[tuple[str, str, str, tuple[str, ...]]]:
    rows, module = [], None
    for line in TABLE.read_text().splitlines():
        heading = re.match(r"^## (\S+)", line)
        if heading:
            module = heading.group(1)
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if module is None or len(cells) != 4 or not cells[0].startswith("`"):
            continue
        name, kind, params = cells[0].strip("`"), cells[1], cells[2]
        names = tuple(p.strip() for p in params.split(",") if p.strip())
        rows.append((module, name, kind, names))
    return rows


ROWS = _rows()
CHECKED = [r for r in ROWS if (r[0], r[1]) not in KNOWN_GAPS]
GAPS = [r for r in ROWS if (r[0], r[1]) in KNOWN_GAPS]


def test_table_is_read():
    assert len(ROWS) == 264
    assert len([r for r in ROWS if r[0] == "mjlab.envs.mdp.dr"]) == 61
    assert len([r for r in ROWS if r[0] == "mjlab.actuator"]) == 29


def _problem(module: str, name: str, kind: str, params: tuple[str, ...]) -> str | None:
    """Why the row does not hold here, or None when it does."""
    obj = getattr(importlib.import_module(module), name, None)
    if obj is None:
        return f"{module}.{name} is missing"
    if kind == "function":
        got = list(inspect.signature(obj).parameters)
        if got[: len(params)] != list(params):
            return f"{module}.{name}{tuple(got)}"
    elif kind == "dataclass" and params:
        if not dataclasses.is_dataclass(obj):
            return f"{module}.{name} is not a dataclass"
        fields = {f.name for f in dataclasses.fields(obj)}
        # A ClassVar (mjlab's `NoiseModelCfg.class_type`) is a class attribute, not a field.
        missing = [p for p in params if p not in fields and not hasattr(obj, p)]
        if missing:
            return f"{module}.{name} lacks fields {missing}"
    elif kind == "class" and params:
        # A TypedDict (mjlab's stage schemas) declares its keys as annotations.
        keys = getattr(obj, "__annotations__", {})
        missing = [p for p in params if not hasattr(obj, p) and p not in keys]
        if missing:
            return f"{module}.{name} lacks {missing}"
    return None


@pytest.mark.parametrize(
    ("module", "name", "kind", "params"), CHECKED, ids=[f"{r[0]}.{r[1]}" for r in CHECKED]
)
def test_name_matches_mjlab16(module, name, kind, params):
    if module in OTHER_DISTRIBUTIONS:
        # Tested where that distribution is installed (the workspace run, or it alone).
        pytest.importorskip(module, reason=f"{module} is in {OTHER_DISTRIBUTIONS[module]}")
    problem = _problem(module, name, kind, params)
    assert problem is None, problem


@pytest.mark.parametrize(
    ("module", "name", "kind", "params"), GAPS, ids=[f"{r[0]}.{r[1]}" for r in GAPS]
)
def test_known_gaps_are_still_gaps(module, name, kind, params):
    assert _problem(module, name, kind, params) is not None, "remove it from KNOWN_GAPS"


def test_at_least_90_percent_of_the_names_hold():
    assert len(CHECKED) >= 0.9 * len(ROWS), f"{len(CHECKED)} of {len(ROWS)}"

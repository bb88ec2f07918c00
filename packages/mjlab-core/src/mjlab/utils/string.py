"""Selecting names by regular expression, with errors that say what was available."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence

_MAX_LISTED = 60
"""Names listed at most in a no-match error (a terrain has hundreds of box geoms)."""


def resolve_matching_names(
    patterns: str | Sequence[str], names: Sequence[str], *, what: str = "name", owner: str = ""
) -> tuple[list[int], list[str]]:
    """Indices and names in `names` that fully match any of `patterns`, in `names` order.

    Args:
        patterns: one regex or several; each must match at least one name (re.fullmatch).
        names: candidate names, e.g. an entity's joint names in model order.
        what: what the names are ("joint", "body"), for the error message.
        owner: who owns them ("entity 'robot'"), for the error message.

    Returns:
        (ids, matched names), both in the order of `names` (not of `patterns`).

    Raises:
        ValueError: a pattern is not a valid regular expression, or matches nothing; the
            message names the pattern and lists the available names.
    """
    if isinstance(patterns, str):
        patterns = (patterns,)
    compiled = []
    for p in patterns:
        if not isinstance(p, str):
            raise ValueError(f"{what} pattern {p!r} must be a string (a regular expression).")
        try:
            compiled.append(re.compile(p))
        except re.error as err:
            where = f" of {owner}" if owner else ""
            raise ValueError(
                f"'{p}' is not a valid regular expression for selecting {_plural(what)}{where} "
                f"({err}); escape special characters (e.g. re.escape), available "
                f"{_plural(what)}: {list(names)}."
            ) from None
    for pattern, regex in zip(patterns, compiled, strict=True):
        if not any(regex.fullmatch(n) for n in names):
            where = f" of {owner}" if owner else ""
            named = [n for n in names if n]
            unnamed = len(names) - len(named)
            more = f" ({unnamed} more without a name)" if unnamed else ""
            close = difflib.get_close_matches(pattern, named, n=3)
            hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            shown = named
            if len(named) > _MAX_LISTED:
                shown = [*named[:_MAX_LISTED], f"... {len(named) - _MAX_LISTED} more"]
            raise ValueError(
                f"No {what}{where} matches '{pattern}'.{hint} Available {_plural(what)}: "
                f"{shown}{more}."
            )
    ids = [i for i, n in enumerate(names) if any(r.fullmatch(n) for r in compiled)]
    return ids, [names[i] for i in ids]


def resolve_matching_values(
    values: float | Mapping[str, float],
    names: Sequence[str],
    *,
    what: str = "name",
    owner: str = "",
) -> list[float]:
    """One value per name from a scalar or a {regex: value} dict (later patterns win).

    Raises:
        ValueError: a pattern matches nothing, or a name gets no value from a dict.
    """
    if not isinstance(values, Mapping):
        return [float(values)] * len(names)
    out: list[float | None] = [None] * len(names)
    for pattern, value in values.items():
        ids, _ = resolve_matching_names(pattern, names, what=what, owner=owner)
        for i in ids:
            out[i] = float(value)
    missing = [n for n, v in zip(names, out, strict=True) if v is None]
    if missing:
        raise ValueError(
            f"No value given for {_plural(what)} {missing}{' of ' + owner if owner else ''}."
        )
    return [float(v) for v in out]  # type: ignore[arg-type]


def _plural(noun: str) -> str:
    """The plural of a part's name: body -> bodies, joint -> joints."""
    return noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"

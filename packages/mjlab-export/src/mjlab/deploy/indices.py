"""The one rule for row and index arguments on the robot side (`OnnxPolicy.reset(rows)`,
`MotionPlayer.reset(frame)`), numpy only: integer indices in [0, size), or, for rows, a boolean
mask of length size meaning its True entries (a done mask, as a batched env returns it). A float
is never rounded and a mask is never read as the rows 0 and 1: anything else raises, naming the
argument. A uint8 array is refused whatever it holds: it is PyTorch's old mask dtype, so
`[1, 0, 1, 1]` could mean the rows 1, 0, 1, 1 or the mask of rows 0, 2, 3. (The torch side's twin is `mjlab.utils.env_ids.resolve_env_ids` in mjlab-core.)
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def resolve_rows(rows: Any, size: int, name: str = "rows") -> np.ndarray:
    """`rows` as a 1-D int64 array of indices in [0, size), checked.

    Args:
        rows: an int; integer indices (numpy array, list, tuple or range); or a boolean mask of
            shape (size,) whose True entries are the rows.
        size: the number of rows (the batch size).
        name: the argument's name, for messages.

    Returns:
        (K,) int64 row indices.

    Raises:
        TypeError: floats, strings or other non-integer values (never rounded); a uint8 array
            (mask or ids? say which: `.astype(bool)` or int64 indices).
        ValueError: indices outside [0, size), a mask of the wrong length, or more than one
            dimension.
    """
    expected = f"integer indices in [0, {size}) or a boolean mask of length {size}"
    if isinstance(rows, (bool, np.bool_)):
        raise TypeError(f"{name} must be {expected}, got the bool {rows!r}.")
    if isinstance(rows, numbers.Integral):
        array = np.array([int(rows)], dtype=np.int64)
    elif isinstance(rows, (list, tuple, range, np.ndarray)):
        array = np.asarray(rows) if len(rows) else np.zeros(0, dtype=np.int64)
    else:
        raise TypeError(f"{name} must be {expected}, got {type(rows).__name__} {rows!r:.60}.")
    if array.dtype.kind not in "biu":
        shown = np.atleast_1d(array).tolist()[:5]
        raise TypeError(
            f"{name} must be {expected}, got {array.dtype} values {shown}; a float is never "
            "rounded to an index."
        )
    if array.dtype == np.uint8:
        raise TypeError(
            f"{name} is a uint8 array {np.atleast_1d(array).tolist()[:5]}: a mask or indices? "
            "Pass a bool mask (mask.astype(bool)) or int64 indices."
        )
    if array.ndim > 1:
        raise ValueError(f"{name} must be 1-D (indices or a mask), got shape {array.shape}.")
    array = array.reshape(-1)
    if array.dtype.kind == "b":
        if array.size != size:
            raise ValueError(
                f"{name} is a boolean mask of length {array.size}; a mask needs one entry per "
                f"row ({size}). Give integer indices for a subset."
            )
        return np.flatnonzero(array).astype(np.int64)
    bad = array[(array < 0) | (array >= size)]
    if bad.size:
        raise ValueError(f"{name} {bad[:5].tolist()} outside [0, {size}) (the batch of {size}).")
    return array.astype(np.int64)


def resolve_index(index: Any, size: int, name: str) -> int:
    """One integer index in [0, size) (Python or numpy integer; not a bool or a float).

    Raises:
        TypeError: not an integer.
        ValueError: outside [0, size).
    """
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, numbers.Integral):
        raise TypeError(f"{name} must be an integer in [0, {size}), got {index!r}.")
    if not 0 <= int(index) < size:
        raise ValueError(f"{name} must be in [0, {size - 1}], got {int(index)}.")
    return int(index)

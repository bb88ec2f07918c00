"""Shared helpers: batched rotation/frame/sampling math (`mjlab.utils.math`) and name matching
(`mjlab.utils.string`). The math helpers are also importable from `mjlab.utils` itself; the list
of them is `mjlab.utils.math.__all__`."""

from mjlab.utils import math, string  # noqa: F401  (the submodules, as attributes)
from mjlab.utils.math import *  # noqa: F403
from mjlab.utils.math import __all__ as _MATH_ALL

__all__ = list(_MATH_ALL)

"""Box sub-terrain kinds (mjlab's ``Box*TerrainCfg``): stairs, grids, stones, beams and rings
made of MuJoCo box geoms.

Every kind's ``boxes(size, difficulty, rng)`` returns a `TerrainBoxes` in the sub-terrain's local
frame of `mjlab.terrains.box_geometry`: x and y from the sub-terrain's lower corner, so it covers
``[0, size[0]] x [0, size[1]]``, and z up from the terrain's zero level (the top of the flat
border around the grid). Every box lies inside that footprint, rotated boxes included, and the
spawn origin is on the walkable top of the centre platform, at ``(size[0] / 2, size[1] / 2)``.

Solid structures reach down below their tops: to ``-floor_depth`` where a kind has that field,
else 1 m below the lowest top, so no see-through gap opens under them. The terrain generator
lowers its height field under the sub-terrain to the lowest box bottom, which also makes the
floor of every hole, gap and pit.

``difficulty`` in [0, 1] interpolates each ``*_range`` field from its first value (difficulty 0)
to its second unless the field's docstring says otherwise; every random draw comes from the
``rng`` passed in (the generator's), so the generator's seed fixes the map. Boxes are built with
whole-array numpy operations; only the greedy merge of `BoxRandomGridTerrainCfg` walks cells.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from mjlab.terrains.box_geometry import BoxSubTerrainCfg, TerrainBoxes
from mjlab.terrains.height_field import _check_order, _check_positive, _check_range, _lerp

__all__ = [
    "BoxFlatTerrainCfg",
    "BoxInvertedPyramidStairsTerrainCfg",
    "BoxNarrowBeamsTerrainCfg",
    "BoxNestedRingsTerrainCfg",
    "BoxOpenStairsTerrainCfg",
    "BoxPyramidStairsTerrainCfg",
    "BoxRandomGridTerrainCfg",
    "BoxRandomSpreadTerrainCfg",
    "BoxRandomStairsTerrainCfg",
    "BoxSteppingStonesTerrainCfg",
    "BoxTiltedGridTerrainCfg",
]

_BASE_DEPTH = 1.0
"""How far solid boxes without a ``floor_depth`` field reach below their kind's lowest top, m."""
_MIN_EXTENT = 1e-6
"""Boxes thinner than this along any axis (m) are left out: they would be degenerate geoms."""
_MIN_STONE = 0.05
"""Stepping stones narrower than this after clipping to the inner area (m) are left out."""
_MIN_SLAB = 0.05
"""Least vertical thickness of a tilted tile's top slab, m."""
_EPS = 1e-9


# --------------------------------------------------------------------------------------------
# Helpers.


def _check_count(owner: str, name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{owner}.{name} = {value!r}: must be an int >= 0.")


def _inner_size(owner: str, size: tuple[float, float], border_width: float) -> np.ndarray:
    """(2,) side of the area inside the border frame, m; raises when nothing is left."""
    inner = np.asarray(size, dtype=float) - 2.0 * border_width
    if (inner <= 0).any():
        raise ValueError(
            f"{owner}.border_width = {border_width}: leaves no room inside a "
            f"{size[0]} x {size[1]} m sub-terrain; use border_width < {min(size) / 2}."
        )
    return inner


def _fit(length: float, pitch: float) -> int:
    """How many whole ``pitch`` fit in ``length`` (>= 0; a hair of rounding counts as whole)."""
    return max(0, int(np.floor(length / pitch + 1e-9)))


def _frames(
    centre: np.ndarray,
    half_outer: np.ndarray,
    width: float | np.ndarray,
    z_lo: float | np.ndarray,
    z_hi: float | np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper corners of rectangular rings around ``centre``, four boxes per ring.

    Args:
        centre: (2,) ring centre, m.
        half_outer: (k, 2) outer half extents along x and y, m.
        width: Ring width, m: a scalar, (k,) one per ring, or (k, 2) along x and y.
        z_lo, z_hi: Bottom and top of each ring, m: scalars or (k,).

    Returns:
        (4k, 3) lower and (4k, 3) upper corners: the two strips along x (full length) at the
        +y and -y sides, then the two strips along y between them. A ring as wide as its half
        extent comes out solid; its empty strips are degenerate (dropped by `_BoxList`).
    """
    half_outer = np.asarray(half_outer, dtype=float).reshape(-1, 2)
    k = len(half_outer)
    w = np.asarray(width, dtype=float)
    if w.ndim == 1:
        w = w[:, None]
    w = np.broadcast_to(w, (k, 2))
    hox, hoy = half_outer.T
    hix, hiy = np.maximum(half_outer - w, 0.0).T
    cx, cy = centre
    x_lo = np.stack([cx - hox, cx - hox, cx + hix, cx - hox])
    x_hi = np.stack([cx + hox, cx + hox, cx + hox, cx - hix])
    y_lo = np.stack([cy + hiy, cy - hoy, cy - hiy, cy - hiy])
    y_hi = np.stack([cy + hoy, cy - hiy, cy + hiy, cy + hiy])
    z0 = np.broadcast_to(np.asarray(z_lo, dtype=float), (4, k))
    z1 = np.broadcast_to(np.asarray(z_hi, dtype=float), (4, k))
    lower = np.stack([x_lo, y_lo, z0], axis=-1).reshape(-1, 3)
    upper = np.stack([x_hi, y_hi, z1], axis=-1).reshape(-1, 3)
    return lower, upper


def _yaw_quat(yaw: np.ndarray) -> np.ndarray:
    """(n, 4) wxyz quaternions of rotations by ``yaw`` (rad) about +z."""
    yaw = np.asarray(yaw, dtype=float)
    quat = np.zeros((len(yaw), 4))
    quat[:, 0] = np.cos(yaw / 2)
    quat[:, 3] = np.sin(yaw / 2)
    return quat


class _BoxList:
    """Collects a sub-terrain's boxes, whole arrays at a time, and builds its `TerrainBoxes`."""

    def __init__(self) -> None:
        self._pos: list[np.ndarray] = []
        self._half: list[np.ndarray] = []
        self._quat: list[np.ndarray] = []

    def aligned(self, lower, upper) -> None:
        """Add axis-aligned boxes from (n, 3) lower and upper corners (degenerate ones dropped)."""
        lower = np.asarray(lower, dtype=float).reshape(-1, 3)
        upper = np.asarray(upper, dtype=float).reshape(-1, 3)
        keep = (upper - lower > _MIN_EXTENT).all(axis=1)
        lower, upper = lower[keep], upper[keep]
        quat = np.zeros((len(lower), 4))
        quat[:, 0] = 1.0
        self._add((lower + upper) / 2, (upper - lower) / 2, quat)

    def frames(self, centre, half_outer, width, z_lo, z_hi) -> None:
        """Add rectangular rings; see `_frames`."""
        self.aligned(*_frames(centre, half_outer, width, z_lo, z_hi))

    def rotated(self, pos, half_size, quat) -> None:
        """Add (n, 3) centres, (n, 3) half extents and (n, 4) wxyz quats (degenerate dropped)."""
        pos = np.asarray(pos, dtype=float).reshape(-1, 3)
        half_size = np.asarray(half_size, dtype=float).reshape(-1, 3)
        quat = np.asarray(quat, dtype=float).reshape(-1, 4)
        keep = (half_size > _MIN_EXTENT / 2).all(axis=1)
        self._add(pos[keep], half_size[keep], quat[keep])

    def _add(self, pos: np.ndarray, half: np.ndarray, quat: np.ndarray) -> None:
        self._pos.append(pos)
        self._half.append(half)
        self._quat.append(quat)

    def build(self, origin) -> TerrainBoxes:
        if not self._pos:
            return TerrainBoxes(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 4)), origin)
        return TerrainBoxes(
            pos=np.concatenate(self._pos),
            half_size=np.concatenate(self._half),
            quat=np.concatenate(self._quat),
            origin=np.asarray(origin, dtype=float),
        )


def _centre(size: tuple[float, float]) -> np.ndarray:
    return np.asarray(size, dtype=float) / 2


# --------------------------------------------------------------------------------------------
# Kinds.


@dataclass(kw_only=True)
class BoxFlatTerrainCfg(BoxSubTerrainCfg):
    """Flat ground: one 1 m thick box over the whole sub-terrain, its top at the zero level.

    Difficulty changes nothing.
    """

    def boxes(self, size, difficulty, rng):
        del difficulty, rng  # A flat floor is the same at every difficulty.
        out = _BoxList()
        out.aligned([0.0, 0.0, -_BASE_DEPTH], [size[0], size[1], 0.0])
        return out.build(origin=(size[0] / 2, size[1] / 2, 0.0))


@dataclass(kw_only=True)
class BoxPyramidStairsTerrainCfg(BoxSubTerrainCfg):
    """Square rings of steps climbing from the border (zero level) to a flat top platform.

    Inside an optional flat border frame, step ``k`` (``k = 0`` outermost) is a rectangular ring
    ``step_width`` wide whose top is ``(k + 1)`` rises above the zero level; the centre platform
    is one rise above the last step, and the spawn origin is on it. As many steps fit as leave
    at least ``platform_width`` for the platform. Everything is solid down to 1 m below the
    zero level. Difficulty raises the rise (``step_height_range``).
    """

    _direction: ClassVar[float] = 1.0
    """+1: the steps climb towards the centre; -1: they descend (the inverted kind)."""

    border_width: float = 0.0
    """Width of the flat frame (top at the zero level) around the stairs, m (>= 0). Left out
    when ``holes`` is True."""
    step_height_range: tuple[float, float] = (0.0, 0.1)
    """Rise of every step at difficulty 0 and 1, m."""
    step_width: float = 0.3
    """Run (tread depth) of every step, m (> 0)."""
    platform_width: float = 1.0
    """Least side of the flat centre platform, m (>= 0); the steps that do not fit widen it."""
    holes: bool = False
    """Keep only a cross of steps ``platform_width`` wide along the two centre lines; the
    corners between its arms (and the border) are holes down to the lowest box bottom."""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = type(self).__name__
        _check_positive(owner, "border_width", self.border_width, allow_zero=True)
        _check_range(owner, "step_height_range", self.step_height_range)
        _check_positive(owner, "step_width", self.step_width)
        _check_positive(owner, "platform_width", self.platform_width, allow_zero=True)

    def boxes(self, size, difficulty, rng):
        del rng  # Stairs are not random.
        owner = type(self).__name__
        rise = _lerp(self.step_height_range, difficulty)
        inner = _inner_size(owner, size, self.border_width)
        centre = _centre(size)
        run = self.step_width
        n = _fit(float((inner - self.platform_width).min()), 2 * run)
        k = np.arange(n)
        step_top = self._direction * (k + 1) * rise
        platform_top = self._direction * (n + 1) * rise + 0.0  # + 0.0: no -0.0 origin.
        bottom = min(platform_top, 0.0) - _BASE_DEPTH
        half_outer = inner / 2 - k[:, None] * run  # (n, 2)
        platform_half = inner / 2 - n * run

        out = _BoxList()
        if not self.holes:
            out.frames(centre, half_outer, run, bottom, step_top)
            if self.border_width > 0:
                out.frames(centre, centre[None], self.border_width, bottom, 0.0)
        else:
            # Arms of the cross: one tread of each step on each side of the platform.
            arm = np.minimum(self.platform_width / 2, platform_half)  # (2,) half widths
            cx, cy = centre
            hox, hoy = half_outer.T
            ones = np.ones(n)
            x_lo = np.stack([(cx - arm[0]) * ones, (cx - arm[0]) * ones, cx + hox - run, cx - hox])
            x_hi = np.stack([(cx + arm[0]) * ones, (cx + arm[0]) * ones, cx + hox, cx - hox + run])
            y_lo = np.stack([cy + hoy - run, cy - hoy, (cy - arm[1]) * ones, (cy - arm[1]) * ones])
            y_hi = np.stack([cy + hoy, cy - hoy + run, (cy + arm[1]) * ones, (cy + arm[1]) * ones])
            z_lo = np.full((4, n), bottom)
            z_hi = np.broadcast_to(step_top, (4, n))
            out.aligned(
                np.stack([x_lo, y_lo, z_lo], axis=-1).reshape(-1, 3),
                np.stack([x_hi, y_hi, z_hi], axis=-1).reshape(-1, 3),
            )
        out.aligned([*(centre - platform_half), bottom], [*(centre + platform_half), platform_top])
        return out.build(origin=(*centre, platform_top))


@dataclass(kw_only=True)
class BoxInvertedPyramidStairsTerrainCfg(BoxPyramidStairsTerrainCfg):
    """`BoxPyramidStairsTerrainCfg` going down: step ``k`` tops at ``-(k + 1)`` rises and the
    centre platform (spawn origin) at ``-(n + 1)`` rises for ``n`` steps, a square pit.

    Everything is solid down to 1 m below the platform. Difficulty deepens the rise.
    """

    _direction: ClassVar[float] = -1.0


@dataclass(kw_only=True)
class BoxRandomGridTerrainCfg(BoxSubTerrainCfg):
    """A grid of square columns of random heights around a raised centre platform.

    Inside the border, as many ``grid_width`` cells as fit are centred (the leftover widens the
    flat border frame, top at the zero level). Each cell is a column whose top is uniform in
    ``[-h, h]``; the centre platform (spawn origin) is ``platform_width`` square with its top
    at ``h``, the highest any cell can be. Columns and border are solid down to ``h + 1`` m
    below the zero level. Difficulty raises ``h`` (``grid_height_range``).
    """

    grid_width: float = 0.45
    """Side of each square cell, m (> 0)."""
    grid_height_range: tuple[float, float] = (0.0, 0.1)
    """Bound ``h`` of the cell heights at difficulty 0 and 1, m: tops are uniform in [-h, h]."""
    platform_width: float = 1.0
    """Side of the square centre platform, m (>= 0; at most the area inside the border)."""
    holes: bool = False
    """Keep only the cells whose centre lies in the cross of width ``platform_width`` along the
    two centre lines; the others are holes down to the lowest box bottom. Disables merging."""
    merge_similar_heights: bool = False
    """Round the cell heights to multiples of ``height_merge_threshold`` and merge neighbouring
    cells of equal rounded height into larger boxes (fewer geoms)."""
    height_merge_threshold: float = 0.05
    """Height step used to round the cells before merging, m (> 0)."""
    max_merge_distance: int = 3
    """Most cells one merged box spans along x and along y (>= 1)."""
    border_width: float = 0.25
    """Least width of the flat frame around the grid, m (>= 0)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "BoxRandomGridTerrainCfg"
        _check_positive(owner, "grid_width", self.grid_width)
        _check_range(owner, "grid_height_range", self.grid_height_range)
        _check_positive(owner, "platform_width", self.platform_width, allow_zero=True)
        _check_positive(owner, "height_merge_threshold", self.height_merge_threshold)
        _check_count(owner, "max_merge_distance", self.max_merge_distance)
        if self.max_merge_distance < 1:
            raise ValueError(
                f"{owner}.max_merge_distance = {self.max_merge_distance}: must be >= 1 "
                "(1 keeps every cell its own box)."
            )
        _check_positive(owner, "border_width", self.border_width, allow_zero=True)

    def boxes(self, size, difficulty, rng):
        owner = "BoxRandomGridTerrainCfg"
        h = _lerp(self.grid_height_range, difficulty)
        inner = _inner_size(owner, size, self.border_width)
        centre = _centre(size)
        gw = self.grid_width
        nx, ny = _fit(inner[0], gw), _fit(inner[1], gw)
        margin = (np.asarray(size, dtype=float) - np.array([nx, ny]) * gw) / 2
        heights = rng.uniform(-h, h, size=(nx, ny))
        xs = margin[0] + (np.arange(nx) + 0.5) * gw
        ys = margin[1] + (np.arange(ny) + 0.5) * gw
        gx, gy = np.meshgrid(xs, ys, indexing="ij")
        dx, dy = np.abs(gx - centre[0]), np.abs(gy - centre[1])
        platform_half = np.minimum(self.platform_width / 2, inner / 2)
        bottom = -h - _BASE_DEPTH

        out = _BoxList()
        if self.holes:
            keep = (dx <= self.platform_width / 2 + _EPS) | (dy <= self.platform_width / 2 + _EPS)
        else:
            # Cells wholly under the platform are hidden by it: leave them out.
            keep = ~(
                (dx + gw / 2 <= platform_half[0] + _EPS) & (dy + gw / 2 <= platform_half[1] + _EPS)
            )
        if self.merge_similar_heights and not self.holes:
            step = self.height_merge_threshold
            rounded = np.clip(np.round(heights / step) * step, -h, h)
            rects = _merge_equal_cells(rounded, ~keep, self.max_merge_distance)
            i0, j0, i1, j1 = rects.T
            lower = np.stack([margin[0] + i0 * gw, margin[1] + j0 * gw, np.full(len(i0), bottom)])
            upper = np.stack([margin[0] + i1 * gw, margin[1] + j1 * gw, rounded[i0, j0]])
            out.aligned(lower.T, upper.T)
        else:
            lower = np.stack([gx - gw / 2, gy - gw / 2, np.full_like(gx, bottom)], axis=-1)
            upper = np.stack([gx + gw / 2, gy + gw / 2, heights], axis=-1)
            out.aligned(lower[keep], upper[keep])
        out.aligned([*(centre - platform_half), bottom], [*(centre + platform_half), h])
        out.frames(centre, centre[None], margin[None], bottom, 0.0)
        return out.build(origin=(*centre, h))


def _merge_equal_cells(values: np.ndarray, skip: np.ndarray, max_span: int) -> np.ndarray:
    """Greedy cover of the cells not in ``skip`` by rectangles of equal ``values``.

    Walking the cells in order, each uncovered cell starts a rectangle that grows along the
    first axis while the next cell is free and equal, then along the second while the whole next
    column of cells is; each side spans at most ``max_span`` cells. Sequential by nature (every
    rectangle depends on the ones before), so it loops over cells.

    Returns:
        (m, 4) int ``(i0, j0, i1, j1)``: the cells ``[i0, i1) x [j0, j1)`` of each rectangle.
    """
    nx, ny = values.shape
    taken = skip.copy()
    rects = []
    for i in range(nx):
        for j in range(ny):
            if taken[i, j]:
                continue
            v = values[i, j]
            i1 = i + 1
            while i1 < min(i + max_span, nx) and not taken[i1, j] and values[i1, j] == v:
                i1 += 1
            j1 = j + 1
            while (
                j1 < min(j + max_span, ny)
                and not taken[i:i1, j1].any()
                and (values[i:i1, j1] == v).all()
            ):
                j1 += 1
            taken[i:i1, j:j1] = True
            rects.append((i, j, i1, j1))
    return np.asarray(rects, dtype=int).reshape(-1, 4)


@dataclass(kw_only=True)
class BoxRandomSpreadTerrainCfg(BoxSubTerrainCfg):
    """Boxes of random size, height and yaw scattered over a floor around a flat platform.

    ``int(num_boxes * (0.5 + 0.5 * difficulty))`` boxes are drawn; each is placed uniformly so
    that its rotated outline stays inside the border frame, and boxes whose outline would touch
    the ``platform_width`` square at the centre are dropped (so fewer boxes remain than drawn).
    Boxes, floor, platform and border frame (all topped at the zero level apart from the boxes)
    are solid down to 1 m below it. Difficulty adds boxes and raises them (see
    ``box_height_range``).
    """

    num_boxes: int = 60
    """Boxes drawn at difficulty 1 (half as many at difficulty 0), >= 0."""
    box_width_range: tuple[float, float] = (0.3, 1.0)
    """Side of a box along its own x axis, m: uniform in this range (> 0)."""
    box_length_range: tuple[float, float] = (0.3, 1.0)
    """Side of a box along its own y axis, m: uniform in this range (> 0)."""
    box_height_range: tuple[float, float] = (0.05, 1.0)
    """Height of a box top above the zero level, m: uniform in this range, then scaled by
    ``0.2 + 0.8 * difficulty`` (as in mjlab; not interpolated)."""
    box_yaw_range: tuple[float, float] = (0.0, 360.0)
    """Yaw of a box about +z, degrees: uniform in this range."""
    add_floor: bool = True
    """Cover the area inside the border with a floor at the zero level. False: the boxes stand
    in a pit whose floor is the lowest box bottom."""
    platform_width: float = 1.0
    """Side of the flat square at the centre that no box touches, m (>= 0)."""
    border_width: float = 0.25
    """Width of the flat frame (top at the zero level) around the sub-terrain, m (>= 0)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "BoxRandomSpreadTerrainCfg"
        _check_count(owner, "num_boxes", self.num_boxes)
        for name in ("box_width_range", "box_length_range"):
            _check_range(owner, name, getattr(self, name))
            _check_positive(owner, f"{name}[0]", getattr(self, name)[0])
        _check_range(owner, "box_height_range", self.box_height_range)
        _check_order(owner, "box_yaw_range", self.box_yaw_range)
        _check_positive(owner, "platform_width", self.platform_width, allow_zero=True)
        _check_positive(owner, "border_width", self.border_width, allow_zero=True)

    def boxes(self, size, difficulty, rng):
        owner = "BoxRandomSpreadTerrainCfg"
        inner = _inner_size(owner, size, self.border_width)
        centre = _centre(size)
        n = int(self.num_boxes * (0.5 + 0.5 * difficulty))
        # All draws happen whatever is dropped later, so the seed alone fixes the layout.
        width = rng.uniform(*self.box_width_range, size=n)
        length = rng.uniform(*self.box_length_range, size=n)
        top = rng.uniform(*self.box_height_range, size=n) * (0.2 + 0.8 * difficulty)
        yaw = np.deg2rad(rng.uniform(*self.box_yaw_range, size=n))
        place = rng.uniform(0.0, 1.0, size=(n, 2))

        c, s = np.abs(np.cos(yaw)), np.abs(np.sin(yaw))
        reach = np.stack([c * width + s * length, s * width + c * length], axis=-1) / 2  # (n, 2)
        room = inner - 2 * reach  # Range of centre positions that keep the outline inside.
        xy = self.border_width + reach + place * np.maximum(room, 0.0)
        clear = np.abs(xy - centre) >= self.platform_width / 2 + reach
        keep = (room >= 0).all(axis=1) & clear.any(axis=1)

        bottom = -_BASE_DEPTH
        pos = np.column_stack([xy, (top + bottom) / 2])
        half = np.column_stack([width / 2, length / 2, (top - bottom) / 2])
        out = _BoxList()
        out.rotated(pos[keep], half[keep], _yaw_quat(yaw[keep]))
        if self.add_floor:
            out.aligned([*(centre - inner / 2), bottom], [*(centre + inner / 2), 0.0])
        platform_half = np.minimum(self.platform_width / 2, inner / 2)
        out.aligned([*(centre - platform_half), bottom], [*(centre + platform_half), 0.0])
        out.frames(centre, centre[None], self.border_width, bottom, 0.0)
        return out.build(origin=(*centre, 0.0))


@dataclass(kw_only=True)
class BoxOpenStairsTerrainCfg(BoxSubTerrainCfg):
    """Pyramid stairs of thin floating treads with open risers (a foot can slip through).

    Inside the flat border frame, tread ``k`` (``k = 0`` outermost) is a rectangular ring slab
    ``step_thickness`` thick and one run wide; the centre platform (spawn origin) is a slab too.
    Inverted (default): tread ``k`` tops at ``-k`` rises (the outermost flush with the border)
    and the platform at ``-n`` rises for ``n`` treads, over a pit whose floor is the platform's
    underside, with the border frame solid down to it. Not inverted: tread ``k`` tops at
    ``k + 1`` rises and the platform at ``n + 1`` rises, over a floor at the zero level.
    As many treads fit as leave at least ``platform_width`` for the platform. Difficulty raises
    the rise and narrows the run.
    """

    step_height_range: tuple[float, float] = (0.1, 0.2)
    """Rise of every step at difficulty 0 and 1, m."""
    step_width_range: tuple[float, float] = (0.4, 0.8)
    """Run of the treads, m (> 0): the second value at difficulty 0, the first at difficulty 1
    (narrower treads are harder)."""
    platform_width: float = 1.0
    """Least side of the centre platform, m (>= 0)."""
    border_width: float = 0.25
    """Width of the flat frame (top at the zero level) around the stairs, m (>= 0)."""
    step_thickness: float = 0.05
    """Thickness of every tread and of the platform slab, m (> 0)."""
    inverted: bool = True
    """Treads descend towards the centre (a pit) instead of climbing."""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "BoxOpenStairsTerrainCfg"
        _check_range(owner, "step_height_range", self.step_height_range)
        _check_range(owner, "step_width_range", self.step_width_range)
        _check_positive(owner, "step_width_range[0]", self.step_width_range[0])
        _check_positive(owner, "platform_width", self.platform_width, allow_zero=True)
        _check_positive(owner, "border_width", self.border_width, allow_zero=True)
        _check_positive(owner, "step_thickness", self.step_thickness)

    def boxes(self, size, difficulty, rng):
        del rng  # Stairs are not random.
        owner = "BoxOpenStairsTerrainCfg"
        rise = _lerp(self.step_height_range, difficulty)
        run = _lerp(self.step_width_range[::-1], difficulty)
        inner = _inner_size(owner, size, self.border_width)
        centre = _centre(size)
        n = _fit(float((inner - self.platform_width).min()), 2 * run)
        k = np.arange(n)
        if self.inverted:
            tread_top, platform_top = -k * rise, -n * rise
        else:
            tread_top, platform_top = (k + 1) * rise, (n + 1) * rise
        t = self.step_thickness
        half_outer = inner / 2 - k[:, None] * run
        platform_half = inner / 2 - n * run

        out = _BoxList()
        out.frames(centre, half_outer, run, tread_top - t, tread_top)
        out.aligned(
            [*(centre - platform_half), platform_top - t],
            [*(centre + platform_half), platform_top],
        )
        if self.inverted:
            border_bottom = platform_top - t
        else:
            border_bottom = -_BASE_DEPTH
            out.aligned([*(centre - inner / 2), border_bottom], [*(centre + inner / 2), 0.0])
        out.frames(centre, centre[None], self.border_width, border_bottom, 0.0)
        return out.build(origin=(*centre, platform_top))


@dataclass(kw_only=True)
class BoxRandomStairsTerrainCfg(BoxSubTerrainCfg):
    """Pyramid stairs whose every rise is random, climbing to a flat top platform.

    Like `BoxPyramidStairsTerrainCfg` (solid rings ``step_width`` wide inside a flat border
    frame), but each of the ``n`` steps and the platform after them gets its own rise, uniform
    in ``step_height_range`` scaled by ``0.5 + 0.5 * difficulty``; the platform is one random
    rise above the last step (mjlab puts it level with the last step). Solid down to 1 m below
    the zero level. Difficulty scales the rises.
    """

    step_width: float = 0.8
    """Run of every step, m (> 0)."""
    step_height_range: tuple[float, float] = (0.1, 0.3)
    """Range of a single rise before the difficulty scaling, m."""
    platform_width: float = 1.0
    """Least side of the flat centre platform, m (>= 0)."""
    border_width: float = 0.25
    """Width of the flat frame (top at the zero level) around the stairs, m (>= 0)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "BoxRandomStairsTerrainCfg"
        _check_positive(owner, "step_width", self.step_width)
        _check_range(owner, "step_height_range", self.step_height_range)
        _check_positive(owner, "platform_width", self.platform_width, allow_zero=True)
        _check_positive(owner, "border_width", self.border_width, allow_zero=True)

    def boxes(self, size, difficulty, rng):
        owner = "BoxRandomStairsTerrainCfg"
        inner = _inner_size(owner, size, self.border_width)
        centre = _centre(size)
        run = self.step_width
        n = _fit(float((inner - self.platform_width).min()), 2 * run)
        rises = rng.uniform(*self.step_height_range, size=n + 1) * (0.5 + 0.5 * difficulty)
        tops = np.cumsum(rises)  # n step tops, then the platform's.
        k = np.arange(n)
        bottom = -_BASE_DEPTH
        platform_half = inner / 2 - n * run

        out = _BoxList()
        out.frames(centre, inner / 2 - k[:, None] * run, run, bottom, tops[:n])
        out.aligned([*(centre - platform_half), bottom], [*(centre + platform_half), tops[n]])
        out.frames(centre, centre[None], self.border_width, bottom, 0.0)
        return out.build(origin=(*centre, tops[n]))


@dataclass(kw_only=True)
class BoxSteppingStonesTerrainCfg(BoxSubTerrainCfg):
    """A grid of square stone pillars over a deep pit, around a platform.

    Stones of side ``s`` sit on a square grid of pitch ``s + d`` (``d`` the gap) centred in the
    area inside the border frame; each is shifted by up to ``displacement_range * difficulty``
    along x and y, its sides vary by up to ``stone_size_variation * difficulty`` and its top by
    up to ``stone_height_variation * difficulty`` around ``stone_height``. Stones are clipped to
    the inner area (dropped when narrower than 5 cm) and left out when their centre falls on the
    ``platform_width`` square at the centre. Stones, platform and border frame (tops at
    ``stone_height``; the spawn origin on the platform) stand from ``-floor_depth``, the floor of
    the pit. Difficulty shrinks the stones (``stone_size_range``), widens the gaps
    (``stone_distance_range``) and scales the variations.
    """

    stone_size_range: tuple[float, float] = (0.4, 0.8)
    """Side of a stone, m (> 0): the second value at difficulty 0, the first at difficulty 1."""
    stone_distance_range: tuple[float, float] = (0.2, 0.5)
    """Gap between neighbouring stones at difficulty 0 and 1, m."""
    stone_height: float = 0.2
    """Height of the stone tops, platform and border frame above the zero level, m (as in
    mjlab, the whole sub-terrain stands this much above its neighbours)."""
    stone_height_variation: float = 0.1
    """Largest change of a stone top at difficulty 1, m (>= 0; uniform in +-this)."""
    stone_size_variation: float = 0.1
    """Largest change of a stone side at difficulty 1, m (>= 0, < ``stone_size_range[0]``)."""
    floor_depth: float = 2.0
    """Depth of the pit floor below the zero level, m (> 0)."""
    displacement_range: float = 0.1
    """Largest shift of a stone off its grid point at difficulty 1, m (>= 0)."""
    platform_width: float = 1.0
    """Side of the square centre platform, m (>= 0)."""
    border_width: float = 0.25
    """Width of the flat frame around the stones, m (>= 0)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "BoxSteppingStonesTerrainCfg"
        _check_range(owner, "stone_size_range", self.stone_size_range)
        _check_positive(owner, "stone_size_range[0]", self.stone_size_range[0])
        _check_range(owner, "stone_distance_range", self.stone_distance_range)
        _check_positive(owner, "stone_height_variation", self.stone_height_variation, True)
        _check_positive(owner, "stone_size_variation", self.stone_size_variation, True)
        if self.stone_size_variation >= self.stone_size_range[0]:
            raise ValueError(
                f"{owner}.stone_size_variation = {self.stone_size_variation}: must be less "
                f"than stone_size_range[0] = {self.stone_size_range[0]} so every stone keeps a "
                "positive side."
            )
        _check_positive(owner, "floor_depth", self.floor_depth)
        if self.stone_height - self.stone_height_variation <= -self.floor_depth:
            raise ValueError(
                f"{owner}.floor_depth = {self.floor_depth}: the lowest stone top "
                f"(stone_height - stone_height_variation = "
                f"{self.stone_height - self.stone_height_variation}) must stay above the pit "
                "floor at -floor_depth; deepen the pit or raise the stones."
            )
        _check_positive(owner, "displacement_range", self.displacement_range, True)
        _check_positive(owner, "platform_width", self.platform_width, allow_zero=True)
        _check_positive(owner, "border_width", self.border_width, allow_zero=True)

    def boxes(self, size, difficulty, rng):
        owner = "BoxSteppingStonesTerrainCfg"
        inner = _inner_size(owner, size, self.border_width)
        centre = _centre(size)
        side = _lerp(self.stone_size_range[::-1], difficulty)
        gap = _lerp(self.stone_distance_range, difficulty)
        pitch = side + gap
        counts = np.floor(inner / pitch + 1e-9).astype(int) + 1
        first = self.border_width + (inner - (counts - 1) * pitch) / 2
        shape = (counts[0], counts[1])
        shift = self.displacement_range * difficulty
        grow = self.stone_size_variation * difficulty
        lift = self.stone_height_variation * difficulty
        # Drawn for the whole grid, so the seed alone fixes every stone.
        offset = rng.uniform(-shift, shift, size=(*shape, 2))
        sides = side + rng.uniform(-grow, grow, size=(*shape, 2))
        tops = self.stone_height + rng.uniform(-lift, lift, size=shape)

        grid = np.stack(
            np.meshgrid(
                first[0] + np.arange(shape[0]) * pitch,
                first[1] + np.arange(shape[1]) * pitch,
                indexing="ij",
            ),
            axis=-1,
        )
        xy = grid + offset
        lo = np.clip(xy - sides / 2, self.border_width, self.border_width + inner)
        hi = np.clip(xy + sides / 2, self.border_width, self.border_width + inner)
        on_platform = (np.abs(xy - centre) < self.platform_width / 2).all(axis=-1)
        keep = ~on_platform & (hi - lo >= _MIN_STONE).all(axis=-1)
        bottom = -self.floor_depth

        out = _BoxList()
        out.aligned(
            np.column_stack([lo[keep], np.full(keep.sum(), bottom)]),
            np.column_stack([hi[keep], tops[keep]]),
        )
        platform_half = np.minimum(self.platform_width / 2, inner / 2)
        out.aligned(
            [*(centre - platform_half), bottom], [*(centre + platform_half), self.stone_height]
        )
        out.frames(centre, centre[None], self.border_width, bottom, self.stone_height)
        return out.build(origin=(*centre, self.stone_height))


@dataclass(kw_only=True)
class BoxNarrowBeamsTerrainCfg(BoxSubTerrainCfg):
    """Narrow beams radiating from a centre platform to the border frame over a deep pit.

    ``num_beams`` beams at evenly spaced yaw angles (the first along +x) run from the edge of
    the ``platform_width`` platform outwards until they meet the border frame (no gap at the
    end; they stay inside the sub-terrain). Beams, platform and border frame (tops at
    ``beam_height``; the spawn origin on the platform) stand from ``-floor_depth``, the floor of
    the pit. Difficulty narrows the beams (``beam_width_range``).
    """

    num_beams: int = 16
    """Number of beams, >= 0."""
    beam_width_range: tuple[float, float] = (0.2, 0.4)
    """Beam width, m (> 0): the second value at difficulty 0, the first at difficulty 1."""
    beam_height: float = 0.2
    """Height of the beam tops, platform and border frame above the zero level, m (as in
    mjlab, the whole sub-terrain stands this much above its neighbours)."""
    spacing: float = 0.8
    """Kept for mjlab compatibility, m (> 0); mjlab 1.6 ignores it too: the beams are spread
    evenly by angle."""
    platform_width: float = 1.0
    """Side of the square centre platform, m (>= 0); the beams start at half of it from the
    centre."""
    border_width: float = 0.25
    """Width of the flat frame around the beams, m (>= 0)."""
    floor_depth: float = 2.0
    """Depth of the pit floor below the zero level, m (> 0)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "BoxNarrowBeamsTerrainCfg"
        _check_count(owner, "num_beams", self.num_beams)
        _check_range(owner, "beam_width_range", self.beam_width_range)
        _check_positive(owner, "beam_width_range[0]", self.beam_width_range[0])
        _check_positive(owner, "spacing", self.spacing)
        _check_positive(owner, "platform_width", self.platform_width, allow_zero=True)
        _check_positive(owner, "border_width", self.border_width, allow_zero=True)
        _check_positive(owner, "floor_depth", self.floor_depth)
        if self.beam_height <= -self.floor_depth:
            raise ValueError(
                f"{owner}.beam_height = {self.beam_height}: must be above the pit floor at "
                f"-floor_depth = {-self.floor_depth}."
            )

    def boxes(self, size, difficulty, rng):
        del rng  # The beams are not random.
        owner = "BoxNarrowBeamsTerrainCfg"
        inner = _inner_size(owner, size, self.border_width)
        centre = _centre(size)
        half_size = np.asarray(size, dtype=float) / 2
        width = _lerp(self.beam_width_range[::-1], difficulty)
        start = self.platform_width / 2
        angle = 2 * np.pi * np.arange(self.num_beams) / max(self.num_beams, 1)
        along = np.abs(np.stack([np.cos(angle), np.sin(angle)], axis=-1))  # (n, 2)
        across = along[:, ::-1]
        with np.errstate(divide="ignore"):
            # Distance along the beam where its nearer far corner meets the border frame ...
            meet = (inner / 2 + width / 2 * across) / along
            # ... and the most that keeps its farther far corner inside the sub-terrain.
            limit = (half_size - width / 2 * across) / along
        end = np.minimum(meet, limit).min(axis=1)
        end = np.where(np.isfinite(end), end, 0.0)
        mid = (start + end) / 2
        z_lo, z_hi = -self.floor_depth, self.beam_height
        pos = np.column_stack(
            [
                centre[0] + mid * np.cos(angle),
                centre[1] + mid * np.sin(angle),
                np.full(len(angle), (z_lo + z_hi) / 2),
            ]
        )
        half = np.column_stack(
            [
                (end - start) / 2,
                np.full(len(angle), width / 2),
                np.full(len(angle), (z_hi - z_lo) / 2),
            ]
        )
        out = _BoxList()
        out.rotated(pos, half, _yaw_quat(angle))
        platform_half = np.minimum(self.platform_width / 2, inner / 2)
        out.aligned([*(centre - platform_half), z_lo], [*(centre + platform_half), z_hi])
        out.frames(centre, centre[None], self.border_width, z_lo, z_hi)
        return out.build(origin=(*centre, self.beam_height))


@dataclass(kw_only=True)
class BoxTiltedGridTerrainCfg(BoxSubTerrainCfg):
    """A grid of square tiles with randomly tilted tops over a deep pit, around a flat platform.

    Inside the border frame, as many ``grid_width`` cells as fit are centred. Each tile's top
    is a plane through the cell centre at a random height, tilted by independent random angles
    about x and about y; the tile is a slab rotated to that tilt (its top covering the cell)
    over an upright column down to ``-floor_depth`` whose top stays under the tilted top.
    A slab's sides are square to its tilted top, so its underside reaches up to
    ``2 * half_thickness * sin(tilt)`` past the cell on the uphill side: seen from a lower
    neighbour, the step between two tiles is a riser leaning by the tilt angle instead of a
    vertical one. Cells that overlap the ``platform_width`` square at the centre are left out
    and the flat platform (spawn origin) grows to cover them. Platform and border frame are topped at the
    zero level (mjlab lifts this whole kind by a fixed 0.2 m). Difficulty scales the tilts and
    the height spread linearly from 0.
    """

    grid_width: float = 1.0
    """Side of each square tile, m (> 0)."""
    tilt_range_deg: float = 15.0
    """Largest tilt about x and about y at difficulty 1, degrees, in [0, 45]; each tile's two
    angles are uniform in +-``tilt_range_deg * difficulty``."""
    height_range: float = 0.1
    """Spread of the tile-centre heights at difficulty 1, m (>= 0): uniform in
    +-``height_range * difficulty / 2`` around the zero level."""
    platform_width: float = 1.0
    """Least side of the flat centre platform, m (>= 0)."""
    border_width: float = 0.25
    """Least width of the flat frame around the tiles, m (>= 0)."""
    floor_depth: float = 2.0
    """Depth of the pit floor (the bottom of every tile) below the zero level, m (> 0)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "BoxTiltedGridTerrainCfg"
        _check_positive(owner, "grid_width", self.grid_width)
        if not 0.0 <= self.tilt_range_deg <= 45.0:
            raise ValueError(
                f"{owner}.tilt_range_deg = {self.tilt_range_deg}: must be in [0, 45] (a box "
                "tilted further about both axes no longer covers its square cell)."
            )
        _check_positive(owner, "height_range", self.height_range, allow_zero=True)
        _check_positive(owner, "platform_width", self.platform_width, allow_zero=True)
        _check_positive(owner, "border_width", self.border_width, allow_zero=True)
        _check_positive(owner, "floor_depth", self.floor_depth)

    def _slab(self, tilt_x: np.ndarray, tilt_y: np.ndarray):
        """Half extents (n, 3), unit top normal (n, 3) and top-plane rise across a cell (n,)."""
        gw = self.grid_width
        sx, cx = np.sin(tilt_x), np.cos(tilt_x)
        sy, cy = np.sin(tilt_y), np.cos(tilt_y)
        # Rotation R = Rx(tilt_x) Ry(tilt_y); its third column is the top's normal.
        normal = np.stack([sy, -sx * cy, cx * cy], axis=-1)
        # Half extents so the top face's outline spans the cell along x and y.
        hx = gw / (2 * cy)
        hy = (gw / 2 - hx * np.abs(sx * sy)) / cx
        # Rise of the top plane across the cell; the slab is at least that thick vertically,
        # so its underside never lifts off the column top (the plane's lowest point).
        rise = gw * (np.abs(normal[:, 0]) + np.abs(normal[:, 1])) / normal[:, 2]
        ht = (rise + _MIN_SLAB) * normal[:, 2] / 2
        return np.stack([hx, hy, ht], axis=-1), normal, rise

    def _pad(self) -> float:
        """Widest reach of a slab's underside past its cell at the full tilt range, m."""
        tilt = np.full(1, np.deg2rad(self.tilt_range_deg))
        half, _, _ = self._slab(tilt, tilt)
        return float(2 * half[0, 2] * np.sin(tilt[0]))

    def boxes(self, size, difficulty, rng):
        owner = "BoxTiltedGridTerrainCfg"
        inner = _inner_size(owner, size, self.border_width)
        centre = _centre(size)
        gw = self.grid_width
        # Cells keep clear of the sub-terrain's edge by the slab overhang at the full tilt range
        # (so the layout is the same at every difficulty).
        room = np.asarray(size, dtype=float) - 2 * max(self.border_width, self._pad())
        counts = np.array([_fit(max(r, 0.0), gw) for r in room])
        margin = (np.asarray(size, dtype=float) - counts * gw) / 2
        shape = (counts[0], counts[1])
        max_tilt = np.deg2rad(self.tilt_range_deg) * difficulty
        spread = self.height_range * difficulty
        tilt = rng.uniform(-max_tilt, max_tilt, size=(*shape, 2))
        level = rng.uniform(-spread / 2, spread / 2, size=shape)

        xs = margin[0] + (np.arange(shape[0]) + 0.5) * gw
        ys = margin[1] + (np.arange(shape[1]) + 0.5) * gw
        # Cells overlapping the platform square go; the platform covers all of them.
        near_x = np.abs(xs - centre[0]) < (self.platform_width + gw) / 2 - _EPS
        near_y = np.abs(ys - centre[1]) < (self.platform_width + gw) / 2 - _EPS
        platform_half = np.minimum(self.platform_width / 2, inner / 2)
        if near_x.any() and near_y.any():
            covered = np.array(
                [np.abs(xs[near_x] - centre[0]).max(), np.abs(ys[near_y] - centre[1]).max()]
            )
            platform_half = np.maximum(platform_half, covered + gw / 2)
        gx, gy = np.meshgrid(xs, ys, indexing="ij")
        keep = ~(near_x[:, None] & near_y[None, :])
        gx, gy, tilt, level = gx[keep], gy[keep], tilt[keep], level[keep]

        half, normal, rise = self._slab(tilt[:, 0], tilt[:, 1])
        top_centre = np.column_stack([gx, gy, level])
        ha, hb = tilt[:, 0] / 2, tilt[:, 1] / 2
        quat = np.column_stack(  # Rx(tilt_x) then Ry(tilt_y), wxyz.
            [
                np.cos(ha) * np.cos(hb),
                np.sin(ha) * np.cos(hb),
                np.cos(ha) * np.sin(hb),
                np.sin(ha) * np.sin(hb),
            ]
        )
        bottom = -self.floor_depth
        out = _BoxList()
        out.rotated(top_centre - half[:, 2:] * normal, half, quat)
        out.aligned(
            np.column_stack([gx - gw / 2, gy - gw / 2, np.full(len(gx), bottom)]),
            np.column_stack([gx + gw / 2, gy + gw / 2, level - rise / 2]),
        )
        out.aligned([*(centre - platform_half), bottom], [*(centre + platform_half), 0.0])
        out.frames(centre, centre[None], margin[None], bottom, 0.0)
        return out.build(origin=(*centre, 0.0))


@dataclass(kw_only=True)
class BoxNestedRingsTerrainCfg(BoxSubTerrainCfg):
    """Concentric square rings of random heights, separated by gaps into a deep pit.

    Inside the border frame, ring ``k`` (``k = 0`` against the border) is a rectangular ring of
    one width, its outer edge ``k * (width + gap)`` in from the border; rings are added while
    one more still leaves at least ``platform_width`` inside it (up to ``num_rings``), and the
    flat platform (spawn origin) fills the inside of the last ring. Each ring's top is uniform
    in ``height_range`` scaled by ``1 + 0.5 * difficulty``; platform and border frame are
    topped at the zero level (mjlab uses fixed 0.2 m and 0.5 m). Rings, platform and border
    stand from ``-floor_depth``, the floor of the gaps. Difficulty narrows the rings
    (``ring_width_range``), widens the gaps (``gap_range``) and scales the heights.
    """

    num_rings: int = 5
    """Most rings, >= 0."""
    ring_width_range: tuple[float, float] = (0.3, 0.6)
    """Ring width, m (> 0): the second value at difficulty 0, the first at difficulty 1."""
    gap_range: tuple[float, float] = (0.0, 0.2)
    """Gap between neighbouring rings at difficulty 0 and 1, m."""
    height_range: tuple[float, float] = (0.1, 0.4)
    """Range of a ring top above the zero level before the difficulty scaling, m."""
    platform_width: float = 1.0
    """Least side of the flat centre platform, m (>= 0)."""
    border_width: float = 0.25
    """Width of the flat frame around the rings, m (>= 0)."""
    floor_depth: float = 2.0
    """Depth of the gaps' floor below the zero level, m (> 0)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "BoxNestedRingsTerrainCfg"
        _check_count(owner, "num_rings", self.num_rings)
        _check_range(owner, "ring_width_range", self.ring_width_range)
        _check_positive(owner, "ring_width_range[0]", self.ring_width_range[0])
        _check_range(owner, "gap_range", self.gap_range)
        _check_range(owner, "height_range", self.height_range)
        _check_positive(owner, "platform_width", self.platform_width, allow_zero=True)
        _check_positive(owner, "border_width", self.border_width, allow_zero=True)
        _check_positive(owner, "floor_depth", self.floor_depth)

    def boxes(self, size, difficulty, rng):
        owner = "BoxNestedRingsTerrainCfg"
        inner = _inner_size(owner, size, self.border_width)
        centre = _centre(size)
        width = _lerp(self.ring_width_range[::-1], difficulty)
        gap = _lerp(self.gap_range, difficulty)
        tops = rng.uniform(*self.height_range, size=self.num_rings) * (1 + 0.5 * difficulty)
        k = np.arange(self.num_rings)
        half_outer = inner / 2 - k[:, None] * (width + gap)  # (num_rings, 2)
        fits = (half_outer - width >= self.platform_width / 2 - _EPS).all(axis=1)
        m = int(fits.sum())  # Rings shrink monotonically, so the fitting ones come first.
        platform_half = half_outer[m - 1] - width if m else inner / 2
        bottom = -self.floor_depth

        out = _BoxList()
        out.frames(centre, half_outer[:m], width, bottom, tops[:m])
        out.aligned([*(centre - platform_half), bottom], [*(centre + platform_half), 0.0])
        out.frames(centre, centre[None], self.border_width, bottom, 0.0)
        return out.build(origin=(*centre, 0.0))

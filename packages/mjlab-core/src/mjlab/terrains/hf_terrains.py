"""mjlab's height-field sub-terrain kinds (``Hf*TerrainCfg``) on the generator's shared field.

mjlab gives every height-field sub-terrain its own MuJoCo height field. Here each kind returns
heights that `TerrainGenerator` writes into the single height field of the whole grid, sampled on
the generator's vertices (`mjlab.terrains.height_field` describes that convention), so mjlab's
per-kind sampling fields mean what they can in one shared field:

- ``horizontal_scale``: spacing of the kind's own sampling grid, m (Perlin noise samples on
  ``resolution`` instead, as in mjlab). The grid starts at the sub-terrain's lower corner; the
  pattern is built on it and, when the generator's vertex spacing differs, resampled bilinearly
  onto the generator's vertices.
- ``vertical_scale``: the kind's heights are rounded to multiples of it, m (the generator then
  rounds the whole map to its own ``TerrainGeneratorCfg.vertical_scale``).
- ``border_width``: every vertex nearer than this to the sub-terrain's edge is at height 0, m.
  The pattern fills the inner rectangle, which starts at the first sampling-grid vertex at or
  beyond ``border_width`` from each edge.
- ``base_thickness_ratio``: kept, without effect: the solid under the shared height field is
  ``TerrainGeneratorCfg.base_thickness`` thick for every sub-terrain.
- ``size`` (from `SubTerrainCfg`): the generator builds every sub-terrain at its own size.

Heights are relative to the terrain's zero level (the flat border around the grid).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from mjlab.terrains.height_field import (
    SubTerrainCfg,
    _check_order,
    _check_positive,
    _check_range,
    _distance_to_edge,
    _lerp,
    _platform_mask,
)

__all__ = [
    "HfDiscreteObstaclesTerrainCfg",
    "HfPerlinNoiseTerrainCfg",
    "HfPyramidSlopedTerrainCfg",
    "HfRandomUniformTerrainCfg",
    "HfWaveTerrainCfg",
]

_TOL = 1e-9
"""Slack for comparing lengths in metres (and grid positions in cells) that should be equal."""

# --------------------------------------------------------------------------------------------
# Shared helpers: validation, the kind's sampling grid, resampling.
# --------------------------------------------------------------------------------------------


def _check_sampling(
    owner: str,
    horizontal_scale: float,
    border_width: float,
    base_thickness_ratio: float,
    vertical_scale: float | None = None,
) -> None:
    """Checks of the per-kind sampling fields every height-field kind has."""
    _check_positive(owner, "horizontal_scale", horizontal_scale)
    if vertical_scale is not None:
        _check_positive(owner, "vertical_scale", vertical_scale)
    _check_positive(owner, "base_thickness_ratio", base_thickness_ratio, allow_zero=True)
    _check_positive(owner, "border_width", border_width, allow_zero=True)
    if 0 < border_width < horizontal_scale:
        raise ValueError(
            f"{owner}.border_width = {border_width}: a border must be at least one "
            f"horizontal_scale ({horizontal_scale} m) wide; use 0 for none or a wider one."
        )


@dataclass(frozen=True)
class _Grid:
    """The kind's own sampling grid over one sub-terrain.

    Vertex ``k`` of an axis sits ``k * spacing`` m from the sub-terrain's lower corner; ``s`` is
    the same position measured from the inner rectangle's lower corner instead.
    """

    spacing: float
    s: tuple[np.ndarray, np.ndarray]
    """Per axis: (m,) position of each vertex from the inner corner, m."""
    inner: tuple[np.ndarray, np.ndarray]
    """Per axis: (m,) True at the vertices inside the inner rectangle (its edges included)."""
    owned: tuple[np.ndarray, np.ndarray]
    """Per axis: ``inner`` without a vertex on the sub-terrain's far edge (that one is the
    next sub-terrain's first vertex)."""
    inner_size: tuple[float, float]
    """Side of the inner rectangle along x and y, m."""

    @property
    def inner_mask(self) -> np.ndarray:
        """(mx, my) True inside the inner rectangle."""
        return self.inner[0][:, None] & self.inner[1][None, :]


def _grid(
    owner: str, shape: tuple[int, int], hs: float, spacing: float, border_width: float
) -> _Grid:
    s_axes, inner_axes, owned_axes, sizes = [], [], [], []
    for n in shape:
        length = n * hs
        cells = int(np.ceil(length / spacing - _TOL))
        start = int(np.ceil(border_width / spacing - _TOL)) * spacing
        inner_size = length - 2 * start
        if inner_size <= _TOL:
            raise ValueError(
                f"{owner}.border_width = {border_width} m leaves nothing inside a {length} m "
                "sub-terrain; make it less than half the sub-terrain's side."
            )
        s = np.arange(cells + 1) * spacing - start
        s_axes.append(s)
        inner_axes.append((s >= -_TOL) & (s <= inner_size + _TOL))
        owned_axes.append(inner_axes[-1] & (s + start < length - _TOL))
        sizes.append(inner_size)
    return _Grid(
        spacing,
        (s_axes[0], s_axes[1]),
        (inner_axes[0], inner_axes[1]),
        (owned_axes[0], owned_axes[1]),
        (sizes[0], sizes[1]),
    )


def _axis_weights(q: np.ndarray, spacing: float, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Lower node index and fraction towards the next node of positions ``q`` (m) on ``m``
    nodes ``spacing`` m apart; clamped to the nodes, exact on a node."""
    t = q / spacing
    on_node = np.abs(t - np.rint(t)) < 1e-7
    t = np.clip(np.where(on_node, np.rint(t), t), 0.0, m - 1)
    lower = np.minimum(np.floor(t).astype(int), max(m - 2, 0))
    return lower, t - lower


def _bilinear(values: np.ndarray, spacing: float, qx: np.ndarray, qy: np.ndarray) -> np.ndarray:
    """Bilinear interpolation of ``values`` (nodes ``k * spacing`` m along each axis) at the
    grid ``qx`` x ``qy`` (m); (qx.size, qy.size). Positions past the nodes take the edge value."""
    mx, my = values.shape
    ix, fx = _axis_weights(qx, spacing, mx)
    iy, fy = _axis_weights(qy, spacing, my)
    jx, jy = np.minimum(ix + 1, mx - 1), np.minimum(iy + 1, my - 1)
    fx, fy = fx[:, None], fy[None, :]
    lo = values[ix][:, iy] * (1 - fy) + values[ix][:, jy] * fy
    hi = values[jx][:, iy] * (1 - fy) + values[jx][:, jy] * fy
    return lo * (1 - fx) + hi * fx


def _to_vertices(
    values: np.ndarray, grid: _Grid, shape: tuple[int, int], hs: float, border_width: float
) -> np.ndarray:
    """Kind-grid heights -> (nx, ny) heights on the generator's vertices, border band at 0."""
    nx, ny = shape
    if abs(grid.spacing - hs) <= _TOL * hs:
        h = values[:nx, :ny].astype(float)
    else:
        h = _bilinear(values, grid.spacing, np.arange(nx) * hs, np.arange(ny) * hs)
    if border_width > 0:
        h[_distance_to_edge(shape, hs) < border_width - _TOL] = 0.0
    return h


def _quantise(h: np.ndarray, step: float) -> np.ndarray:
    # + 0.0 turns the -0.0 of small negatives rounded to zero into 0.0.
    return np.round(h / step) * step + 0.0


# --------------------------------------------------------------------------------------------
# Kinds.
# --------------------------------------------------------------------------------------------


class _HfKindCfg(SubTerrainCfg):
    """What every height-field kind shares (no fields of its own): the checks of its sampling
    fields (`horizontal_scale`, `border_width`, `base_thickness_ratio` and, where the kind has
    one, `vertical_scale`) and its sampling grid, both named after the kind's class."""

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_sampling(
            type(self).__name__,
            self.horizontal_scale,
            self.border_width,
            self.base_thickness_ratio,
            getattr(self, "vertical_scale", None),
        )

    def _sampling_grid(
        self, shape: tuple[int, int], horizontal_scale: float, spacing: float | None = None
    ) -> _Grid:
        """The kind's grid over a sub-terrain of `shape` generator vertices `horizontal_scale`
        m apart; vertices `spacing` m apart (default: the kind's `horizontal_scale`)."""
        spacing = self.horizontal_scale if spacing is None else spacing
        return _grid(
            type(self).__name__,
            shape,
            horizontal_scale,
            spacing,
            self.border_width,
        )


@dataclass(kw_only=True)
class HfPyramidSlopedTerrainCfg(_HfKindCfg):
    """Four planar faces climbing from the inner rectangle's edge (height 0) at ``slope`` to a
    flat square platform at the centre; inverted: they descend to a pit.

    Unlike mjlab, whose surface is the product of an x and a y tent (its gradient equals the
    nominal slope only on the centre lines), every face here has exactly the nominal slope.
    """

    slope_range: tuple[float, float]
    """Face slope (rise over run, dimensionless) at difficulty 0 and 1; 0 <= low <= high."""
    platform_width: float = 1.0
    """Side of the flat square at the centre, m (>= 0)."""
    inverted: bool = False
    """True: the faces go down from the edges to a bottom platform instead of up."""
    border_width: float = 0.0
    """Width of the flat band (height 0) along the sub-terrain's edges, m (0 or >=
    horizontal_scale); the pyramid stands on the rectangle inside it."""
    horizontal_scale: float = 0.1
    """Spacing of this kind's sampling grid, m (> 0)."""
    vertical_scale: float = 0.005
    """Heights are rounded to multiples of this, m (> 0)."""
    base_thickness_ratio: float = 1.0
    """mjlab: thickness of the solid under this kind's height field over its height range
    (>= 0). No effect here: the one shared height field's base is
    TerrainGeneratorCfg.base_thickness thick; kept so mjlab configs load."""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "HfPyramidSlopedTerrainCfg"
        _check_range(owner, "slope_range", self.slope_range)
        _check_positive(owner, "platform_width", self.platform_width, allow_zero=True)

    def heights(
        self,
        shape: tuple[int, int],
        horizontal_scale: float,
        difficulty: float,
        rng: np.random.Generator,
    ) -> np.ndarray:
        slope = _lerp(self.slope_range, difficulty)
        grid = self._sampling_grid(shape, horizontal_scale)
        (sx, sy), (lx, ly) = grid.s, grid.inner_size
        # Run from the nearest inner edge, capped where the platform begins.
        run_x = np.minimum(sx, lx - sx)[:, None]
        run_y = np.minimum(sy, ly - sy)[None, :]
        top = max(min(lx, ly) / 2 - self.platform_width / 2, 0.0)
        h = slope * np.clip(np.minimum(run_x, run_y), 0.0, top) * grid.inner_mask
        if self.inverted:
            h = -h
        h = _to_vertices(h, grid, shape, horizontal_scale, self.border_width)
        return _quantise(h, self.vertical_scale)


@dataclass(kw_only=True)
class HfRandomUniformTerrainCfg(_HfKindCfg):
    """Random heights drawn uniformly from the levels ``low, low + noise_step, ...`` (up to
    ``high``) on a grid ``downsampled_scale`` apart, interpolated between its nodes.

    No centre platform (as in mjlab): the origin is whatever ground lies at the centre. mjlab
    interpolates with a cubic spline, which can overshoot ``noise_range``; here the
    interpolation is bilinear, so every height stays inside the range.
    """

    noise_range: tuple[float, float]
    """Lowest and highest height, m (low <= high; may be negative)."""
    noise_step: float = 0.005
    """Spacing of the height levels drawn from, m (> 0)."""
    downsampled_scale: float | None = None
    """Spacing of the random nodes, m (>= horizontal_scale); None: horizontal_scale (a fresh
    height at every vertex of this kind's grid)."""
    horizontal_scale: float = 0.1
    """Spacing of this kind's sampling grid, m (> 0)."""
    vertical_scale: float = 0.005
    """Heights are rounded to multiples of this, m (> 0)."""
    base_thickness_ratio: float = 1.0
    """mjlab: thickness of the solid under this kind's height field over its height range
    (>= 0). No effect here: the one shared height field's base is
    TerrainGeneratorCfg.base_thickness thick; kept so mjlab configs load."""
    border_width: float = 0.0
    """Width of the flat band (height 0) along the sub-terrain's edges, m (0 or >=
    horizontal_scale)."""
    scale_with_difficulty: bool = False
    """False: every difficulty gets the full noise_range. True: both ends of noise_range are
    multiplied by the difficulty (flat at 0, the full range at 1)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "HfRandomUniformTerrainCfg"
        _check_order(owner, "noise_range", self.noise_range)
        _check_positive(owner, "noise_step", self.noise_step)
        if self.downsampled_scale is not None and (self.downsampled_scale < self.horizontal_scale):
            raise ValueError(
                f"{owner}.downsampled_scale = {self.downsampled_scale}: must be >= "
                f"horizontal_scale ({self.horizontal_scale} m), or None to use it."
            )

    def heights(
        self,
        shape: tuple[int, int],
        horizontal_scale: float,
        difficulty: float,
        rng: np.random.Generator,
    ) -> np.ndarray:
        gain = difficulty if self.scale_with_difficulty else 1.0
        lo, hi = self.noise_range[0] * gain, self.noise_range[1] * gain
        count = int(np.floor((hi - lo) / self.noise_step + _TOL)) + 1
        levels = lo + self.noise_step * np.arange(count)
        grid = self._sampling_grid(shape, horizontal_scale)
        step = self.downsampled_scale or self.horizontal_scale
        # Nodes from the inner corner to (at least) the inner far edge.
        nodes_shape = tuple(int(np.ceil(side / step - _TOL)) + 1 for side in grid.inner_size)
        nodes = rng.choice(levels, size=nodes_shape)
        h = _bilinear(nodes, step, grid.s[0], grid.s[1]) * grid.inner_mask
        h = _to_vertices(h, grid, shape, horizontal_scale, self.border_width)
        return _quantise(h, self.vertical_scale)


@dataclass(kw_only=True)
class HfWaveTerrainCfg(_HfKindCfg):
    """Crossed sine waves: ``amplitude / 2 * (sin(k x) + cos(k y))`` with ``k = 2 pi num_waves /
    (inner side along y)``, x and y from the inner rectangle's corner.

    Each sinusoid rises and falls by ``amplitude`` (peak to peak), so the surface spans
    ``[-amplitude, amplitude]`` about the zero level, as in mjlab. ``num_waves`` whole waves fit
    along y; along x the same wavelength is used. No centre platform (as in mjlab).
    """

    amplitude_range: tuple[float, float]
    """Peak-to-peak height of each sinusoid at difficulty 0 and 1, m; 0 <= low <= high."""
    num_waves: int = 1
    """Number of whole wavelengths along the inner side in y (> 0)."""
    horizontal_scale: float = 0.1
    """Spacing of this kind's sampling grid, m (> 0)."""
    vertical_scale: float = 0.005
    """Heights are rounded to multiples of this, m (> 0)."""
    base_thickness_ratio: float = 0.25
    """mjlab: thickness of the solid under this kind's height field over its height range
    (>= 0). No effect here: the one shared height field's base is
    TerrainGeneratorCfg.base_thickness thick; kept so mjlab configs load."""
    border_width: float = 0.0
    """Width of the flat band (height 0) along the sub-terrain's edges, m (0 or >=
    horizontal_scale)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "HfWaveTerrainCfg"
        _check_range(owner, "amplitude_range", self.amplitude_range)
        _check_positive(owner, "num_waves", self.num_waves)

    def heights(
        self,
        shape: tuple[int, int],
        horizontal_scale: float,
        difficulty: float,
        rng: np.random.Generator,
    ) -> np.ndarray:
        amplitude = _lerp(self.amplitude_range, difficulty)
        grid = self._sampling_grid(shape, horizontal_scale)
        k = 2 * np.pi * self.num_waves / grid.inner_size[1]
        h = amplitude / 2 * (np.sin(k * grid.s[0])[:, None] + np.cos(k * grid.s[1])[None, :])
        h = _to_vertices(h * grid.inner_mask, grid, shape, horizontal_scale, self.border_width)
        return _quantise(h, self.vertical_scale)


@dataclass(frozen=True)
class _Obstacles:
    """Obstacles of one sub-terrain on the kind's grid, indices from the inner corner."""

    corner: np.ndarray
    """(n, 2) int lower x / y grid index of each obstacle."""
    size: np.ndarray
    """(n, 2) int number of grid vertices each obstacle covers along x / y."""
    top: np.ndarray
    """(n,) height of each obstacle, m (negative: a pit)."""


@dataclass(kw_only=True)
class HfDiscreteObstaclesTerrainCfg(_HfKindCfg):
    """Axis-aligned rectangular blocks (and, in "choice" mode, pits) scattered over flat ground
    at height 0, with the centre platform cleared.

    Each obstacle covers ``w`` grid vertices along x and ``l`` along y, where ``w`` and ``l`` are
    ``floor(low / horizontal_scale)`` plus a multiple of 4 up to ``floor(high /
    horizontal_scale)`` (mjlab's grid); its lower corner lies on every 4th vertex of the inner
    rectangle, and it is cut off at the inner rectangle's far edge. Where obstacles overlap, the
    one drawn later wins. In "choice" mode mjlab halves the height with floor division, which
    makes the negative half one level deeper for an odd number of levels; here both halves are
    ``+-(levels // 2)`` levels.
    """

    obstacle_height_mode: Literal["choice", "fixed"] = "choice"
    """How obstacle heights are drawn. "choice": each from ``(-h, -h/2, h/2, h)`` (blocks and
    pits); "fixed": every obstacle is ``h`` high. ``h`` is obstacle_height_range at the difficulty,
    rounded down to vertical_scale."""
    obstacle_width_range: tuple[float, float]
    """Smallest and largest obstacle side, m (0 < low <= high; drawn independently along x and
    y unless square_obstacles). Sides under one horizontal_scale become one grid vertex."""
    obstacle_height_range: tuple[float, float]
    """Obstacle height ``h`` at difficulty 0 and 1, m; 0 <= low <= high."""
    num_obstacles: int
    """Number of obstacles drawn per sub-terrain (>= 0)."""
    platform_width: float = 1.0
    """Side of the obstacle-free square at the centre, m (>= 0)."""
    horizontal_scale: float = 0.1
    """Spacing of this kind's sampling grid, m (> 0)."""
    vertical_scale: float = 0.005
    """Heights are rounded to multiples of this, m (> 0)."""
    base_thickness_ratio: float = 1.0
    """mjlab: thickness of the solid under this kind's height field over its height range
    (>= 0). No effect here: the one shared height field's base is
    TerrainGeneratorCfg.base_thickness thick; kept so mjlab configs load."""
    border_width: float = 0.0
    """Width of the obstacle-free band (height 0) along the sub-terrain's edges, m (0 or >=
    horizontal_scale)."""
    square_obstacles: bool = False
    """True: each obstacle's y side equals its x side."""
    origin_z_offset: float = 0.0
    """Lift of this sub-terrain's spawn origin above the platform, m (mjlab adds it to the
    origin the sub-terrain returns, so feet do not start inside the ground). The surface is
    unchanged; the terrain generator adds it to `TerrainGenerator.origins`."""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "HfDiscreteObstaclesTerrainCfg"
        if self.obstacle_height_mode not in ("choice", "fixed"):
            raise ValueError(
                f"{owner}.obstacle_height_mode = {self.obstacle_height_mode!r}: use 'choice' or "
                "'fixed'."
            )
        _check_range(owner, "obstacle_width_range", self.obstacle_width_range)
        _check_positive(owner, "obstacle_width_range[0]", self.obstacle_width_range[0])
        _check_range(owner, "obstacle_height_range", self.obstacle_height_range)
        if self.num_obstacles < 0:
            raise ValueError(
                f"{owner}.num_obstacles = {self.num_obstacles}: must be >= 0 (0 for none)."
            )
        _check_positive(owner, "platform_width", self.platform_width, allow_zero=True)

    def _obstacles(
        self, inner_vertices: tuple[int, int], difficulty: float, rng: np.random.Generator
    ) -> _Obstacles:
        """Draw the obstacles of one sub-terrain whose inner rectangle has ``inner_vertices``
        grid vertices along x and y."""
        n = self.num_obstacles
        levels = int(
            np.floor(_lerp(self.obstacle_height_range, difficulty) / self.vertical_scale + _TOL)
        )
        if self.obstacle_height_mode == "choice":
            choices = np.array([-levels, -(levels // 2), levels // 2, levels])
            top = rng.choice(choices, size=n) * self.vertical_scale
        else:
            top = np.full(n, levels * self.vertical_scale)
        hs = self.horizontal_scale
        low = max(int(np.floor(self.obstacle_width_range[0] / hs + _TOL)), 1)
        high = max(int(np.floor(self.obstacle_width_range[1] / hs + _TOL)), low)
        sides = np.arange(low, high + 1, 4)
        side_x = rng.choice(sides, size=n)
        side_y = side_x if self.square_obstacles else rng.choice(sides, size=n)
        corner_x = rng.choice(np.arange(0, inner_vertices[0], 4), size=n)
        corner_y = rng.choice(np.arange(0, inner_vertices[1], 4), size=n)
        return _Obstacles(
            corner=np.stack([corner_x, corner_y], axis=1),
            size=np.stack([side_x, side_y], axis=1),
            top=top,
        )

    def heights(
        self,
        shape: tuple[int, int],
        horizontal_scale: float,
        difficulty: float,
        rng: np.random.Generator,
    ) -> np.ndarray:
        grid = self._sampling_grid(shape, horizontal_scale)
        ix, iy = np.flatnonzero(grid.owned[0]), np.flatnonzero(grid.owned[1])
        obstacles = self._obstacles((ix.size, iy.size), difficulty, rng)
        inner = np.zeros((ix.size, iy.size))
        # One slice assignment per obstacle, in draw order, so a later one overwrites.
        for (x0, y0), (w, length), top in zip(
            obstacles.corner, obstacles.size, obstacles.top, strict=True
        ):
            inner[x0 : x0 + w, y0 : y0 + length] = top
        h = np.zeros((grid.s[0].size, grid.s[1].size))
        h[np.ix_(ix, iy)] = inner
        h = _to_vertices(h, grid, shape, horizontal_scale, self.border_width)
        if self.platform_width > 0:
            h[_platform_mask(shape, horizontal_scale, self.platform_width)] = 0.0
        return _quantise(h, self.vertical_scale)


def _fade(t: np.ndarray) -> np.ndarray:
    """Quintic ease curve 6t^5 - 15t^4 + 10t^3: zero first and second derivative at 0 and 1."""
    return t * t * t * (t * (6 * t - 15) + 10)


def _gradient_octave(px: np.ndarray, py: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One layer of 2-D gradient (Perlin) noise at lattice coordinates ``px`` x ``py`` (>= 0);
    (px.size, py.size). Every lattice node gets a unit gradient of random direction; each
    point blends its cell's four corner ramps with the quintic ease curve."""
    cx, cy = np.floor(px).astype(int), np.floor(py).astype(int)
    fx, fy = (px - cx)[:, None], (py - cy)[None, :]
    angle = rng.uniform(0.0, 2 * np.pi, size=(cx.max() + 2, cy.max() + 2))
    ramps = {}
    for dx in (0, 1):
        for dy in (0, 1):
            # The corner gradient's dot product with the offset from that corner.
            a = angle[(cx + dx)[:, None], (cy + dy)[None, :]]
            ramps[dx, dy] = np.cos(a) * (fx - dx) + np.sin(a) * (fy - dy)
    u, v = _fade(fx), _fade(fy)
    bottom = ramps[0, 0] + u * (ramps[1, 0] - ramps[0, 0])
    top = ramps[0, 1] + u * (ramps[1, 1] - ramps[0, 1])
    return bottom + v * (top - bottom)


def _gradient_noise(
    sx: np.ndarray,
    sy: np.ndarray,
    cells: float,
    octaves: int,
    persistence: float,
    lacunarity: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Fractal gradient noise on the grid ``sx`` x ``sy`` (fractions in [0, 1] of the area's
    side); (sx.size, sy.size).

    Octave ``o`` has ``cells * lacunarity**o`` lattice cells across each side and weight
    ``persistence**o``; the weighted sum is divided by the total weight.
    """
    total = np.zeros((sx.size, sy.size))
    weight, weight_sum, freq = 1.0, 0.0, cells
    for _ in range(octaves):
        total += weight * _gradient_octave(sx * freq, sy * freq, rng)
        weight_sum += weight
        weight *= persistence
        freq *= lacunarity
    return total / weight_sum


@dataclass(kw_only=True)
class HfPerlinNoiseTerrainCfg(_HfKindCfg):
    """Smooth rolling ground from fractal Perlin noise, stretched to span exactly
    ``[0, height]`` over the inner rectangle (``height`` = height_range at the difficulty).

    As in mjlab, the noise is sampled every ``resolution`` m and ``horizontal_scale`` only
    stretches the features: the coarsest octave has ``scale * resolution / horizontal_scale``
    lattice cells across each inner side. No vertical_scale (mjlab has none for this kind):
    the generator's rounding applies. No centre platform (as in mjlab).
    """

    height_range: tuple[float, float]
    """Height of the highest point (the lowest is at 0) at difficulty 0 and 1, m;
    0 <= low <= high."""
    octaves: int = 4
    """Number of noise layers summed (>= 1); each adds finer detail."""
    persistence: float = 0.5
    """Weight of each octave relative to the previous one (>= 0; smaller: smoother)."""
    lacunarity: float = 2.0
    """Lattice frequency of each octave relative to the previous one (> 0)."""
    scale: float = 10.0
    """Feature density (> 0): the coarsest octave has ``scale * resolution /
    horizontal_scale`` lattice cells across each inner side (5 with the defaults)."""
    horizontal_scale: float = 0.1
    """Feature stretch, m (> 0): doubling it halves the lattice cells across the sub-terrain.
    Also the least non-zero border_width."""
    resolution: float = 0.05
    """Spacing of this kind's sampling grid, m (> 0); resampled bilinearly onto the
    generator's vertices when it differs from their spacing."""
    base_thickness_ratio: float = 1.0
    """mjlab: thickness of the solid under this kind's height field over its height range
    (>= 0). No effect here: the one shared height field's base is
    TerrainGeneratorCfg.base_thickness thick; kept so mjlab configs load."""
    border_width: float = 0.0
    """Width of the flat band (height 0) along the sub-terrain's edges, m (0 or >=
    horizontal_scale)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        owner = "HfPerlinNoiseTerrainCfg"
        _check_range(owner, "height_range", self.height_range)
        if self.octaves < 1:
            raise ValueError(f"{owner}.octaves = {self.octaves}: must be >= 1.")
        _check_positive(owner, "persistence", self.persistence, allow_zero=True)
        _check_positive(owner, "lacunarity", self.lacunarity)
        _check_positive(owner, "scale", self.scale)
        _check_positive(owner, "resolution", self.resolution)

    def heights(
        self,
        shape: tuple[int, int],
        horizontal_scale: float,
        difficulty: float,
        rng: np.random.Generator,
    ) -> np.ndarray:
        height = _lerp(self.height_range, difficulty)
        grid = self._sampling_grid(shape, horizontal_scale, self.resolution)
        ix, iy = np.flatnonzero(grid.inner[0]), np.flatnonzero(grid.inner[1])
        sx = np.clip(grid.s[0][ix] / grid.inner_size[0], 0.0, 1.0)
        sy = np.clip(grid.s[1][iy] / grid.inner_size[1], 0.0, 1.0)
        cells = self.scale * self.resolution / self.horizontal_scale
        noise = _gradient_noise(sx, sy, cells, self.octaves, self.persistence, self.lacunarity, rng)
        # Stretched over this sub-terrain's own vertices (not the next one's first vertex,
        # which the far edge may hold), so its lowest is 0 and its highest exactly ``height``.
        own = noise[np.ix_(grid.owned[0][ix], grid.owned[1][iy])]
        low, spread = own.min(), own.max() - own.min()
        unit = np.clip((noise - low) / spread, 0.0, 1.0) if spread > 0 else 0.0 * noise
        h = np.zeros((grid.s[0].size, grid.s[1].size))
        h[np.ix_(ix, iy)] = unit * height
        return _to_vertices(h, grid, shape, horizontal_scale, self.border_width)

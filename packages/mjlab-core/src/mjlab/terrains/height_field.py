"""Sub-terrain kinds: each builds the height map of one grid cell of the terrain generator.

A sub-terrain is sampled on vertices spaced ``horizontal_scale`` m apart: vertex ``(i, j)`` of an
``(nx, ny)`` map sits at local ``(i * horizontal_scale, j * horizontal_scale)`` from the
sub-terrain's lower corner, ``i`` along world x and ``j`` along world y. Vertex ``(nx, ny)`` is
the first vertex of the next sub-terrain, so maps tile without overlap. The generator puts env
origins on the vertex nearest the centre, ``(nx // 2, ny // 2)``; every kind below keeps a flat
platform there (or, for rough ground, just the ground at the centre).

Heights are built with whole-array numpy operations (no per-cell Python loops) in metres;
``difficulty`` in [0, 1] interpolates each kind's ``*_range`` field from its first to its second
value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mjlab.utils.config import Config

__all__ = [
    "FlatPatchSamplingCfg",
    "FlatTerrainCfg",
    "PyramidSlopedTerrainCfg",
    "PyramidStairsTerrainCfg",
    "RandomBoxesTerrainCfg",
    "RandomGridBoxesTerrainCfg",
    "RandomRoughTerrainCfg",
    "SubTerrainCfg",
]


def _lerp(value_range: tuple[float, float], difficulty: float) -> float:
    return value_range[0] + difficulty * (value_range[1] - value_range[0])


def _check_range(owner: str, name: str, value_range: tuple[float, float]) -> None:
    lo, hi = value_range
    if not 0.0 <= lo <= hi:
        raise ValueError(
            f"{owner}.{name} = {value_range}: expected 0 <= low <= high (values at difficulty "
            "0 and 1)."
        )


def _check_order(owner: str, name: str, value_range: tuple[float, float]) -> None:
    """A (low, high) pair that may be negative: low <= high."""
    lo, hi = value_range
    if lo > hi:
        raise ValueError(f"{owner}.{name} = {value_range}: need low <= high; swap them.")


def _check_positive(owner: str, name: str, value: float, allow_zero: bool = False) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{owner}.{name} = {value}: must be {bound}.")


def _centre_offsets(shape: tuple[int, int], scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(nx, 1) and (1, ny) vertex offsets from the sub-terrain centre, m."""
    nx, ny = shape
    dx = np.arange(nx) * scale - nx * scale / 2
    dy = np.arange(ny) * scale - ny * scale / 2
    return dx[:, None], dy[None, :]


def _distance_to_edge(shape: tuple[int, int], scale: float) -> np.ndarray:
    """(nx, ny) distance from each vertex to the nearest sub-terrain edge, m (0 on the edge)."""
    nx, ny = shape
    dx, dy = _centre_offsets(shape, scale)
    return np.minimum(nx * scale / 2 - np.abs(dx), ny * scale / 2 - np.abs(dy))


def _platform_mask(shape: tuple[int, int], scale: float, width: float) -> np.ndarray:
    """(nx, ny) True on the centred square platform of side ``width``."""
    dx, dy = _centre_offsets(shape, scale)
    return (np.abs(dx) <= width / 2) & (np.abs(dy) <= width / 2)


@dataclass(kw_only=True)
class FlatPatchSamplingCfg(Config):
    """Where to look for flat spots on a sub-terrain (spawn or goal points on rough ground).

    A candidate is a point of a square grid (spacing ``grid_resolution``) inside the x / y
    ranges around the sub-terrain's origin. It is flat when, within ``patch_radius`` of it, the
    surface (height field and box tops) varies by at most ``max_height_diff`` and its height
    relative to the origin lies in ``z_range``. ``num_patches`` of the flat candidates are drawn
    with the generator's random generator (with repeats when fewer are flat); when none is,
    the generator raises ValueError naming the sub-terrain.
    """

    num_patches: int = 10
    """Patches to return per sub-terrain, >= 1."""
    patch_radius: float = 0.5
    """Radius of the disc that must be flat, m (> 0)."""
    max_height_diff: float = 0.05
    """Largest height spread allowed within the disc, m (>= 0)."""
    x_range: tuple[float, float] = (-1e6, 1e6)
    """Candidate x relative to the sub-terrain's origin, m (clipped to the sub-terrain)."""
    y_range: tuple[float, float] = (-1e6, 1e6)
    """Candidate y relative to the sub-terrain's origin, m (clipped to the sub-terrain)."""
    z_range: tuple[float, float] = (-1e6, 1e6)
    """Candidate height relative to the sub-terrain's origin, m."""
    grid_resolution: float | None = None
    """Spacing of the candidate grid, m (> 0); None: the terrain's `horizontal_scale`."""

    def __post_init__(self) -> None:
        if self.num_patches < 1:
            raise ValueError(
                f"FlatPatchSamplingCfg.num_patches = {self.num_patches}: must be >= 1."
            )
        _check_positive("FlatPatchSamplingCfg", "patch_radius", self.patch_radius)
        _check_positive("FlatPatchSamplingCfg", "max_height_diff", self.max_height_diff, True)
        if self.grid_resolution is not None:
            _check_positive("FlatPatchSamplingCfg", "grid_resolution", self.grid_resolution)
        for name in ("x_range", "y_range", "z_range"):
            _check_order("FlatPatchSamplingCfg", name, getattr(self, name))


@dataclass(kw_only=True)
class SubTerrainCfg(Config):
    """Base of the sub-terrain kinds."""

    proportion: float = 1.0
    """Relative share of the grid's columns (curriculum) or cells (random) of this kind, >= 0."""
    size: tuple[float, float] = (10.0, 10.0)
    """Side of the sub-terrain along x and y, m. The terrain generator builds every sub-terrain
    at its own ``TerrainGeneratorCfg.size`` whatever this says."""
    flat_patch_sampling: dict[str, FlatPatchSamplingCfg] | None = None
    """Named flat-spot searches on each sub-terrain of this kind; the results are
    ``TerrainGenerator.flat_patches[name]``. None: no search."""

    def __post_init__(self) -> None:
        _check_positive(type(self).__name__, "proportion", self.proportion, allow_zero=True)

    def heights(
        self,
        shape: tuple[int, int],
        horizontal_scale: float,
        difficulty: float,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """Height map of one sub-terrain.

        Args:
            shape: (nx, ny) number of vertices along x and y.
            horizontal_scale: Vertex spacing, m.
            difficulty: In [0, 1]; 0 is the easiest version of this kind.
            rng: Random generator (the terrain generator's, so a seed fixes the map).

        Returns:
            (nx, ny) float64 heights, m, relative to the terrain's zero level.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement heights().")


@dataclass(kw_only=True)
class FlatTerrainCfg(SubTerrainCfg):
    """Flat ground at height 0."""

    def heights(self, shape, horizontal_scale, difficulty, rng):
        return np.zeros(shape)


@dataclass(kw_only=True)
class RandomRoughTerrainCfg(SubTerrainCfg):
    """Uniform random heights on a coarse grid, linearly interpolated between its nodes."""

    noise_range: tuple[float, float] = (0.01, 0.08)
    """Peak-to-peak height of the noise at difficulty 0 and 1, m (heights are centred on 0)."""
    downsample: float = 0.2
    """Spacing of the random nodes, m (>= the horizontal scale; larger gives smoother ground)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_range("RandomRoughTerrainCfg", "noise_range", self.noise_range)
        _check_positive("RandomRoughTerrainCfg", "downsample", self.downsample)

    def heights(self, shape, horizontal_scale, difficulty, rng):
        amplitude = _lerp(self.noise_range, difficulty)
        nx, ny = shape
        step = max(self.downsample, horizontal_scale)
        # Coarse nodes cover the whole sub-terrain (one past its far edge).
        cx = np.arange(int(np.ceil(nx * horizontal_scale / step)) + 1) * step
        cy = np.arange(int(np.ceil(ny * horizontal_scale / step)) + 1) * step
        nodes = rng.uniform(-amplitude / 2, amplitude / 2, size=(cx.size, cy.size))
        x = np.arange(nx) * horizontal_scale
        y = np.arange(ny) * horizontal_scale
        gx, gy = np.meshgrid(x, y, indexing="ij")
        # Imported here: scipy.interpolate takes ~1 s to import, and a task's config (which
        # imports this module) must load without it; only generating a rough terrain needs it.
        from scipy.interpolate import RegularGridInterpolator

        interp = RegularGridInterpolator((cx, cy), nodes, method="linear")
        return interp(np.stack([gx.ravel(), gy.ravel()], axis=-1)).reshape(shape)


@dataclass(kw_only=True)
class PyramidSlopedTerrainCfg(SubTerrainCfg):
    """Four slopes rising from the edges (height 0) to a flat top platform; inverted: a pit."""

    slope_range: tuple[float, float] = (0.0, 0.4)
    """Slope (rise over run) at difficulty 0 and 1."""
    platform_width: float = 2.0
    """Side of the flat square at the centre, m."""
    inverted: bool = False
    """Slopes go down from the edges to a bottom platform instead of up."""

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_range("PyramidSlopedTerrainCfg", "slope_range", self.slope_range)
        _check_positive("PyramidSlopedTerrainCfg", "platform_width", self.platform_width, True)

    def heights(self, shape, horizontal_scale, difficulty, rng):
        slope = _lerp(self.slope_range, difficulty)
        edge = _distance_to_edge(shape, horizontal_scale)
        top = max(min(shape) * horizontal_scale / 2 - self.platform_width / 2, 0.0)
        h = slope * np.minimum(edge, top)
        return -h if self.inverted else h


@dataclass(kw_only=True)
class PyramidStairsTerrainCfg(SubTerrainCfg):
    """Square rings of steps rising from the edges (height 0) to a top platform; inverted: down."""

    step_height_range: tuple[float, float] = (0.02, 0.15)
    """Step rise at difficulty 0 and 1, m."""
    step_width: float = 0.3
    """Step run (tread depth), m."""
    platform_width: float = 2.0
    """Side of the flat square at the centre, m (at least; the last step may widen it)."""
    inverted: bool = False
    """Stairs go down from the edges to a bottom platform instead of up."""

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_range("PyramidStairsTerrainCfg", "step_height_range", self.step_height_range)
        _check_positive("PyramidStairsTerrainCfg", "step_width", self.step_width)
        _check_positive("PyramidStairsTerrainCfg", "platform_width", self.platform_width, True)

    def heights(self, shape, horizontal_scale, difficulty, rng):
        rise = _lerp(self.step_height_range, difficulty)
        edge = _distance_to_edge(shape, horizontal_scale)
        top = max(min(shape) * horizontal_scale / 2 - self.platform_width / 2, 0.0)
        # The epsilon keeps a vertex that sits exactly on a step edge on the upper step.
        steps = np.floor(np.minimum(edge, top) / self.step_width + 1e-9)
        h = rise * steps
        return -h if self.inverted else h


@dataclass(kw_only=True)
class RandomGridBoxesTerrainCfg(SubTerrainCfg):
    """A grid of square boxes of random heights around a flat platform at height 0."""

    grid_width: float = 0.45
    """Box side, m."""
    height_range: tuple[float, float] = (0.02, 0.12)
    """Tallest box at difficulty 0 and 1, m (each box is uniform in [0, tallest])."""
    platform_width: float = 2.0
    """Side of the flat square at the centre, m."""

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_positive("RandomGridBoxesTerrainCfg", "grid_width", self.grid_width)
        _check_range("RandomGridBoxesTerrainCfg", "height_range", self.height_range)
        _check_positive("RandomGridBoxesTerrainCfg", "platform_width", self.platform_width, True)

    def heights(self, shape, horizontal_scale, difficulty, rng):
        tallest = _lerp(self.height_range, difficulty)
        nx, ny = shape
        ix = np.floor(np.arange(nx) * horizontal_scale / self.grid_width + 1e-9).astype(int)
        iy = np.floor(np.arange(ny) * horizontal_scale / self.grid_width + 1e-9).astype(int)
        boxes = rng.uniform(0.0, tallest, size=(ix[-1] + 1, iy[-1] + 1))
        h = boxes[ix[:, None], iy[None, :]]
        h[_platform_mask(shape, horizontal_scale, self.platform_width)] = 0.0
        return h


@dataclass(kw_only=True)
class RandomBoxesTerrainCfg(SubTerrainCfg):
    """Randomly placed rectangular boxes (discrete obstacles) around a flat platform at 0."""

    num_boxes: int = 40
    """Number of boxes; overlapping boxes merge (the taller one wins)."""
    box_width_range: tuple[float, float] = (0.3, 1.0)
    """Smallest and largest box side, m (sides drawn independently along x and y)."""
    height_range: tuple[float, float] = (0.03, 0.2)
    """Tallest box at difficulty 0 and 1, m (each box is uniform in [tallest / 2, tallest])."""
    platform_width: float = 2.0
    """Side of the flat square at the centre, m."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.num_boxes < 0:
            raise ValueError(f"RandomBoxesTerrainCfg.num_boxes = {self.num_boxes}: must be >= 0.")
        _check_range("RandomBoxesTerrainCfg", "box_width_range", self.box_width_range)
        _check_positive("RandomBoxesTerrainCfg", "box_width_range[0]", self.box_width_range[0])
        _check_range("RandomBoxesTerrainCfg", "height_range", self.height_range)
        _check_positive("RandomBoxesTerrainCfg", "platform_width", self.platform_width, True)

    def heights(self, shape, horizontal_scale, difficulty, rng):
        tallest = _lerp(self.height_range, difficulty)
        nx, ny = shape
        n = self.num_boxes
        centre = rng.uniform(0.0, 1.0, size=(n, 2)) * np.array([nx, ny]) * horizontal_scale
        half = rng.uniform(*self.box_width_range, size=(n, 2)) / 2
        top = rng.uniform(tallest / 2, tallest, size=n)
        x = np.arange(nx) * horizontal_scale
        y = np.arange(ny) * horizontal_scale
        inside_x = np.abs(x[None, :] - centre[:, :1]) <= half[:, :1]  # (n, nx)
        inside_y = np.abs(y[None, :] - centre[:, 1:]) <= half[:, 1:]  # (n, ny)
        inside = inside_x[:, :, None] & inside_y[:, None, :]  # (n, nx, ny)
        h = (inside * top[:, None, None]).max(axis=0, initial=0.0)
        h[_platform_mask(shape, horizontal_scale, self.platform_width)] = 0.0
        return h

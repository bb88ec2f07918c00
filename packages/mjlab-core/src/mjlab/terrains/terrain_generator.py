"""Height-field terrain generator: a grid of sub-terrains, difficulty growing row by row.

Heights are built as numpy arrays (vectorized per sub-terrain) in metres, then written into one
MuJoCo height field. MuJoCo's hfield conventions (MuJoCo doc, hfield): the data is nrow x ncol,
row 0 at y = -size_y and columns along +x, elevations normalized to [0, 1] and scaled by size_z
above the geom's z.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage


@dataclass(kw_only=True)
class SubTerrainCfg:
    """A kind of sub-terrain; `proportion` of the columns use it."""

    proportion: float = 1.0
    """Relative share of columns."""

    def heights(
        self, n: int, scale: float, difficulty: float, rng: np.random.Generator
    ) -> np.ndarray:
        """(n, n) heights, m, for a sub-terrain of n x n samples spaced `scale` m."""
        raise NotImplementedError


@dataclass(kw_only=True)
class FlatTerrainCfg(SubTerrainCfg):
    """Flat ground."""

    def heights(self, n, scale, difficulty, rng):
        return np.zeros((n, n))


@dataclass(kw_only=True)
class RandomRoughTerrainCfg(SubTerrainCfg):
    """Uniform noise heights, smoothed over `downsample` m; amplitude grows with difficulty."""

    noise_range: tuple[float, float] = (0.01, 0.08)
    """Peak-to-peak noise at difficulty 0 and 1, m."""
    downsample: float = 0.2
    """Correlation length of the noise, m."""

    def heights(self, n, scale, difficulty, rng):
        amp = self.noise_range[0] + difficulty * (self.noise_range[1] - self.noise_range[0])
        k = max(1, round(self.downsample / scale))
        coarse = rng.uniform(-amp / 2, amp / 2, size=(n // k + 2, n // k + 2))
        return ndimage.zoom(coarse, k, order=1)[:n, :n]


def _pyramid_distance(n: int, scale: float) -> np.ndarray:
    """(n, n) Chebyshev distance from the centre, m."""
    c = (np.arange(n) - (n - 1) / 2) * scale
    return np.maximum(np.abs(c)[:, None], np.abs(c)[None, :])


@dataclass(kw_only=True)
class PyramidSlopedTerrainCfg(SubTerrainCfg):
    """A pyramid of four slopes around a flat top platform (inverted: a pit)."""

    slope_range: tuple[float, float] = (0.0, 0.4)
    """Slope (rise over run) at difficulty 0 and 1."""
    platform_width: float = 2.0
    """Side of the flat centre, m."""
    inverted: bool = False
    """A pit instead of a pyramid."""

    def heights(self, n, scale, difficulty, rng):
        slope = self.slope_range[0] + difficulty * (self.slope_range[1] - self.slope_range[0])
        d = _pyramid_distance(n, scale)
        half = (n - 1) * scale / 2
        h = slope * (half - np.maximum(d, self.platform_width / 2))
        h -= h.min()
        return -h if self.inverted else h


@dataclass(kw_only=True)
class PyramidStairsTerrainCfg(SubTerrainCfg):
    """Stairs up to a centre platform (inverted: down into a pit)."""

    step_height_range: tuple[float, float] = (0.02, 0.15)
    """Step rise at difficulty 0 and 1, m."""
    step_width: float = 0.3
    """Step run, m."""
    platform_width: float = 2.0
    """Side of the flat centre, m."""
    inverted: bool = False
    """Stairs down instead of up."""

    def heights(self, n, scale, difficulty, rng):
        rise = self.step_height_range[0] + difficulty * (
            self.step_height_range[1] - self.step_height_range[0]
        )
        d = _pyramid_distance(n, scale)
        half = (n - 1) * scale / 2
        steps_from_edge = np.floor(
            (half - np.maximum(d, self.platform_width / 2)) / self.step_width
        )
        h = rise * np.maximum(steps_from_edge, 0.0)
        return -h if self.inverted else h


@dataclass(kw_only=True)
class RandomGridBoxesTerrainCfg(SubTerrainCfg):
    """A grid of square boxes of random heights around a flat centre platform."""

    grid_width: float = 0.45
    """Box side, m."""
    height_range: tuple[float, float] = (0.02, 0.12)
    """Largest box height at difficulty 0 and 1, m."""
    platform_width: float = 2.0
    """Side of the flat centre, m."""

    def heights(self, n, scale, difficulty, rng):
        top = self.height_range[0] + difficulty * (self.height_range[1] - self.height_range[0])
        k = max(1, round(self.grid_width / scale))
        boxes = rng.uniform(0.0, top, size=(n // k + 1, n // k + 1))
        h = np.kron(boxes, np.ones((k, k)))[:n, :n]
        h[_pyramid_distance(n, scale) < self.platform_width / 2] = 0.0
        return h


@dataclass(kw_only=True)
class TerrainGeneratorCfg:
    """A num_rows x num_cols grid of sub-terrains; row i has difficulty growing with i."""

    size: tuple[float, float] = (8.0, 8.0)
    """Side of each sub-terrain along x and y, m (square sub-terrains use size[0])."""
    num_rows: int = 5
    """Difficulty levels (along x)."""
    num_cols: int = 10
    """Sub-terrains per level (along y), split among the kinds by proportion."""
    border_width: float = 4.0
    """Flat border around the grid, m."""
    horizontal_scale: float = 0.1
    """Distance between height samples, m."""
    difficulty_range: tuple[float, float] = (0.0, 1.0)
    """Difficulty of the first and last row."""
    curriculum: bool = True
    """Difficulty grows with the row; False: random difficulty per sub-terrain."""
    sub_terrains: dict[str, SubTerrainCfg] = field(
        default_factory=lambda: {"flat": FlatTerrainCfg()}
    )
    """Kinds of sub-terrain."""
    seed: int = 0
    """Seed of the height maps (same seed -> same terrain)."""

    def __post_init__(self) -> None:
        if self.num_rows < 1 or self.num_cols < 1:
            raise ValueError("TerrainGeneratorCfg.num_rows and num_cols must be >= 1.")
        if self.horizontal_scale <= 0:
            raise ValueError("TerrainGeneratorCfg.horizontal_scale must be > 0.")
        if not self.sub_terrains or sum(s.proportion for s in self.sub_terrains.values()) <= 0:
            raise ValueError(
                "TerrainGeneratorCfg.sub_terrains needs at least one kind with proportion > 0."
            )


class TerrainGenerator:
    """Builds the height map and the sub-terrain origins.

    Attributes:
        heights: (nx, ny) heights, m; x index along world x, y index along world y.
        extent: (ex, ey) size of the whole map, m, centred at the world origin.
        origins: (num_rows, num_cols, 3) centre of each sub-terrain on its surface, world, m.
        kinds: names of the sub-terrain kind of each column.
    """

    def __init__(self, cfg: TerrainGeneratorCfg):
        self.cfg = cfg
        rng = np.random.default_rng(cfg.seed)
        hs = cfg.horizontal_scale
        n = round(cfg.size[0] / hs)
        border = round(cfg.border_width / hs)
        nx, ny = cfg.num_rows * n + 2 * border + 1, cfg.num_cols * n + 2 * border + 1
        self.heights = np.zeros((nx, ny))
        self.extent = ((nx - 1) * hs, (ny - 1) * hs)
        names = list(cfg.sub_terrains)
        share = np.array([cfg.sub_terrains[k].proportion for k in names], dtype=float)
        bounds = np.cumsum(share / share.sum())
        col_frac = (np.arange(cfg.num_cols) + 0.5) / cfg.num_cols
        self.kinds = [names[int(np.searchsorted(bounds, f))] for f in col_frac]
        self.origins = np.zeros((cfg.num_rows, cfg.num_cols, 3))
        lo, hi = cfg.difficulty_range
        for i in range(cfg.num_rows):
            for j in range(cfg.num_cols):
                u = rng.uniform()
                difficulty = lo + (hi - lo) * ((i + u) / cfg.num_rows if cfg.curriculum else u)
                patch = cfg.sub_terrains[self.kinds[j]].heights(n, hs, difficulty, rng)
                x0, y0 = border + i * n, border + j * n
                self.heights[x0 : x0 + n, y0 : y0 + n] = patch
                cx, cy = x0 + n // 2, y0 + n // 2
                self.origins[i, j] = (
                    cx * hs - self.extent[0] / 2,
                    cy * hs - self.extent[1] / 2,
                    self.heights[cx, cy],
                )

    def add_to_spec(self, spec, name: str = "terrain", friction=(1.0, 0.005, 0.0001)) -> None:
        """Add the height field asset and its geom (group 0) to `spec`."""
        import mujoco

        hmin, hmax = float(self.heights.min()), float(self.heights.max())
        elevation = max(hmax - hmin, 1e-3)
        # MuJoCo normalizes elevation data to [0, 1]; pin the range with the extreme values.
        data = (self.heights - hmin) / elevation
        nx, ny = data.shape
        spec.add_hfield(
            name=name,
            nrow=ny,
            ncol=nx,
            size=[self.extent[0] / 2, self.extent[1] / 2, elevation, 1.0],
            userdata=data.T.flatten().tolist(),
        )
        geom = spec.worldbody.add_geom(
            name=name, type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname=name, pos=[0, 0, hmin], group=0
        )
        geom.friction = list(friction)
        geom.rgba = [0.45, 0.47, 0.5, 1.0]

    def height_at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Heights of the map at world (x, y), nearest sample, m."""
        hs = self.cfg.horizontal_scale
        ix = np.clip(
            np.round((x + self.extent[0] / 2) / hs).astype(int), 0, self.heights.shape[0] - 1
        )
        iy = np.clip(
            np.round((y + self.extent[1] / 2) / hs).astype(int), 0, self.heights.shape[1] - 1
        )
        return self.heights[ix, iy]

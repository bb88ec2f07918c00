"""Terrain generator: a grid of sub-terrains in one MuJoCo height field.

Layout (world frame, the whole map centred on the origin): row ``i`` of the grid runs along
world x and is difficulty level ``i``; column ``j`` runs along world y and is a sub-terrain kind
(with ``curriculum``). A flat border of ``border_width`` m surrounds the grid.

MuJoCo height-field conventions (MuJoCo XML reference, ``hfield``; checked by
tests/test_terrains.py with ``mj_ray``): the data is ``nrow x ncol`` in row-major order, row 0
at ``y = -size[1]`` and the last row at ``y = +size[1]``, columns running from ``x = -size[0]``
to ``x = +size[0]``; vertices span the full ``2 size[0] x 2 size[1]`` rectangle (spacing
``2 size[0] / (ncol - 1)``). MuJoCo rescales the data to [0, 1] (min-max) and the surface is at
``geom_z + size[2] * data``; a solid base of thickness ``size[3]`` sits below ``geom_z``. Between
vertices the surface is piecewise linear (two triangles per cell).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

from mjlab.terrains.height_field import FlatTerrainCfg, SubTerrainCfg
from mjlab.utils.config import Config

__all__ = ["TerrainGenerator", "TerrainGeneratorCfg"]


def _cells(length: float, scale: float, name: str) -> int:
    """Number of cells of ``scale`` in ``length``; raises if it is not a whole number."""
    n = round(length / scale)
    if abs(n * scale - length) > 1e-6 * max(1.0, length):
        raise ValueError(
            f"TerrainGeneratorCfg.{name} = {length} m is not a whole number of "
            f"horizontal_scale = {scale} m cells; pick values that divide evenly."
        )
    return n


@dataclass(kw_only=True)
class TerrainGeneratorCfg(Config):
    """A ``num_rows x num_cols`` grid of sub-terrains; difficulty grows with the row."""

    size: tuple[float, float] = (8.0, 8.0)
    """Side of each sub-terrain along x and y, m (whole multiples of horizontal_scale)."""
    num_rows: int = 5
    """Number of difficulty levels (grid rows, along x)."""
    num_cols: int = 10
    """Number of sub-terrains per level (grid columns, along y)."""
    border_width: float = 4.0
    """Width of the flat border (height 0) around the grid, m (a multiple of horizontal_scale)."""
    horizontal_scale: float = 0.1
    """Spacing of height-field vertices along x and y, m."""
    vertical_scale: float = 0.005
    """Heights are rounded to multiples of this, m."""
    base_thickness: float = 1.0
    """Thickness of the solid below the lowest point of the height field, m."""
    difficulty_range: tuple[float, float] = (0.0, 1.0)
    """Difficulty of the first and the last row, within [0, 1]. With `curriculum`, the rows
    have `numpy.linspace(lo, hi, num_rows)` (exactly lo and hi at the ends; a single row has
    lo) in every column and for every seed."""
    curriculum: bool = True
    """True: rows follow the difficulty schedule above and columns are split among the kinds by
    proportion (only the height maps' own randomness depends on `seed`). False: every cell gets
    a random kind (by proportion) and a difficulty drawn uniformly from difficulty_range."""
    sub_terrains: dict[str, SubTerrainCfg] = field(
        default_factory=lambda: {"flat": FlatTerrainCfg()}
    )
    """Sub-terrain kinds by name."""
    seed: int | None = 0
    """Seed of the height maps (same seed, same map); None draws fresh entropy."""

    def __post_init__(self) -> None:
        if len(self.size) != 2 or min(self.size) <= 0:
            raise ValueError(f"TerrainGeneratorCfg.size = {self.size}: need two sides > 0 m.")
        if self.num_rows < 1 or self.num_cols < 1:
            raise ValueError(
                f"TerrainGeneratorCfg.num_rows = {self.num_rows}, num_cols = {self.num_cols}: "
                "both must be >= 1."
            )
        if self.horizontal_scale <= 0:
            raise ValueError(
                f"TerrainGeneratorCfg.horizontal_scale = {self.horizontal_scale}: must be > 0."
            )
        if self.vertical_scale <= 0:
            raise ValueError(
                f"TerrainGeneratorCfg.vertical_scale = {self.vertical_scale}: must be > 0."
            )
        if self.base_thickness <= 0:
            raise ValueError(
                f"TerrainGeneratorCfg.base_thickness = {self.base_thickness}: must be > 0."
            )
        if self.border_width < 0:
            raise ValueError(f"TerrainGeneratorCfg.border_width = {self.border_width}: >= 0.")
        for axis, side in zip("xy", self.size, strict=True):
            n = _cells(side, self.horizontal_scale, f"size[{'xy'.index(axis)}]")
            if n < 2:
                raise ValueError(
                    f"TerrainGeneratorCfg.size along {axis} holds {n} cell(s); use a smaller "
                    "horizontal_scale or a larger size."
                )
        _cells(self.border_width, self.horizontal_scale, "border_width")
        lo, hi = self.difficulty_range
        if not 0.0 <= lo <= hi <= 1.0:
            raise ValueError(
                f"TerrainGeneratorCfg.difficulty_range = {self.difficulty_range}: need "
                "0 <= low <= high <= 1."
            )
        if not self.sub_terrains:
            raise ValueError("TerrainGeneratorCfg.sub_terrains is empty; add at least one kind.")
        if sum(s.proportion for s in self.sub_terrains.values()) <= 0:
            raise ValueError(
                "TerrainGeneratorCfg.sub_terrains: the proportions sum to 0; give at least one "
                "kind a proportion > 0."
            )


class TerrainGenerator:
    """Builds the height map and the sub-terrain origins of a ``TerrainGeneratorCfg``.

    Attributes:
        cfg: The configuration.
        heights: (nx, ny) float64 heights, m, at vertex ``(ix, iy)`` = world ``(x[ix], y[iy])``.
        x: (nx,) world x of the vertex columns, m (ascending, centred on 0).
        y: (ny,) world y of the vertex rows, m (ascending, centred on 0).
        extent: (2,) side of the whole map along x and y, m.
        origins: (num_rows, num_cols, 3) float64 world position of each sub-terrain's origin:
            the vertex nearest its centre, on the surface (top or bottom platform of a pyramid).
        difficulties: (num_rows, num_cols) difficulty used for each sub-terrain, in [0, 1].
        sub_terrain_names: (num_rows, num_cols) object array, the kind of each sub-terrain.
    """

    def __init__(self, cfg: TerrainGeneratorCfg):
        self.cfg = cfg
        rng = np.random.default_rng(cfg.seed)
        hs = cfg.horizontal_scale
        cell = (_cells(cfg.size[0], hs, "size[0]"), _cells(cfg.size[1], hs, "size[1]"))
        border = _cells(cfg.border_width, hs, "border_width")
        nx = cfg.num_rows * cell[0] + 2 * border + 1
        ny = cfg.num_cols * cell[1] + 2 * border + 1
        self.extent = np.array([(nx - 1) * hs, (ny - 1) * hs])
        self.x = np.arange(nx) * hs - self.extent[0] / 2
        self.y = np.arange(ny) * hs - self.extent[1] / 2
        self.heights = np.zeros((nx, ny))
        self.difficulties = np.zeros((cfg.num_rows, cfg.num_cols))
        self.sub_terrain_names = np.empty((cfg.num_rows, cfg.num_cols), dtype=object)
        self.origins = np.zeros((cfg.num_rows, cfg.num_cols, 3))

        names = list(cfg.sub_terrains)
        share = np.array([cfg.sub_terrains[k].proportion for k in names], dtype=float)
        share /= share.sum()
        # Column j takes the kind whose cumulative share covers the column's midpoint.
        column_kind = np.searchsorted(
            np.cumsum(share), (np.arange(cfg.num_cols) + 0.5) / cfg.num_cols
        )
        column_kind = np.minimum(column_kind, len(names) - 1)
        lo, hi = cfg.difficulty_range
        # linspace: the first and last rows get exactly lo and hi.
        row_difficulty = np.linspace(lo, hi, cfg.num_rows)
        for i in range(cfg.num_rows):
            for j in range(cfg.num_cols):
                if cfg.curriculum:
                    kind = names[column_kind[j]]
                    difficulty = float(row_difficulty[i])
                else:
                    kind = names[rng.choice(len(names), p=share)]
                    difficulty = rng.uniform(lo, hi)
                patch = cfg.sub_terrains[kind].heights(cell, hs, difficulty, rng)
                if patch.shape != cell:
                    raise ValueError(
                        f"Sub-terrain '{kind}' returned heights of shape {patch.shape}; "
                        f"expected {cell}."
                    )
                x0, y0 = border + i * cell[0], border + j * cell[1]
                self.heights[x0 : x0 + cell[0], y0 : y0 + cell[1]] = patch
                self.difficulties[i, j] = difficulty
                self.sub_terrain_names[i, j] = kind
        # Round to the vertical scale; + 0.0 turns the -0.0 of rounded small negatives into 0.0.
        self.heights = np.round(self.heights / cfg.vertical_scale) * cfg.vertical_scale + 0.0
        for i in range(cfg.num_rows):
            for j in range(cfg.num_cols):
                cx = border + i * cell[0] + cell[0] // 2
                cy = border + j * cell[1] + cell[1] // 2
                self.origins[i, j] = (self.x[cx], self.y[cy], self.heights[cx, cy])

    def height_at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Height of the nearest vertex at world ``(x, y)``.

        Args:
            x: (...) world x, m (clipped to the map).
            y: (...) world y, m (clipped to the map).

        Returns:
            (...) heights, m. MuJoCo's surface interpolates linearly between vertices, so it can
            differ from this by up to the height change across half a cell's diagonal.
        """
        hs = self.cfg.horizontal_scale
        ix = np.clip(np.rint((np.asarray(x) - self.x[0]) / hs).astype(int), 0, self.x.size - 1)
        iy = np.clip(np.rint((np.asarray(y) - self.y[0]) / hs).astype(int), 0, self.y.size - 1)
        return self.heights[ix, iy]

    def add_to_spec(
        self,
        spec: mujoco.MjSpec,
        name: str = "terrain",
        friction: tuple[float, float, float] = (1.0, 0.005, 0.0001),
        rgba: tuple[float, float, float, float] = (0.45, 0.47, 0.5, 1.0),
        material: str | None = None,
    ) -> None:
        """Add one height-field asset and one geom (both named ``name``, geom group 0).

        The geom is placed so that world z equals ``heights`` at every vertex.

        Args:
            spec: The scene spec to edit.
            name: Name of the hfield asset and of the geom.
            friction: Geom friction (slide, torsion, roll).
            rgba: Geom colour, used when there is no material.
            material: Optional material name already in ``spec``.
        """
        hmin, hmax = float(self.heights.min()), float(self.heights.max())
        elevation = hmax - hmin
        # MuJoCo rescales the data to [0, 1] by its min and max, so pass exactly that range and
        # let size[2] carry the metres. A flat map is all zeros with any positive size[2].
        data = (self.heights - hmin) / elevation if elevation > 0 else np.zeros_like(self.heights)
        nx, ny = data.shape
        spec.add_hfield(
            name=name,
            nrow=ny,
            ncol=nx,
            size=[
                self.extent[0] / 2,
                self.extent[1] / 2,
                elevation if elevation > 0 else 1.0,
                self.cfg.base_thickness,
            ],
            # Row-major nrow x ncol with rows along y: the transpose of our (x, y) layout.
            userdata=data.T.ravel(),
        )
        geom = spec.worldbody.add_geom(
            name=name,
            type=mujoco.mjtGeom.mjGEOM_HFIELD,
            hfieldname=name,
            pos=[0.0, 0.0, hmin],
            group=0,
        )
        geom.friction = list(friction)
        # A geom's own rgba would override its material's texture colours.
        if material is None:
            geom.rgba = list(rgba)
        else:
            geom.material = material

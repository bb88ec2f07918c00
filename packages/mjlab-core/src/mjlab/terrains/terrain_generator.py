"""Terrain generator: a grid of sub-terrains in one MuJoCo height field, plus box geoms.

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

Box sub-terrains (`mjlab.terrains.box_geometry.BoxSubTerrainCfg`, mjlab's ``Box*TerrainCfg``)
add box geoms instead of heights; the height field under such a sub-terrain is lowered to its
lowest box bottom. ``surface`` is the walkable height at every vertex: the height field with box
tops drawn in (what ``height_at``, flat-patch sampling and the terrain-height observations read).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import mujoco
import numpy as np

from mjlab.terrains.box_geometry import BoxSubTerrainCfg, TerrainBoxes, rotation_matrices
from mjlab.terrains.height_field import FlatPatchSamplingCfg, FlatTerrainCfg, SubTerrainCfg
from mjlab.utils.config import Config

__all__ = ["TerrainGenerator", "TerrainGeneratorCfg"]


def paint_ground_geom(
    geom: mujoco.MjsGeom,
    friction: tuple[float, float, float],
    rgba: tuple[float, float, float, float],
    material: str | None,
) -> None:
    """Give a terrain geom its friction and its colour or material, and no mass (the ground is
    static; a mass would only skew the model's statistics)."""
    geom.mass = 0.0
    geom.friction = list(friction)
    # A geom's own rgba would override its material's texture colours.
    if material is None:
        geom.rgba = list(rgba)
    else:
        geom.material = material


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
    border_height: float = 1.0
    """Depth of the solid below the flat border, m (> 0): the height field's base reaches at
    least this far below z = 0 (and `base_thickness` below its lowest point)."""
    color_scheme: Literal["height", "random", "none"] = "none"
    """Colour of box sub-terrains' geoms: "height" shades each box by its top (low dark, high
    light), "random" gives each box a random colour (drawn from its own generator, so the map
    does not change), "none" uses the terrain's colour or material like the height field."""
    add_lights: bool = False
    """Add five spot lights above the grid (one over the centre, one over each corner)."""

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
        if self.border_height <= 0:
            raise ValueError(
                f"TerrainGeneratorCfg.border_height = {self.border_height}: must be > 0."
            )
        if self.color_scheme not in ("height", "random", "none"):
            raise ValueError(
                f"TerrainGeneratorCfg.color_scheme = {self.color_scheme!r}: use 'height', "
                "'random' or 'none'."
            )
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
    """Builds the height map, the box geoms and the sub-terrain origins of a
    ``TerrainGeneratorCfg``.

    Attributes:
        cfg: The configuration.
        heights: (nx, ny) float64 height-field heights, m, at vertex ``(ix, iy)`` = world
            ``(x[ix], y[iy])``.
        surface: (nx, ny) float64 walkable height at each vertex, m: ``heights`` with the tops
            of box geoms drawn in (a vertex inside a box's footprint gets the box's highest
            point).
        x: (nx,) world x of the vertex columns, m (ascending, centred on 0).
        y: (ny,) world y of the vertex rows, m (ascending, centred on 0).
        extent: (2,) side of the whole map along x and y, m.
        origins: (num_rows, num_cols, 3) float64 world position of each sub-terrain's origin:
            for a height-field kind the vertex nearest its centre, on the surface (top or bottom
            platform of a pyramid); for a box kind the spawn point it returns.
        difficulties: (num_rows, num_cols) difficulty used for each sub-terrain, in [0, 1].
        sub_terrain_names: (num_rows, num_cols) object array, the kind of each sub-terrain.
        boxes: (row, col) -> `TerrainBoxes` of each box sub-terrain, in world coordinates.
        flat_patches: name -> (num_rows, num_cols, num_patches, 3) float64 world positions of
            flat spots (on the surface), for each `SubTerrainCfg.flat_patch_sampling` entry;
            a sub-terrain whose kind has no entry of that name gets its origin repeated.
        flat_patch_radii: name -> the entry's ``patch_radius``, m.

    Raises:
        ValueError: A sub-terrain returns heights of the wrong shape, or a flat-patch search
            finds no flat spot on a sub-terrain.
    """

    def __init__(self, cfg: TerrainGeneratorCfg):
        self.cfg = cfg
        rng = np.random.default_rng(cfg.seed)
        hs = cfg.horizontal_scale
        cell = (_cells(cfg.size[0], hs, "size[0]"), _cells(cfg.size[1], hs, "size[1]"))
        border = _cells(cfg.border_width, hs, "border_width")
        self._cell, self._border = cell, border
        nx = cfg.num_rows * cell[0] + 2 * border + 1
        ny = cfg.num_cols * cell[1] + 2 * border + 1
        self.extent = np.array([(nx - 1) * hs, (ny - 1) * hs])
        self.x = np.arange(nx) * hs - self.extent[0] / 2
        self.y = np.arange(ny) * hs - self.extent[1] / 2
        self.heights = np.zeros((nx, ny))
        self.difficulties = np.zeros((cfg.num_rows, cfg.num_cols))
        self.sub_terrain_names = np.empty((cfg.num_rows, cfg.num_cols), dtype=object)
        self.origins = np.zeros((cfg.num_rows, cfg.num_cols, 3))
        self.boxes: dict[tuple[int, int], TerrainBoxes] = {}

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
        box_origins: dict[tuple[int, int], np.ndarray] = {}
        for i in range(cfg.num_rows):
            for j in range(cfg.num_cols):
                if cfg.curriculum:
                    kind = names[column_kind[j]]
                    difficulty = float(row_difficulty[i])
                else:
                    kind = names[rng.choice(len(names), p=share)]
                    difficulty = rng.uniform(lo, hi)
                x0, y0 = border + i * cell[0], border + j * cell[1]
                sub = cfg.sub_terrains[kind]
                if isinstance(sub, BoxSubTerrainCfg):
                    local = sub.boxes(tuple(cfg.size), difficulty, rng)
                    corner = np.array([self.x[x0], self.y[y0], 0.0])
                    self.boxes[i, j] = TerrainBoxes(
                        pos=local.pos + corner,
                        half_size=local.half_size,
                        quat=local.quat,
                        origin=local.origin + corner,
                    )
                    box_origins[i, j] = self.boxes[i, j].origin
                    # Rounded down, so the rounding below cannot lift it through a box.
                    floor = np.floor(local.bottom / cfg.vertical_scale) * cfg.vertical_scale
                    patch = np.full(cell, min(floor, 0.0))
                    # The sub-terrain's first vertex row and column stay at the zero level: the
                    # height field's slope down to the floor then lies inside this sub-terrain
                    # (under its boxes), not as a trench in the neighbour's last cell.
                    patch[0, :] = 0.0
                    patch[:, 0] = 0.0
                else:
                    patch = sub.heights(cell, hs, difficulty, rng)
                if patch.shape != cell:
                    raise ValueError(
                        f"Sub-terrain '{kind}' returned heights of shape {patch.shape}; "
                        f"expected {cell}."
                    )
                self.heights[x0 : x0 + cell[0], y0 : y0 + cell[1]] = patch
                self.difficulties[i, j] = difficulty
                self.sub_terrain_names[i, j] = kind
        # Round to the vertical scale; + 0.0 turns the -0.0 of rounded small negatives into 0.0.
        self.heights = np.round(self.heights / cfg.vertical_scale) * cfg.vertical_scale + 0.0
        self.surface = self.heights.copy()
        for (i, j), boxes in self.boxes.items():
            self._draw_box_tops(i, j, boxes)
        for i in range(cfg.num_rows):
            for j in range(cfg.num_cols):
                if (i, j) in box_origins:
                    self.origins[i, j] = box_origins[i, j]
                    continue
                cx = border + i * cell[0] + cell[0] // 2
                cy = border + j * cell[1] + cell[1] // 2
                # A kind's origin_z_offset (mjlab's HfDiscreteObstaclesTerrainCfg) lifts the
                # spawn point, not the ground.
                lift = getattr(
                    cfg.sub_terrains[self.sub_terrain_names[i, j]], "origin_z_offset", 0.0
                )
                self.origins[i, j] = (self.x[cx], self.y[cy], self.heights[cx, cy] + lift)
        self.flat_patches: dict[str, np.ndarray] = {}
        self.flat_patch_radii: dict[str, float] = {}
        self._sample_flat_patches(rng)

    def _cell_slice(self, i: int, j: int) -> tuple[slice, slice]:
        """Vertex index ranges of sub-terrain (i, j), its far edge included."""
        x0 = self._border + i * self._cell[0]
        y0 = self._border + j * self._cell[1]
        return slice(x0, x0 + self._cell[0] + 1), slice(y0, y0 + self._cell[1] + 1)

    def _draw_box_tops(self, i: int, j: int, boxes: TerrainBoxes) -> None:
        """Raise ``surface`` to each box's top face over the vertices of its footprint: the
        face whose normal points most upward, evaluated as a plane (a tilted tile reads its
        slope, not its highest corner)."""
        if len(boxes.pos) == 0:
            return
        sx, sy = self._cell_slice(i, j)
        rot = rotation_matrices(boxes.quat)  # (n, 3, 3), columns are the box axes
        # The local axis closest to world z, and the sign that makes its face point up.
        axis = np.abs(rot[:, 2, :]).argmax(axis=1)
        n_idx = np.arange(len(axis))
        sign = np.sign(rot[n_idx, 2, axis])
        normal = rot[n_idx, :, axis] * sign[:, None]  # (n, 3) upward face normal, world
        centre = boxes.pos + normal * boxes.half_size[n_idx, axis][:, None]  # face centre
        top = boxes.pos[:, 2] + (np.abs(rot[:, 2, :]) * boxes.half_size).sum(axis=1)
        gx, gy = np.meshgrid(self.x[sx], self.y[sy], indexing="ij")
        d = np.stack([gx, gy], axis=-1)[None] - boxes.pos[:, None, None, :2]  # (n, cx, cy, 2)
        # The footprint is the box's cross-section seen from above along its own x and y axes.
        local = np.einsum("nij,nxyi->nxyj", rot[:, :2, :2], d)
        inside = (np.abs(local) <= boxes.half_size[:, None, None, :2] + 1e-9).all(axis=-1)
        dx = gx[None] - centre[:, None, None, 0]
        dy = gy[None] - centre[:, None, None, 1]
        plane = (
            centre[:, None, None, 2]
            - (normal[:, None, None, 0] * dx + normal[:, None, None, 1] * dy)
            / normal[:, None, None, 2]
        )
        plane = np.minimum(plane, top[:, None, None])
        tops = np.where(inside, plane, -np.inf).max(axis=0)
        self.surface[sx, sy] = np.maximum(self.surface[sx, sy], tops)

    def _sample_flat_patches(self, rng: np.random.Generator) -> None:
        cfg = self.cfg
        searches: dict[str, FlatPatchSamplingCfg] = {}
        for sub in cfg.sub_terrains.values():
            for name, search in (sub.flat_patch_sampling or {}).items():
                searches.setdefault(name, search)
        if not searches:
            return
        # Imported here for the same reason as scipy.interpolate in height_field.py.
        from scipy.ndimage import maximum_filter, minimum_filter

        hs = cfg.horizontal_scale
        spread: dict[float, np.ndarray] = {}
        for name, first in searches.items():
            out = np.repeat(self.origins[:, :, None, :], first.num_patches, axis=2)
            for i in range(cfg.num_rows):
                for j in range(cfg.num_cols):
                    kind = self.sub_terrain_names[i, j]
                    search = (cfg.sub_terrains[kind].flat_patch_sampling or {}).get(name)
                    if search is None:
                        continue
                    if search.num_patches != first.num_patches:
                        raise ValueError(
                            f"flat_patch_sampling['{name}']: sub-terrain kinds ask for "
                            f"{first.num_patches} and {search.num_patches} patches; one name "
                            "needs one num_patches."
                        )
                    r = search.patch_radius
                    if r not in spread:
                        k = int(np.ceil(r / hs))
                        ox, oy = np.meshgrid(np.arange(-k, k + 1), np.arange(-k, k + 1))
                        disc = (ox * hs) ** 2 + (oy * hs) ** 2 <= r * r + 1e-12
                        spread[r] = maximum_filter(
                            self.surface, footprint=disc, mode="nearest"
                        ) - minimum_filter(self.surface, footprint=disc, mode="nearest")
                    out[i, j] = self._flat_spots(i, j, search, spread[r], rng, kind, name)
            self.flat_patches[name] = out
            self.flat_patch_radii[name] = first.patch_radius

    def _flat_spots(self, i, j, search, spread, rng, kind, name) -> np.ndarray:
        """(num_patches, 3) flat spots of sub-terrain (i, j) (`FlatPatchSamplingCfg`)."""
        sx, sy = self._cell_slice(i, j)
        origin = self.origins[i, j]
        xs, ys = self.x[sx], self.y[sy]
        step = search.grid_resolution or self.cfg.horizontal_scale
        cand_x = np.arange(
            max(origin[0] + search.x_range[0], xs[0]),
            min(origin[0] + search.x_range[1], xs[-1]) + 1e-9,
            step,
        )
        cand_y = np.arange(
            max(origin[1] + search.y_range[0], ys[0]),
            min(origin[1] + search.y_range[1], ys[-1]) + 1e-9,
            step,
        )
        gx, gy = np.meshgrid(cand_x, cand_y, indexing="ij")
        hs = self.cfg.horizontal_scale
        ix = np.clip(np.rint((gx - self.x[0]) / hs).astype(int), 0, self.x.size - 1).ravel()
        iy = np.clip(np.rint((gy - self.y[0]) / hs).astype(int), 0, self.y.size - 1).ravel()
        z = self.surface[ix, iy]
        rel = z - origin[2]
        ok = (
            (spread[ix, iy] <= search.max_height_diff + 1e-9)
            & (rel >= search.z_range[0])
            & (rel <= search.z_range[1])
        )
        found = np.flatnonzero(ok)
        if found.size == 0:
            raise ValueError(
                f"flat_patch_sampling['{name}'] found no flat spot on sub-terrain ({i}, {j}) of "
                f"kind '{kind}' (difficulty {self.difficulties[i, j]:.2f}); raise "
                "max_height_diff, lower patch_radius or widen x_range / y_range / z_range."
            )
        pick = rng.choice(found, size=search.num_patches, replace=found.size < search.num_patches)
        return np.stack([gx.ravel()[pick], gy.ravel()[pick], z[pick]], axis=-1)

    def height_at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Walkable height (``surface``: height field and box tops) of the nearest vertex at
        world ``(x, y)``.

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
        return self.surface[ix, iy]

    @property
    def box_geom_names(self) -> list[str]:
        """Names of the box geoms ``add_to_spec`` adds (with its default ``name``), in order."""
        return [
            f"terrain_box_{i}_{j}_{k}"
            for (i, j), boxes in self.boxes.items()
            for k in range(len(boxes.pos))
        ]

    def add_to_spec(
        self,
        spec: mujoco.MjSpec,
        name: str = "terrain",
        friction: tuple[float, float, float] = (1.0, 0.005, 0.0001),
        rgba: tuple[float, float, float, float] = (0.45, 0.47, 0.5, 1.0),
        material: str | None = None,
        body: mujoco.MjsBody | None = None,
    ) -> None:
        """Add one height-field asset and geom (both named ``name``), the box sub-terrains'
        geoms (``<name>_box_<row>_<col>_<k>``), all in geom group 0 with ``friction``, and the
        lights of ``add_lights``.

        The height-field geom is placed so that world z equals ``heights`` at every vertex.

        Args:
            spec: The scene spec to edit.
            name: Name of the hfield asset and of the geom; prefix of the box geoms.
            friction: Geom friction (slide, torsion, roll).
            rgba: Geom colour, used when there is no material.
            material: Optional material name already in ``spec``.
            body: The (static) body that holds the geoms; None: the world body.
        """
        parent = spec.worldbody if body is None else body
        hmin, hmax = float(self.heights.min()), float(self.heights.max())
        elevation = hmax - hmin
        # MuJoCo rescales the data to [0, 1] by its min and max, so pass exactly that range and
        # let size[2] carry the metres. A flat map is all zeros with any positive size[2].
        data = (self.heights - hmin) / elevation if elevation > 0 else np.zeros_like(self.heights)
        nx, ny = data.shape
        # The solid reaches base_thickness below the lowest point and border_height below 0.
        base = max(self.cfg.base_thickness, self.cfg.border_height + hmin)
        spec.add_hfield(
            name=name,
            nrow=ny,
            ncol=nx,
            size=[
                self.extent[0] / 2,
                self.extent[1] / 2,
                elevation if elevation > 0 else 1.0,
                base,
            ],
            # Row-major nrow x ncol with rows along y: the transpose of our (x, y) layout.
            userdata=data.T.ravel(),
        )
        geom = parent.add_geom(
            name=name,
            type=mujoco.mjtGeom.mjGEOM_HFIELD,
            hfieldname=name,
            pos=[0.0, 0.0, hmin],
            group=0,
        )
        paint_ground_geom(geom, friction, rgba, material)
        colour_rng = np.random.default_rng(0 if self.cfg.seed is None else self.cfg.seed + 1)
        tops = [b.pos[:, 2] + b.half_size[:, 2] for b in self.boxes.values()]
        top_lo, top_hi = (
            (min(t.min() for t in tops if t.size), max(t.max() for t in tops if t.size))
            if any(t.size for t in tops)
            else (0.0, 0.0)
        )
        for (i, j), boxes in self.boxes.items():
            for k in range(len(boxes.pos)):
                box = parent.add_geom(
                    name=f"{name}_box_{i}_{j}_{k}",
                    type=mujoco.mjtGeom.mjGEOM_BOX,
                    pos=boxes.pos[k].tolist(),
                    quat=boxes.quat[k].tolist(),
                    size=boxes.half_size[k].tolist(),
                    group=0,
                )
                if self.cfg.color_scheme == "height":
                    shade = 0.25 + 0.6 * (
                        (boxes.pos[k, 2] + boxes.half_size[k, 2] - top_lo)
                        / max(top_hi - top_lo, 1e-9)
                    )
                    paint_ground_geom(box, friction, (shade, shade, shade * 1.05, 1.0), None)
                elif self.cfg.color_scheme == "random":
                    r, g, b = colour_rng.uniform(0.2, 0.9, size=3)
                    paint_ground_geom(box, friction, (r, g, b, 1.0), None)
                else:
                    paint_ground_geom(box, friction, rgba, material)
        if self.cfg.add_lights:
            self._add_lights(spec)

    def _add_lights(self, spec: mujoco.MjSpec) -> None:
        half = self.extent / 2
        z = 0.6 * float(self.extent.max())
        spots = [(0.0, 0.0, 0.45)] + [
            (sx * half[0], sy * half[1], 0.2) for sx in (-1, 1) for sy in (-1, 1)
        ]
        for x, y, level in spots:
            spec.worldbody.add_light(
                pos=[x, y, z],
                dir=[0.0, 0.0, -1.0],
                type=mujoco.mjtLightType.mjLIGHT_SPOT,
                diffuse=[level, level, level],
                specular=[0.1, 0.1, 0.1],
                cutoff=70.0,
            )

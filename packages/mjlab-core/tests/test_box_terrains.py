"""Box sub-terrain kinds: geometry against their parameters, seen directly and by MuJoCo rays."""

import dataclasses

import mujoco
import numpy as np
import pytest

from mjlab.terrains.box_geometry import TerrainBoxes
from mjlab.terrains.box_terrains import (
    BoxFlatTerrainCfg,
    BoxInvertedPyramidStairsTerrainCfg,
    BoxNarrowBeamsTerrainCfg,
    BoxNestedRingsTerrainCfg,
    BoxOpenStairsTerrainCfg,
    BoxPyramidStairsTerrainCfg,
    BoxRandomGridTerrainCfg,
    BoxRandomSpreadTerrainCfg,
    BoxRandomStairsTerrainCfg,
    BoxSteppingStonesTerrainCfg,
    BoxTiltedGridTerrainCfg,
)
from mjlab.terrains.terrain_generator import TerrainGenerator, TerrainGeneratorCfg

SIZE = (8.0, 8.0)
TOL = 1e-9
RAY_TOL = 1e-6

ALL_KINDS = [
    BoxFlatTerrainCfg,
    BoxPyramidStairsTerrainCfg,
    BoxInvertedPyramidStairsTerrainCfg,
    BoxRandomGridTerrainCfg,
    BoxRandomSpreadTerrainCfg,
    BoxOpenStairsTerrainCfg,
    BoxRandomStairsTerrainCfg,
    BoxSteppingStonesTerrainCfg,
    BoxNarrowBeamsTerrainCfg,
    BoxTiltedGridTerrainCfg,
    BoxNestedRingsTerrainCfg,
]
RANDOM_KINDS = [
    BoxRandomGridTerrainCfg,
    BoxRandomSpreadTerrainCfg,
    BoxRandomStairsTerrainCfg,
    BoxSteppingStonesTerrainCfg,
    BoxTiltedGridTerrainCfg,
    BoxNestedRingsTerrainCfg,
]


def _build(cfg, difficulty, seed=0, size=SIZE) -> TerrainBoxes:
    return cfg.boxes(size, difficulty, np.random.default_rng(seed))


def _rot(quat: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotation matrices of (n, 4) wxyz quats, through MuJoCo."""
    out = np.zeros((len(quat), 9))
    for k, q in enumerate(quat):
        mujoco.mju_quat2Mat(out[k], q / np.linalg.norm(q))
    return out.reshape(-1, 3, 3)


def _aabb(b: TerrainBoxes) -> tuple[np.ndarray, np.ndarray]:
    """World-axis lower and upper bounds of every box, rotation included."""
    reach = np.einsum("nij,nj->ni", np.abs(_rot(b.quat)), b.half_size)
    return b.pos - reach, b.pos + reach


def _tops(b: TerrainBoxes) -> np.ndarray:
    return b.pos[:, 2] + b.half_size[:, 2]


class _Rays:
    """The boxes as world geoms of a compiled MuJoCo model; casts rays straight down."""

    def __init__(self, b: TerrainBoxes):
        spec = mujoco.MjSpec()
        for pos, half, quat in zip(b.pos, b.half_size, b.quat, strict=True):
            spec.worldbody.add_geom(
                type=mujoco.mjtGeom.mjGEOM_BOX, pos=pos.tolist(), size=half.tolist(), quat=quat
            )
        self.model = spec.compile()
        self.data = mujoco.MjData(self.model)
        mujoco.mj_forward(self.model, self.data)

    def down(self, xy, z0: float = 20.0) -> np.ndarray:
        """Height of the first surface under each (x, y); nan where the ray hits no box."""
        geomid = np.zeros(1, dtype=np.int32)
        out = []
        for x, y in np.asarray(xy, dtype=float).reshape(-1, 2):
            dist = mujoco.mj_ray(
                self.model,
                self.data,
                np.array([x, y, z0]),
                np.array([0.0, 0.0, -1.0]),
                None,
                1,
                -1,
                geomid,
            )
            out.append(z0 - dist if dist >= 0 else np.nan)
        return np.array(out)


# --------------------------------------------------------------------------------------------
# Every kind.


@pytest.mark.parametrize("size", [(8.0, 8.0), (6.0, 9.0)])
@pytest.mark.parametrize("difficulty", [0.0, 1.0])
@pytest.mark.parametrize("kind", ALL_KINDS, ids=lambda k: k.__name__)
def test_boxes_inside_footprint_and_origin_on_platform(kind, difficulty, size):
    b = _build(kind(), difficulty, seed=3, size=size)
    assert len(b.pos) > 0
    lo, hi = _aabb(b)
    assert (lo[:, :2] >= -TOL).all(), lo[:, :2].min(axis=0)
    assert (hi[:, 0] <= size[0] + TOL).all() and (hi[:, 1] <= size[1] + TOL).all()
    np.testing.assert_allclose(b.origin[:2], np.array(size) / 2, atol=TOL)
    rays = _Rays(b)
    # The spawn point is the surface there, and the platform around it is flat.
    around = b.origin[:2] + 0.2 * np.array([[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]])
    np.testing.assert_allclose(rays.down(around), b.origin[2], atol=RAY_TOL)


@pytest.mark.parametrize("kind", ALL_KINDS, ids=lambda k: k.__name__)
def test_same_seed_same_boxes(kind):
    a, b = _build(kind(), 0.7, seed=11), _build(kind(), 0.7, seed=11)
    for name in ("pos", "half_size", "quat", "origin"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


@pytest.mark.parametrize("kind", RANDOM_KINDS, ids=lambda k: k.__name__)
def test_other_seed_other_boxes(kind):
    a, b = _build(kind(), 0.7, seed=1), _build(kind(), 0.7, seed=2)
    same = a.pos.shape == b.pos.shape and np.array_equal(a.pos, b.pos)
    same = same and np.array_equal(a.half_size, b.half_size) and np.array_equal(a.quat, b.quat)
    assert not same


def test_generator_places_box_kinds_and_lowers_the_field():
    kinds = {k.__name__: k() for k in ALL_KINDS}
    cfg = TerrainGeneratorCfg(
        size=(4.0, 4.0), num_rows=2, num_cols=len(kinds), border_width=1.0, sub_terrains=kinds
    )
    gen = TerrainGenerator(cfg)
    assert len(gen.boxes) == 2 * len(kinds)
    for (i, j), boxes in gen.boxes.items():
        np.testing.assert_allclose(gen.origins[i, j], boxes.origin)
        # The height field under a box sub-terrain sits at (or below) its lowest box bottom.
        xs, ys = gen._cell_slice(i, j)
        assert gen.heights[xs, ys][1:-1, 1:-1].max() <= boxes.bottom + 1e-9


# --------------------------------------------------------------------------------------------
# Flat.


def test_flat_is_one_box_at_zero_level():
    b = _build(BoxFlatTerrainCfg(), 1.0)
    lo, hi = _aabb(b)
    np.testing.assert_allclose(lo[:, :2], [[0.0, 0.0]])
    np.testing.assert_allclose(hi, [[8.0, 8.0, 0.0]])
    assert b.bottom < 0


# --------------------------------------------------------------------------------------------
# Pyramid stairs.

STAIRS = dict(step_height_range=(0.05, 0.15), step_width=0.5, platform_width=1.0, border_width=0.5)


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
@pytest.mark.parametrize("inverted", [False, True])
def test_pyramid_stairs_rise_run_and_platform(difficulty, inverted):
    kind = BoxInvertedPyramidStairsTerrainCfg if inverted else BoxPyramidStairsTerrainCfg
    b = _build(kind(**STAIRS), difficulty)
    rise = 0.05 + 0.1 * difficulty
    sign = -1.0 if inverted else 1.0
    n = 6  # (8 - 2 * 0.5 - 1.0) / (2 * 0.5)
    rays = _Rays(b)
    # Along the +x centre line: the border, then each tread, then the platform.
    x = np.array([0.25, *(0.5 + (np.arange(n) + 0.5) * 0.5), 4.0 - 0.45, 4.45])
    z = rays.down(np.column_stack([x, np.full_like(x, 4.0)]))
    expected = sign * rise * np.array([0, *np.arange(1, n + 1), n + 1, n + 1])
    np.testing.assert_allclose(z, expected, atol=RAY_TOL)
    # Every tread is exactly one run deep: its edges sit at whole runs from the border.
    edges = 0.5 + np.arange(n + 1) * 0.5
    below = rays.down(np.column_stack([edges + 0.01, np.full(n + 1, 4.0)]))
    above = rays.down(np.column_stack([edges - 0.01, np.full(n + 1, 4.0)]))
    np.testing.assert_allclose(below - above, sign * rise, atol=RAY_TOL)
    # Platform: 1 m square around the origin at (n + 1) rises.
    assert b.origin[2] == pytest.approx(sign * (n + 1) * rise)
    lo, hi = _aabb(b)
    on_top = np.isclose(hi[:, 2], b.origin[2])
    np.testing.assert_allclose(hi[on_top, 0] - lo[on_top, 0], [1.0])
    # Solid: every box reaches the same bottom, below every top.
    assert np.allclose(lo[:, 2], lo[:, 2].min())
    assert lo[:, 2].min() < min(hi[:, 2].min(), 0.0)


def test_inverted_pyramid_is_a_subclass_and_mirrors_the_stairs():
    assert issubclass(BoxInvertedPyramidStairsTerrainCfg, BoxPyramidStairsTerrainCfg)
    up = _build(BoxPyramidStairsTerrainCfg(**STAIRS), 0.5)
    down = _build(BoxInvertedPyramidStairsTerrainCfg(**STAIRS), 0.5)
    np.testing.assert_allclose(np.sort(_tops(down)), np.sort(-_tops(up)), atol=1e-12)


def test_pyramid_stairs_with_holes_is_a_cross():
    cfg = BoxPyramidStairsTerrainCfg(**{**STAIRS, "holes": True, "platform_width": 2.0})
    b = _build(cfg, 1.0)
    rays = _Rays(b)
    # Corners between the arms and the border are holes; the arms carry the steps.
    holes = rays.down([[0.75, 0.75], [2.0, 6.0], [0.2, 4.0], [7.0, 1.0]])
    assert np.isnan(holes).all()
    arms = rays.down([[0.75, 4.0], [4.0, 0.75], [7.25, 4.5], [3.5, 7.25]])
    np.testing.assert_allclose(arms, 0.15, atol=RAY_TOL)
    lo, hi = _aabb(b)
    arm_boxes = np.isclose(hi[:, 2], 0.15)
    narrow = np.minimum(hi[arm_boxes, 0] - lo[arm_boxes, 0], hi[arm_boxes, 1] - lo[arm_boxes, 1])
    wide = np.maximum(hi[arm_boxes, 0] - lo[arm_boxes, 0], hi[arm_boxes, 1] - lo[arm_boxes, 1])
    np.testing.assert_allclose(narrow, 0.5)
    np.testing.assert_allclose(wide, 2.0)


# --------------------------------------------------------------------------------------------
# Random grid.

GRID = dict(grid_width=0.5, grid_height_range=(0.02, 0.2), platform_width=1.0, border_width=0.5)


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_random_grid_cells_heights_and_platform(difficulty):
    b = _build(BoxRandomGridTerrainCfg(**GRID), difficulty, seed=5)
    h = 0.02 + 0.18 * difficulty
    lo, hi = _aabb(b)
    width = hi[:, :2] - lo[:, :2]
    cells = np.isclose(width, 0.5).all(axis=1)
    # 14 x 14 cells inside the 0.5 m border, less the 2 x 2 hidden under the platform.
    assert cells.sum() == 14 * 14 - 4
    assert (np.abs(hi[cells, 2]) <= h + TOL).all()
    assert hi[cells, 2].max() > 0.5 * h and hi[cells, 2].min() < -0.5 * h
    assert b.origin[2] == pytest.approx(h)
    platform = np.isclose(width, 1.0).all(axis=1)
    assert platform.sum() == 1 and hi[platform, 2] == pytest.approx(h)
    # Rays at the cell centres see each cell's own top.
    rays = _Rays(b)
    centres = (lo[cells, :2] + hi[cells, :2]) / 2
    np.testing.assert_allclose(rays.down(centres), hi[cells, 2], atol=RAY_TOL)
    np.testing.assert_allclose(rays.down([[0.25, 0.25], [7.75, 4.0]]), 0.0, atol=RAY_TOL)


def test_random_grid_holes_keep_only_the_cross():
    b = _build(BoxRandomGridTerrainCfg(**GRID, holes=True), 1.0)
    lo, hi = _aabb(b)
    cells = np.isclose(hi[:, :2] - lo[:, :2], 0.5).all(axis=1)
    centre = (lo[cells, :2] + hi[cells, :2]) / 2
    in_cross = (np.abs(centre - 4.0) <= 0.5 + TOL).any(axis=1)
    assert in_cross.all() and cells.sum() == 2 * 14 * 2 - 4
    rays = _Rays(b)
    assert np.isnan(rays.down([[1.25, 1.25], [6.25, 2.75]])).all()
    assert np.isfinite(rays.down([[4.25, 1.25], [1.25, 3.75]])).all()
    # The border frame stays (as in mjlab), so the holes are pits inside it.
    np.testing.assert_allclose(rays.down([[0.25, 0.25], [7.75, 2.0]]), 0.0, atol=RAY_TOL)


def test_random_grid_merge_covers_the_same_cells_with_rounded_heights():
    cfg = BoxRandomGridTerrainCfg(**GRID, merge_similar_heights=True, height_merge_threshold=0.1)
    merged = _build(cfg, 1.0, seed=4)
    single = _build(BoxRandomGridTerrainCfg(**GRID), 1.0, seed=4)
    assert len(merged.pos) < len(single.pos)
    lo, hi = _aabb(merged)
    span = (hi[:, :2] - lo[:, :2]) / 0.5
    grid_part = np.isclose(span, np.round(span)).all(axis=1) & (lo[:, 0] >= 0.5 - TOL)
    grid_part &= (lo[:, 1] >= 0.5 - TOL) & (hi[:, 0] <= 7.5 + TOL) & (hi[:, 1] <= 7.5 + TOL)
    grid_part &= ~np.isclose(span, 2.0).all(axis=1) | ~np.isclose(lo[:, 0], 3.5)
    assert (span[grid_part] <= 3 + TOL).all() and (span[grid_part] > 1.5).any()
    tops = hi[grid_part, 2]
    on_step = np.isclose(tops / 0.1, np.round(tops / 0.1)) | np.isclose(np.abs(tops), 0.2)
    assert on_step.all()
    # Same area: the merged boxes cover every cell once (the platform's hidden 2 x 2 aside).
    area = (span[grid_part, 0] * span[grid_part, 1]).sum()
    assert area == pytest.approx(14 * 14 - 4)
    # Rays still see the rounded height of the original cell.
    rays = _Rays(merged)
    cells = np.isclose(_aabb(single)[1][:, :2] - _aabb(single)[0][:, :2], 0.5).all(axis=1)
    centres = single.pos[cells, :2]
    rounded = np.clip(np.round(_tops(single)[cells] / 0.1) * 0.1, -0.2, 0.2)
    np.testing.assert_allclose(rays.down(centres), rounded, atol=RAY_TOL)


def test_random_grid_merge_spans_at_most_max_merge_distance():
    # A threshold this coarse rounds every cell to 0, so the greedy merge fills maximal blocks.
    cfg = BoxRandomGridTerrainCfg(
        **{**GRID, "platform_width": 0.0},
        merge_similar_heights=True,
        height_merge_threshold=1.0,
        max_merge_distance=4,
    )
    b = _build(cfg, 1.0)
    lo, hi = _aabb(b)
    grid = np.isclose(hi[:, 2], 0.0) & (lo[:, :2] >= 0.5 - TOL).all(axis=1)
    grid &= (hi[:, :2] <= 7.5 + TOL).all(axis=1)
    span = np.round((hi[grid, :2] - lo[grid, :2]) / 0.5).astype(int)
    # 14 cells per side: blocks of 4, 4, 4, 2 along each axis.
    assert sorted(map(tuple, span.tolist())) == sorted(
        (a, c) for a in (4, 4, 4, 2) for c in (4, 4, 4, 2)
    )


# --------------------------------------------------------------------------------------------
# Random spread.


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_random_spread_sizes_heights_yaw_and_clear_platform(difficulty):
    cfg = BoxRandomSpreadTerrainCfg(num_boxes=80, box_yaw_range=(10.0, 80.0), platform_width=2.0)
    b = _build(cfg, difficulty, seed=2)
    tops = _tops(b)
    spread = tops > TOL  # Floor, platform and border all top at 0.
    n = spread.sum()
    assert 0.5 * int(80 * (0.5 + 0.5 * difficulty)) < n <= int(80 * (0.5 + 0.5 * difficulty))
    scale = 0.2 + 0.8 * difficulty
    assert (tops[spread] >= 0.05 * scale - TOL).all() and (tops[spread] <= scale + TOL).all()
    half = b.half_size[spread]
    assert ((half[:, 0] >= 0.15 - TOL) & (half[:, 0] <= 0.5 + TOL)).all()
    assert ((half[:, 1] >= 0.15 - TOL) & (half[:, 1] <= 0.5 + TOL)).all()
    q = b.quat[spread]
    np.testing.assert_allclose(q[:, 1:3], 0.0)
    yaw = np.rad2deg(2 * np.arctan2(q[:, 3], q[:, 0]))
    assert ((yaw >= 10 - 1e-6) & (yaw <= 80 + 1e-6)).all()
    lo, hi = _aabb(b)
    # Inside the border frame, and clear of the 2 m platform square.
    assert (lo[spread, :2] >= 0.25 - TOL).all() and (hi[spread, :2] <= 7.75 + TOL).all()
    overlap = ((lo[spread, :2] < 5.0 - TOL) & (hi[spread, :2] > 3.0 + TOL)).all(axis=1)
    assert not overlap.any()
    rays = _Rays(b)
    np.testing.assert_allclose(rays.down([[4.9, 4.9], [3.1, 3.1]]), 0.0, atol=RAY_TOL)


def test_random_spread_without_floor_leaves_a_pit():
    cfg = BoxRandomSpreadTerrainCfg(num_boxes=4, add_floor=False)
    b = _build(cfg, 0.0)
    rays = _Rays(b)
    lo, hi = _aabb(b)
    # A point inside the border, off the platform and outside every box outline.
    xy = np.array([[x, y] for x in np.linspace(0.5, 7.5, 15) for y in np.linspace(0.5, 7.5, 15)])
    free = ~(
        (xy[:, None, :] >= lo[None, :, :2] - 0.01) & (xy[:, None, :] <= hi[None, :, :2] + 0.01)
    ).all(axis=-1).any(axis=1)
    assert free.any()
    assert np.isnan(rays.down(xy[free])).all()
    with_floor = _Rays(_build(dataclasses.replace(cfg, add_floor=True), 0.0))
    np.testing.assert_allclose(with_floor.down(xy[free]), 0.0, atol=RAY_TOL)


# --------------------------------------------------------------------------------------------
# Open stairs.

OPEN = dict(
    step_height_range=(0.1, 0.2),
    step_width_range=(0.5, 1.0),
    platform_width=1.0,
    border_width=0.5,
    step_thickness=0.05,
)


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
@pytest.mark.parametrize("inverted", [True, False])
def test_open_stairs_treads_and_open_risers(difficulty, inverted):
    b = _build(BoxOpenStairsTerrainCfg(**OPEN, inverted=inverted), difficulty)
    rise = 0.1 + 0.1 * difficulty
    run = 1.0 - 0.5 * difficulty
    n = int((7.0 - 1.0) / (2 * run))
    x = 0.5 + (np.arange(n) + 0.5) * run
    rays = _Rays(b)
    z = rays.down(np.column_stack([x, np.full(n, 4.0)]))
    k = np.arange(n)
    expected = -k * rise if inverted else (k + 1) * rise
    np.testing.assert_allclose(z, expected, atol=RAY_TOL)
    platform_top = -n * rise if inverted else (n + 1) * rise
    assert b.origin[2] == pytest.approx(platform_top)
    np.testing.assert_allclose(rays.down([[0.25, 4.0]]), 0.0, atol=RAY_TOL)
    # Treads and platform are thin slabs; under a tread there is open space.
    slabs = ~np.isclose(_tops(b), 0.0) | np.isclose(b.half_size[:, 2], 0.025)
    np.testing.assert_allclose(b.half_size[slabs, 2], 0.025)
    under = rays.down(np.column_stack([x[:1], [4.0]]), z0=expected[0] - 0.05 - 1e-3)
    if inverted:
        assert np.isnan(under).all()  # The pit: nothing but the generator's floor.
    else:
        np.testing.assert_allclose(under, 0.0, atol=RAY_TOL)  # The floor under the stairs.


# --------------------------------------------------------------------------------------------
# Random stairs.


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_random_stairs_rises_within_range(difficulty):
    cfg = BoxRandomStairsTerrainCfg(
        step_width=0.5, step_height_range=(0.1, 0.3), platform_width=1.0, border_width=0.5
    )
    b = _build(cfg, difficulty, seed=7)
    n = 6
    x = np.array([0.25, *(0.5 + (np.arange(n) + 0.5) * 0.5), 4.0])
    z = _Rays(b).down(np.column_stack([x, np.full_like(x, 4.0)]))
    rises = np.diff(z)
    scale = 0.5 + 0.5 * difficulty
    assert (rises >= 0.1 * scale - RAY_TOL).all() and (rises <= 0.3 * scale + RAY_TOL).all()
    assert np.ptp(rises) > 0.01  # Random, not one rise repeated.
    assert b.origin[2] == pytest.approx(z[-1])


# --------------------------------------------------------------------------------------------
# Stepping stones.

STONES = dict(
    stone_size_range=(0.4, 0.8),
    stone_distance_range=(0.2, 0.5),
    stone_height=0.2,
    platform_width=0.0,
    border_width=0.0,
)


def _row_gaps(b: TerrainBoxes) -> np.ndarray:
    """Gaps along x between consecutive stones of each row (rows share their y span)."""
    lo, hi = _aabb(b)
    gaps = []
    for y0 in np.unique(np.round(lo[:, 1], 9)):
        row = np.isclose(lo[:, 1], y0)
        order = np.argsort(lo[row, 0])
        gaps.append(lo[row, 0][order][1:] - hi[row, 0][order][:-1])
    return np.concatenate(gaps)


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_stepping_stones_side_and_gap_follow_difficulty(difficulty):
    exact = dict(stone_height_variation=0.0, stone_size_variation=0.0, displacement_range=0.0)
    b = _build(BoxSteppingStonesTerrainCfg(**STONES, **exact), difficulty)
    side = 0.8 - 0.4 * difficulty
    gap = 0.2 + 0.3 * difficulty
    lo, hi = _aabb(b)
    inner = (lo[:, :2] > TOL).all(axis=1) & (hi[:, :2] < 8.0 - TOL).all(axis=1)
    np.testing.assert_allclose(hi[inner, :2] - lo[inner, :2], side)
    gaps = _row_gaps(b)
    np.testing.assert_allclose(gaps, gap, atol=1e-9)
    np.testing.assert_allclose(hi[:, 2], 0.2)
    np.testing.assert_allclose(lo[:, 2], -2.0)
    # A ray in a gap falls into the pit; one on a stone lands on its top.
    rays = _Rays(b)
    first = np.argmin(lo[:, 0] + lo[:, 1] * 100)
    gap_x = hi[first, 0] + gap / 2
    centre_y = (lo[first, 1] + hi[first, 1]) / 2
    assert np.isnan(rays.down([[gap_x, centre_y]])).all()
    np.testing.assert_allclose(rays.down([[hi[first, 0] - 0.01, centre_y]]), 0.2, atol=RAY_TOL)


def test_stepping_stones_variations_stay_within_bounds():
    cfg = BoxSteppingStonesTerrainCfg(**STONES)  # Default variations, full at difficulty 1.
    b = _build(cfg, 1.0, seed=9)
    lo, hi = _aabb(b)
    inner = (lo[:, :2] > TOL).all(axis=1) & (hi[:, :2] < 8.0 - TOL).all(axis=1)
    sides = hi[inner, :2] - lo[inner, :2]
    assert (sides >= 0.4 - 0.1 - TOL).all() and (sides <= 0.4 + 0.1 + TOL).all()
    assert np.ptp(sides) > 0.05
    assert (np.abs(hi[:, 2] - 0.2) <= 0.1 + TOL).all() and np.ptp(hi[:, 2]) > 0.05
    # Centres stay within the displacement of their grid point (pitch 0.9, centred).
    pitch, count = 0.9, 9
    first = (8.0 - (count - 1) * pitch) / 2
    centre = (lo[inner, :2] + hi[inner, :2]) / 2
    off = (centre - first) - np.round((centre - first) / pitch) * pitch
    assert (np.abs(off) <= 0.1 + TOL).all()
    # Gaps between row neighbours: the nominal gap, give or take the shifts and size changes.
    d = 0.5
    assert (np.abs(_row_gaps(b)[_row_gaps(b) < 1.5 * pitch] - d) <= 2 * 0.1 + 0.1 + TOL).all()


def test_stepping_stones_leave_the_platform_free():
    b = _build(BoxSteppingStonesTerrainCfg(platform_width=2.0), 0.0)
    centre = b.pos[:, :2]
    on = (np.abs(centre - 4.0) <= 1.0).all(axis=1)
    # Only the platform itself is centred on the platform square.
    assert on.sum() == 1
    np.testing.assert_allclose(b.half_size[on, :2], 1.0)


# --------------------------------------------------------------------------------------------
# Narrow beams.


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_narrow_beams_width_angles_and_reach(difficulty):
    cfg = BoxNarrowBeamsTerrainCfg(num_beams=8, border_width=0.5, platform_width=1.0)
    b = _build(cfg, difficulty)
    width = 0.4 - 0.2 * difficulty
    beams = np.isclose(2 * b.half_size[:, 1], width) & (b.half_size[:, 0] > 1.0)
    assert beams.sum() == 8
    q = b.quat[beams]
    yaw = np.sort(np.mod(2 * np.arctan2(q[:, 3], q[:, 0]), 2 * np.pi))
    np.testing.assert_allclose(yaw, np.arange(8) * np.pi / 4, atol=1e-9)
    np.testing.assert_allclose(_tops(b), 0.2)
    np.testing.assert_allclose(b.pos[:, 2] - b.half_size[:, 2], -2.0)
    rays = _Rays(b)
    # On each beam from the platform to the border, then into the pit between beams.
    angle = np.arange(8) * np.pi / 4
    for r in (0.6, 2.0, 3.4):
        on = 4.0 + r * np.column_stack([np.cos(angle), np.sin(angle)])
        np.testing.assert_allclose(rays.down(on), 0.2, atol=RAY_TOL)
    between = 4.0 + 2.5 * np.column_stack([np.cos(angle + np.pi / 8), np.sin(angle + np.pi / 8)])
    assert np.isnan(rays.down(between)).all()
    # No gap where a beam meets the border: just past its end the border takes over.
    end = 4.0 + np.array([[3.49, 0.0], [0.0, 3.49], [-3.49, 0.0]])
    np.testing.assert_allclose(rays.down(end), 0.2, atol=RAY_TOL)


# --------------------------------------------------------------------------------------------
# Tilted grid.


def _tilted_slabs(b: TerrainBoxes) -> np.ndarray:
    return ~np.isclose(b.quat[:, 0], 1.0) | ~np.isclose(np.abs(b.quat[:, 1:]).sum(axis=1), 0.0)


def test_tilted_grid_is_flat_at_difficulty_zero():
    b = _build(BoxTiltedGridTerrainCfg(), 0.0)
    assert not _tilted_slabs(b).any()
    xy = np.column_stack([np.linspace(0.3, 7.7, 25), np.linspace(7.6, 0.4, 25)])
    np.testing.assert_allclose(_Rays(b).down(xy), 0.0, atol=RAY_TOL)


def test_tilted_grid_tilts_heights_and_surface():
    cfg = BoxTiltedGridTerrainCfg(tilt_range_deg=20.0, height_range=0.3, grid_width=0.8)
    b = _build(cfg, 1.0, seed=6)
    slabs = _tilted_slabs(b)
    rot = _rot(b.quat[slabs])
    normal = rot[:, :, 2]
    tilt_y = np.arcsin(normal[:, 0])
    tilt_x = np.arctan2(-normal[:, 1], normal[:, 2])
    limit = np.deg2rad(20.0)
    assert (np.abs(tilt_x) <= limit + 1e-9).all() and (np.abs(tilt_y) <= limit + 1e-9).all()
    assert np.abs(tilt_x).max() > 0.8 * limit and np.abs(tilt_y).max() > 0.8 * limit
    # Each slab's top face passes through its cell centre at a height within the spread.
    top = b.pos[slabs] + b.half_size[slabs, 2:] * normal
    assert (np.abs(top[:, 2]) <= 0.15 + 1e-9).all() and np.ptp(top[:, 2]) > 0.15
    # Rays inside each cell see the tilted plane (the column under it never shows through).
    # A slab's underside reaches past its uphill edge (its side faces are square to the tilted
    # top, not vertical), so sample clear of that overhang from the neighbours.
    overhang = (2 * b.half_size[slabs, 2] * np.sin(limit)).max()
    reach = 0.4 - overhang - 0.01
    assert reach > 0.15
    rays = _Rays(b)
    for dx, dy in [(0.0, 0.0), (reach, 0.0), (0.0, -reach), (-0.1, 0.1), (0.1, 0.1)]:
        z = rays.down(top[:, :2] + [dx, dy])
        plane = top[:, 2] - (normal[:, 0] * dx + normal[:, 1] * dy) / normal[:, 2]
        np.testing.assert_allclose(z, plane, atol=RAY_TOL)
    # Each slab's top face spans exactly its cell along x and y (seen from above).
    corners = np.array([[sx_, sy_] for sx_ in (-1, 1) for sy_ in (-1, 1)], dtype=float)
    offsets = corners[None] * b.half_size[slabs, None, :2]  # (n, 4, 2) in the slab frame
    outline = np.einsum("nij,ncj->nci", rot[:, :2, :2], offsets)  # (n, 4, 2) from the centre
    np.testing.assert_allclose(np.abs(outline).max(axis=1), 0.4, atol=1e-9)
    # The platform (grown over the cells it overlaps) and the border are flat at zero level.
    flat = [[4.0, 4.0], [4.75, 4.75], [3.25, 4.75], [3.25, 3.25], [4.75, 3.2], [0.1, 4.0]]
    np.testing.assert_allclose(rays.down(flat), 0.0, atol=RAY_TOL)


# --------------------------------------------------------------------------------------------
# Nested rings.


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_nested_rings_widths_gaps_and_heights(difficulty):
    cfg = BoxNestedRingsTerrainCfg(
        num_rings=4,
        ring_width_range=(0.3, 0.6),
        gap_range=(0.1, 0.4),
        height_range=(0.3, 0.4),
        border_width=0.5,
    )
    b = _build(cfg, difficulty, seed=8)
    width = 0.6 - 0.3 * difficulty
    gap = 0.1 + 0.3 * difficulty
    scale = 1 + 0.5 * difficulty
    rays = _Rays(b)
    ring_x = 0.5 + np.arange(4) * (width + gap) + width / 2
    gap_x = 0.5 + np.arange(4) * (width + gap) + width + gap / 2
    heights = rays.down(np.column_stack([ring_x, np.full(4, 4.0)]))
    assert ((heights >= 0.3 * scale - RAY_TOL) & (heights <= 0.4 * scale + RAY_TOL)).all()
    # The same ring on the opposite side and along y has the same top.
    np.testing.assert_allclose(rays.down(np.column_stack([8.0 - ring_x, np.full(4, 4.0)])), heights)
    np.testing.assert_allclose(rays.down(np.column_stack([np.full(4, 4.0), ring_x])), heights)
    assert np.isnan(rays.down(np.column_stack([gap_x[:3], np.full(3, 4.0)]))).all()
    # Ring edges: each ring is exactly one width wide.
    inside = rays.down(np.column_stack([ring_x + width / 2 - 0.01, np.full(4, 4.0)]))
    outside = rays.down(np.column_stack([ring_x + width / 2 + 0.01, np.full(4, 4.0)]))
    np.testing.assert_allclose(inside, heights)
    assert np.isnan(outside[:3]).all()
    # The platform fills the inside of the last ring, at the zero level.
    platform_half = 3.5 - 3 * (width + gap) - width
    assert platform_half >= 0.5
    np.testing.assert_allclose(
        rays.down([[4.0 + platform_half - 0.01, 4.0], [4.0, 4.0]]), 0.0, atol=RAY_TOL
    )


def test_nested_rings_stop_before_the_platform():
    cfg = BoxNestedRingsTerrainCfg(num_rings=50, platform_width=1.0, border_width=0.25)
    b = _build(cfg, 0.0)
    # Widest rings (0.6, no gap): 3.75 m half side holds 5 rings leaving >= 0.5 m half inside.
    rings = ~np.isclose(_tops(b), 0.0)
    assert rings.sum() == 4 * 5
    platform = np.isclose(b.pos[:, :2], 4.0).all(axis=1) & np.isclose(_tops(b), 0.0)
    assert platform.sum() == 1 and (b.half_size[platform, :2] >= 0.5 - TOL).all()


# --------------------------------------------------------------------------------------------
# Validation.


@pytest.mark.parametrize(
    ("kind", "kwargs", "match"),
    [
        (BoxPyramidStairsTerrainCfg, {"step_width": 0.0}, "BoxPyramidStairsTerrainCfg.step_width"),
        (
            BoxInvertedPyramidStairsTerrainCfg,
            {"step_height_range": (0.2, 0.1)},
            "BoxInvertedPyramidStairsTerrainCfg.step_height_range",
        ),
        (BoxPyramidStairsTerrainCfg, {"border_width": -1.0}, "border_width"),
        (BoxRandomGridTerrainCfg, {"grid_width": -0.1}, "BoxRandomGridTerrainCfg.grid_width"),
        (BoxRandomGridTerrainCfg, {"max_merge_distance": 0}, "max_merge_distance"),
        (BoxRandomGridTerrainCfg, {"height_merge_threshold": 0.0}, "height_merge_threshold"),
        (BoxRandomSpreadTerrainCfg, {"num_boxes": -1}, "BoxRandomSpreadTerrainCfg.num_boxes"),
        (BoxRandomSpreadTerrainCfg, {"box_width_range": (0.0, 1.0)}, r"box_width_range\[0\]"),
        (BoxRandomSpreadTerrainCfg, {"box_yaw_range": (90.0, 0.0)}, "swap"),
        (BoxOpenStairsTerrainCfg, {"step_thickness": 0.0}, "step_thickness"),
        (BoxOpenStairsTerrainCfg, {"step_width_range": (0.0, 0.5)}, r"step_width_range\[0\]"),
        (BoxRandomStairsTerrainCfg, {"step_width": 0.0}, "BoxRandomStairsTerrainCfg.step_width"),
        (BoxSteppingStonesTerrainCfg, {"stone_size_variation": 0.5}, "stone_size_variation"),
        (BoxSteppingStonesTerrainCfg, {"floor_depth": 0.0}, "floor_depth"),
        (
            BoxSteppingStonesTerrainCfg,
            {"stone_height": -1.0, "floor_depth": 1.0},
            "deepen the pit",
        ),
        (BoxNarrowBeamsTerrainCfg, {"beam_width_range": (0.3, 0.2)}, "beam_width_range"),
        (BoxNarrowBeamsTerrainCfg, {"num_beams": 2.5}, "num_beams"),
        (BoxTiltedGridTerrainCfg, {"tilt_range_deg": 60.0}, "tilt_range_deg"),
        (BoxTiltedGridTerrainCfg, {"height_range": -0.1}, "height_range"),
        (BoxNestedRingsTerrainCfg, {"num_rings": -1}, "num_rings"),
        (BoxNestedRingsTerrainCfg, {"gap_range": (0.3, 0.1)}, "gap_range"),
        (BoxNestedRingsTerrainCfg, {"proportion": -1.0}, "proportion"),
    ],
)
def test_invalid_fields_are_rejected(kind, kwargs, match):
    with pytest.raises(ValueError, match=match):
        kind(**kwargs)


@pytest.mark.parametrize(
    "kind", [k for k in ALL_KINDS if k is not BoxFlatTerrainCfg], ids=lambda k: k.__name__
)
def test_border_wider_than_the_sub_terrain_is_rejected(kind):
    with pytest.raises(ValueError, match=rf"{kind.__name__}\.border_width"):
        kind(border_width=5.0).boxes(SIZE, 0.5, np.random.default_rng(0))


def test_field_names_and_order_match_mjlab():
    expected = {
        BoxNarrowBeamsTerrainCfg: [
            "num_beams",
            "beam_width_range",
            "beam_height",
            "spacing",
            "platform_width",
            "border_width",
            "floor_depth",
        ],
        BoxPyramidStairsTerrainCfg: [
            "border_width",
            "step_height_range",
            "step_width",
            "platform_width",
            "holes",
        ],
        BoxOpenStairsTerrainCfg: [
            "step_height_range",
            "step_width_range",
            "platform_width",
            "border_width",
            "step_thickness",
            "inverted",
        ],
    }
    base = ["proportion", "size", "flat_patch_sampling"]
    for kind, names in expected.items():
        assert [f.name for f in dataclasses.fields(kind)] == base + names
    inv = [f.name for f in dataclasses.fields(BoxInvertedPyramidStairsTerrainCfg)]
    assert inv == [f.name for f in dataclasses.fields(BoxPyramidStairsTerrainCfg)]

"""mjlab 1.6's height-field sub-terrain kinds (hf_terrains): geometry against the parameters,
resampling from the kind's own grid, determinism, validation, and the kinds inside a compiled
terrain generator seen by MuJoCo rays."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from mjlab.terrains.hf_terrains import (
    HfDiscreteObstaclesTerrainCfg,
    HfPerlinNoiseTerrainCfg,
    HfPyramidSlopedTerrainCfg,
    HfRandomUniformTerrainCfg,
    HfWaveTerrainCfg,
)
from mjlab.terrains.terrain_generator import TerrainGenerator, TerrainGeneratorCfg

HS = 0.1
SHAPE = (80, 80)  # an 8 m x 8 m sub-terrain on 0.1 m vertices
VS = 0.005


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _coords(shape=SHAPE, hs=HS) -> tuple[np.ndarray, np.ndarray]:
    """Local x, y of the vertices from the sub-terrain's lower corner, m."""
    return np.arange(shape[0]) * hs, np.arange(shape[1]) * hs


def _edge_distance(shape=SHAPE, hs=HS) -> np.ndarray:
    """Distance of each vertex to the sub-terrain's edge, m (the next sub-terrain's first vertex
    closes the far side)."""
    x, y = _coords(shape, hs)
    lx, ly = shape[0] * hs, shape[1] * hs
    dx = np.minimum(x, lx - x)[:, None]
    dy = np.minimum(y, ly - y)[None, :]
    return np.minimum(dx, dy)


def _assert_band_is_zero(h: np.ndarray, border: float) -> None:
    band = _edge_distance(h.shape) < border - 1e-9
    assert band.any()
    np.testing.assert_array_equal(h[band], 0.0)


# --------------------------------------------------------------------------------------------
# Pyramid slope.
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("inverted", [False, True])
@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_pyramid_faces_have_the_slope_and_the_platform_is_flat(difficulty, inverted):
    cfg = HfPyramidSlopedTerrainCfg(
        slope_range=(0.1, 0.5),
        platform_width=2.0,
        border_width=0.5,
        inverted=inverted,
        vertical_scale=1e-4,
    )
    h = cfg.heights(SHAPE, HS, difficulty, _rng())
    slope = 0.1 + difficulty * 0.4
    sign = -1.0 if inverted else 1.0
    x, y = _coords()
    # Inner square [0.5, 7.5]; the faces climb 2.5 m of run to the platform at [3, 5].
    face = (x >= 0.5 - 1e-9) & (x <= 3.0 + 1e-9)
    for j in (40, 20):  # the centre line and a row 1.5 m in from the inner edge
        run_y = min(y[j] - 0.5, 7.5 - y[j])
        on_x_face = face & (x - 0.5 <= run_y + 1e-9)
        fit = np.polyfit(x[on_x_face], h[on_x_face, j], 1)[0]
        assert fit == pytest.approx(sign * slope, abs=1e-3)
        fit_y = np.polyfit(y[on_x_face], h[j, on_x_face], 1)[0]  # the face along y
        assert fit_y == pytest.approx(sign * slope, abs=1e-3)
    # Off the faces' ends, on a row 1.5 m in, the height is capped by the y run.
    assert h[30, 20] == pytest.approx(sign * slope * 1.5, abs=1e-4)
    dx, dy = np.abs(x - 4.0)[:, None], np.abs(y - 4.0)[None, :]
    platform = (dx <= 1.0 + 1e-9) & (dy <= 1.0 + 1e-9)
    np.testing.assert_allclose(h[platform], sign * slope * 2.5, atol=1e-4)
    assert np.abs(h).max() == pytest.approx(slope * 2.5, abs=1e-4)
    _assert_band_is_zero(h, 0.5)


def test_pyramid_rounds_to_its_vertical_scale():
    cfg = HfPyramidSlopedTerrainCfg(slope_range=(0.33, 0.33), vertical_scale=0.02)
    h = cfg.heights(SHAPE, HS, 0.5, _rng())
    np.testing.assert_allclose(h / 0.02, np.round(h / 0.02), atol=1e-9)
    assert len(np.unique(h)) > 5


# --------------------------------------------------------------------------------------------
# Random uniform.
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_random_uniform_draws_the_levels_of_noise_range(difficulty):
    cfg = HfRandomUniformTerrainCfg(noise_range=(-0.04, 0.06), noise_step=0.02, border_width=0.3)
    h = cfg.heights(SHAPE, HS, difficulty, _rng(3))
    inner = h[3:78, 3:78]  # vertices at least 0.3 m from every edge
    levels = np.array([-0.04, -0.02, 0.0, 0.02, 0.04, 0.06])
    nearest = levels[np.abs(inner[..., None] - levels).argmin(axis=-1)]
    np.testing.assert_allclose(inner, nearest, atol=1e-12)
    # Uniform over the six levels: each holds about 1/6 of the 5625 inner vertices.
    counts = np.array([(nearest == v).sum() for v in levels])
    assert counts.min() > 0.8 * inner.size / 6 and counts.max() < 1.2 * inner.size / 6
    _assert_band_is_zero(h, 0.3)


def test_random_uniform_scale_with_difficulty_shrinks_the_range():
    cfg = HfRandomUniformTerrainCfg(
        noise_range=(-0.04, 0.08), noise_step=0.02, scale_with_difficulty=True
    )
    np.testing.assert_array_equal(cfg.heights(SHAPE, HS, 0.0, _rng()), 0.0)
    half = cfg.heights(SHAPE, HS, 0.5, _rng())
    assert set(np.round(np.unique(half), 9)) == {-0.02, 0.0, 0.02, 0.04}
    full = cfg.heights(SHAPE, HS, 1.0, _rng())
    assert full.min() == pytest.approx(-0.04) and full.max() == pytest.approx(0.08)
    # Without the flag the difficulty is ignored.
    fixed = HfRandomUniformTerrainCfg(noise_range=(-0.04, 0.08), noise_step=0.02)
    np.testing.assert_array_equal(
        fixed.heights(SHAPE, HS, 0.0, _rng()), fixed.heights(SHAPE, HS, 1.0, _rng())
    )


def test_random_uniform_downsampled_nodes_are_interpolated_linearly():
    cfg = HfRandomUniformTerrainCfg(
        noise_range=(0.0, 0.2), noise_step=0.05, downsampled_scale=0.4, vertical_scale=1e-4
    )
    h = cfg.heights(SHAPE, HS, 1.0, _rng())
    nodes = h[::4, ::4]
    np.testing.assert_allclose(nodes / 0.05, np.round(nodes / 0.05), atol=1e-6)
    assert nodes.min() >= 0.0 and nodes.max() <= 0.2
    # Between two nodes along a node row the height is on the straight line joining them.
    row = h[::4, :]
    for k in (1, 2, 3):
        expected = row[:, 0:-4:4] + k / 4 * (row[:, 4::4] - row[:, 0:-4:4])
        np.testing.assert_allclose(row[:, k:-4:4], expected, atol=1e-4)
    assert np.abs(np.diff(row, axis=1)).max() <= 0.2 / 4 + 1e-4


# --------------------------------------------------------------------------------------------
# Wave.
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_wave_amplitude_and_number_of_waves(difficulty):
    cfg = HfWaveTerrainCfg(amplitude_range=(0.05, 0.2), num_waves=2, vertical_scale=1e-4)
    h = cfg.heights(SHAPE, HS, difficulty, _rng())
    amplitude = 0.05 + difficulty * 0.15
    # Each sinusoid rises and falls by the amplitude; together they span [-A, A].
    assert h.max() == pytest.approx(amplitude, abs=1e-4)
    assert h.min() == pytest.approx(-amplitude, abs=1e-4)
    for line in (h[13, :], h[:, 57]):  # along y, along x
        assert np.ptp(line) == pytest.approx(amplitude, abs=1e-4)
        spectrum = np.abs(np.fft.rfft(line - line.mean()))
        assert spectrum.argmax() == 2  # two whole waves over the 8 m


def test_wave_fits_its_waves_inside_the_border():
    cfg = HfWaveTerrainCfg(amplitude_range=(0.2, 0.2), num_waves=3, border_width=0.5)
    h = cfg.heights(SHAPE, HS, 1.0, _rng())
    _assert_band_is_zero(h, 0.5)
    # The inner side along y is 7 m (vertices 5..75); 3 waves over its 70 cells.
    line = h[20, 5:75]
    assert np.abs(np.fft.rfft(line - line.mean())).argmax() == 3
    assert h[20, 5] != 0.0  # the pattern starts at the border


# --------------------------------------------------------------------------------------------
# Discrete obstacles.
# --------------------------------------------------------------------------------------------


def _obstacles_cfg(**kw) -> HfDiscreteObstaclesTerrainCfg:
    base = dict(
        obstacle_width_range=(0.3, 1.0),
        obstacle_height_range=(0.05, 0.3),
        num_obstacles=40,
        platform_width=2.0,
    )
    base.update(kw)
    return HfDiscreteObstaclesTerrainCfg(**base)


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_obstacle_heights_are_the_mode_s_values(difficulty):
    top = 0.05 + difficulty * 0.25
    fixed = _obstacles_cfg(obstacle_height_mode="fixed").heights(SHAPE, HS, difficulty, _rng())
    np.testing.assert_allclose(np.unique(fixed), [0.0, top], atol=1e-12)
    choice = _obstacles_cfg(num_obstacles=80).heights(SHAPE, HS, difficulty, _rng())
    levels = round(top / VS)
    expected = np.array([-levels, -(levels // 2), 0, levels // 2, levels]) * VS
    np.testing.assert_allclose(np.unique(choice), expected, atol=1e-12)


@pytest.mark.parametrize("square", [False, True])
def test_obstacle_count_sides_and_placement(square):
    cfg = _obstacles_cfg(square_obstacles=square, border_width=0.5)
    obstacles = cfg._obstacles((71, 71), 1.0, _rng(5))
    assert len(obstacles.top) == len(obstacles.size) == len(obstacles.corner) == 40
    # Sides: 3 vertices (0.3 m) plus multiples of 4 up to 10 (1.0 m); corners every 4th vertex.
    assert set(np.unique(obstacles.size)) <= {3, 7}
    assert len(np.unique(obstacles.size)) == 2
    np.testing.assert_array_equal(obstacles.corner % 4, 0)
    assert obstacles.corner.max() <= 70
    if square:
        np.testing.assert_array_equal(obstacles.size[:, 0], obstacles.size[:, 1])
    else:
        assert (obstacles.size[:, 0] != obstacles.size[:, 1]).any()
    # heights() draws the same obstacles from the same seed and paints them on the inner
    # square (vertices 5..75); where no later obstacle covers one, it shows its own top.
    h = cfg.heights(SHAPE, HS, 1.0, _rng(5))
    painted = np.zeros((71, 71), dtype=int) - 1
    for k, ((x0, y0), (w, length)) in enumerate(zip(obstacles.corner, obstacles.size, strict=True)):
        painted[x0 : x0 + w, y0 : y0 + length] = k
    inner = h[5:76, 5:76]
    platform = np.zeros_like(inner, dtype=bool)
    platform[25:46, 25:46] = True  # |x - 4|, |y - 4| <= 1 m
    shown = (painted >= 0) & ~platform
    np.testing.assert_allclose(inner[shown], obstacles.top[painted[shown]], atol=1e-12)
    np.testing.assert_array_equal(inner[(painted < 0) & ~platform], 0.0)
    _assert_band_is_zero(h, 0.5)


def test_single_obstacle_extent_matches_its_drawn_side():
    cfg = _obstacles_cfg(
        obstacle_height_mode="fixed", num_obstacles=1, platform_width=0.0, square_obstacles=False
    )
    checked = 0
    for seed in range(12):
        obstacle = cfg._obstacles(SHAPE, 1.0, _rng(seed))
        (x0, y0), (w, length) = obstacle.corner[0], obstacle.size[0]
        h = cfg.heights(SHAPE, HS, 1.0, _rng(seed))
        raised = np.argwhere(h > 0)
        assert raised[:, 0].min() == x0 and raised[:, 1].min() == y0
        extent = raised.max(axis=0) - raised.min(axis=0) + 1
        np.testing.assert_array_equal(extent, [min(w, 80 - x0), min(length, 80 - y0)])
        if x0 + w <= 80:
            assert 0.3 - 1e-9 <= extent[0] * HS <= 1.0 + 1e-9
            checked += 1
    assert checked > 6


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_obstacles_leave_the_platform_clear(difficulty):
    cfg = _obstacles_cfg(num_obstacles=200, platform_width=3.0)
    h = cfg.heights(SHAPE, HS, difficulty, _rng())
    x, y = _coords()
    platform = (np.abs(x - 4.0)[:, None] <= 1.5 + 1e-9) & (np.abs(y - 4.0)[None, :] <= 1.5 + 1e-9)
    np.testing.assert_array_equal(h[platform], 0.0)
    assert (h[~platform] != 0).mean() > 0.3
    # Obstacles were drawn over the platform (vertices 25..55) and cleared from it.
    drawn = cfg._obstacles(SHAPE, difficulty, _rng())
    low, high = drawn.corner, drawn.corner + drawn.size - 1
    assert ((low <= 55) & (high >= 25)).all(axis=1).sum() > 5


# --------------------------------------------------------------------------------------------
# Perlin noise.
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("difficulty", [0.0, 1.0])
def test_perlin_spans_the_difficulty_height_and_is_smooth(difficulty):
    cfg = HfPerlinNoiseTerrainCfg(height_range=(0.2, 1.0), border_width=0.5, resolution=0.1)
    h = cfg.heights(SHAPE, HS, difficulty, _rng(1))
    height = 0.2 + difficulty * 0.8
    inner = h[5:76, 5:76]
    assert inner.min() == pytest.approx(0.0, abs=1e-12)
    assert inner.max() == pytest.approx(height, abs=1e-12)
    _assert_band_is_zero(h, 0.5)
    # Without a border too the sub-terrain's own vertices span exactly [0, height].
    bare = HfPerlinNoiseTerrainCfg(height_range=(0.2, 1.0), resolution=0.1)
    h = bare.heights(SHAPE, HS, difficulty, _rng(1))
    assert (h.min(), h.max()) == pytest.approx((0.0, height), abs=1e-12)
    # One octave of 5 lattice cells (scale * resolution / horizontal_scale) over the 7 m
    # inner side: gentle, unlike white noise.
    smooth = HfPerlinNoiseTerrainCfg(
        height_range=(0.2, 1.0), border_width=0.5, resolution=0.1, octaves=1, scale=5.0
    ).heights(SHAPE, HS, difficulty, _rng(1))[5:76, 5:76]
    step = max(np.abs(np.diff(smooth, axis=0)).max(), np.abs(np.diff(smooth, axis=1)).max())
    assert step < 0.2 * height
    # The second difference is far smaller still (no kinks).
    assert np.abs(np.diff(smooth, 2, axis=0)).max() < 0.4 * step


def test_perlin_octaves_scale_and_horizontal_scale_have_mjlab_meaning():
    def roughness(**kw) -> float:
        cfg = HfPerlinNoiseTerrainCfg(height_range=(1.0, 1.0), resolution=0.1, **kw)
        h = cfg.heights(SHAPE, HS, 1.0, _rng(2))
        return float(np.abs(np.diff(h, axis=0)).mean())

    assert roughness(octaves=1) < roughness(octaves=4)
    assert roughness(persistence=0.2) < roughness(persistence=0.9)
    assert roughness(scale=5.0) < roughness(scale=20.0)
    assert roughness(lacunarity=1.5) < roughness(lacunarity=3.0)
    # Lattice cells across = scale * resolution / horizontal_scale: doubling horizontal_scale
    # is halving scale.
    a = HfPerlinNoiseTerrainCfg(height_range=(1.0, 1.0), scale=10.0, horizontal_scale=0.2)
    b = HfPerlinNoiseTerrainCfg(height_range=(1.0, 1.0), scale=5.0, horizontal_scale=0.1)
    np.testing.assert_array_equal(
        a.heights(SHAPE, HS, 1.0, _rng()), b.heights(SHAPE, HS, 1.0, _rng())
    )


# --------------------------------------------------------------------------------------------
# Resampling, determinism.
# --------------------------------------------------------------------------------------------

# Each kind with a 0.2 m sampling grid, no border or platform (bands would break the
# midpoint relation at their edges).
COARSE = {
    "pyramid": HfPyramidSlopedTerrainCfg(
        slope_range=(0.3, 0.3), platform_width=0.0, horizontal_scale=0.2, vertical_scale=1e-4
    ),
    "uniform": HfRandomUniformTerrainCfg(
        noise_range=(0.0, 0.1), noise_step=0.01, horizontal_scale=0.2, vertical_scale=1e-4
    ),
    "wave": HfWaveTerrainCfg(
        amplitude_range=(0.3, 0.3), num_waves=3, horizontal_scale=0.2, vertical_scale=1e-4
    ),
    "obstacles": _obstacles_cfg(platform_width=0.0, horizontal_scale=0.2, vertical_scale=1e-4),
    "perlin": HfPerlinNoiseTerrainCfg(height_range=(0.5, 0.5), resolution=0.2, scale=2.0),
}


@pytest.mark.parametrize("name", sorted(COARSE))
def test_a_coarser_kind_grid_is_resampled_bilinearly(name):
    cfg = COARSE[name]
    native = cfg.heights((40, 40), 0.2, 1.0, _rng(7))  # the kind's own grid: no resampling
    fine = cfg.heights(SHAPE, HS, 1.0, _rng(7))
    np.testing.assert_allclose(fine[::2, ::2], native, atol=1e-12)
    # Odd vertices sit half-way between nodes: the mean of their two (or four) neighbours.
    tol = 5e-5 + 1e-12  # rounding to the 1e-4 vertical scale
    along_x = (native[:-1, :] + native[1:, :]) / 2
    np.testing.assert_allclose(fine[1:-1:2, ::2], along_x, atol=tol)
    along_y = (native[:, :-1] + native[:, 1:]) / 2
    np.testing.assert_allclose(fine[::2, 1:-1:2], along_y, atol=tol)
    centre = (native[:-1, :-1] + native[1:, :-1] + native[:-1, 1:] + native[1:, 1:]) / 4
    np.testing.assert_allclose(fine[1:-1:2, 1:-1:2], centre, atol=tol)
    assert np.ptp(native) > 0.05


def test_a_finer_kind_grid_is_sampled_at_its_nodes():
    cfg = HfRandomUniformTerrainCfg(noise_range=(0.0, 0.1), noise_step=0.01, horizontal_scale=0.05)
    fine = cfg.heights((160, 160), 0.05, 1.0, _rng(4))
    coarse = cfg.heights(SHAPE, HS, 1.0, _rng(4))
    np.testing.assert_array_equal(coarse, fine[::2, ::2])
    assert np.abs(np.diff(fine, axis=0)).max() > 0.05


@pytest.mark.parametrize(
    "cfg",
    [
        HfRandomUniformTerrainCfg(
            noise_range=(0.05, 0.1), noise_step=0.01, horizontal_scale=0.3, border_width=0.3
        ),
        HfWaveTerrainCfg(amplitude_range=(0.3, 0.3), horizontal_scale=0.3, border_width=0.3),
        HfPerlinNoiseTerrainCfg(height_range=(0.5, 0.5), resolution=0.3, border_width=0.3),
    ],
    ids=lambda cfg: type(cfg).__name__,
)
def test_the_border_band_stays_flat_when_resampled(cfg):
    # The 0.3 m grid's first inner node is 0.3 m in; the generator's vertices at 0.1 and 0.2 m
    # interpolate towards it and must still be flat.
    h = cfg.heights(SHAPE, HS, 1.0, _rng())
    _assert_band_is_zero(h, 0.3)
    ring = (_edge_distance() > 0.35) & (_edge_distance() < 0.65)
    assert (h[ring] != 0).mean() > 0.5


@pytest.mark.parametrize("name", ["uniform", "obstacles", "perlin"])
def test_random_kinds_are_deterministic_by_seed(name):
    cfg = COARSE[name]
    a = cfg.heights(SHAPE, HS, 1.0, _rng(11))
    b = cfg.heights(SHAPE, HS, 1.0, _rng(11))
    c = cfg.heights(SHAPE, HS, 1.0, _rng(12))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


# --------------------------------------------------------------------------------------------
# Validation.
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: HfPyramidSlopedTerrainCfg(slope_range=(0.5, 0.1)), "slope_range"),
        (
            lambda: HfPyramidSlopedTerrainCfg(slope_range=(0, 1), platform_width=-1),
            "platform_width",
        ),
        (lambda: HfPyramidSlopedTerrainCfg(slope_range=(0, 1), border_width=0.05), "border_width"),
        (lambda: HfPyramidSlopedTerrainCfg(slope_range=(0, 1), vertical_scale=0), "vertical_scale"),
        (
            lambda: HfPyramidSlopedTerrainCfg(slope_range=(0, 1), horizontal_scale=0),
            "horizontal_scale",
        ),
        (
            lambda: HfPyramidSlopedTerrainCfg(slope_range=(0, 1), base_thickness_ratio=-1),
            "base_thickness_ratio",
        ),
        (lambda: HfRandomUniformTerrainCfg(noise_range=(0.1, -0.1)), "noise_range"),
        (lambda: HfRandomUniformTerrainCfg(noise_range=(0, 0.1), noise_step=0), "noise_step"),
        (
            lambda: HfRandomUniformTerrainCfg(noise_range=(0, 0.1), downsampled_scale=0.05),
            "downsampled_scale",
        ),
        (lambda: HfWaveTerrainCfg(amplitude_range=(0.2, 0.1)), "amplitude_range"),
        (lambda: HfWaveTerrainCfg(amplitude_range=(0, 0.1), num_waves=0), "num_waves"),
        (lambda: _obstacles_cfg(obstacle_height_mode="range"), "obstacle_height_mode"),
        (lambda: _obstacles_cfg(obstacle_width_range=(0.0, 1.0)), "obstacle_width_range"),
        (lambda: _obstacles_cfg(obstacle_width_range=(1.0, 0.5)), "obstacle_width_range"),
        (lambda: _obstacles_cfg(obstacle_height_range=(-0.1, 0.1)), "obstacle_height_range"),
        (lambda: _obstacles_cfg(num_obstacles=-1), "num_obstacles"),
        (lambda: HfPerlinNoiseTerrainCfg(height_range=(1.0, 0.0)), "height_range"),
        (lambda: HfPerlinNoiseTerrainCfg(height_range=(0, 1), octaves=0), "octaves"),
        (lambda: HfPerlinNoiseTerrainCfg(height_range=(0, 1), lacunarity=0), "lacunarity"),
        (lambda: HfPerlinNoiseTerrainCfg(height_range=(0, 1), persistence=-1), "persistence"),
        (lambda: HfPerlinNoiseTerrainCfg(height_range=(0, 1), scale=0), "scale"),
        (lambda: HfPerlinNoiseTerrainCfg(height_range=(0, 1), resolution=0), "resolution"),
        (lambda: HfPerlinNoiseTerrainCfg(height_range=(0, 1), border_width=0.05), "border_width"),
    ],
)
def test_validation_names_the_field(make, field):
    with pytest.raises(ValueError, match=rf"Hf\w+TerrainCfg\.{field}"):
        make()


def test_a_border_wider_than_half_the_sub_terrain_is_refused():
    cfg = HfWaveTerrainCfg(amplitude_range=(0, 0.1), border_width=4.0)
    with pytest.raises(ValueError, match=r"HfWaveTerrainCfg\.border_width"):
        cfg.heights(SHAPE, HS, 1.0, _rng())
    assert cfg.heights((90, 90), HS, 1.0, _rng()).shape == (90, 90)


# --------------------------------------------------------------------------------------------
# In the generator, under MuJoCo rays.
# --------------------------------------------------------------------------------------------


def test_every_kind_in_a_compiled_generator_matches_its_heights_under_rays():
    kinds = {
        "pyramid": HfPyramidSlopedTerrainCfg(slope_range=(0.1, 0.4), border_width=0.2),
        "uniform": HfRandomUniformTerrainCfg(noise_range=(-0.05, 0.05), noise_step=0.01),
        "wave": HfWaveTerrainCfg(amplitude_range=(0.05, 0.2), num_waves=2),
        "obstacles": _obstacles_cfg(num_obstacles=15, horizontal_scale=0.2),
        "perlin": HfPerlinNoiseTerrainCfg(height_range=(0.1, 0.5), border_width=0.2),
    }
    gen = TerrainGenerator(
        TerrainGeneratorCfg(
            size=(4.0, 4.0),
            num_rows=2,
            num_cols=5,
            border_width=1.0,
            horizontal_scale=HS,
            sub_terrains=kinds,
        )
    )
    assert set(gen.sub_terrain_names.ravel()) == set(kinds)
    for j in range(5):  # every kind leaves its mark at difficulty 1
        cell = gen.heights[50:90, 10 + 40 * j : 50 + 40 * j]
        assert np.ptp(cell) > 0.05, gen.sub_terrain_names[1, j]
    spec = mujoco.MjSpec()
    gen.add_to_spec(spec)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    rng = _rng(0)
    ix = rng.integers(0, len(gen.x), size=60)
    iy = rng.integers(0, len(gen.y), size=60)
    geomid = np.zeros(1, dtype=np.int32)
    down = np.array([0.0, 0.0, -1.0])
    z0 = 5.0
    hit = np.array(
        [
            z0
            - mujoco.mj_ray(
                model, data, np.array([gen.x[i], gen.y[j], z0]), down, None, 1, -1, geomid
            )
            for i, j in zip(ix, iy, strict=True)
        ]
    )
    np.testing.assert_allclose(hit, gen.heights[ix, iy], atol=1e-5)
    assert np.ptp(gen.heights[ix, iy]) > 0.1


def test_origin_z_offset_lifts_the_spawn_point_not_the_ground():
    from mjlab.terrains import HfDiscreteObstaclesTerrainCfg, TerrainGenerator, TerrainGeneratorCfg

    def build(lift):
        kind = HfDiscreteObstaclesTerrainCfg(
            obstacle_width_range=(0.4, 0.8),
            obstacle_height_range=(0.05, 0.1),
            num_obstacles=5,
            origin_z_offset=lift,
        )
        return TerrainGenerator(
            TerrainGeneratorCfg(size=(4.0, 4.0), num_rows=1, num_cols=1, sub_terrains={"o": kind})
        )

    low, high = build(0.0), build(0.25)
    np.testing.assert_array_equal(low.heights, high.heights)
    assert high.origins[0, 0, 2] == pytest.approx(low.origins[0, 0, 2] + 0.25)

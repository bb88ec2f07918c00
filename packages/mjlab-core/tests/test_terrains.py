"""Terrains: plane origins, generated height fields seen by MuJoCo rays, the curriculum hook."""

import itertools

import mujoco
import numpy as np
import pytest
import torch

from mjlab.terrains import (
    FlatTerrainCfg,
    PyramidSlopedTerrainCfg,
    PyramidStairsTerrainCfg,
    RandomBoxesTerrainCfg,
    RandomGridBoxesTerrainCfg,
    RandomRoughTerrainCfg,
    TerrainGenerator,
    TerrainGeneratorCfg,
    TerrainImporter,
    TerrainImporterCfg,
)

HS = 0.1
# MuJoCo stores the hfield as float32 values in [0, 1] scaled by the height range (< 2 m here).
EXACT = 1e-5


def _gen_cfg(**kw) -> TerrainGeneratorCfg:
    base = dict(
        size=(4.0, 4.0),
        num_rows=3,
        num_cols=4,
        border_width=1.0,
        horizontal_scale=HS,
        sub_terrains={
            "flat": FlatTerrainCfg(),
            "slope": PyramidSlopedTerrainCfg(),
            "rough": RandomRoughTerrainCfg(),
            "stairs": PyramidStairsTerrainCfg(inverted=True),
        },
    )
    base.update(kw)
    return TerrainGeneratorCfg(**base)


def _compile(add) -> tuple[mujoco.MjModel, mujoco.MjData]:
    spec = mujoco.MjSpec()
    add(spec)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return model, data


def _ray_heights(model, data, xs, ys, z0=10.0) -> np.ndarray:
    """World z where a ray cast straight down from z0 at each (x, y) hits a geom."""
    geomid = np.zeros(1, dtype=np.int32)
    down = np.array([0.0, 0.0, -1.0])
    dist = [
        mujoco.mj_ray(model, data, np.array([x, y, z0]), down, None, 1, -1, geomid)
        for x, y in zip(np.ravel(xs), np.ravel(ys), strict=True)
    ]
    assert min(dist) > 0, "a ray missed the terrain"
    return z0 - np.array(dist)


# --------------------------------------------------------------------------------------------
# Plane.
# --------------------------------------------------------------------------------------------


def test_plane_gives_a_centred_grid_of_origins():
    imp = TerrainImporter(TerrainImporterCfg(env_spacing=2.0))
    imp.configure_env_origins(4)
    assert imp.env_origins.tolist() == [
        [-1.0, -1.0, 0.0],
        [-1.0, 1.0, 0.0],
        [1.0, -1.0, 0.0],
        [1.0, 1.0, 0.0],
    ]
    imp.configure_env_origins(9)
    o = imp.env_origins
    assert o.shape == (9, 3) and o.dtype == torch.float32
    assert torch.equal(o.mean(dim=0), torch.zeros(3))
    assert sorted(set(o[:, 0].tolist())) == [-2.0, 0.0, 2.0]
    assert imp.terrain_levels is None
    imp.update_env_origins(torch.arange(9), torch.ones(9, dtype=torch.bool), torch.zeros(9))
    assert torch.equal(imp.env_origins, o)


def test_plane_is_a_geom_named_terrain_at_zero_height():
    imp = TerrainImporter(TerrainImporterCfg(friction=(0.8, 0.01, 0.001)))
    model, data = _compile(imp.add_to_spec)
    gid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "terrain")
    assert model.geom_type[gid] == mujoco.mjtGeom.mjGEOM_PLANE
    np.testing.assert_allclose(model.geom_friction[gid], [0.8, 0.01, 0.001])
    np.testing.assert_allclose(_ray_heights(model, data, [3.0, -50.0], [-7.0, 20.0]), 0.0)


# --------------------------------------------------------------------------------------------
# Generated height field.
# --------------------------------------------------------------------------------------------


def test_generated_terrain_matches_the_height_map_at_every_vertex():
    """Checks MuJoCo's hfield layout: rows along y from -size_y, columns along x, z offset."""
    gen = TerrainGenerator(_gen_cfg())
    model, data = _compile(gen.add_to_spec)
    assert model.nhfield == 1 and model.hfield_ncol[0] == gen.x.size
    assert model.hfield_nrow[0] == gen.y.size
    # Every 3rd vertex of the whole map (about 3000 rays) except the outermost ring.
    ix, iy = np.meshgrid(np.arange(1, gen.x.size - 1, 3), np.arange(1, gen.y.size - 1, 3))
    hit = _ray_heights(model, data, gen.x[ix], gen.y[iy])
    expected = gen.heights[ix, iy].ravel()
    assert np.abs(hit - expected).max() < EXACT
    # The map is not symmetric, so a swapped or flipped layout could not pass.
    assert not np.allclose(gen.heights, gen.heights[::-1]) and gen.x.size != gen.y.size


def test_rays_between_vertices_interpolate_within_the_cell():
    """Between vertices MuJoCo's surface is piecewise linear, so a ray lands between the lowest
    and highest corner of its cell; the nearest vertex is thus off by at most the height change
    across the cell (half a cell of distance to the nearest vertex, both ways)."""
    gen = TerrainGenerator(_gen_cfg())
    model, data = _compile(gen.add_to_spec)
    rng = np.random.default_rng(0)
    xs = rng.uniform(gen.x[1], gen.x[-2], 400)
    ys = rng.uniform(gen.y[1], gen.y[-2], 400)
    hit = _ray_heights(model, data, xs, ys)
    i0 = np.floor((xs - gen.x[0]) / HS).astype(int)
    j0 = np.floor((ys - gen.y[0]) / HS).astype(int)
    corners = np.stack(
        [gen.heights[i0 + a, j0 + b] for a, b in itertools.product((0, 1), repeat=2)]
    )
    assert (hit >= corners.min(axis=0) - EXACT).all()
    assert (hit <= corners.max(axis=0) + EXACT).all()
    spread = corners.max(axis=0) - corners.min(axis=0)
    assert (np.abs(hit - gen.height_at(xs, ys)) <= spread + EXACT).all()


def test_flat_and_slope_sub_terrains_have_their_known_shape_under_rays():
    cfg = _gen_cfg(
        sub_terrains={
            "flat": FlatTerrainCfg(),
            "slope": PyramidSlopedTerrainCfg(slope_range=(0.3, 0.3), platform_width=1.0),
        },
        num_cols=2,
    )
    gen = TerrainGenerator(cfg)
    model, data = _compile(gen.add_to_spec)
    assert list(gen.sub_terrain_names[:, 0]) == ["flat"] * 3
    assert list(gen.sub_terrain_names[:, 1]) == ["slope"] * 3
    # Flat column: z = 0 anywhere inside it.
    ox, oy, oz = gen.origins[1, 0]
    rng = np.random.default_rng(1)
    dx, dy = rng.uniform(-1.9, 1.9, (2, 50))
    np.testing.assert_allclose(_ray_heights(model, data, ox + dx, oy + dy), 0.0, atol=EXACT)
    assert oz == 0.0
    # Slope column: rises 0.3 m per m from the edge (z = 0) to the 1 m platform (z = 0.45).
    ox, oy, oz = gen.origins[2, 1]
    assert oz == pytest.approx(0.3 * 1.5, abs=cfg.vertical_scale)
    d = np.linspace(0.0, 1.5, 7)  # distance inward from the sub-terrain's -x edge, m
    hit = _ray_heights(model, data, ox - 2.0 + d, np.full_like(d, oy))
    np.testing.assert_allclose(hit, 0.3 * d, atol=cfg.vertical_scale)
    platform = _ray_heights(
        model, data, ox + np.array([-0.4, 0.0, 0.4]), oy + np.array([0.4, 0, -0.4])
    )
    np.testing.assert_allclose(platform, oz, atol=EXACT)


def test_origins_sit_on_the_surface_at_the_sub_terrain_centres():
    gen = TerrainGenerator(_gen_cfg())
    model, data = _compile(gen.add_to_spec)
    o = gen.origins.reshape(-1, 3)
    np.testing.assert_allclose(_ray_heights(model, data, o[:, 0], o[:, 1]), o[:, 2], atol=EXACT)
    # Centres: sub-terrain (i, j) spans [border + 4 i, border + 4 (i + 1)] m from the map corner.
    corner = -gen.extent / 2 + 1.0
    np.testing.assert_allclose(
        gen.origins[2, 3, :2], corner + np.array([4 * 2 + 2, 4 * 3 + 2]), atol=1e-9
    )
    # The inverted stairs column has its origin at the bottom of the pit.
    j = list(gen.sub_terrain_names[0]).index("stairs")
    assert (gen.origins[:, j, 2] < 0).all()


def test_difficulty_grows_row_by_row():
    rise_range = (0.05, 0.2)
    cfg = _gen_cfg(
        sub_terrains={"stairs": PyramidStairsTerrainCfg(step_height_range=rise_range)},
        num_rows=3,
        num_cols=1,
    )
    gen = TerrainGenerator(cfg)
    d = gen.difficulties[:, 0]
    assert d.tolist() == [0.0, 0.5, 1.0]
    n, border = 40, 10
    rises = []
    for i in range(3):
        patch = gen.heights[border + i * n : border + (i + 1) * n, border : border + n]
        rises.append(np.abs(np.diff(patch, axis=0)).max())
    expected = rise_range[0] + d * (rise_range[1] - rise_range[0])
    np.testing.assert_allclose(rises, expected, atol=cfg.vertical_scale)
    assert rises[0] < rises[-1]
    assert all(a < b for a, b in itertools.pairwise(gen.origins[:, 0, 2]))


@pytest.mark.parametrize("seed", [0, 1, None])
def test_curriculum_rows_have_the_documented_difficulty_in_every_column_and_seed(seed):
    gen = TerrainGenerator(
        _gen_cfg(
            num_rows=4,
            num_cols=3,
            size=(1.0, 1.0),
            difficulty_range=(0.2, 0.8),
            seed=seed,
            sub_terrains={"rough": RandomRoughTerrainCfg()},
        )
    )
    expected = np.array([0.2, 0.4, 0.6, 0.8])
    np.testing.assert_allclose(gen.difficulties, np.repeat(expected[:, None], 3, axis=1))
    assert gen.difficulties[0, 0] == 0.2 and gen.difficulties[-1, -1] == 0.8
    one_row = TerrainGenerator(_gen_cfg(num_rows=1, num_cols=2, difficulty_range=(0.3, 0.9)))
    assert one_row.difficulties.tolist() == [[0.3, 0.3]]


def test_same_seed_gives_the_same_height_map():
    a = TerrainGenerator(_gen_cfg(seed=3))
    b = TerrainGenerator(_gen_cfg(seed=3))
    assert np.array_equal(a.heights, b.heights)
    assert np.array_equal(a.origins, b.origins)
    assert not np.array_equal(a.heights, TerrainGenerator(_gen_cfg(seed=4)).heights)


def test_random_layout_follows_proportions_and_skips_zero_share_kinds():
    cfg = _gen_cfg(
        curriculum=False,
        num_rows=10,
        num_cols=10,
        size=(1.0, 1.0),
        sub_terrains={
            "flat": FlatTerrainCfg(proportion=3.0),
            "rough": RandomRoughTerrainCfg(proportion=1.0),
            "never": PyramidSlopedTerrainCfg(proportion=0.0),
        },
    )
    gen = TerrainGenerator(cfg)
    names = list(gen.sub_terrain_names.ravel())
    assert "never" not in names
    assert 0.6 < names.count("flat") / 100 < 0.9
    # Without a curriculum the difficulty does not follow the row.
    assert gen.difficulties[0].max() > gen.difficulties[-1].min()


def test_box_kinds_keep_a_flat_platform_and_bounded_heights():
    shape, rng = (80, 80), np.random.default_rng(0)
    for kind in (
        RandomBoxesTerrainCfg(height_range=(0.05, 0.2), platform_width=2.0),
        RandomGridBoxesTerrainCfg(height_range=(0.05, 0.2), platform_width=2.0),
    ):
        h = kind.heights(shape, HS, 0.5, rng)
        assert h.shape == shape
        assert np.all(h[30:51, 30:51] == 0.0), type(kind).__name__
        assert h.min() >= 0.0 and 0.05 < h.max() <= 0.125 + 1e-12
    rough = RandomRoughTerrainCfg(noise_range=(0.0, 0.1)).heights(shape, HS, 1.0, rng)
    assert np.ptp(rough) <= 0.1 and np.ptp(rough) > 0.05


def test_configs_reject_bad_values_and_name_the_field():
    with pytest.raises(ValueError, match="horizontal_scale"):
        TerrainGeneratorCfg(size=(4.05, 4.0), horizontal_scale=0.1)
    with pytest.raises(ValueError, match="difficulty_range"):
        TerrainGeneratorCfg(difficulty_range=(0.5, 1.5))
    with pytest.raises(ValueError, match="sub_terrains"):
        TerrainGeneratorCfg(sub_terrains={})
    with pytest.raises(ValueError, match="terrain_generator"):
        TerrainImporterCfg(terrain_type="generator")
    with pytest.raises(ValueError, match="step_height_range"):
        PyramidStairsTerrainCfg(step_height_range=(0.2, 0.1))
    with pytest.raises(ValueError, match="proportion"):
        FlatTerrainCfg(proportion=-1.0)


# --------------------------------------------------------------------------------------------
# Env origins and the curriculum hook.
# --------------------------------------------------------------------------------------------


def _importer(**kw) -> TerrainImporter:
    return TerrainImporter(
        TerrainImporterCfg(terrain_type="generator", terrain_generator=_gen_cfg(), **kw)
    )


def test_envs_start_on_allowed_levels_spread_over_the_columns():
    imp = _importer(max_init_terrain_level=1)
    imp.configure_env_origins(40, torch.Generator().manual_seed(0))
    assert set(imp.terrain_levels.tolist()) == {0, 1}
    assert torch.bincount(imp.terrain_types).tolist() == [10, 10, 10, 10]
    expected = imp.terrain_origins[imp.terrain_levels, imp.terrain_types]
    assert torch.equal(imp.env_origins, expected)
    assert imp.env_origins.dtype == torch.float32 and imp.env_origins.shape == (40, 3)


def test_curriculum_moves_levels_up_and_down_and_wraps_at_the_top():
    imp = _importer(max_init_terrain_level=0)
    model, _ = _compile(imp.add_to_spec)  # the importer's spec compiles too
    assert model.ngeom == 1
    imp.configure_env_origins(6, torch.Generator().manual_seed(0))
    assert imp.terrain_levels.tolist() == [0] * 6
    ids = torch.arange(6)
    up = torch.tensor([True, True, False, False, True, True])
    down = torch.tensor([False, False, True, False, False, False])
    none = torch.zeros(6, dtype=torch.bool)
    imp.update_env_origins(ids, up, down)
    assert imp.terrain_levels.tolist() == [1, 1, 0, 0, 1, 1]  # env 2 stays at level 0
    imp.update_env_origins(ids[:2], up[:2], none[:2])  # only envs 0 and 1
    assert imp.terrain_levels.tolist() == [2, 2, 0, 0, 1, 1]
    imp.update_env_origins(ids, none, ~up)
    assert imp.terrain_levels.tolist() == [2, 2, 0, 0, 1, 1]  # moving below 0 clamps
    # Passing the top row (2) sends an env to a random row; over many envs every row shows up.
    wrapped = set()
    for seed in range(20):
        imp.configure_env_origins(6, torch.Generator().manual_seed(seed))
        imp.terrain_levels[:] = 2
        imp.update_env_origins(ids, torch.ones(6, dtype=torch.bool), none)
        wrapped |= set(imp.terrain_levels.tolist())
        assert torch.equal(
            imp.env_origins, imp.terrain_origins[imp.terrain_levels, imp.terrain_types]
        )
    assert wrapped == {0, 1, 2}


def test_same_torch_generator_seed_gives_the_same_levels():
    a, b = _importer(), _importer()
    a.configure_env_origins(32, torch.Generator().manual_seed(5))
    b.configure_env_origins(32, torch.Generator().manual_seed(5))
    assert torch.equal(a.terrain_levels, b.terrain_levels)
    assert len(set(a.terrain_levels.tolist())) > 1


@pytest.mark.slow
def test_rough_task_spawns_robots_above_the_terrain():
    from mjlab.envs import ManagerBasedRlEnv
    from mjlab.tasks import load_env_cfg

    cfg = load_env_cfg("Mjlab-Velocity-Rough-Unitree-Go1")
    cfg.scene.num_envs = 6
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    root = env.scene["robot"].data.root_link_pos_w
    ground = env.scene.terrain.generator.height_at(root[:, 0].numpy(), root[:, 1].numpy())
    assert (root[:, 2].numpy() > ground + 0.2).all()
    for _ in range(10):
        env.step(torch.zeros(6, 12))
    assert (env.scene["height_scan"].heights.abs() < 1.0).all()


def test_importer_height_at_is_the_generator_height_map_in_torch():
    imp = _importer()
    rng = np.random.default_rng(0)
    half = imp.generator.extent / 2
    # Points over the whole map and past its edges (clipped to the map on both sides).
    xy = rng.uniform(-half - 1.0, half + 1.0, size=(200, 2))
    got = imp.height_at(torch.as_tensor(xy, dtype=torch.float32))
    want = imp.generator.height_at(xy[:, 0], xy[:, 1])
    assert got.shape == (200,) and got.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), want, atol=1e-6)
    assert np.ptp(want) > 0.05  # the map is not flat: the comparison says something
    # Batch shape is kept; a plane is 0 everywhere.
    assert imp.height_at(torch.zeros(4, 3, 2)).shape == (4, 3)
    plane = TerrainImporter(TerrainImporterCfg(terrain_type="plane"))
    assert torch.equal(plane.height_at(torch.ones(5, 2)), torch.zeros(5))


@pytest.mark.slow
def test_walking_down_off_a_pyramid_top_is_not_too_low_and_lying_on_the_ground_is():
    """The rough task's base-height termination measures from the ground under the robot: a
    Go1 standing at the foot of a pyramid, 0.3 m or more below the top platform where it
    spawned, is not ended (it was, when the height was taken from the env origin, and robots
    on the slope and stairs columns never got past level 1); a base 0.1 m above that ground
    is."""
    from mjlab.envs import ManagerBasedRlEnv
    from mjlab.envs.mdp import root_height_below_minimum
    from mjlab.tasks import load_env_cfg

    cfg = load_env_cfg("Mjlab-Velocity-Rough-Unitree-Go1")
    cfg.scene.num_envs = 2
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    ter = env.scene.terrain
    names = ter.generator.sub_terrain_names
    slope = next(j for j in range(names.shape[1]) if names[0, j] == "slope")
    level = names.shape[0] - 1
    origin = ter.terrain_origins[level, slope]
    assert origin[2] > 0.5  # the top platform of the steepest slope
    robot = env.scene["robot"]
    root = robot.data.default_root_state.clone()
    foot = origin[:2] + torch.tensor([3.9, 0.0])  # near the slope's foot, inside the cell
    ground = ter.height_at(foot)
    root[:, :2] = foot
    root[0, 2] = ground + 0.3  # standing height above the ground there
    root[1, 2] = ground + 0.1  # lying on it
    robot.write_root_state_to_sim(root)
    env.sim.forward()
    env.scene.env_origins[:] = origin  # spawned on the top platform
    low = root_height_below_minimum(env, minimum_height=0.15)
    assert low.tolist() == [False, True]
    assert float(root[0, 2] - origin[2]) < 0.0  # the old rule, above the origin, ended env 0
    env.close()

"""Terrains: plane origins, generated height fields, the curriculum hook."""

import itertools

import mujoco
import numpy as np
import pytest
import torch

from mjlab.terrains import (
    FlatTerrainCfg,
    PyramidSlopedTerrainCfg,
    PyramidStairsTerrainCfg,
    RandomRoughTerrainCfg,
    TerrainGenerator,
    TerrainGeneratorCfg,
    TerrainImporter,
    TerrainImporterCfg,
)


def _gen_cfg(**kw):
    base = dict(
        size=(4.0, 4.0),
        num_rows=3,
        num_cols=3,
        border_width=1.0,
        sub_terrains={
            "rough": RandomRoughTerrainCfg(proportion=1.0),
            "slope": PyramidSlopedTerrainCfg(proportion=1.0),
            "stairs": PyramidStairsTerrainCfg(proportion=1.0),
        },
    )
    base.update(kw)
    return TerrainGeneratorCfg(**base)


def test_plane_gives_a_grid_of_origins():
    imp = TerrainImporter(TerrainImporterCfg(env_spacing=2.0))
    imp.configure_env_origins(4)
    assert imp.env_origins.tolist() == [
        [-1.0, -1.0, 0.0],
        [-1.0, 1.0, 0.0],
        [1.0, -1.0, 0.0],
        [1.0, 1.0, 0.0],
    ]


def test_generated_terrain_compiles_and_rays_see_the_height_map():
    gen = TerrainGenerator(_gen_cfg())
    spec = mujoco.MjSpec()
    gen.add_to_spec(spec)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    rng = np.random.default_rng(0)
    half = np.array(gen.extent) / 2 - 0.5
    xs, ys = rng.uniform(-half[0], half[0], 200), rng.uniform(-half[1], half[1], 200)
    geomid = np.zeros(1, dtype=np.int32)
    hit = np.array(
        [
            10.0
            - mujoco.mj_ray(
                model, data, np.array([x, y, 10.0]), np.array([0, 0, -1.0]), None, 1, -1, geomid
            )
            for x, y in zip(xs, ys, strict=True)
        ]
    )
    # The ray hits the bilinear surface between samples; the nearest sample differs by at most
    # the height change over half a cell (steepest here: a 0.15 m stair riser).
    assert np.abs(hit - gen.height_at(xs, ys)).max() <= 0.16
    assert np.median(np.abs(hit - gen.height_at(xs, ys))) < 0.01


def test_difficulty_grows_row_by_row_and_the_seed_fixes_the_map():
    gen = TerrainGenerator(
        _gen_cfg(sub_terrains={"stairs": PyramidStairsTerrainCfg()}, num_rows=4, num_cols=1)
    )
    n = round(4.0 / 0.1)
    border = 10
    tallest = [
        gen.heights[border + i * n : border + (i + 1) * n, border : border + n].max()
        for i in range(4)
    ]
    assert all(a < b for a, b in itertools.pairwise(tallest)), tallest
    again = TerrainGenerator(
        _gen_cfg(sub_terrains={"stairs": PyramidStairsTerrainCfg()}, num_rows=4, num_cols=1)
    )
    assert np.array_equal(gen.heights, again.heights)
    other = TerrainGenerator(_gen_cfg(seed=1))
    assert not np.array_equal(TerrainGenerator(_gen_cfg()).heights, other.heights)


def test_origins_sit_on_the_platforms():
    gen = TerrainGenerator(
        _gen_cfg(sub_terrains={"slope": PyramidSlopedTerrainCfg(), "flat": FlatTerrainCfg()})
    )
    o = gen.origins.reshape(-1, 3)
    np.testing.assert_allclose(o[:, 2], gen.height_at(o[:, 0], o[:, 1]))


def test_curriculum_moves_levels_up_and_down_and_wraps_at_the_top():
    imp = TerrainImporter(
        TerrainImporterCfg(
            terrain_type="generator", terrain_generator=_gen_cfg(), max_init_terrain_level=0
        )
    )
    imp.add_to_spec(mujoco.MjSpec())
    imp.configure_env_origins(6, torch.Generator().manual_seed(0))
    assert imp.terrain_levels.tolist() == [0] * 6
    ids = torch.arange(6)
    up = torch.tensor([True, True, False, False, True, True])
    down = torch.tensor([False, False, True, False, False, False])
    imp.update_env_origins(ids, up, down)
    assert imp.terrain_levels.tolist() == [1, 1, 0, 0, 1, 1]
    imp.update_env_origins(ids, up, torch.zeros(6, dtype=torch.bool))
    imp.update_env_origins(ids, up, torch.zeros(6, dtype=torch.bool))  # passes the top (row 2)
    assert ((imp.terrain_levels >= 0) & (imp.terrain_levels < 3)).all()
    expected = torch.as_tensor(imp.generator.origins, dtype=torch.float32)[
        imp.terrain_levels, imp.terrain_types
    ]
    assert torch.equal(imp.env_origins, expected)


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

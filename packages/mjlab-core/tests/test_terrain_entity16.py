"""Box sub-terrains in the generator, flat-patch sampling and mjlab 1.6's TerrainEntity(Cfg)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import mujoco
import numpy as np
import pytest
import torch

from mjlab.entity import EntityCfg, InitialStateCfg
from mjlab.scene import Scene, SceneCfg
from mjlab.sim import Simulation, SimulationCfg
from mjlab.terrains import (
    TERRAIN_GEOMS,
    BoxSubTerrainCfg,
    FlatPatchSamplingCfg,
    FlatTerrainCfg,
    PyramidSlopedTerrainCfg,
    TerrainBoxes,
    TerrainEntity,
    TerrainEntityCfg,
    TerrainGenerator,
    TerrainGeneratorCfg,
)
from mjlab.utils.spec_config import LightCfg, MaterialCfg, TextureCfg


@dataclass(kw_only=True)
class _Step(BoxSubTerrainCfg):
    """A 1 m wide block of height `rise` (0.1 m + 0.2 m x difficulty) at the sub-terrain's
    centre, on a floor box 0.5 m deep that covers the whole sub-terrain, and a 45 deg yawed
    block in the corner."""

    def boxes(self, size, difficulty, rng):
        rise = 0.1 + 0.2 * difficulty
        cx, cy = size[0] / 2, size[1] / 2
        yaw = np.pi / 4
        lower = [[0, 0, -0.5], [cx - 0.5, cy - 0.5, 0.0]]
        upper = [[size[0], size[1], 0.0], [cx + 0.5, cy + 0.5, rise]]
        flat = TerrainBoxes.axis_aligned(np.array(lower), np.array(upper), [cx, cy, rise])
        return TerrainBoxes(
            pos=np.vstack([flat.pos, [[0.6, 0.6, 0.05]]]),
            half_size=np.vstack([flat.half_size, [[0.2, 0.2, 0.05]]]),
            quat=np.vstack([flat.quat, [[np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)]]]),
            origin=flat.origin,
        )


def _cfg(**kw) -> TerrainGeneratorCfg:
    base = dict(
        size=(3.0, 3.0),
        num_rows=2,
        num_cols=2,
        border_width=0.5,
        sub_terrains={"step": _Step(), "flat": FlatTerrainCfg()},
    )
    base.update(kw)
    return TerrainGeneratorCfg(**base)


def _ray_down(model, data, x, y, z0=5.0):
    geomid = np.zeros(1, dtype=np.int32)
    dist = mujoco.mj_ray(
        model, data, np.array([x, y, z0]), np.array([0.0, 0.0, -1.0]), None, 1, -1, geomid
    )
    name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, int(geomid[0]))
    return z0 - dist, name


def test_box_sub_terrains_become_geoms_that_rays_hit_and_the_surface_records():
    gen = TerrainGenerator(_cfg())
    assert [gen.sub_terrain_names[i, 0] for i in range(2)] == ["step", "step"]
    assert set(gen.boxes) == {(0, 0), (1, 0)}
    spec = mujoco.MjSpec()
    gen.add_to_spec(spec)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) for g in range(model.ngeom)]
    assert names == ["terrain", *gen.box_geom_names]
    assert all(re.fullmatch(TERRAIN_GEOMS, n) for n in names)
    assert len(names) == 1 + 2 * 3
    for row, rise in ((0, 0.1), (1, 0.3)):
        origin = gen.origins[row, 0]
        assert origin[2] == pytest.approx(rise)
        z, hit = _ray_down(model, data, origin[0], origin[1])
        assert z == pytest.approx(rise, abs=1e-9) and hit == f"terrain_box_{row}_0_1"
        # The surface map and height_at know the block's top, the floor box's top beside it.
        assert gen.height_at(origin[0], origin[1]) == pytest.approx(rise)
        assert gen.height_at(origin[0] + 1.0, origin[1]) == pytest.approx(0.0)
        # The height field is lowered under the box sub-terrain: rays hit the floor box.
        z, hit = _ray_down(model, data, origin[0] + 1.0, origin[1] + 0.3)
        assert hit == f"terrain_box_{row}_0_0" and z == pytest.approx(0.0, abs=1e-9)
    sx, sy = gen._cell_slice(0, 0)
    assert gen.heights[sx.start + 1, sy.start + 1] == pytest.approx(-0.5)
    # The yawed block: its footprint is a diamond reaching 0.28 m along x and y from its
    # centre, so (0.6 + 0.2, 0.6) is inside and the unrotated corner (0.6 + 0.2, 0.6 + 0.2)
    # is not.
    corner = np.array([gen.x[sx.start], gen.y[sy.start]])
    assert gen.height_at(*(corner + np.array([0.8, 0.6]))) == pytest.approx(0.1)
    assert gen.height_at(*(corner + np.array([0.8, 0.8]))) == pytest.approx(0.0)
    z, hit = _ray_down(model, data, *(corner + np.array([0.8, 0.6])))
    assert hit == "terrain_box_0_0_2" and z == pytest.approx(0.1)


def test_border_height_sets_the_solid_below_the_border():
    for depth in (1.0, 3.0):
        gen = TerrainGenerator(_cfg(sub_terrains={"flat": FlatTerrainCfg()}, border_height=depth))
        spec = mujoco.MjSpec()
        gen.add_to_spec(spec)
        model = spec.compile()
        assert model.hfield_size[0][3] == pytest.approx(max(depth, gen.cfg.base_thickness))


def test_color_schemes_and_lights():
    def colours(scheme):
        gen = TerrainGenerator(_cfg(color_scheme=scheme, add_lights=True))
        spec = mujoco.MjSpec()
        gen.add_to_spec(spec)
        model = spec.compile()
        ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, n) for n in gen.box_geom_names]
        return model, model.geom_rgba[ids]

    model, by_height = colours("height")
    assert model.nlight == 5
    assert by_height[1, 0] < by_height[4, 0]  # the 0.1 m block is darker than the 0.3 m one
    _, random = colours("random")
    assert len({tuple(c) for c in random}) == len(random)
    _, plain = colours("none")
    assert (plain == plain[0]).all()
    with pytest.raises(ValueError, match="color_scheme"):
        _cfg(color_scheme="rainbow")


def test_flat_patches_lie_on_flat_ground_within_the_ranges():
    search = FlatPatchSamplingCfg(
        num_patches=6, patch_radius=0.3, max_height_diff=0.02, x_range=(-1.0, 1.0)
    )
    slope = PyramidSlopedTerrainCfg(
        slope_range=(0.3, 0.3), platform_width=1.0, flat_patch_sampling={"spawn": search}
    )
    gen = TerrainGenerator(_cfg(sub_terrains={"slope": slope}, size=(4.0, 4.0)))
    patches = gen.flat_patches["spawn"]
    assert patches.shape == (2, 2, 6, 3) and gen.flat_patch_radii == {"spawn": 0.3}
    rel = patches - gen.origins[:, :, None, :]
    # Only the 1 m top platform is flat: with a 0.3 m radius its centre +-0.2 m qualifies.
    assert np.abs(rel[..., :2]).max() <= 0.2 + 1e-9
    assert np.abs(rel[..., 2]).max() < 1e-9
    # The same seed draws the same patches; the map itself is unchanged by the search.
    again = TerrainGenerator(_cfg(sub_terrains={"slope": slope}, size=(4.0, 4.0)))
    np.testing.assert_array_equal(again.flat_patches["spawn"], patches)
    plain = TerrainGenerator(
        _cfg(
            sub_terrains={
                "slope": PyramidSlopedTerrainCfg(slope_range=(0.3, 0.3), platform_width=1.0)
            },
            size=(4.0, 4.0),
        )
    )
    np.testing.assert_array_equal(plain.heights, gen.heights)
    assert plain.flat_patches == {}


def test_flat_patches_on_box_tops_and_a_search_that_finds_nothing():
    on_top = FlatPatchSamplingCfg(
        num_patches=3,
        patch_radius=0.2,
        max_height_diff=0.01,
        z_range=(-0.01, 0.01),
        x_range=(-0.5, 0.5),
        y_range=(-0.5, 0.5),
    )
    gen = TerrainGenerator(_cfg(sub_terrains={"step": _Step(flat_patch_sampling={"p": on_top})}))
    rel = gen.flat_patches["p"] - gen.origins[:, :, None, :]
    assert np.abs(rel[..., :2]).max() <= 0.3 + 1e-9 and np.abs(rel[..., 2]).max() < 1e-9
    nowhere = FlatPatchSamplingCfg(num_patches=1, patch_radius=0.2, z_range=(5.0, 6.0))
    with pytest.raises(ValueError, match=r"flat_patch_sampling\['p'\] found no flat spot"):
        TerrainGenerator(_cfg(sub_terrains={"step": _Step(flat_patch_sampling={"p": nowhere})}))
    with pytest.raises(ValueError, match="num_patches"):
        FlatPatchSamplingCfg(num_patches=0, patch_radius=0.2)
    with pytest.raises(ValueError, match="x_range"):
        FlatPatchSamplingCfg(num_patches=1, patch_radius=0.2, x_range=(1.0, -1.0))


def _ball(spec_pos=(0.0, 0.0, 1.0)):
    def spec_fn():
        spec = mujoco.MjSpec()
        body = spec.worldbody.add_body(name="ball")
        body.add_freejoint()
        body.add_geom(name="ball", size=[0.1, 0, 0], mass=1.0)
        return spec

    return EntityCfg(spec_fn=spec_fn, init_state=InitialStateCfg(pos=spec_pos))


def test_terrain_entity_cfg_builds_a_scene_with_its_materials_lights_and_debug_sites():
    slope = PyramidSlopedTerrainCfg(
        flat_patch_sampling={"spawn": FlatPatchSamplingCfg(num_patches=2, patch_radius=0.2)}
    )
    cfg = TerrainEntityCfg(
        terrain_type="generator",
        terrain_generator=_cfg(sub_terrains={"step": _Step(), "slope": slope}),
        textures=(
            TextureCfg(
                name="grid",
                type="2d",
                builtin="checker",
                width=64,
                height=64,
                rgb1=(0.2, 0.3, 0.4),
                rgb2=(0.1, 0.2, 0.3),
            ),
        ),
        materials=(MaterialCfg(name="ground", texture="grid", geom_names_expr=(TERRAIN_GEOMS,)),),
        debug_vis=True,
    )
    before = repr(cfg)
    scene = Scene(SceneCfg(num_envs=4, terrain=cfg, entities={"ball": _ball()}))
    model = scene.compile()
    assert repr(cfg) == before  # building never changes the config
    assert isinstance(scene.terrain, TerrainEntity)
    mat = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_MATERIAL, "ground")
    terrain_ids = [
        g
        for g in range(model.ngeom)
        if re.fullmatch(TERRAIN_GEOMS, mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g))
    ]
    assert len(terrain_ids) == 1 + 2 * 3 and (model.geom_matid[terrain_ids] == mat).all()
    assert model.nlight == 1  # the scene's own sun; the config adds none by default
    sites = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_SITE, s) for s in range(model.nsite)]
    assert "terrain_origin_1_1" in sites and "flat_patch_spawn_0_1_1" in sites
    assert "flat_patch_spawn_0_0_0" in sites  # box kinds without a search repeat the origin
    patches = scene.terrain.flat_patches["spawn"]
    assert patches.shape == (2, 2, 2, 3) and patches.dtype == torch.float32

    sim = Simulation(4, SimulationCfg(nthread=1), model)
    scene.initialize(sim, torch.Generator().manual_seed(0))
    terrain = scene.terrain
    before_types = terrain.terrain_types.clone()
    moved = torch.zeros(4, dtype=torch.bool)
    for _ in range(10):
        terrain.randomize_env_origins(torch.arange(4))
        moved |= terrain.terrain_types != before_types
        expected = terrain.terrain_origins[terrain.terrain_levels, terrain.terrain_types]
        torch.testing.assert_close(terrain.env_origins, expected)
    assert moved.any()


def test_a_ball_lands_on_a_box_top_through_terrain_pairs_and_contacts():
    lamp = LightCfg(name="lamp", pos=(0.0, 0.0, 3.0))
    cfg = TerrainEntityCfg(terrain_type="generator", terrain_generator=_cfg(), lights=(lamp,))
    scene = Scene(SceneCfg(num_envs=2, terrain=cfg, entities={"ball": _ball((0, 0, 0.5))}))
    model = scene.compile()
    assert model.nlight == 2
    sim = Simulation(2, SimulationCfg(nthread=1), model)
    scene.initialize(sim, torch.Generator().manual_seed(1))
    sim.reset(forward=False)
    scene.reset(torch.arange(2))
    sim.forward()
    sim.step(500)
    origins = scene.env_origins
    z = scene["ball"].data.root_link_pos_w[:, 2]
    expected = scene.terrain.height_at(origins[:, :2]) + 0.1
    torch.testing.assert_close(z, expected, atol=0.01, rtol=0)
    assert origins[0, 2] > 0.05 and origins[1, 2] == 0.0  # env 0 on the block, env 1 flat


def test_terrain_entity_cfg_checks_num_envs():
    with pytest.raises(ValueError, match="num_envs"):
        TerrainEntityCfg(num_envs=0)


def test_feet_on_box_terrain_touch_the_terrain_body_and_a_geom_set_warns():
    from mjlab.sensor import ContactMatch, ContactSensorCfg
    from mjlab.tasks.robots.go1 import GO1

    feet = ("FR", "FL", "RR", "RL")
    ground = ContactSensorCfg(
        name="feet",
        primary=ContactMatch(mode="geom", pattern=feet, entity="robot"),
        secondary=ContactMatch(mode="body", pattern="terrain", entity=None),
    )
    robot = GO1.entity_cfg()
    robot.init_state.pos = (0.0, 0.0, 0.45)
    cfg = TerrainEntityCfg(terrain_type="generator", terrain_generator=_cfg())
    scene = Scene(SceneCfg(num_envs=2, terrain=cfg, entities={"robot": robot}, sensors=(ground,)))
    sim = Simulation(2, SimulationCfg(nthread=1), scene.compile())
    scene.initialize(sim, torch.Generator().manual_seed(1))
    sim.reset(forward=False)
    scene.reset(torch.arange(2))
    sim.forward()
    sim.step(150)
    scene.update(0.02)
    # Env 0 stands on the step kind's block (box geoms), env 1 on the flat height field.
    assert scene.env_origins[0, 2] > 0.05
    assert (scene["feet"].data.found > 0).all()
    # A geom pattern matching every terrain geom cannot be one MuJoCo reference: warned.
    geoms = ContactSensorCfg(
        name="feet_geoms",
        primary=ContactMatch(mode="geom", pattern=feet, entity="robot"),
        secondary=ContactMatch(mode="geom", pattern=TERRAIN_GEOMS, entity=None),
    )
    with pytest.warns(UserWarning, match="only 'terrain' counts"):
        Scene(SceneCfg(num_envs=1, terrain=cfg, entities={"robot": robot}, sensors=(geoms,)))


def test_a_misspelt_contact_pattern_names_the_sensor_and_side_and_lists_briefly():
    from mjlab.sensor import ContactMatch, ContactSensorCfg
    from mjlab.tasks.robots.go1 import GO1

    cfg = TerrainEntityCfg(terrain_type="generator", terrain_generator=_cfg(num_rows=8, num_cols=6))
    bad = ContactSensorCfg(
        name="feet",
        primary=ContactMatch(mode="geom", pattern=("FR",), entity="robot"),
        secondary=ContactMatch(mode="geom", pattern="terain", entity=None),
    )
    with pytest.raises(ValueError) as err:
        Scene(
            SceneCfg(num_envs=1, terrain=cfg, entities={"robot": GO1.entity_cfg()}, sensors=(bad,))
        )
    message = str(err.value)
    assert message.startswith("Contact sensor 'feet', secondary: No geom of the scene matches")
    assert "Did you mean 'terrain'?" in message
    assert "more']" in message and len(message) < 3000  # 60 names listed, not every box


def _rays_down(gen, xs, ys):
    spec = mujoco.MjSpec()
    gen.add_to_spec(spec)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return np.array([_ray_down(model, data, x, y)[0] for x, y in zip(xs, ys, strict=True)])


def test_the_ground_next_to_a_box_sub_terrain_has_no_trench():
    # Sub-terrain (0, 0) is the step kind: its height field is lowered to -0.5 m, but the
    # border just outside it (x below its first vertex) stays at 0.
    gen = TerrainGenerator(_cfg())
    sx, sy = gen._cell_slice(0, 0)
    x0, y_mid = gen.x[sx.start], gen.y[sy.start] + 1.0
    offsets = np.array([-0.15, -0.09, -0.05, -0.01])
    hits = _rays_down(gen, x0 + offsets, np.full(4, y_mid))
    np.testing.assert_allclose(hits, 0.0, atol=1e-6)


def test_the_surface_of_a_tilted_grid_follows_its_tiles():
    from mjlab.terrains import BoxTiltedGridTerrainCfg

    gen = TerrainGenerator(
        _cfg(
            sub_terrains={"tilt": BoxTiltedGridTerrainCfg()},
            size=(4.0, 4.0),
            num_rows=1,
            num_cols=1,
            difficulty_range=(1.0, 1.0),
        )
    )
    ix, iy = np.meshgrid(np.arange(2, gen.x.size - 2, 2), np.arange(2, gen.y.size - 2, 2))
    hits = _rays_down(gen, gen.x[ix].ravel(), gen.y[iy].ravel())
    diff = gen.surface[ix, iy].ravel() - hits
    # The top faces' planes: within 1 cm at most vertices (tile edges show side faces).
    assert np.mean(np.abs(diff) < 0.01) > 0.9 and abs(diff.mean()) < 0.02
    assert np.ptp(gen.surface[ix, iy]) > 0.05  # the tiles do tilt


def test_the_plain_importer_has_the_flat_patches_and_random_origins_too():
    from mjlab.terrains import TerrainImporter, TerrainImporterCfg

    search = FlatPatchSamplingCfg(num_patches=2, patch_radius=0.2)
    slope = PyramidSlopedTerrainCfg(flat_patch_sampling={"spawn": search})
    terrain = TerrainImporter(
        TerrainImporterCfg(
            terrain_type="generator", terrain_generator=_cfg(sub_terrains={"s": slope})
        )
    )
    assert terrain.flat_patches["spawn"].shape == (2, 2, 2, 3)
    terrain.configure_env_origins(8, torch.Generator().manual_seed(0))
    types = set()
    for _ in range(10):
        terrain.randomize_env_origins(torch.arange(8))
        types |= set(terrain.terrain_types.tolist())
    assert types == {0, 1}

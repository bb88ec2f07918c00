"""A robot's collision model survives composition onto any terrain: explicit `<pair>`s with an
MJCF's own floor (`EntityCfg.ground_geoms`) move to the scene's terrain with their parameters,
self-collision pairs stay, and `ContactPairCfg` adds pairs of its own."""

import mujoco
import mujoco_menagerie
import numpy as np
import pytest
import torch

from mjlab.entity import TERRAIN, ContactPairCfg, EntityCfg, InitialStateCfg
from mjlab.scene import Scene, SceneCfg
from mjlab.sim import Simulation, SimulationCfg
from mjlab.tasks.robots.g1 import G1
from mjlab.terrains import RandomRoughTerrainCfg, TerrainGeneratorCfg, TerrainImporterCfg

# A box that collides only through pairs (contype/conaffinity 0), with its own floor and one
# self pair between two of its geoms.
_PAIRED_BOX = """
<mujoco>
  <default><geom contype="0" conaffinity="0"/></default>
  <asset>
    <texture name="grid" type="2d" builtin="checker" width="8" height="8"/>
    <material name="grid" texture="grid"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 0.05" material="grid"/>
    <body name="box" pos="0 0 0.3">
      <freejoint/>
      <geom name="bottom" type="box" size="0.1 0.1 0.02" mass="1"/>
      <geom name="top" type="sphere" size="0.03" pos="0 0 0.1" mass="0.1"/>
    </body>
    <body name="other" pos="1 0 0.3">
      <freejoint/>
      <geom name="ball" type="sphere" size="0.05" mass="0.2"/>
    </body>
  </worldbody>
  <contact>
    <pair name="bottom_floor" geom1="bottom" geom2="floor" solref="0.01 1" friction="0.7 0.7"/>
    <pair geom1="floor" geom2="ball" condim="1"/>
    <pair name="top_ball" geom1="top" geom2="ball" condim="1"/>
  </contact>
</mujoco>
"""


def _box_cfg(**kw) -> EntityCfg:
    return EntityCfg(spec_fn=lambda: mujoco.MjSpec.from_string(_PAIRED_BOX), **kw)


def _compile(entity_cfg: EntityCfg, terrain: TerrainImporterCfg | None) -> mujoco.MjModel:
    return Scene(SceneCfg(num_envs=1, entities={"robot": entity_cfg}, terrain=terrain)).compile()


def _pairs(model: mujoco.MjModel) -> dict[str, frozenset[str]]:
    """{pair name: its two geom names} (the compiler may swap geom1 and geom2)."""

    def geom(i: int) -> str:
        return mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, i)

    return {
        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_PAIR, p): frozenset(
            (geom(model.pair_geom1[p]), geom(model.pair_geom2[p]))
        )
        for p in range(model.npair)
    }


def test_ground_pairs_move_to_the_terrain_with_their_parameters():
    model = _compile(_box_cfg(ground_geoms=("floor",)), TerrainImporterCfg())
    pairs = _pairs(model)
    assert pairs["robot/bottom_floor"] == {"robot/bottom", "terrain"}
    assert pairs["robot/ball_terrain"] == {"robot/ball", "terrain"}  # unnamed pair: named for us
    assert pairs["robot/top_ball"] == {"robot/top", "robot/ball"}  # self pair kept
    p = list(pairs).index("robot/bottom_floor")
    np.testing.assert_allclose(model.pair_solref[p], [0.01, 1.0])
    np.testing.assert_allclose(model.pair_friction[p][:2], [0.7, 0.7])
    assert model.pair_dim[list(pairs).index("robot/ball_terrain")] == 1
    # The MJCF's floor is gone, with the material and texture only it used.
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g) for g in range(model.ngeom)]
    assert "robot/floor" not in names
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_MATERIAL, "robot/grid") == -1
    assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_TEXTURE, "robot/grid") == -1


def test_the_box_rests_on_a_height_field_through_its_carried_pair():
    terrain = TerrainImporterCfg(
        terrain_type="generator",
        terrain_generator=TerrainGeneratorCfg(
            size=(2.0, 2.0),
            num_rows=1,
            num_cols=1,
            sub_terrains={"rough": RandomRoughTerrainCfg(noise_range=(0.0, 0.01))},
        ),
    )
    cfg = _box_cfg(ground_geoms=("floor",), init_state=InitialStateCfg(pos=(0.0, 0.0, 0.2)))
    scene = Scene(SceneCfg(num_envs=2, entities={"robot": cfg}, terrain=terrain))
    sim = Simulation(2, SimulationCfg(nthread=1), scene.compile())
    scene.initialize(sim)
    sim.reset(forward=False)
    scene.reset(torch.arange(2))
    sim.forward()
    box = scene["robot"]
    sim.step(400)  # 0.8 s at MuJoCo's default 2 ms
    ground = scene.env_origins[:, 2]
    height = box.data.root_link_pos_w[:, 2] - ground
    # Half-height of the bottom box is 2 cm; rough noise is at most 1 cm.
    assert ((height > 0.005) & (height < 0.06)).all(), height
    assert sim.get_data(0).ncon > 0


def test_g1_mjx_has_no_pairs_alone_and_menagerie_s_pairs_through_ground_geoms():
    # The fault the G1 had: Menagerie's g1_mjx collides only through pairs with its scene's
    # floor; composed onto our terrain without them, nothing touches the ground.
    bare = G1.entity_cfg()
    bare.spec_fn = lambda: mujoco_menagerie.get("unitree_g1").spec("g1_mjx")
    bare.ground_geoms = ()
    assert _compile(bare, TerrainImporterCfg()).npair == 0
    model = _compile(G1.entity_cfg(), TerrainImporterCfg())
    pairs = _pairs(model)
    terrain = {k for k, v in pairs.items() if "terrain" in v}
    feet = {f"robot/{side}_foot{i}_floor" for side in ("left", "right") for i in (1, 2, 3)}
    assert feet <= terrain
    # Menagerie's scene_mjx: 23 pairs with its floor, 26 self-collision pairs.
    assert (len(terrain), len(pairs) - len(terrain)) == (23, 26)
    foot = list(pairs).index("robot/left_foot1_floor")
    np.testing.assert_allclose(model.pair_solref[foot], [0.008, 1.0])
    assert model.pair_dim[foot] == 3


def test_contact_pair_cfg_adds_terrain_and_self_pairs():
    cfg = _box_cfg(
        ground_geoms=("floor",),
        contact_pairs=(
            ContactPairCfg(geom1=("top",), condim=1, solref=(0.005, 1.0)),
            ContactPairCfg(geom1=("bottom",), geom2=("top", "ball"), condim=1),
        ),
    )
    pairs = _pairs(_compile(cfg, TerrainImporterCfg()))
    assert pairs["robot/top_terrain"] == {"robot/top", "terrain"}
    assert {v for v in pairs.values() if "robot/bottom" in v} == {
        frozenset({"robot/bottom", "robot/ball"}),
        frozenset({"robot/bottom", "robot/top"}),
        frozenset({"robot/bottom", "terrain"}),
    }


def test_a_second_pair_for_the_same_geoms_replaces_the_first():
    cfg = _box_cfg(
        ground_geoms=("floor",),
        contact_pairs=(
            ContactPairCfg(geom1=("bottom",), solref=(0.004, 1.0)),  # has "bottom_floor"
            ContactPairCfg(geom1=("top",), geom2=("ball",), condim=3),  # has "top_ball"
            ContactPairCfg(geom1=("ball",), geom2=("top",), condim=4),
        ),
    )
    model = _compile(cfg, TerrainImporterCfg())
    pairs = _pairs(model)
    assert model.npair == 3
    bottom = list(pairs).index("robot/bottom_floor")
    np.testing.assert_allclose(model.pair_solref[bottom], [0.004, 1.0])
    assert model.pair_dim[list(pairs).index("robot/top_ball")] == 4


def test_bad_pair_configs_name_the_field():
    with pytest.raises(ValueError, match="is a geom of a body, not of the worldbody"):
        _compile(_box_cfg(ground_geoms=("bottom",)), TerrainImporterCfg())
    with pytest.raises(ValueError, match="solimp needs 5 values"):
        ContactPairCfg(geom1=("top",), solimp=(0.9, 0.95, 0.001))
    with pytest.raises(ValueError, match="gap <= margin"):
        ContactPairCfg(geom1=("top",), margin=0.001, gap=0.002)
    with pytest.raises(ValueError, match="contact_pairs must be a tuple"):
        _box_cfg(contact_pairs=ContactPairCfg(geom1=("top",)))
    with pytest.raises(ValueError, match=r"ground_geoms names 'ground', which is not a geom"):
        _compile(_box_cfg(ground_geoms=("ground",)), TerrainImporterCfg())
    with pytest.raises(ValueError, match="ground_geoms must be a tuple"):
        _box_cfg(ground_geoms="floor")
    with pytest.raises(ValueError, match=r"ContactPairCfg\.geom1 must be a tuple"):
        ContactPairCfg(geom1="top")
    with pytest.raises(ValueError, match="TERRAIN"):
        ContactPairCfg(geom1=("top",), geom2="terrain")
    with pytest.raises(ValueError, match="friction needs 5 values"):
        ContactPairCfg(geom1=("top",), geom2=TERRAIN, friction=(1.0,))
    with pytest.raises(
        ValueError, match=r"No geom of entity 'robot' \(EntityCfg\.contact_pairs\[0\]\)"
    ):
        _compile(_box_cfg(contact_pairs=(ContactPairCfg(geom1=("foot",)),)), None)


def test_terrain_pairs_without_a_terrain_warn():
    with pytest.warns(UserWarning, match="SceneCfg.terrain is None"):
        _compile(_box_cfg(ground_geoms=("floor",)), None)


def test_terrain_pairs_go_to_every_box_geom_and_many_of_them_warn(monkeypatch):
    from mjlab.scene import scene as scene_module
    from mjlab.terrains import BoxFlatTerrainCfg

    terrain = TerrainImporterCfg(
        terrain_type="generator",
        terrain_generator=TerrainGeneratorCfg(
            size=(2.0, 2.0),
            num_rows=1,
            num_cols=2,
            border_width=0.0,
            sub_terrains={"box": BoxFlatTerrainCfg()},
        ),
    )
    model = _compile(_box_cfg(ground_geoms=("floor",)), terrain)
    pairs = _pairs(model)
    ground = {"terrain", "terrain_box_0_0_0", "terrain_box_0_1_0"}
    # Each pair with the MJCF's floor becomes one pair per terrain geom, same parameters.
    assert {
        next(iter(v - {"robot/bottom"}))
        for k, v in pairs.items()
        if "robot/bottom" in v and k.startswith("robot/bottom_floor")
    } == ground
    p = list(pairs).index("robot/bottom_floor/terrain_box_0_1_0")
    np.testing.assert_allclose(model.pair_solref[p], [0.01, 1.0])
    monkeypatch.setattr(scene_module, "_MANY_PAIRS", 5)
    with pytest.warns(UserWarning, match=r"2 contact pairs with the terrain, which has 3 geoms"):
        _compile(_box_cfg(ground_geoms=("floor",)), terrain)

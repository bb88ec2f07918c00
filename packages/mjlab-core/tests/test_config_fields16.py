"""The config fields of mjlab 1.6 that this project added: each one changes the compiled model
or the simulation as documented, is validated, and leaves everything as before when unset."""

import copy
import warnings

import mujoco
import numpy as np
import pytest
import torch

from mjlab.entity import (
    CameraCfg,
    EntityCfg,
    GeomCfg,
    LightCfg,
    MaterialCfg,
    MeshCfg,
    TextureCfg,
)
from mjlab.scene import Scene, SceneCfg
from mjlab.sim import MujocoCfg, Simulation, SimulationCfg
from mjlab.utils.config import ConfigError, validate_config
from mjlab.utils.nan_guard import NanGuardCfg


def _prop_spec() -> mujoco.MjSpec:
    """A floating box with a mesh shell and a hinged arm."""
    spec = mujoco.MjSpec()
    mesh = spec.add_mesh(name="ball")
    mesh.make_sphere(subdivision=3)
    mesh.scale[:] = (0.05, 0.05, 0.05)
    base = spec.worldbody.add_body(name="base", pos=[0, 0, 0.5])
    base.add_freejoint()
    base.add_geom(name="box", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.1, 0.1, 0.1])
    base.add_geom(name="shell", type=mujoco.mjtGeom.mjGEOM_MESH, meshname="ball", pos=[0, 0, 0.2])
    arm = base.add_body(name="arm", pos=[0, 0, 0.3])
    arm.add_joint(name="hinge", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 1, 0])
    arm.add_geom(name="arm_geom", type=mujoco.mjtGeom.mjGEOM_CAPSULE, size=[0.02, 0.1, 0])
    return spec


def _compile(num_envs: int = 2, **entity_fields) -> mujoco.MjModel:
    cfg = SceneCfg(
        num_envs=num_envs, entities={"prop": EntityCfg(spec_fn=_prop_spec, **entity_fields)}
    )
    return Scene(cfg).compile()


def _hull_vertices(model: mujoco.MjModel, mesh: str) -> int:
    adr = int(model.mesh_graphadr[model.mesh(mesh).id])
    assert adr >= 0, "no convex hull was computed"
    return int(model.mesh_graph[adr])  # numvert heads the hull's graph


# -- EntityCfg ----------------------------------------------------------------------------------
def test_cameras_are_added_to_the_named_body_or_the_entity_worldbody():
    model = _compile(
        cameras=(
            CameraCfg(name="chase", body="base", pos=(-1.0, 0.0, 0.4), fovy=70.0),
            CameraCfg(name="overview", pos=(0.0, 0.0, 3.0), fovy=30.0),
            CameraCfg(name="watch_arm", mode="targetbody", target="arm", pos=(1.0, 1.0, 1.0)),
        )
    )
    chase = model.camera("prop/chase")
    assert model.cam_bodyid[chase.id] == model.body("prop/base").id
    np.testing.assert_allclose(model.cam_pos[chase.id], [-1.0, 0.0, 0.4])
    assert model.cam_fovy[chase.id] == pytest.approx(70.0)
    overview = model.camera("prop/overview")
    assert model.cam_bodyid[overview.id] == 0  # the world
    assert model.cam_fovy[overview.id] == pytest.approx(30.0)
    watch = model.camera("prop/watch_arm")
    assert model.cam_mode[watch.id] == mujoco.mjtCamLight.mjCAMLIGHT_TARGETBODY
    assert model.cam_targetbodyid[watch.id] == model.body("prop/arm").id


def test_lights_are_added_with_their_colour_direction_and_body():
    model = _compile(
        lights=(
            LightCfg(
                name="lamp",
                body="arm",
                type="directional",
                pos=(0.0, 0.0, 1.0),
                dir=(0.0, 1.0, 0.0),
                diffuse=(0.2, 0.3, 0.4),
                castshadow=False,
            ),
        )
    )
    lamp = model.light("prop/lamp")
    assert model.light_bodyid[lamp.id] == model.body("prop/arm").id
    assert model.light_type[lamp.id] == mujoco.mjtLightType.mjLIGHT_DIRECTIONAL
    np.testing.assert_allclose(model.light_pos[lamp.id], [0.0, 0.0, 1.0])
    np.testing.assert_allclose(model.light_dir[lamp.id], [0.0, 1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(model.light_diffuse[lamp.id], [0.2, 0.3, 0.4], rtol=1e-6)
    assert not model.light_castshadow[lamp.id]


def test_a_material_with_a_texture_is_given_to_the_matching_geoms():
    model = _compile(
        textures=(
            TextureCfg(
                name="checks",
                type="2d",
                builtin="checker",
                rgb1=(1.0, 1.0, 1.0),
                rgb2=(0.0, 0.0, 0.0),
                width=16,
                height=16,
            ),
        ),
        materials=(
            MaterialCfg(
                name="red",
                rgba=(0.9, 0.1, 0.1, 1.0),
                texture="checks",
                geom_names_expr=("box", "arm_.*"),
            ),
        ),
    )
    red = model.material("prop/red").id
    np.testing.assert_allclose(model.mat_rgba[red], [0.9, 0.1, 0.1, 1.0], rtol=1e-6)
    tex = model.texture("prop/checks").id
    assert model.tex_width[tex] == 16 and model.tex_height[tex] == 16
    assert model.mat_texid[red, int(mujoco.mjtTextureRole.mjTEXROLE_RGB)] == tex
    assert model.geom_matid[model.geom("prop/box").id] == red
    assert model.geom_matid[model.geom("prop/arm_geom").id] == red
    assert model.geom_matid[model.geom("prop/shell").id] == -1


def test_mesh_maxhullvert_caps_the_collision_hull():
    full = _hull_vertices(_compile(), "prop/ball")
    capped = _hull_vertices(
        _compile(meshes=(MeshCfg(mesh_names_expr=("ball",), maxhullvert=8),)), "prop/ball"
    )
    assert full > 8
    assert 4 <= capped <= 8


def test_geom_edits_set_group_and_contact_attributes_of_matching_geoms_only():
    model = _compile(
        geoms=(
            GeomCfg(geom_names_expr=("shell",), group=3, friction=(0.3,)),
            GeomCfg(geom_names_expr=(".*",), margin={"arm_.*": 0.01}),
        )
    )
    shell, box, arm = (model.geom(f"prop/{n}").id for n in ("shell", "box", "arm_geom"))
    assert model.geom_group[shell] == 3 and model.geom_group[box] == 0
    assert model.geom_friction[shell, 0] == pytest.approx(0.3)
    assert model.geom_friction[box, 0] == pytest.approx(1.0)
    assert model.geom_margin[arm] == pytest.approx(0.01) and model.geom_margin[box] == 0.0


def test_building_never_changes_the_config_and_no_editors_leave_the_model_as_it_was():
    editors = {
        "lights": (LightCfg(name="lamp"),),
        "cameras": (CameraCfg(name="cam", body="arm", fovy=50.0),),
        "materials": (MaterialCfg(name="blue", rgba=(0, 0, 1, 1), geom_names_expr=("box",)),),
        "geoms": (GeomCfg(geom_names_expr=("box",), group=2),),
    }
    cfg = SceneCfg(num_envs=2, entities={"prop": EntityCfg(spec_fn=_prop_spec, **editors)})
    before = copy.deepcopy(cfg)
    Scene(cfg).compile()
    assert cfg == before
    # No editors: the model of the bare spec, field for field where physics reads it.
    plain = _compile()
    bare = _prop_spec().compile()
    for name in ("body_mass", "geom_size", "geom_friction", "geom_group", "jnt_range"):
        np.testing.assert_array_equal(getattr(plain, name), getattr(bare, name))


def test_spec_editor_names_the_field_and_the_entity_when_a_name_is_missing():
    with pytest.raises(ValueError, match=r"Entity 'prop'.*LightCfg.body.*'hand'.*base"):
        _compile(lights=(LightCfg(body="hand"),))
    with pytest.raises(ValueError, match=r"CameraCfg.target.*'nowhere'"):
        _compile(cameras=(CameraCfg(name="c", mode="targetbody", target="nowhere"),))
    with pytest.raises(ValueError, match=r"CameraCfg.mode='targetbody' needs CameraCfg.target"):
        _compile(cameras=(CameraCfg(name="c", mode="targetbody"),))
    with pytest.raises(ValueError, match=r"texture 'wood'.*EntityCfg.textures"):
        _compile(materials=(MaterialCfg(name="m", texture="wood"),))
    with pytest.raises(ValueError, match=r"No geom.*matches 'leg'"):
        _compile(materials=(MaterialCfg(name="m", geom_names_expr=("leg",)),))
    with pytest.raises(ValueError, match=r"No mesh.*matches 'cube'"):
        _compile(meshes=(MeshCfg(mesh_names_expr=("cube",), maxhullvert=8),))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: CameraCfg(name="c", fovy=0.0), r"CameraCfg.fovy must be in \(0, 180\)"),
        (lambda: CameraCfg(name="c", quat=(1, 1, 0, 0)), r"CameraCfg.quat must be a unit"),
        (lambda: CameraCfg(name=""), r"CameraCfg.name must be a non-empty string"),
        (lambda: CameraCfg(name="robot/c"), r"CameraCfg.name.*without the scene prefix"),
        (lambda: LightCfg(mode="orbit"), r"LightCfg.mode='orbit' is not one of \['fixed'"),
        (lambda: LightCfg(type="point"), r"LightCfg.type='point' is not one of"),
        (lambda: LightCfg(dir=(0, 0, 0)), r"LightCfg.dir must be a non-zero"),
        (lambda: LightCfg(diffuse=(2, 0, 0)), r"LightCfg.diffuse needs 3 values in \[0, 1\]"),
        (
            lambda: TextureCfg(
                name="t",
                type="2d",
                builtin="flat",
                rgb1=(1, 1, 1),
                rgb2=(0, 0, 0),
                width=0,
                height=8,
            ),
            r"TextureCfg.width must be an integer >= 1",
        ),
        (
            lambda: TextureCfg(
                name="t",
                type="3d",
                builtin="flat",
                rgb1=(1, 1, 1),
                rgb2=(0, 0, 0),
                width=8,
                height=8,
            ),
            r"TextureCfg.type='3d' is not one of \['2d', 'cube', 'skybox'\]",
        ),
        (lambda: MaterialCfg(name="m", rgba=(1, 0, 0)), r"MaterialCfg.rgba needs 4"),
        (lambda: MaterialCfg(name="m", texrepeat=(0, 1)), r"MaterialCfg.texrepeat must be > 0"),
        (lambda: MaterialCfg(name="m", geom_names_expr="box"), r"write \('box',\)"),
        (lambda: MeshCfg(mesh_names_expr=(".*",), maxhullvert=3), r"MeshCfg.maxhullvert must"),
        (lambda: GeomCfg(geom_names_expr=(".*",), group=6), r"GeomCfg.group must be in \[0, 6\)"),
        (lambda: GeomCfg(geom_names_expr=(".*",), condim={"a": 2}), r"GeomCfg.condim .*'a'"),
        (
            lambda: GeomCfg(geom_names_expr=(".*",), group={"arm[": 3}),
            r"GeomCfg.group: 'arm\[' is not a valid regular expression",
        ),
        (
            lambda: EntityCfg(spec_fn=_prop_spec, lights=LightCfg()),
            r"EntityCfg.lights must be a tuple of LightCfg",
        ),
        (
            lambda: EntityCfg(spec_fn=_prop_spec, cameras=(LightCfg(),)),
            r"EntityCfg.cameras must be a tuple of CameraCfg",
        ),
        (lambda: SceneCfg(extent=0.0), r"SceneCfg.extent must be a finite number > 0"),
        (lambda: SceneCfg(extent=float("inf")), r"SceneCfg.extent must be a finite number > 0"),
        (lambda: SceneCfg(spec_fn="add a light"), r"SceneCfg.spec_fn must be a callable"),
        (
            lambda: MujocoCfg(jacobian="banded"),
            r"MujocoCfg.jacobian='banded' is not one of \['auto', 'dense', 'sparse'\]",
        ),
        (lambda: MujocoCfg(ccd_iterations=0), r"MujocoCfg.ccd_iterations must be an integer >= 1"),
        (
            lambda: SimulationCfg(broadphase="sap"),
            r"SimulationCfg.broadphase='sap' is not one of \['nxn', 'sap_tile', 'sap_segmented'\]",
        ),
        (
            lambda: SimulationCfg(broadphase_filter=("cube",)),
            r"SimulationCfg.broadphase_filter: unknown filter\(s\) \['cube'\]. Valid filters: \['plane', 'sphere', 'aabb', 'obb'\]",
        ),
        (
            lambda: SimulationCfg(broadphase_filter="aabb"),
            r"SimulationCfg.broadphase_filter must be a tuple",
        ),
        (
            lambda: SimulationCfg(contact_sensor_maxmatch=0),
            r"SimulationCfg.contact_sensor_maxmatch must be an integer >= 1",
        ),
        (
            lambda: SimulationCfg(ls_parallel="yes"),
            r"SimulationCfg.ls_parallel must be True, False or None",
        ),
        (lambda: NanGuardCfg(buffer_size=0), r"NanGuardCfg.buffer_size must be an integer >= 1"),
        (lambda: NanGuardCfg(max_envs_to_dump=0), r"NanGuardCfg.max_envs_to_dump must be"),
    ],
)
def test_a_bad_value_is_refused_naming_the_field_and_the_valid_values(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_a_bad_value_edited_in_after_construction_is_caught_when_the_env_is_built():
    cfg = SimulationCfg(nthread=1)
    cfg.broadphase = "sap"
    with pytest.raises(ConfigError, match=r"cfg.sim: SimulationCfg.broadphase='sap'"):
        validate_config(cfg, root="cfg.sim")


# -- SceneCfg -----------------------------------------------------------------------------------
def test_extent_replaces_the_compiled_models_extent():
    computed = Scene(SceneCfg(entities={"prop": EntityCfg(spec_fn=_prop_spec)})).compile()
    assert computed.stat.extent != pytest.approx(7.5)
    cfg = SceneCfg(extent=7.5, entities={"prop": EntityCfg(spec_fn=_prop_spec)})
    assert Scene(cfg).compile().stat.extent == pytest.approx(7.5)
    assert cfg.extent == 7.5


def test_spec_fn_edits_the_whole_scene_after_the_entities_are_attached():
    seen = []

    def edit(spec: mujoco.MjSpec) -> None:
        seen.append(spec.body("prop/base") is not None)
        spec.worldbody.add_camera(name="overview", pos=[0, 0, 5], fovy=20.0)
        spec.geom("prop/box").rgba = [0, 1, 0, 1]

    cfg = SceneCfg(spec_fn=edit, entities={"prop": EntityCfg(spec_fn=_prop_spec)})
    model = Scene(cfg).compile()
    assert seen == [True]
    assert model.cam_fovy[model.camera("overview").id] == pytest.approx(20.0)
    np.testing.assert_allclose(model.geom_rgba[model.geom("prop/box").id], [0, 1, 0, 1])


# -- MujocoCfg ----------------------------------------------------------------------------------
def test_jacobian_and_ccd_iterations_are_written_into_the_model_and_default_to_mujocos(
    cartpole_model,
):
    sim = Simulation(
        2,
        SimulationCfg(nthread=1, mujoco=MujocoCfg(jacobian="sparse", ccd_iterations=12)),
        cartpole_model,
    )
    assert sim.mj_model.opt.jacobian == mujoco.mjtJacobian.mjJAC_SPARSE
    assert sim.mj_model.opt.ccd_iterations == 12
    sim.step()  # and the batch runs with them
    dense = Simulation(
        2, SimulationCfg(nthread=1, mujoco=MujocoCfg(jacobian="dense")), cartpole_model
    )
    assert dense.mj_model.opt.jacobian == mujoco.mjtJacobian.mjJAC_DENSE
    # Defaults: what a compiled scene has anyway (the committed runs' physics is unchanged).
    default = Simulation(2, SimulationCfg(nthread=1), Scene(SceneCfg()).compile())
    fresh = mujoco.MjSpec().compile()
    assert default.mj_model.opt.jacobian == fresh.opt.jacobian == mujoco.mjtJacobian.mjJAC_AUTO
    assert default.mj_model.opt.ccd_iterations == fresh.opt.ccd_iterations


def test_warp_only_options_have_no_effect_on_c_mujoco(cartpole_model):
    plain = Simulation(2, SimulationCfg(nthread=1), cartpole_model)
    tuned = Simulation(
        2,
        SimulationCfg(
            nthread=1,
            broadphase="sap_tile",
            broadphase_filter=("aabb",),
            contact_sensor_maxmatch=3,
            ls_parallel=True,
        ),
        cartpole_model,
    )
    for sim in (plain, tuned):
        sim.data.qpos[:, 1] = 0.3
        sim.forward()
        for _ in range(5):
            sim.step()
    torch.testing.assert_close(plain.data.qpos, tuned.data.qpos, atol=0, rtol=0)


# -- NaN guard ----------------------------------------------------------------------------------
def test_nan_guard_is_off_by_default_and_records_nothing(cartpole_model):
    sim = Simulation(2, SimulationCfg(nthread=1), cartpole_model)
    assert sim.nan_guard is None
    sim.step()


@pytest.mark.parametrize("check_divergence", [True, False])
def test_nan_guard_writes_the_states_that_led_to_a_divergence_and_they_replay(
    cartpole_model, tmp_path, check_divergence
):
    cfg = SimulationCfg(
        nthread=1,
        check_divergence=check_divergence,
        nan_guard=NanGuardCfg(enabled=True, buffer_size=3, output_dir=str(tmp_path)),
    )
    sim = Simulation(2, cfg, cartpole_model)
    sim.data.ctrl[:] = 0.5
    for _ in range(4):
        sim.step()
    assert sim.nan_guard.dump_path is None and not list(tmp_path.iterdir())
    sim.data.qvel[1, 0] = float("nan")
    with pytest.warns(RuntimeWarning, match=r"worlds \[1\] diverged at step 4"):
        sim.step(nstep=2)
    assert bool(sim.diverged[1]) is check_divergence  # the guard does not flag on its own
    dump = np.load(sim.nan_guard.dump_path)
    assert dump["env_ids"].tolist() == [1] and dump["nan_env_ids"].tolist() == [1]
    assert dump["steps"].tolist() == [2, 3, 4] and dump["nstep"].tolist() == [1, 1, 2]
    assert dump["qpos"].shape == (3, 1, cartpole_model.nq)
    assert np.isnan(dump["qvel"][-1, 0, 0]) and np.isfinite(dump["qvel"][:-1]).all()
    # C MuJoCo reset the world for instability: the state after the step is the reset one.
    assert np.isfinite(dump["after_qvel"]).all()
    # The dumped model and the last state reproduce the divergence in plain MuJoCo.
    model = mujoco.MjModel.from_binary_path(
        str(tmp_path / next(p.name for p in tmp_path.iterdir() if p.name.startswith("model_env1_")))
    )
    data = mujoco.MjData(model)
    for name in ("qpos", "qvel", "ctrl"):
        getattr(data, name)[:] = dump[name][-1, 0]
    mujoco.mj_step(model, data)
    assert data.warning[mujoco.mjtWarning.mjWARN_BADQVEL].number > 0
    # Written once: a later divergence adds nothing.
    sim.data.qvel[0, 0] = float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.step()
    assert len(list(tmp_path.glob("*.npz"))) == 1


# -- MuJoCo Warp --------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.warp
def test_warp_only_options_reach_the_mujoco_warp_model(cartpole_model):
    import mujoco_warp as mjw

    cfg = SimulationCfg(
        backend="warp",
        broadphase="sap_segmented",
        broadphase_filter=("aabb", "obb"),
        contact_sensor_maxmatch=7,
        ls_parallel=False,
    )
    with pytest.warns(UserWarning, match=r"SimulationCfg.ls_parallel=False has no effect"):
        sim = Simulation(2, cfg, cartpole_model, device="cpu")
    m, _ = sim.warp_model_data
    assert m.opt.broadphase == mjw.BroadphaseType.SAP_SEGMENTED
    assert m.opt.broadphase_filter == mjw.BroadphaseFilter.AABB | mjw.BroadphaseFilter.OBB
    assert m.opt.contact_sensor_maxmatch == 7
    default = Simulation(2, SimulationCfg(backend="warp"), cartpole_model, device="cpu")
    dm, _ = default.warp_model_data
    assert dm.opt.broadphase == mjw.BroadphaseType.NXN  # MuJoCo Warp's choice, untouched
    assert dm.opt.contact_sensor_maxmatch == 64
    for s in (sim, default):
        s.data.qpos[:, 1] = 0.3
        s.forward()
        for _ in range(3):
            s.step()
    # The broadphase and its filters change the cost, not the contacts: same motion.
    torch.testing.assert_close(sim.data.qpos, default.data.qpos, atol=1e-6, rtol=0)

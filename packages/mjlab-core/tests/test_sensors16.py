"""mjlab 1.6's sensor interface: ContactSensorCfg's fields / reduce / num_slots / history and
`ContactData`, BuiltinSensorCfg's obj / ref / cutoff, CameraSensorCfg's new fields and
`CameraSensorData`, `Sensor.requires_sensor_context` and `SensorContext`."""

from __future__ import annotations

import math
from types import SimpleNamespace

import mujoco
import pytest
import torch

from mjlab.entity import EntityCfg
from mjlab.envs import mdp
from mjlab.scene import Scene, SceneCfg
from mjlab.sensor import ContactMatch, ContactSensorCfg
from mjlab.sensor.builtin_sensor import BuiltinSensorCfg
from mjlab.sensor.camera_sensor import CameraSensorCfg, CameraSensorData
from mjlab.sensor.contact_sensor import ContactData, ContactSensor
from mjlab.sensor.ray_cast import ObjRef
from mjlab.sensor.sensor_context import SensorContext
from mjlab.sim import Simulation, SimulationCfg
from mjlab.tasks.robots.go1 import FOOT_GEOMS, GO1
from mjlab.terrains import TerrainImporterCfg
from mjlab.terrains.terrain_importer import TERRAIN_GEOMS
from mjlab.utils.math import quat_from_euler_xyz

DT = 0.02  # env step: 4 physics substeps of 0.005 s


def _scene(entities, sensors=(), num_envs=2, terrain=True):
    cfg = SceneCfg(
        num_envs=num_envs,
        entities=entities,
        sensors=tuple(sensors),
        terrain=TerrainImporterCfg() if terrain else None,
    )
    scene = Scene(cfg)
    sim = Simulation(num_envs, SimulationCfg(nthread=2), scene.compile())
    scene.initialize(sim)
    sim.reset(forward=False)
    scene.reset(torch.arange(num_envs))
    sim.forward()
    return scene, sim


GROUND = ContactMatch(mode="geom", pattern=TERRAIN_GEOMS, entity=None)
FEET = ContactMatch(mode="geom", pattern=FOOT_GEOMS)


@pytest.fixture(scope="module")
def go1_feet():
    """Go1 standing on flat ground, seen by a default (net-force) sensor and an mjlab-style
    one: every field, maxforce over 2 slots per foot, world frame, a 4-substep history."""
    every = ContactSensorCfg(
        name="every",
        primary=FEET,
        secondary=GROUND,
        fields=("found", "force", "torque", "dist", "pos", "normal", "tangent"),
        reduce="maxforce",
        num_slots=2,
        global_frame=True,
        history_length=4,
    )
    net = ContactSensorCfg(name="net", primary=FEET, secondary=GROUND)
    scene, sim = _scene({"robot": GO1.entity_cfg()}, sensors=[every, net])
    robot = scene["robot"]
    robot.set_joint_position_target(robot.data.default_joint_pos)
    for _ in range(40):  # settle on the ground
        sim.step(4)
        scene.update(DT)
    return scene, sim


def test_contact_data_has_documented_shapes_and_values_standing(go1_feet):
    scene, _ = go1_feet
    every, net = scene["every"], scene["net"]
    assert isinstance(every, ContactSensor) and every.primary_names == list(FOOT_GEOMS)
    assert every.slot_names == [f"robot/{g}" for g in FOOT_GEOMS]
    d = every.data
    assert isinstance(d, ContactData)
    b, n = 2, 4 * 2  # N = P * num_slots, primary-major
    for name, shape in {
        "found": (b, n),
        "force": (b, n, 3),
        "torque": (b, n, 3),
        "dist": (b, n),
        "pos": (b, n, 3),
        "normal": (b, n, 3),
        "tangent": (b, n, 3),
        "current_air_time": (b, 4),
        "last_air_time": (b, 4),
        "current_contact_time": (b, 4),
        "last_contact_time": (b, 4),
        "force_history": (b, n, 4, 3),
        "torque_history": (b, n, 4, 3),
        "dist_history": (b, n, 4),
    }.items():
        value = getattr(d, name)
        assert tuple(value.shape) == shape, name
        assert value.dtype == torch.float32, name
    # A sphere foot on a plane: one contact, in slot 0 of its primary; slot 1 is empty.
    assert (d.found[:, 0::2] >= 1).all() and (d.found[:, 1::2] == 0).all()
    assert (d.force[:, 1::2] == 0).all()
    # The contact point on the ground, slightly penetrating; normal from the foot down.
    torch.testing.assert_close(d.pos[:, 0::2, 2], torch.zeros(b, 4), atol=5e-3, rtol=0)
    assert (d.dist[:, 0::2] <= 0).all() and (d.dist[:, 0::2] > -5e-3).all()
    normal = torch.tensor([0.0, 0.0, -1.0]).expand(b, 4, 3)
    torch.testing.assert_close(d.normal[:, 0::2], normal, atol=1e-4, rtol=0)
    torch.testing.assert_close(d.tangent[:, 0::2].norm(dim=-1), torch.ones(b, 4))
    # global_frame: each foot's slots rotated into the world sum to MuJoCo's net force.
    per_foot = d.force.view(b, 4, 2, 3).sum(dim=2)
    torch.testing.assert_close(per_foot, net.data.force, atol=1e-3, rtol=1e-4)
    # The net force the feet exert on the ground carries the robot's weight (it stands still).
    model = net.sim.mj_model
    trunk = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "robot/trunk")
    mass = float(model.body_subtreemass[trunk])
    fz = net.data.force[..., 2].sum(dim=1)
    torch.testing.assert_close(fz, torch.full((b,), -mass * 9.81), rtol=0.05, atol=0)
    # The direct (older) properties read the same sensor data.
    assert torch.equal(net.found, net.data.found > 0)
    assert torch.equal(net.force, net.data.force)
    assert net.data.force_history is None and net.data.dist is None
    # Dropped from its initial height, then standing: a flight, then in contact since.
    assert (d.current_air_time == 0).all() and (d.current_contact_time >= 10 * DT).all()
    assert (d.last_air_time > 0).all()


def test_history_records_every_physics_substep(go1_feet):
    scene, sim = go1_feet
    every = scene["every"]
    every.reset(torch.tensor([0]))
    assert (every.data.force_history[0] == 0).all() and (every.data.force_history[1] != 0).any()
    # Two substeps, the first read on its own, then the env-step update.
    sim.step(1)
    first = every.data.force.clone()
    sim.step(1)
    scene.update(DT)
    h = every.data.force_history
    torch.testing.assert_close(h[:, :, 0], every.data.force)  # index 0: the newest substep
    torch.testing.assert_close(h[:, :, 1], first)
    # Env 0 was reset: only the two new substeps are in its history.
    touching = every.data.found[0] > 0
    assert (h[0, touching, :2].norm(dim=-1) > 1.0).all()
    assert (h[0, :, 2:] == 0).all()
    assert (every.data.dist_history[0, touching, :2] < 0).all()
    # Env 1 was not: its older substeps are still there.
    assert (h[1, every.data.found[1] > 0, 2:].norm(dim=-1) > 1.0).all()


def test_air_time_and_first_air_while_lifted(go1_feet):
    scene, sim = go1_feet
    every, robot = scene["every"], scene["robot"]
    lifted = robot.data.root_link_pos_w[1].clone() + torch.tensor([0.0, 0.0, 0.5])
    stance = every.data.current_contact_time[1].clone()
    for i in range(5):
        state = torch.cat([lifted, torch.tensor([1.0, 0, 0, 0]), torch.zeros(6)]).unsqueeze(0)
        robot.write_root_state_to_sim(state, torch.tensor([1]))
        sim.forward()
        sim.step(4)
        scene.update(DT)
        d = every.data
        assert (d.found[1] == 0).all()
        torch.testing.assert_close(d.current_air_time[1], torch.full((4,), (i + 1) * DT))
        assert torch.equal(every.compute_first_air(DT)[1], torch.full((4,), i == 0))
        torch.testing.assert_close(d.last_contact_time[1], stance)
    assert every.data.found[0, 0::2].all() and not every.compute_first_air(DT)[0].any()


def test_secondary_policy_and_legacy_properties_need_a_net_force():
    trunk = ContactMatch(mode="body", pattern="trunk")
    legs = ContactMatch(mode="body", pattern=("FR_calf", "FL_calf"))
    sensors = [
        # The feet never touch the trunk: "any" drops that filter, "first" keeps it.
        ContactSensorCfg(name="any", primary=FEET, secondary=trunk, secondary_policy="any"),
        ContactSensorCfg(name="trunk", primary=FEET, secondary=trunk, track_air_time=False),
        # Two calves: "first" (the default) measures against the first one only.
        ContactSensorCfg(name="calf", primary=FEET, secondary=legs, track_air_time=False),
        ContactSensorCfg(name="maxf", primary=FEET, secondary=GROUND, reduce="maxforce"),
    ]
    # "first" with two matches measures one and says so.
    with pytest.warns(UserWarning, match="only 'robot/FR_calf' counts"):
        scene, sim = _scene({"robot": GO1.entity_cfg()}, sensors=sensors)
    scene["robot"].set_joint_position_target(scene["robot"].data.default_joint_pos)
    sim.step(100)
    assert scene["any"].found.all() and scene["maxf"].found.all()
    assert not scene["trunk"].found.any()
    model = sim.mj_model
    sensor = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, "calf/0")
    calf = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "robot/FR_calf")
    assert model.sensor_refid[sensor] == calf
    assert model.sensor_refid[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, "any/0")] == -1
    with pytest.raises(ValueError, match="reduce='netforce'"):
        _ = scene["maxf"].force
    with pytest.raises(ValueError, match="reduce='netforce'"):
        scene["maxf"].in_contact_above(1.0)
    with pytest.raises(ValueError, match="track_air_time=True"):
        scene["trunk"].compute_first_contact(DT)
    assert scene["trunk"].data.current_air_time is None
    assert scene["maxf"].compute_first_contact(DT).shape == (2, 4)
    # "error": the secondary pattern matching two bodies is refused, naming the fix.
    bad = ContactSensorCfg(name="x", primary=FEET, secondary=legs, secondary_policy="error")
    with pytest.raises(ValueError, match="secondary_policy='first'"):
        Scene(SceneCfg(num_envs=1, entities={"robot": GO1.entity_cfg()}, sensors=(bad,)))


def test_debug_prints_each_mujoco_sensor(capsys):
    cfg = ContactSensorCfg(name="dbg", primary=FEET, fields=("found",), debug=True)
    Scene(SceneCfg(num_envs=1, entities={"robot": GO1.entity_cfg()}, sensors=(cfg,)))
    out = capsys.readouterr().out
    assert out.count("[ContactSensor 'dbg']") == 4 and "geom 'robot/FR' against anything" in out


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"fields": "force"}, r"write \('force',\)"),
        ({"fields": ("found", "speed")}, "fields must be a non-empty tuple"),
        ({"reduce": "sum"}, "reduce must be one of"),
        ({"num_slots": 0}, "num_slots must be an integer >= 1"),
        ({"secondary_policy": "all"}, "secondary_policy must be one of"),
        ({"reduce": "maxforce", "global_frame": True}, "needs 'normal' and 'tangent'"),
        ({"fields": ("force",)}, "track_air_time=True needs 'found'"),
        ({"history_length": -1}, "history_length must be an integer >= 0"),
        ({"fields": ("found", "pos"), "history_length": 2}, "none of which is in"),
    ],
)
def test_bad_contact_config_names_the_field(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ContactSensorCfg(name="c", primary=FEET, **kwargs)


# ----------------------------------------------------------------------------------------------
# BuiltinSensorCfg: obj / ref / cutoff


def _up_in_imu(name: str = "up") -> BuiltinSensorCfg:
    return BuiltinSensorCfg(
        name=name,
        sensor_type="framezaxis",
        obj=ObjRef(type="xbody", name="world"),
        ref=ObjRef(type="site", name="imu", entity="robot"),
    )


def test_world_up_in_the_imu_frame_is_minus_the_projected_gravity():
    legacy = BuiltinSensorCfg(
        name="up_legacy",
        sensor_type="framezaxis",
        obj_type="xbody",
        obj_name="world",
        entity=None,
        ref=ObjRef(type="site", name="imu", entity="robot"),
    )
    gyro = BuiltinSensorCfg(name="gyro", sensor_type="gyro", obj=ObjRef("site", "imu", "robot"))
    capped = BuiltinSensorCfg(
        name="gyro_capped", sensor_type="gyro", obj_name="imu", obj_type="site", cutoff=0.5
    )
    scene, sim = _scene(
        {"robot": GO1.entity_cfg()}, sensors=[_up_in_imu(), legacy, gyro, capped], num_envs=3
    )
    robot = scene["robot"]
    env = SimpleNamespace(scene=scene)
    # Level: the world's up axis is the IMU's +z, so the projected gravity is (0, 0, -1).
    level = mdp.projected_gravity_from_sensor(env, "up")
    torch.testing.assert_close(level, torch.tensor([[0.0, 0.0, -1.0]] * 3), atol=1e-6, rtol=0)
    # Tilted (the imu site is aligned with the trunk): it follows the root's projected gravity.
    rpy = torch.tensor([[0.3, 0.0, 0.0], [0.0, -0.5, 1.0], [0.4, 0.2, -2.0]])
    state = torch.zeros(3, 13)
    state[:, :3] = robot.data.root_link_pos_w + torch.tensor([0.0, 0.0, 0.3])
    state[:, 3:7] = quat_from_euler_xyz(rpy[:, 0], rpy[:, 1], rpy[:, 2])
    state[:, 10:13] = torch.tensor([0.0, 0.0, 3.0])  # spinning about z at 3 rad/s
    robot.write_root_state_to_sim(state)
    sim.forward()
    tilted = mdp.projected_gravity_from_sensor(env, "up")
    torch.testing.assert_close(tilted, robot.data.projected_gravity_b, atol=1e-5, rtol=0)
    assert (tilted[:, 2] > -0.96).all()  # really tilted
    assert torch.equal(scene["up_legacy"].data, scene["up"].data)
    # cutoff clamps each value to [-0.5, 0.5] rad/s; the uncapped gyro reads more.
    spin = scene["gyro"].data
    assert spin.abs().max() > 1.0
    torch.testing.assert_close(scene["gyro_capped"].data, spin.clamp(-0.5, 0.5))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"sensor_type": "gyro", "obj": ObjRef("body", "trunk", "robot")}, r"obj\.type must be"),
        ({"sensor_type": "gyro", "obj_name": "imu", "ref": ObjRef("site", "imu")}, "drop ref"),
        (
            {"sensor_type": "framepos", "obj_name": "imu", "ref": ObjRef("joint", "FR_hip_joint")},
            r"ref\.type must be",
        ),
        ({"sensor_type": "gyro", "obj": ObjRef("site", "imu"), "obj_name": "imu"}, "not both"),
        ({"sensor_type": "jointpos"}, "needs an object of type joint"),
        ({"sensor_type": "clock", "obj_name": "imu"}, "takes no object"),
        ({"obj_name": "imu_gyro", "cutoff": 1.0}, "sensor_type=None reads an MJCF sensor"),
        ({"sensor_type": "gyro", "obj_name": "imu", "cutoff": -1.0}, "cutoff must be"),
        ({"sensor_type": "gyro", "obj": ("site", "imu")}, "must be an ObjRef"),
    ],
)
def test_bad_builtin_config_names_the_field(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BuiltinSensorCfg(name="s", **kwargs)


def test_builtin_sensor_naming_a_missing_object_is_refused():
    cfg = BuiltinSensorCfg(name="s", sensor_type="gyro", obj=ObjRef("site", "imu_typo", "robot"))
    with pytest.raises(ValueError, match="names no site 'robot/imu_typo'"):
        Scene(SceneCfg(num_envs=1, entities={"robot": GO1.entity_cfg()}, sensors=(cfg,)))


# ----------------------------------------------------------------------------------------------
# CameraSensorCfg / CameraSensorData / SensorContext

_XML = """
<mujoco>
  <worldbody>
    <light pos="0 0 3" dir="0 0 -1"/>
    <geom name="floor" type="plane" size="5 5 0.1" rgba="0.5 0.5 0.5 1"/>
    <body name="box" pos="0 0 0.15">
      <geom type="box" size="0.3 0.3 0.15" rgba="0.9 0.1 0.1 1"/>
    </body>
    <camera name="mjcf_cam" pos="0 0 1" fovy="2"/>
  </worldbody>
</mujoco>
"""


def test_camera_data_orthographic_clone_and_sensor_context():
    persp = CameraSensorCfg(name="persp", data_types=("rgb", "depth"), width=20, height=20)
    ortho = CameraSensorCfg(
        name="ortho",
        camera_name="world/mjcf_cam",
        orthographic=True,  # the MJCF camera's fovy="2" now reads as a 2 m high view
        data_types=("depth",),
        width=40,
        height=40,
        clone_data=True,
        use_textures=True,
        use_shadows=False,
    )
    world = EntityCfg(spec_fn=lambda: mujoco.MjSpec.from_string(_XML))
    scene, sim = _scene({"world": world}, sensors=[persp, ortho], terrain=False)
    p, o = scene["persp"], scene["ortho"]
    data = p.data
    assert isinstance(data, CameraSensorData) and data.segmentation is None
    assert data.rgb.shape == (2, 20, 20, 3) and data.rgb.dtype == torch.uint8
    assert data.depth.shape == (2, 20, 20, 1) and data.depth.dtype == torch.float32
    assert data.rgb.data_ptr() == p.rgb.data_ptr()  # the sensor's buffer (clone_data=False)
    torch.testing.assert_close(data.depth[..., 0], p.depth)
    # Orthographic, 1 m above the floor: depth is the height everywhere (no perspective), the
    # 0.6 m box top (0.3 m high) spans 0.6 / 2 of the 40 rows, 12 rows.
    od = o.data
    assert od.rgb is None and od.depth.shape == (2, 40, 40, 1)
    depth = od.depth[0, :, :, 0]
    box = (depth - 0.7).abs() < 1e-3
    floor = (depth - 1.0).abs() < 1e-3
    assert (box | floor).all()
    assert box.any(dim=1).sum().item() == pytest.approx(12, abs=1)
    # clone_data: every read is a new copy.
    assert o.data.depth.data_ptr() != od.depth.data_ptr()
    od.depth.fill_(-1.0)
    assert (o.depth >= 0.7 - 1e-3).all()
    # The shared context: one per simulation, images by MuJoCo camera id.
    assert p.requires_sensor_context and not ContactSensor.requires_sensor_context
    ctx = p.sensor_context
    assert isinstance(ctx, SensorContext) and o.sensor_context is ctx
    assert ctx.has_cameras and not ctx.has_raycasts
    assert [c.name for c in ctx.camera_sensors] == ["ortho", "persp"]  # MJCF camera first
    assert torch.equal(ctx.get_rgb(p.camera_idx), p.rgb)
    torch.testing.assert_close(ctx.get_depth(o.camera_idx), o.data.depth)
    with pytest.raises(ValueError, match="renders rgb"):
        ctx.get_rgb(o.camera_idx)
    with pytest.raises(KeyError, match="no camera sensor of camera id 99"):
        ctx.get_depth(99)
    with pytest.raises(ValueError, match="segmentation"):
        ctx.get_segmentation(p.camera_idx)
    assert p.camera_name == "persp" and o.camera_name == "world/mjcf_cam"
    assert math.isclose(sim.mj_model.cam_fovy[o.camera_idx], 2.0)  # the MJCF value is kept
    assert int(sim.mj_model.cam_projection[o.camera_idx]) == 1  # mjPROJ_ORTHOGRAPHIC
    assert int(sim.mj_model.cam_projection[p.camera_idx]) == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"use_textures": False}, "use_textures=False is not supported"),
        ({"use_shadows": True}, "use_shadows=True is not supported"),
        ({"clone_data": 1}, "clone_data must be True or False"),
        ({"orthographic": True, "fovy": 0.0}, "height of an orthographic view"),
        ({"fovy": 200.0}, r"fovy must be in \(0, 180\)"),
        ({"data_types": ("rgb", "segmentation")}, "'segmentation' .* not rendered"),
    ],
)
def test_bad_camera_config_names_the_field(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CameraSensorCfg(name="cam", **kwargs)
    assert CameraSensorCfg(name="ok", orthographic=True, fovy=200.0).fovy == 200.0  # metres

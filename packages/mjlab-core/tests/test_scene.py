"""Scene, entities, actuators and sensors on mujoco-menagerie robots."""

import math
import re

import mujoco
import numpy as np
import pytest
import torch

from mjlab.actuator import PositionActuatorCfg
from mjlab.entity import EntityArticulationInfoCfg, EntityCfg, InitialStateCfg
from mjlab.scene import Scene, SceneCfg
from mjlab.sensor import ContactMatch, ContactSensorCfg, HeightScanCfg
from mjlab.sim import Simulation, SimulationCfg
from mjlab.tasks.robots.g1 import G1
from mjlab.tasks.robots.go1 import FOOT_GEOMS, GO1
from mjlab.terrains import TerrainImporterCfg
from mjlab.utils.math import quat_from_euler_xyz

N = 8


def _scene(entities, sensors=(), num_envs=N, terrain=True):
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


@pytest.mark.parametrize("robot", [GO1, G1], ids=["go1", "g1"])
def test_robot_views_have_documented_shapes_and_match_single_world_mjdata(robot):
    scene, sim = _scene({"robot": robot.entity_cfg()})
    ent = scene["robot"]
    nj = len(ent.joint_names)
    assert nj == (12 if robot is GO1 else 29)
    gen = torch.Generator().manual_seed(0)
    # A random moving state per env: tilted base, random joints and velocities.
    rpy = (torch.rand(N, 3, generator=gen) - 0.5) * 0.6
    state = torch.zeros(N, 13)
    state[:, :3] = torch.tensor([0.1, -0.2, 0.5]) + torch.rand(N, 3, generator=gen)
    state[:, 3:7] = quat_from_euler_xyz(rpy[:, 0], rpy[:, 1], rpy[:, 2])
    state[:, 7:13] = torch.randn(N, 6, generator=gen)
    ent.write_root_state_to_sim(state)
    ent.write_joint_state_to_sim(
        ent.data.default_joint_pos + 0.1 * torch.randn(N, nj, generator=gen),
        torch.randn(N, nj, generator=gen),
    )
    sim.forward()
    d = ent.data
    for name, shape in {
        "joint_pos": (N, nj),
        "joint_vel": (N, nj),
        "joint_acc": (N, nj),
        "actuator_force": (N, nj),
        "default_joint_pos": (N, nj),
        "soft_joint_pos_limits": (N, nj, 2),
        "root_link_pos_w": (N, 3),
        "root_link_quat_w": (N, 4),
        "root_link_lin_vel_w": (N, 3),
        "root_link_ang_vel_w": (N, 3),
        "root_link_lin_vel_b": (N, 3),
        "root_link_ang_vel_b": (N, 3),
        "projected_gravity_b": (N, 3),
        "heading_w": (N,),
        "body_link_pos_w": (N, len(ent.body_names), 3),
        "body_link_quat_w": (N, len(ent.body_names), 4),
        "body_link_lin_vel_w": (N, len(ent.body_names), 3),
    }.items():
        value = getattr(d, name)
        assert tuple(value.shape) == shape, name
        assert value.dtype == torch.float32, name

    # Reference: one plain MjData with world 3's state, quantities from MuJoCo's own functions.
    m = sim.mj_model
    data = mujoco.MjData(m)
    k = 3
    data.qpos[:] = sim.data.qpos[k].numpy()
    data.qvel[:] = sim.data.qvel[k].numpy()
    mujoco.mj_forward(m, data)
    root = ent.body_ids_global[0]
    vel_local, vel_world = np.zeros(6), np.zeros(6)
    mujoco.mj_objectVelocity(m, data, mujoco.mjtObj.mjOBJ_XBODY, root, vel_local, 1)
    mujoco.mj_objectVelocity(m, data, mujoco.mjtObj.mjOBJ_XBODY, root, vel_world, 0)
    tol = dict(atol=2e-5, rtol=1e-5)
    np.testing.assert_allclose(d.root_link_pos_w[k], data.xpos[root], **tol)
    np.testing.assert_allclose(d.root_link_quat_w[k], data.xquat[root], **tol)
    np.testing.assert_allclose(d.root_link_ang_vel_b[k], vel_local[:3], **tol)
    np.testing.assert_allclose(d.root_link_lin_vel_b[k], vel_local[3:], **tol)
    np.testing.assert_allclose(d.root_link_ang_vel_w[k], vel_world[:3], **tol)
    np.testing.assert_allclose(d.root_link_lin_vel_w[k], vel_world[3:], **tol)
    xmat = data.xmat[root].reshape(3, 3)
    np.testing.assert_allclose(d.projected_gravity_b[k], xmat.T @ [0, 0, -1], **tol)
    assert d.heading_w[k].item() == pytest.approx(math.atan2(xmat[1, 0], xmat[0, 0]), abs=1e-5)
    jadr = m.jnt_qposadr[ent.joint_ids_global]
    np.testing.assert_allclose(d.joint_pos[k], data.qpos[jadr], **tol)
    b = ent.body_ids_global[-1]
    mujoco.mj_objectVelocity(m, data, mujoco.mjtObj.mjOBJ_XBODY, b, vel_world, 0)
    np.testing.assert_allclose(d.body_link_lin_vel_w[k, -1], vel_world[3:], atol=1e-4, rtol=1e-4)


# Three hinge joints a, b, c whose actuators are declared in reverse order (c, b, a).
_ARM_REVERSED_XML = """
<mujoco><worldbody><body name="l1"><joint name="a" axis="0 1 0"/><geom type="capsule" size=".05" fromto="0 0 0 0 0 .2"/>
  <body name="l2" pos="0 0 .2"><joint name="b" axis="0 1 0"/><geom type="capsule" size=".05" fromto="0 0 0 0 0 .2"/>
  <body name="l3" pos="0 0 .2"><joint name="c" axis="0 1 0"/><geom type="capsule" size=".05" fromto="0 0 0 0 0 .2"/>
</body></body></body></worldbody>
<actuator><position joint="c" kp="30"/><position joint="b" kp="20"/><position joint="a" kp="10"/></actuator>
</mujoco>"""


def test_gains_follow_joint_order_not_actuator_declaration_order():
    # Case C02: actuators declared c, b, a with kp 30, 20, 10 on joints a, b, c.
    cfg = EntityCfg(spec_fn=lambda: mujoco.MjSpec.from_string(_ARM_REVERSED_XML))
    scene, sim = _scene({"arm": cfg}, num_envs=2, terrain=False)
    arm = scene["arm"]
    assert arm.joint_names == ["a", "b", "c"]
    assert arm.data.joint_stiffness[0].tolist() == [10.0, 20.0, 30.0]
    # Targets go to each joint's own actuator.
    arm.set_joint_position_target(torch.tensor([[1.0, 2.0, 3.0]] * 2))
    for joint, target in zip("abc", (1.0, 2.0, 3.0), strict=True):
        act = [
            i
            for i in range(sim.mj_model.nu)
            if sim.mj_model.actuator_trnid[i, 0] == arm.joint_ids_global["abc".index(joint)]
        ]
        assert sim.data.ctrl[0, act[0]].item() == target


def test_targets_reach_their_actuators_through_slices_and_index_lists():
    # Actuators declared c, b, a: joints (c, b) map to ctrl columns (0, 1), consecutive (one
    # copy into a kept view of ctrl); (a, c) to (2, 0), an index; env_ids take the index path.
    scene, sim = _scene(
        {"arm": EntityCfg(spec_fn=lambda: mujoco.MjSpec.from_string(_ARM_REVERSED_XML))},
        num_envs=3,
        terrain=False,
    )
    arm = scene["arm"]
    arm.set_joint_position_target(torch.tensor([[1.5, 2.5]] * 3), joint_ids=[2, 1])
    assert sim.data.ctrl.tolist() == [[1.5, 2.5, 0.0]] * 3
    arm.set_joint_position_target(torch.tensor([[7.0, 8.0]] * 3), joint_ids=np.array([0, 2]))
    assert sim.data.ctrl.tolist() == [[8.0, 2.5, 7.0]] * 3
    arm.set_joint_position_target(
        torch.tensor([[-1.0, -2.0]]), joint_ids=[2, 1], env_ids=torch.tensor([1])
    )
    assert sim.data.ctrl.tolist() == [[8.0, 2.5, 7.0], [-1.0, -2.0, 7.0], [8.0, 2.5, 7.0]]
    with pytest.raises(TypeError, match="not a mask"):
        arm.set_joint_position_target(torch.zeros(3, 1), joint_ids=[True, False, False])


def test_actuator_cfg_replaces_mjcf_actuators_with_per_joint_gains():
    cfg = GO1.entity_cfg()
    cfg.articulation = EntityArticulationInfoCfg(
        actuators=(
            PositionActuatorCfg(
                joint_names_expr=(".*_calf_joint",), stiffness=50.0, damping=2.0, effort_limit=30.0
            ),
        )
    )
    scene, sim = _scene({"robot": cfg}, num_envs=2)
    d = scene["robot"].data
    ids, _ = scene["robot"].find_joints(".*_calf_joint")
    others = [i for i in range(12) if i not in ids]
    assert torch.all(d.joint_stiffness[:, ids] == 50.0)
    assert torch.all(d.joint_damping[:, ids] == 2.0)
    assert torch.all(d.joint_effort_limits[:, ids] == 30.0)
    assert torch.all(d.joint_stiffness[:, others] == 100.0)  # Menagerie's own kp kept
    assert sim.mj_model.nu == 12


def test_regex_with_no_match_names_the_entity_and_lists_joints():
    scene, _ = _scene({"robot": GO1.entity_cfg()}, num_envs=1)
    with pytest.raises(
        ValueError, match=r"No joint of entity 'robot' matches '.*_knee'.*FR_hip_joint"
    ):
        scene["robot"].find_joints(".*_knee")
    with pytest.raises(KeyError, match="Entities: \\['robot'\\]"):
        scene["robt"]
    # Menagerie's Go1 has unnamed (visual) geoms: counted, not listed as ''.
    with pytest.raises(ValueError) as err:
        scene["robot"].find_geoms("nope")
    message = str(err.value)
    assert "FR" in message and "''" not in message
    assert re.search(r"\(\d+ more without a name\)", message), message


def test_contact_sensor_feet_on_ground_and_air_time_grows_while_lifted():
    sensor = ContactSensorCfg(name="feet", primary=ContactMatch(mode="geom", patterns=FOOT_GEOMS))
    scene, sim = _scene({"robot": GO1.entity_cfg()}, sensors=[sensor], num_envs=2)
    robot, feet = scene["robot"], scene["feet"]
    robot.set_joint_position_target(robot.data.default_joint_pos)
    dt = 0.02
    for _ in range(25):  # settle on the ground
        sim.step(4)
        scene.update(dt)
    assert feet.found.all(), "all four feet touch the ground when standing"
    assert (feet.force.norm(dim=-1) > 1.0).all()
    # Hold env 1's trunk 0.5 m up for 0.5 s: its feet are in the air and air time grows.
    lifted = robot.data.root_link_pos_w[1].clone() + torch.tensor([0.0, 0.0, 0.5])
    for i in range(25):
        state = torch.cat([lifted, torch.tensor([1.0, 0, 0, 0]), torch.zeros(6)]).unsqueeze(0)
        robot.write_root_state_to_sim(state, torch.tensor([1]))
        sim.forward()
        sim.step(4)
        scene.update(dt)
        assert not feet.found[1].any()
        # Nothing found: exactly zero force (`in_contact_above` relies on it).
        assert (feet.force[1] == 0).all()
        torch.testing.assert_close(feet.current_air_time[1], torch.full((4,), (i + 1) * dt))
    assert feet.found[0].all() and (feet.current_contact_time[0] >= 40 * dt).all()
    # Release: touchdown sets first_contact and last_air_time is the whole flight.
    # (Read at each foot's first touchdown: after a 0.5 m drop a foot may bounce.)
    landed = torch.zeros(4, dtype=torch.bool)
    flight = torch.zeros(4)
    for _ in range(50):
        sim.step(4)
        scene.update(dt)
        new = feet.first_contact[1] & ~landed
        flight[new] = feet.last_air_time[1][new]
        landed |= new
    assert landed.any()
    assert (flight[landed] > 25 * dt).all()


def test_contact_sensor_reads_each_slot_from_its_own_mujoco_sensor():
    # found/force are read as one (num_envs, slots, 4) block of sensordata; each slot must be
    # the MuJoCo contact sensor of its name, read through MjData, in both envs.
    feet = ContactSensorCfg(name="feet", primary=ContactMatch(mode="geom", patterns=FOOT_GEOMS))
    trunk = ContactSensorCfg(name="trunk", primary=ContactMatch(mode="body", patterns=("trunk",)))
    scene, sim = _scene({"robot": GO1.entity_cfg()}, sensors=[feet, trunk], num_envs=2)
    robot = scene["robot"]
    robot.set_joint_position_target(robot.data.default_joint_pos)
    # Env 1 starts with its trunk on the ground (upside down), so both sensors see contacts.
    flipped = robot.data.root_link_pos_w[1].clone()
    flipped[2] = 0.12
    state = torch.cat([flipped, torch.tensor([0.0, 1.0, 0, 0]), torch.zeros(6)]).unsqueeze(0)
    robot.write_root_state_to_sim(state, torch.tensor([1]))
    sim.forward()
    sim.step(40)
    for name in ("feet", "trunk"):
        sensor = scene[name]
        assert isinstance(sensor._rows_at, slice), "the slots are one block of sensordata"
        for env in range(2):
            data = sim.get_data(env)
            for slot in range(sensor.num_slots):
                found, *force = data.sensor(f"{name}/{slot}").data
                assert bool(sensor.found[env, slot]) == (found > 0)
                np.testing.assert_allclose(sensor.force[env, slot].numpy(), force, rtol=1e-6)
        for threshold in (1.0, 0.0, -1.0):
            expected = (sensor.force.norm(dim=-1) > threshold) & sensor.found
            assert torch.equal(sensor.in_contact_above(threshold), expected)
        # The gather used when other sensors sit between the slots reads the same rows.
        block, view = sensor._rows_at, sensor._rows()
        sensor._rows_at = torch.arange(block.start, block.stop)
        assert torch.equal(sensor._rows(), view)
        sensor._rows_at = block
    # Not a vacuous comparison: both sensors report contacts (and non-contacts).
    assert scene["feet"].found[0].any() and scene["trunk"].found[1].all()
    assert not scene["trunk"].found[0].any()


def test_air_time_has_no_float32_drift_over_long_episodes():
    sensor = ContactSensorCfg(name="feet", primary=ContactMatch(mode="geom", patterns=FOOT_GEOMS))
    scene, sim = _scene({"robot": GO1.entity_cfg()}, sensors=[sensor], num_envs=1)
    feet = scene["feet"]
    scene["robot"].set_joint_position_target(scene["robot"].data.default_joint_pos)
    sim.step(100)
    assert feet.found.all()
    dt = 0.02
    for _ in range(50_000):  # 1000 s of contact, counted without stepping physics
        feet.update(dt)
    # A float32 running sum of 0.02 s drifts by ~0.1 s over this span; step counts do not.
    assert feet.current_contact_time[0, 0].item() == pytest.approx(1000.0, abs=1e-4)


def test_height_scan_over_a_known_height_field_returns_its_heights():
    # A 2 m x 2 m height field: x < 0 at 0 m, x > 0 at 0.3 m (MuJoCo normalizes the
    # elevation data to [0, 1] and scales it by size z = 0.3).
    nrow = ncol = 41

    def ground():
        spec = mujoco.MjSpec()
        data = np.where(np.linspace(-1, 1, ncol)[None, :] < 0, 0.0, 1.0).repeat(nrow, 0)
        spec.add_hfield(
            name="steps",
            nrow=nrow,
            ncol=ncol,
            size=[1.0, 1.0, 0.3, 0.1],
            userdata=data.flatten().tolist(),
        )
        spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname="steps", group=0)
        body = spec.worldbody.add_body(name="probe", pos=[0, 0, 1.0])
        body.add_geom(size=[0.05, 0, 0], group=3, contype=0, conaffinity=0)
        return spec

    scan = HeightScanCfg(
        name="scan", entity="ground", body_name="probe", size=(1.0, 0.4), resolution=0.2
    )
    scene, _sim = _scene(
        {"ground": EntityCfg(spec_fn=ground)}, sensors=[scan], num_envs=2, terrain=False
    )
    sensor = scene["scan"]
    scene.update(0.02)
    x = sensor.pattern_b[:, 0]
    expected = torch.where(x < -0.06, 0.0, torch.where(x > 0.06, 0.3, torch.nan))
    known = ~torch.isnan(expected)
    torch.testing.assert_close(sensor.heights[0][known], expected[known], atol=1e-4, rtol=0)
    assert sensor.heights.shape == (2, sensor.num_rays)


def test_ray_misses_report_the_max_distance():
    def probe():
        spec = mujoco.MjSpec()
        spec.worldbody.add_body(name="probe", pos=[0, 0, 1.0]).add_geom(size=[0.05, 0, 0], group=3)
        return spec

    scan = HeightScanCfg(
        name="scan", entity="ground", body_name="probe", size=(0.2, 0.2), max_distance=3.0
    )
    scene, _ = _scene(
        {"ground": EntityCfg(spec_fn=probe, init_state=InitialStateCfg())},
        sensors=[scan],
        num_envs=1,
        terrain=False,
    )
    scene.update(0.02)
    torch.testing.assert_close(
        scene["scan"].heights, torch.full_like(scene["scan"].heights, 1.5 - 3.0)
    )


def test_scene_entity_cfg_preserve_order_follows_the_patterns():
    from mjlab.managers import SceneEntityCfg

    cfg = EntityCfg(spec_fn=lambda: mujoco.MjSpec.from_string(_ARM_REVERSED_XML))
    scene, _ = _scene({"arm": cfg}, num_envs=1, terrain=False)
    entity_order = SceneEntityCfg("arm", joint_names=("c", "a|b"))
    entity_order.resolve(scene)
    assert entity_order.joint_ids == [0, 1, 2]
    listed = SceneEntityCfg("arm", joint_names=("c", "a|b", "a"), preserve_order=True)
    listed.resolve(scene)
    assert listed.joint_ids == [2, 0, 1]  # c first; "a" again is kept at its first place


def test_cameras_and_lights_on_the_entity_worldbody_are_found():
    from mjlab.entity import CameraCfg, LightCfg

    xml = """
    <mujoco><worldbody><body name="b"><freejoint/><geom type="sphere" size="0.1"/>
    <camera name="onbody"/></body></worldbody></mujoco>"""
    cfg = EntityCfg(
        spec_fn=lambda: mujoco.MjSpec.from_string(xml),
        cameras=(CameraCfg(name="overview", pos=(0.0, -2.0, 1.0)),),
        lights=(LightCfg(name="lamp", pos=(0.0, 0.0, 3.0)),),
    )
    scene, sim = _scene({"ball": cfg}, num_envs=2, terrain=False)
    ball = scene["ball"]
    _, names = ball.find_cameras(("overview", "onbody"))
    assert sorted(names) == ["onbody", "overview"]
    overview = ball.camera_ids_global[ball.camera_names.index("overview")]
    assert mujoco.mj_id2name(sim.mj_model, mujoco.mjtObj.mjOBJ_CAMERA, overview) == "ball/overview"
    _, lights = ball.find_lights("lamp")
    assert lights == ["lamp"]

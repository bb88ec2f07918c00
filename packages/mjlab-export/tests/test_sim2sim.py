"""sim2sim on real MuJoCo (and the Menagerie Go1): torch-free, needs mjlab-export[sim]."""

import numpy as np
import pytest

from mjlab.deploy import DeploymentMetadata, ObservationTermSpec, OnnxPolicy

mujoco = pytest.importorskip("mujoco")
pytest.importorskip("mujoco_menagerie")

from mjlab.deploy.sim2sim import Sim2Sim  # noqa: E402


def _c02_meta(observations=None) -> DeploymentMetadata:
    observations = observations or [
        ObservationTermSpec(name="lin", func="base_lin_vel", dim=3),
        ObservationTermSpec(name="ang", func="base_ang_vel", dim=3),
        ObservationTermSpec(name="gravity", func="projected_gravity", dim=3),
        ObservationTermSpec(name="q", func="joint_pos_rel", dim=3),
        ObservationTermSpec(name="qd", func="joint_vel_rel", dim=3),
        ObservationTermSpec(name="last", func="last_action", dim=3),
        ObservationTermSpec(name="cmd", func="generated_commands", dim=3),
    ]
    return DeploymentMetadata(
        task_id="c02",
        joint_names=["a", "b", "c"],
        stiffness=[1.0, 2.0, 3.0],
        damping=[0.1, 0.2, 0.3],
        effort_limit=[4.0, 5.0, 6.0],
        armature=[0.04, 0.05, 0.06],
        default_joint_pos=[0.1, 0.2, 0.3],
        action_scale=[0.5, 0.5, 0.5],
        action_offset=[0.1, 0.2, 0.3],
        observations=observations,
        step_dt=0.02,
        physics_dt=0.002,
        decimation=10,
        mujoco_options={"integrator": "implicitfast", "iterations": 7},
    )


@pytest.fixture
def c02_sim(tmp_path, c02_mjcf, make_policy):
    meta = _c02_meta()
    weight = np.zeros((meta.obs_dim, 3))
    weight[9:12] = np.eye(3)  # actions = joint_pos_rel, so that last_action is not zero
    policy = OnnxPolicy(make_policy(tmp_path / "c02.onnx", weight, np.zeros(3), meta))
    return Sim2Sim(policy, model=mujoco.MjModel.from_xml_string(c02_mjcf))


def test_each_actuator_gets_the_gains_of_the_joint_it_drives(c02_sim):
    # Case C02 in sim2sim: actuators are declared c, b, a; gains are mapped by transmission.
    m = c02_sim.model
    for joint, kp, kd, limit, armature in zip(
        "abc", [1.0, 2.0, 3.0], [0.1, 0.2, 0.3], [4.0, 5.0, 6.0], [0.04, 0.05, 0.06], strict=True
    ):
        act = m.actuator(f"act_{joint}").id
        assert m.actuator_gainprm[act, 0] == kp
        assert m.actuator_biasprm[act, 1] == -kp
        assert m.actuator_biasprm[act, 2] == -kd
        np.testing.assert_array_equal(m.actuator_forcerange[act], [-limit, limit])
        assert m.dof_armature[m.jnt_dofadr[m.joint(joint).id]] == armature
    assert m.opt.timestep == 0.002
    assert m.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    assert m.opt.iterations == 7
    # The reset pose is the default pose; targets follow joint order too.
    np.testing.assert_allclose(c02_sim.data.qpos[7:10], [0.1, 0.2, 0.3])
    c02_sim.step(np.zeros(3))
    for joint, target in zip("abc", [0.1, 0.2, 0.3], strict=True):
        assert c02_sim.data.ctrl[m.actuator(f"act_{joint}").id] == pytest.approx(target)


def test_observation_terms_are_computed_from_the_mujoco_state(c02_sim):
    m, d = c02_sim.model, c02_sim.data
    rng = np.random.default_rng(0)
    quat = rng.standard_normal(4)
    d.qpos[3:7] = quat / np.linalg.norm(quat)
    d.qpos[7:10] = [0.5, -0.4, 0.3]
    d.qvel[:] = rng.standard_normal(m.nv)
    c02_sim.command[:] = [0.3, -0.1, 0.7]
    c02_sim.last_action[:] = [1.0, 2.0, 3.0]
    mujoco.mj_forward(m, d)
    obs = c02_sim.observe()
    # Independent reference: the base body's rotation matrix and MuJoCo's local object velocity.
    base = m.body("base").id
    rot = d.xmat[base].reshape(3, 3)
    velocity = np.zeros(6)  # [angular, linear] in the body frame
    mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, base, velocity, 1)
    np.testing.assert_allclose(obs["lin"], velocity[3:], atol=1e-12)
    np.testing.assert_allclose(obs["ang"], velocity[:3], atol=1e-12)
    np.testing.assert_allclose(obs["gravity"], rot.T @ [0.0, 0.0, -1.0], atol=1e-12)
    np.testing.assert_allclose(obs["q"], [0.4, -0.6, 0.0], atol=1e-12)
    np.testing.assert_allclose(obs["qd"], d.qvel[6:9])
    np.testing.assert_array_equal(obs["last"], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(obs["cmd"], [0.3, -0.1, 0.7])


def test_last_action_starts_at_zero_and_holds_the_previous_action(c02_sim):
    assert not c02_sim.observe()["last"].any()
    c02_sim.data.qpos[7:10] = [0.2, 0.3, 0.4]  # joint_pos_rel = 0.1 each -> action 0.1 each
    mujoco.mj_forward(c02_sim.model, c02_sim.data)
    c02_sim.step()
    np.testing.assert_allclose(c02_sim.observe()["last"], [0.1, 0.1, 0.1], atol=1e-6)
    c02_sim.reset()
    assert not c02_sim.observe()["last"].any()


def test_an_upside_down_base_counts_as_a_fall(c02_sim):
    assert not c02_sim.fallen()
    c02_sim.data.qpos[3:7] = [0.0, 1.0, 0.0, 0.0]  # 180 deg about x
    mujoco.mj_forward(c02_sim.model, c02_sim.data)
    np.testing.assert_allclose(c02_sim.observe()["gravity"], [0.0, 0.0, 1.0], atol=1e-12)
    assert c02_sim.fallen()


def test_unknown_observation_func_is_refused_with_the_supported_list(
    tmp_path, c02_mjcf, make_policy
):
    meta = _c02_meta([ObservationTermSpec(name="height", func="height_scan", dim=3)])
    policy = OnnxPolicy(make_policy(tmp_path / "p.onnx", np.zeros((3, 3)), np.zeros(3), meta))
    with pytest.raises(ValueError, match=r"'height' \(func 'height_scan'\).*base_lin_vel"):
        Sim2Sim(policy, model=mujoco.MjModel.from_xml_string(c02_mjcf))


def test_zero_action_policy_keeps_go1_standing_for_one_second(tmp_path, go1_meta, make_policy):
    path = make_policy(tmp_path / "zero.onnx", np.zeros((48, 12)), np.zeros(12), go1_meta)
    sim = Sim2Sim(path)
    # The go1 entry has no floor: sim2sim adds one; the training options replace go1.xml's.
    assert any(sim.model.geom_type == mujoco.mjtGeom.mjGEOM_PLANE)
    assert sim.model.nlight >= 1
    assert sim.model.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL  # go1.xml says elliptic
    assert sim.model.opt.timestep == go1_meta.physics_dt
    np.testing.assert_allclose(sim.data.qpos[:3], [0.0, 0.0, 0.3])
    report = sim.run(seconds=1.0, command=(0.0, 0.0, 0.0))
    assert report.falls == 0
    assert report.seconds == pytest.approx(1.0)
    assert sim.data.qpos[2] > 0.2  # trunk still up
    assert report.distance < 0.1 and report.lin_vel_error < 0.2
    # The soft 10 Hz servos sag under the body weight (rear calves ~0.17 rad) but hold the pose.
    np.testing.assert_allclose(sim.data.qpos[sim.qpos_adr], go1_meta.default_joint_pos, atol=0.25)


@pytest.mark.slow  # EGL context + encoding: ~5-10 s on a shared CPU
def test_run_writes_a_video_of_the_robot(tmp_path, go1_meta, make_policy):
    pytest.importorskip("imageio")
    path = make_policy(tmp_path / "zero.onnx", np.zeros((48, 12)), np.zeros(12), go1_meta)
    sim = Sim2Sim(path)
    report = sim.run(seconds=0.2, command=(0.0, 0.0, 0.0), video=tmp_path / "out" / "run.mp4")
    assert len(report.frames) == 10 and report.frames[0].shape == (480, 640, 3)
    assert report.frames[-1].std() > 5  # an image, not a blank frame
    assert (tmp_path / "out" / "run.mp4").stat().st_size > 1000


@pytest.mark.parametrize("with_pair", [True, False])
def test_sim2sim_warns_when_the_robot_cannot_touch_the_floor(with_pair):
    from types import SimpleNamespace

    from mjlab.deploy.mujoco_robot import _check_ground_contact

    pair = '<contact><pair geom1="foot" geom2="floor"/></contact>' if with_pair else ""
    m = mujoco.MjModel.from_xml_string(
        f"""<mujoco><worldbody><geom name="floor" type="plane" size="1 1 .1"/>
        <body pos="0 0 .2"><freejoint/>
        <geom name="foot" type="sphere" size=".05" contype="0" conaffinity="0"/></body>
        </worldbody>{pair}</mujoco>"""
    )
    meta = SimpleNamespace(robot=SimpleNamespace(entry="g1_mjx"))
    robot = [g for g in range(m.ngeom) if m.geom_bodyid[g] != 0]
    if with_pair:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _check_ground_contact(m, robot, meta)
    else:
        with pytest.warns(UserWarning, match="no geom of the robot can touch the floor.*scene_mjx"):
            _check_ground_contact(m, robot, meta)

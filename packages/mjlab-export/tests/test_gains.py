"""Case C02: per-joint gains follow joint order, never actuator declaration order."""

import numpy as np
import pytest

from mjlab.deploy import DeploymentMetadata, ObservationTermSpec, OnnxPolicy
from mjlab.deploy.gains import joint_gains_from_model

mujoco = pytest.importorskip("mujoco")


def test_gains_read_from_the_model_follow_joint_order_not_actuator_order(c02_mjcf):
    model = mujoco.MjModel.from_xml_string(c02_mjcf)
    assert [model.actuator(i).name for i in range(model.nu)] == ["act_c", "act_b", "act_a"]
    gains = joint_gains_from_model(model, ["a", "b", "c"])
    np.testing.assert_array_equal(gains.stiffness, [10.0, 20.0, 30.0])
    np.testing.assert_array_equal(gains.damping, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(gains.effort_limit, [11.0, 22.0, 33.0])
    np.testing.assert_allclose(gains.armature, [0.01, 0.02, 0.03])
    # Any requested order is honoured.
    np.testing.assert_array_equal(joint_gains_from_model(model, ["c", "a"]).stiffness, [30.0, 10.0])


def test_deploy_runtime_applies_c02_gains_in_joint_order(tmp_path, c02_mjcf, make_policy):
    model = mujoco.MjModel.from_xml_string(c02_mjcf)
    gains = joint_gains_from_model(model, ["a", "b", "c"])
    meta = DeploymentMetadata(
        task_id="c02",
        joint_names=["a", "b", "c"],
        stiffness=gains.stiffness,
        damping=gains.damping,
        effort_limit=gains.effort_limit,
        armature=gains.armature,
        default_joint_pos=[0.1, 0.2, 0.3],
        action_scale=[1.0, 2.0, 3.0],
        action_offset=[0.1, 0.2, 0.3],
        observations=[ObservationTermSpec(name="q", func="joint_pos_rel", dim=3)],
        step_dt=0.02,
        physics_dt=0.002,
        decimation=10,
    )
    assert meta.flat_items()["joint_stiffness"] == "10.0,20.0,30.0"
    policy = OnnxPolicy(make_policy(tmp_path / "c02.onnx", np.eye(3), np.zeros(3), meta))
    q_target, kp, kd = policy.joint_targets(np.array([1.0, 1.0, 1.0]))
    np.testing.assert_allclose(q_target, [1.1, 2.2, 3.3])
    np.testing.assert_array_equal(kp, [10.0, 20.0, 30.0])
    np.testing.assert_array_equal(kd, [1.0, 2.0, 3.0])


def test_prefixed_scene_joints_are_found_by_their_mjcf_name(c02_mjcf):
    # mjlab scenes attach each entity with a prefix ("robot/a"); metadata keeps the MJCF name.
    spec = mujoco.MjSpec()
    child = mujoco.MjSpec.from_string(c02_mjcf)
    spec.worldbody.add_frame().attach_body(child.body("base"), "robot/", "")
    model = spec.compile()
    assert model.joint(1).name == "robot/a" and model.nu == 3
    gains = joint_gains_from_model(model, ["a", "b", "c"])
    np.testing.assert_array_equal(gains.stiffness, [10.0, 20.0, 30.0])


def test_joint_without_a_position_actuator_is_named():
    model = mujoco.MjModel.from_xml_string(
        """<mujoco><worldbody><body><joint name="j" type="hinge"/>
        <geom size="0.1"/></body></worldbody>
        <actuator><motor name="m" joint="j"/></actuator></mujoco>"""
    )
    with pytest.raises(ValueError, match="Actuator 'm' of joint 'j' is not a position"):
        joint_gains_from_model(model, ["j"])
    with pytest.raises(ValueError, match="Joint 'x' is not in the model"):
        joint_gains_from_model(model, ["x"])

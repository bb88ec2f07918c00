"""mjlab 1.6's action terms: BaseAction(Cfg), relative joint positions, tendon and site actuator
commands, and differential IK on the Franka Panda."""

from __future__ import annotations

import dataclasses
import math

import mujoco
import numpy as np
import pytest
import torch

from mjlab.entity import EntityCfg
from mjlab.envs import ManagerBasedRlEnv, ManagerBasedRlEnvCfg, mdp
from mjlab.envs.mdp.differential_ik import FrameJacobian
from mjlab.scene import SceneCfg
from mjlab.sim import MujocoCfg, Simulation, SimulationCfg
from mjlab.tasks.robots import menagerie_spec
from mjlab.tasks.robots.panda import GRIPPER_SITE, HAND_BODY, panda_entity_cfg
from mjlab.utils.math import axis_angle_from_quat, quat_conjugate, quat_from_angle_axis, quat_mul

# A two-link planar arm (hinges about y, links along x) with two fixed tendons: "sum" (shoulder +
# elbow) with a position servo and a motor, "diff" (shoulder - elbow) with a velocity servo,
# and a motor pushing the tip site along its z axis.
TENDON_XML = """
<mujoco>
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1"/>
      <site name="mid" pos="0.15 0 0"/>
      <body name="lower" pos="0.3 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0" damping="0.05"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.025" mass="0.5"/>
        <site name="tip" pos="0.3 0 0"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="sum"><joint joint="shoulder" coef="1"/><joint joint="elbow" coef="1"/></fixed>
    <fixed name="diff"><joint joint="shoulder" coef="1"/><joint joint="elbow" coef="-1"/></fixed>
  </tendon>
  <actuator>
    <position name="sum_servo" tendon="sum" kp="50" kv="5"/>
    <velocity name="diff_servo" tendon="diff" kv="5"/>
    <motor name="sum_motor" tendon="sum"/>
    <motor name="tip_push" site="tip" gear="0 0 1 0 0 0"/>
  </actuator>
</mujoco>
"""

# The same arm with position servos on its joints.
JOINT_XML = """
<mujoco>
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0" damping="1"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1"/>
      <body name="lower" pos="0.3 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0" damping="1"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.025" mass="0.5"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="shoulder_servo" joint="shoulder" kp="100"/>
    <position name="elbow_servo" joint="elbow" kp="50"/>
  </actuator>
</mujoco>
"""


def _arm_env(xml: str, actions: dict, num_envs: int = 3) -> ManagerBasedRlEnv:
    cfg = ManagerBasedRlEnvCfg(
        decimation=2,
        episode_length_s=100.0,
        scene=SceneCfg(
            num_envs=num_envs,
            entities={"arm": EntityCfg(spec_fn=lambda: mujoco.MjSpec.from_string(xml))},
        ),
        sim=SimulationCfg(mujoco=MujocoCfg(timestep=0.005, gravity=(0.0, 0.0, 0.0))),
        actions=actions,
    )
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    return env


def _ctrl(env: ManagerBasedRlEnv, actuator: str) -> torch.Tensor:
    return env.sim.data.ctrl[:, env.sim.mj_model.actuator(f"arm/{actuator}").id].float()


def _tendon(env: ManagerBasedRlEnv, field: str, tendon: str) -> torch.Tensor:
    return getattr(env.sim.data, field)[:, env.sim.mj_model.tendon(f"arm/{tendon}").id].float()


# -- names and the base class ----------------------------------------------------------------------
def test_mjlab16_names_and_config_fields():
    fields = {
        "BaseActionCfg": (
            "transmission_type",
            "actuator_names",
            "scale",
            "offset",
            "preserve_order",
        ),
        "DifferentialIKActionCfg": (
            "actuator_names",
            "frame_type",
            "frame_name",
            "use_relative_mode",
            "delta_pos_scale",
            "delta_ori_scale",
            "damping",
            "max_dq",
            "position_weight",
            "orientation_weight",
            "joint_limit_weight",
            "posture_weight",
            "posture_target",
        ),
    }
    for name, wanted in fields.items():
        have = {f.name for f in dataclasses.fields(getattr(mdp, name))}
        assert not set(wanted) - have, (name, set(wanted) - have)
    for kind in ("RelativeJointPosition", "TendonLength", "TendonVelocity", "TendonEffort"):
        assert issubclass(getattr(mdp, f"{kind}Action"), mdp.BaseAction)
        assert issubclass(getattr(mdp, f"{kind}ActionCfg"), mdp.BaseActionCfg)
    assert issubclass(mdp.SiteEffortAction, mdp.BaseAction)
    assert "cfg" in mdp.BaseAction.__annotations__
    assert "cfg" in mdp.DifferentialIKAction.__annotations__
    # The joint terms are BaseActions with the joint transmission.
    for kind in ("Position", "Velocity", "Effort"):
        assert issubclass(getattr(mdp, f"Joint{kind}Action"), mdp.BaseAction)
        cfg = getattr(mdp, f"Joint{kind}ActionCfg")()
        assert isinstance(cfg, mdp.BaseActionCfg)
        assert cfg.transmission_type.value == "joint" and cfg.preserve_order is False


def test_a_joint_term_keeps_its_attributes_and_gains_the_base_spellings():
    env = _arm_env(
        JOINT_XML,
        {"pos": mdp.JointPositionActionCfg(entity_name="arm", scale={"shoulder": 0.5, "elbow": 2})},
    )
    term = env.action_manager.terms["pos"]
    assert term.joint_names == term.target_names == ["shoulder", "elbow"]
    assert term.joint_ids == [0, 1] and term.target_ids.tolist() == [0, 1]
    assert term.scale.tolist() == [0.5, 2.0] and term._scale is term.scale
    assert term.offset.shape == (3, 2) and term.action_dim == 2
    env.step(torch.tensor([[0.2, 0.1]]).repeat(3, 1))
    assert torch.allclose(term._processed_actions, torch.tensor([0.1, 0.2]).expand(3, 2))
    assert term.raw_action is term.raw_actions and term._raw_actions is term.raw_actions
    assert term._entity is env.scene["arm"] and term._env is env
    assert term.num_envs == 3 and str(term.device) == "cpu"


def test_preserve_order_orders_the_targets_as_the_regexes_are_listed():
    env = _arm_env(
        JOINT_XML,
        {
            "pos": mdp.JointPositionActionCfg(
                entity_name="arm",
                actuator_names=("elbow", "shoulder"),
                preserve_order=True,
                use_default_offset=False,
            )
        },
    )
    term = env.action_manager.terms["pos"]
    assert term.joint_names == ["elbow", "shoulder"] and term.joint_ids == [1, 0]
    env.step(torch.tensor([[0.3, -0.1]]).repeat(3, 1))
    assert torch.allclose(_ctrl(env, "elbow_servo"), torch.full((3,), 0.3))
    assert torch.allclose(_ctrl(env, "shoulder_servo"), torch.full((3,), -0.1))


@dataclasses.dataclass(kw_only=True)
class _DoubledTargetCfg(mdp.BaseActionCfg):
    """Written the mjlab 1.6 way: no class_type, a build() method."""

    def build(self, env):
        return _DoubledTarget(self, env)


class _DoubledTarget(mdp.BaseAction):
    """Position targets twice the processed action, through mjlab 1.6's attribute names."""

    def apply_actions(self) -> None:
        self._entity.set_joint_position_target(
            2.0 * self._processed_actions, joint_ids=self._target_ids.tolist()
        )


@dataclasses.dataclass(kw_only=True)
class _TaggedPositionCfg(mdp.JointPositionActionCfg):
    """A concrete config subclassed the mjlab 1.6 way: build() wraps the parent's."""

    def build(self, env):
        term = super().build(env)
        term.built_by = type(self).__name__
        return term


def test_a_config_overriding_build_is_constructed_through_it():
    env = _arm_env(JOINT_XML, {"pos": _TaggedPositionCfg(entity_name="arm")})
    term = env.action_manager.terms["pos"]
    assert isinstance(term, mdp.JointPositionAction)
    assert term.built_by == "_TaggedPositionCfg"
    # A plain concrete config keeps its class_type (no detour through build()).
    assert mdp.JointPositionActionCfg().class_type is mdp.JointPositionAction


def test_a_base_action_subclass_in_mjlab16_style_runs_in_the_env():
    cfg = _DoubledTargetCfg(entity_name="arm", actuator_names=(".*",), scale=0.5, offset=0.1)
    env = _arm_env(JOINT_XML, {"doubled": cfg})
    term = env.action_manager.terms["doubled"]
    assert isinstance(term, _DoubledTarget) and term.action_dim == 2
    action = torch.tensor([[0.4, -0.6], [0.0, 0.2], [1.0, 1.0]])
    env.step(action)
    expected = 2.0 * (0.5 * action + 0.1)
    assert torch.allclose(_ctrl(env, "shoulder_servo"), expected[:, 0])
    assert torch.allclose(_ctrl(env, "elbow_servo"), expected[:, 1])
    env.reset(env_ids=torch.tensor([1]))
    assert term.raw_action[1].abs().sum() == 0 and term.raw_action[0].abs().sum() > 0
    # A BaseActionCfg with neither a term class nor build() says which field is missing.
    with pytest.raises(ValueError, match="class_type"):
        mdp.BaseActionCfg(actuator_names=(".*",)).build(env)


# -- relative joint positions ---------------------------------------------------------------------
def test_relative_joint_position_targets_move_from_the_current_position():
    cfg = mdp.RelativeJointPositionActionCfg(
        entity_name="arm", actuator_names=(".*",), scale=0.1, clip=(-0.05, 0.05)
    )
    env = _arm_env(JOINT_XML, {"rel": cfg})
    arm = env.scene["arm"]
    action = torch.tensor([[1.0, -0.2], [0.3, 0.0], [-1.0, 0.4]])
    delta = (0.1 * action).clamp(-0.05, 0.05)  # the clip bounds the delta
    for _ in range(3):
        before = arm.data.joint_pos.clone()
        env.step(action)
        assert torch.allclose(arm.data.joint_pos_target, before + delta, atol=1e-6)
        moved = arm.data.joint_pos - before
        # Every joint with a nonzero delta moved toward its new target.
        assert bool((moved[delta != 0] * delta[delta != 0] > 0).all())
    assert env.action_manager.terms["rel"].describe()["action_type"] is None


# -- tendon and site actuators ----------------------------------------------------------------------
def test_tendon_and_site_terms_write_the_ctrl_of_their_actuators():
    env = _arm_env(
        TENDON_XML,
        {
            "length": mdp.TendonLengthActionCfg(
                entity_name="arm", actuator_names=("sum",), scale=0.5, offset=0.01
            ),
            "velocity": mdp.TendonVelocityActionCfg(
                entity_name="arm", actuator_names=("diff",), scale=2.0
            ),
            "effort": mdp.TendonEffortActionCfg(
                entity_name="arm", actuator_names=("sum",), scale=3.0, clip=(-1.0, 1.0)
            ),
            "push": mdp.SiteEffortActionCfg(entity_name="arm", actuator_names=("tip",), scale=-1.0),
        },
    )
    model = env.sim.mj_model
    terms = env.action_manager.terms
    for name, actuator in (
        ("length", "sum_servo"),
        ("velocity", "diff_servo"),
        ("effort", "sum_motor"),
        ("push", "tip_push"),
    ):
        assert terms[name].actuator_ids == [model.actuator(f"arm/{actuator}").id]
        assert terms[name].action_dim == 1
    action = torch.tensor([[0.2, 0.1, 0.5, 0.4], [-0.2, -0.3, -0.1, 0.0], [0.0, 0.0, 0.0, 1.0]])
    env.step(action)
    assert torch.allclose(_ctrl(env, "sum_servo"), 0.5 * action[:, 0] + 0.01)
    assert torch.allclose(_ctrl(env, "diff_servo"), 2.0 * action[:, 1])
    assert torch.allclose(_ctrl(env, "sum_motor"), (3.0 * action[:, 2]).clamp(-1, 1))
    assert torch.allclose(_ctrl(env, "tip_push"), -action[:, 3])


def test_tendon_length_action_brings_the_tendon_to_its_target_length():
    env = _arm_env(
        TENDON_XML, {"length": mdp.TendonLengthActionCfg(entity_name="arm", actuator_names="sum")}
    )
    target = torch.tensor([[0.1], [-0.2], [0.3]])
    for _ in range(150):  # 1.5 s
        env.step(target)
    assert torch.allclose(_tendon(env, "ten_length", "sum"), target[:, 0], atol=2e-3)


def test_tendon_velocity_action_drives_the_tendon_at_its_target_rate():
    env = _arm_env(
        TENDON_XML,
        {"velocity": mdp.TendonVelocityActionCfg(entity_name="arm", actuator_names=("diff",))},
    )
    target = torch.tensor([[0.5], [-0.3], [0.0]])
    for _ in range(50):  # 0.5 s
        env.step(target)
    rate = _tendon(env, "ten_velocity", "diff")
    assert torch.allclose(rate, target[:, 0], atol=0.03)
    assert float(_tendon(env, "ten_length", "diff")[0]) > 0.1  # it did turn the joints


def test_tendon_effort_action_pulls_the_tendon_against_its_servo():
    env = _arm_env(
        TENDON_XML,
        {"effort": mdp.TendonEffortActionCfg(entity_name="arm", actuator_names=("sum",))},
    )
    force = torch.tensor([[1.0], [-2.0], [0.0]])
    for _ in range(150):
        env.step(force)
    force_on_tendon = env.sim.data.actuator_force[:, env.sim.mj_model.actuator("arm/sum_motor").id]
    assert torch.allclose(force_on_tendon.float(), force[:, 0])
    # The untouched position servo (kp 50 N/m, target 0) balances it at length force / kp.
    assert torch.allclose(_tendon(env, "ten_length", "sum"), force[:, 0] / 50.0, atol=1e-3)


def test_site_effort_action_applies_its_gear_force_at_the_site():
    env = _arm_env(
        TENDON_XML, {"push": mdp.SiteEffortActionCfg(entity_name="arm", actuator_names=("tip",))}
    )
    term = env.action_manager.terms["push"]
    f = torch.tensor([[2.0], [-1.0], [0.5]])
    term.process_actions(f)
    term.apply_actions()
    env.sim.forward()
    # A force f along world z at the tip (0.6 m out along x): torque -0.6 f about the shoulder's
    # y axis and -0.3 f about the elbow's.
    qfrc = env.sim.data.qfrc_actuator.float()
    assert torch.allclose(qfrc, torch.cat([-0.6 * f, -0.3 * f], dim=1), atol=1e-6)


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        (
            mdp.TendonVelocityActionCfg(entity_name="arm", actuator_names=("sum",)),
            r"tendon 'sum' .* no velocity actuators",
        ),
        (
            mdp.SiteEffortActionCfg(entity_name="arm", actuator_names=("mid",)),
            r"site 'mid' .* no effort actuators",
        ),
        (
            mdp.TendonLengthActionCfg(entity_name="arm", actuator_names=("nope",)),
            r"No tendon of entity 'arm' matches 'nope'",
        ),
    ],
)
def test_a_target_without_a_matching_actuator_is_named(cfg, message):
    with pytest.raises(ValueError, match=message):
        _arm_env(TENDON_XML, {"term": cfg}, num_envs=1)


# -- config errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: mdp.RelativeJointPositionActionCfg(offset=0.1), "offset"),
        (lambda: mdp.TendonLengthActionCfg(actuator_names=()), "actuator_names"),
        (
            lambda: mdp.TendonLengthActionCfg(actuator_names=("t",), transmission_type="site"),
            "transmission_type",
        ),
        (
            lambda: mdp.BaseActionCfg(actuator_names=("a",), transmission_type="muscle"),
            "transmission_type",
        ),
        (lambda: mdp.SiteEffortActionCfg(actuator_names=("s",), scale="big"), "scale"),
        (lambda: mdp.TendonEffortActionCfg(actuator_names=("t",), preserve_order=1), "preserve"),
        (lambda: _ik(frame_type="camera"), "frame_type"),
        (lambda: _ik(frame_name=""), "frame_name"),
        (lambda: _ik(damping=-0.1), "damping"),
        (lambda: _ik(max_dq=0.0), "max_dq"),
        (lambda: _ik(position_weight=math.nan), "position_weight"),
        (lambda: _ik(position_weight=0.0, orientation_weight=0.0), "orientation_weight"),
        (lambda: _ik(joint_limit_weight=-1.0), "joint_limit_weight"),
        (lambda: _ik(posture_target={"joint1": "up"}), "posture_target"),
        (lambda: _ik(delta_pos_scale=math.inf), "delta_pos_scale"),
        (lambda: _ik(actuator_names=[]), "actuator_names"),
    ],
)
def test_config_errors_name_the_field(make, field):
    with pytest.raises(ValueError, match=field):
        make()


# -- differential IK on the Panda -----------------------------------------------------------------
def _ik(**changes) -> mdp.DifferentialIKActionCfg:
    fields = dict(
        entity_name="robot",
        actuator_names=("joint[1-7]",),
        frame_type="site",
        frame_name=GRIPPER_SITE,
    )
    fields.update(changes)
    return mdp.DifferentialIKActionCfg(**fields)


def _compensated_panda_spec() -> mujoco.MjSpec:
    """Menagerie's Panda with gravity compensation on every link (as the robot's controller
    has): position servos sag under gravity otherwise, and the IK, which steps from the
    measured joints, settles short of the target by that sag."""
    spec = menagerie_spec("franka_emika_panda", "mjx_panda")
    for body in spec.bodies:
        if body.name != "world":
            body.gravcomp = 1.0
    return spec


def _panda_env(actions: dict, num_envs: int = 2) -> ManagerBasedRlEnv:
    robot = dataclasses.replace(panda_entity_cfg(), spec_fn=_compensated_panda_spec)
    cfg = ManagerBasedRlEnvCfg(
        decimation=4,
        episode_length_s=100.0,
        scene=SceneCfg(num_envs=num_envs, entities={"robot": robot}),
        sim=SimulationCfg(mujoco=MujocoCfg(timestep=0.005)),
        actions=actions,
    )
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    return env


def _errors(term) -> tuple[torch.Tensor, torch.Tensor]:
    pos_err, rot_err = term.pose_error()
    return pos_err.norm(dim=-1), rot_err.norm(dim=-1)


def test_the_frame_jacobian_is_mujocos_for_bodies_and_sites_in_every_world():
    env = _panda_env({"ik": _ik()}, num_envs=3)
    robot = env.scene["robot"]
    q = robot.data.default_joint_pos.clone()
    q[:, :7] += torch.tensor([[0.0] * 7, [0.3, -0.2, 0.1, 0.4, -0.5, 0.2, 0.7], [-0.6] + [0.2] * 6])
    robot.write_joint_state_to_sim(q, torch.zeros_like(q))
    env.sim.forward()
    model = env.sim.mj_model
    dofs = [int(model.jnt_dofadr[robot.joint_ids_global[j]]) for j in range(9)]
    for frame_type, name in (("site", GRIPPER_SITE), ("body", HAND_BODY)):
        obj = model.site(f"robot/{name}") if frame_type == "site" else model.body(f"robot/{name}")
        frame = FrameJacobian(env.sim, frame_type, obj.id, dofs)
        pos, _ = frame.pose()
        jacp, jacr = frame.jacobian(pos)
        assert jacp.shape == jacr.shape == (3, 3, 9)
        for w in range(3):
            data = env.sim.get_data(w)
            want_p, want_r = np.zeros((3, model.nv)), np.zeros((3, model.nv))
            jac = mujoco.mj_jacSite if frame_type == "site" else mujoco.mj_jacBody
            jac(model, data, want_p, want_r, obj.id)
            np.testing.assert_allclose(jacp[w].numpy(), want_p[:, dofs], atol=1e-5)
            np.testing.assert_allclose(jacr[w].numpy(), want_r[:, dofs], atol=1e-5)
            xpos = data.site_xpos[obj.id] if frame_type == "site" else data.xpos[obj.id]
            np.testing.assert_allclose(pos[w].numpy(), xpos, atol=1e-6)
        assert float((jacp[1] - jacp[0]).abs().max()) > 0.05  # the worlds differ
    assert float(jacp[:, :, 7:].abs().max()) == 0.0  # the fingers do not move the hand


def test_absolute_pose_targets_are_reached_within_millimetres():
    env = _panda_env({"ik": _ik(use_relative_mode=False)})
    term = env.action_manager.terms["ik"]
    assert term.action_dim == 7
    pos, quat = term.frame_pose()
    goal_pos = pos + torch.tensor([[0.1, -0.15, -0.1], [-0.1, 0.2, 0.1]])
    turn = quat_from_angle_axis(torch.tensor([0.4, 0.5]), torch.tensor([[0.0, 0, 1], [1, 1, 0]]))
    goal_quat = quat_mul(turn, quat)
    # The quaternion need not be unit: the term normalizes it.
    action = torch.cat([goal_pos, 3.0 * goal_quat], dim=-1)
    start_pos, start_rot = None, None
    for i in range(150):
        env.step(action)
        if i == 0:
            start_pos, start_rot = _errors(term)
    pos, quat = term.frame_pose()
    pos_err = (goal_pos - pos).norm(dim=-1)
    rot_err = axis_angle_from_quat(quat_mul(goal_quat, quat_conjugate(quat))).norm(dim=-1)
    assert float(start_pos.min()) > 0.1 and float(start_rot.min()) > 0.2  # far at first
    assert float(pos_err.max()) < 3e-3 and float(rot_err.max()) < 1e-2


def test_relative_position_commands_walk_the_site_to_a_target():
    env = _panda_env({"ik": _ik(orientation_weight=0.0, delta_pos_scale=0.02)})
    term = env.action_manager.terms["ik"]
    assert term.action_dim == 3
    start, _ = term.frame_pose()
    # Zero deltas hold the pose.
    for _ in range(5):
        env.step(torch.zeros(2, 3))
    assert float((term.frame_pose()[0] - start).norm(dim=-1).max()) < 1e-3
    goal = start + torch.tensor([[0.05, 0.1, -0.15], [-0.15, -0.1, 0.05]])
    for _ in range(120):
        pos, _ = term.frame_pose()
        # A policy that asks for at most 2 cm per step (the action is scaled by 0.02 m).
        env.step(((goal - pos) / 0.02).clamp(-1.0, 1.0))
    assert float((term.frame_pose()[0] - goal).norm(dim=-1).max()) < 3e-3


def test_relative_pose_action_turns_the_target_by_a_world_rotation_vector():
    env = _panda_env({"ik": _ik(delta_pos_scale=0.1, delta_ori_scale=0.5)})
    term = env.action_manager.terms["ik"]
    assert term.action_dim == 6
    pos, quat = term.frame_pose()
    action = torch.tensor([[0.2, 0.0, -0.1, 0.0, 0.0, 0.6], [0.0, 0.3, 0.0, 0.4, 0.0, 0.0]])
    term.process_actions(action)
    assert torch.allclose(term.desired_pos, pos + 0.1 * action[:, :3], atol=1e-6)
    rotvec = 0.5 * action[:, 3:]
    want = quat_mul(quat_from_angle_axis(rotvec.norm(dim=-1), rotvec), quat)
    assert torch.allclose(term.desired_quat, want, atol=1e-6)
    # The pose error is the commanded delta, rotation vector included.
    pos_err, rot_err = term.pose_error()
    assert torch.allclose(pos_err, 0.1 * action[:, :3], atol=1e-6)
    assert torch.allclose(rot_err, rotvec, atol=1e-5)
    term.reset(torch.tensor([1]))
    assert term.desired_quat[1].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert term.desired_pos[1].abs().sum() == 0 and term.desired_pos[0].abs().sum() > 0


def test_max_dq_joint_limits_and_posture_shape_the_ik_step():
    env = _panda_env(
        {
            "plain": _ik(orientation_weight=0.0),
            "slow": _ik(orientation_weight=0.0, max_dq=0.05),
            "limits": _ik(orientation_weight=0.0, joint_limit_weight=1.0),
            "posture": _ik(
                orientation_weight=0.0, posture_weight=1.0, posture_target={"joint7": -0.4853}
            ),
        },
        num_envs=1,
    )
    terms = env.action_manager.terms
    robot = env.scene["robot"]
    for term in terms.values():
        term.process_actions(torch.zeros(1, 3))  # hold the current position
    assert float(terms["plain"].compute_dq().abs().max()) < 1e-4
    # The posture residual turns joint7 (which does not move the gripper site, on its axis)
    # from the default -0.7853 rad toward -0.4853; nothing else moves.
    dq = terms["posture"].compute_dq()[0]
    assert dq[6].item() == pytest.approx(0.3 / (1 + 0.05**2), abs=1e-3)
    assert float(dq[:6].abs().max()) < 0.01
    # A far target: every step is clamped to max_dq.
    terms["slow"].process_actions(torch.tensor([[0.5, 0.5, 0.5]]))
    assert float(terms["slow"].compute_dq().abs().max()) == pytest.approx(0.05)
    # joint4 beyond its upper limit (-0.0698 rad): the limit residual pushes it back.
    q = robot.data.default_joint_pos.clone()
    q[0, 3] = 0.1
    robot.write_joint_state_to_sim(q, torch.zeros_like(q))
    env.sim.forward()
    for term in terms.values():
        term.process_actions(torch.zeros(1, 3))
    assert float(terms["plain"].compute_dq().abs().max()) < 1e-4
    assert float(terms["limits"].compute_dq()[0, 3]) < -0.05


def test_a_frame_name_that_matches_nothing_is_named():
    with pytest.raises(ValueError, match=r"frame_name.*'no_such_site'"):
        _panda_env({"ik": _ik(frame_name="no_such_site")}, num_envs=1)


def test_the_ik_term_state_is_saved_and_restored_with_the_env():
    env = _panda_env({"ik": _ik(use_relative_mode=False, orientation_weight=0.0)}, num_envs=1)
    term = env.action_manager.terms["ik"]
    env.step(torch.tensor([[0.5, 0.1, 0.4]]))
    state = env.get_state()
    saved = term.desired_pos.clone()
    env.step(torch.tensor([[0.4, -0.1, 0.5]]))
    assert not torch.equal(term.desired_pos, saved)
    env.set_state(state)
    assert torch.equal(term.desired_pos, saved)


@pytest.mark.slow
@pytest.mark.warp
def test_the_frame_jacobian_on_mujoco_warp_matches_mujoco():
    model = menagerie_spec("franka_emika_panda", "mjx_panda").compile()
    sim = Simulation(2, SimulationCfg(backend="warp"), model, device="cpu")
    sim.data.qpos[:, :7] = torch.tensor(
        [[0, 0.3, 0, -1.57, 0, 2.0, -0.78], [0.4, -0.2, 0.3] * 2 + [0]]
    )
    sim.forward()
    site = model.site(GRIPPER_SITE).id
    frame = FrameJacobian(sim, "site", site, list(range(7)))
    pos, _ = frame.pose()
    jacp, jacr = frame.jacobian(pos)
    for w in range(2):
        data = mujoco.MjData(model)
        data.qpos[:] = sim.data.qpos[w].double().numpy()
        mujoco.mj_forward(model, data)
        want_p, want_r = np.zeros((3, model.nv)), np.zeros((3, model.nv))
        mujoco.mj_jacSite(model, data, want_p, want_r, site)
        np.testing.assert_allclose(jacp[w].numpy(), want_p[:, :7], atol=1e-5)
        np.testing.assert_allclose(jacr[w].numpy(), want_r[:, :7], atol=1e-5)

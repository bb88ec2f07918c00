"""mjlab.actuator: each actuator type gives the force its formula says, on a real model."""

import mujoco
import numpy as np
import pytest
import torch

from mjlab.actuator import (
    BuiltinDcMotorActuatorCfg,
    BuiltinMotorActuatorCfg,
    BuiltinMuscleActuatorCfg,
    BuiltinPdActuatorCfg,
    BuiltinPositionActuatorCfg,
    BuiltinVelocityActuatorCfg,
    CommandField,
    DcMotorActuatorCfg,
    DcMotorDatasheetParams,
    DcMotorPhysicalParams,
    IdealPdActuatorCfg,
    LearnedMlpActuatorCfg,
    PositionActuatorCfg,
    XmlActuatorCfg,
)
from mjlab.entity import EntityArticulationInfoCfg, EntityCfg
from mjlab.scene import Scene, SceneCfg
from mjlab.sim import Simulation, SimulationCfg

N = 3
ARM = """
<mujoco>
  <option timestep="0.002" gravity="0 0 0"/>
  <worldbody>
    <body name="l1">
      <joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1"/>
      <body name="l2" pos="0.3 0 0">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="1"/>
        <body name="l3" pos="0.3 0 0">
          <joint name="j3" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.03" mass="0.5"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="a1" joint="j1" kp="7"/>
    <velocity name="a2" joint="j2" kv="3"/>
    <motor name="a3" joint="j3" gear="2"/>
  </actuator>
</mujoco>
"""


def _arm(*actuators, sort=False, num_envs=N, backend="mujoco"):
    cfg = EntityCfg(
        spec_fn=lambda: mujoco.MjSpec.from_string(ARM),
        articulation=EntityArticulationInfoCfg(actuators=tuple(actuators)),
        sort_actuators=sort,
    )
    scene = Scene(SceneCfg(num_envs=num_envs, entities={"arm": cfg}, terrain=None))
    sim_cfg = SimulationCfg(nthread=1) if backend == "mujoco" else SimulationCfg(backend="warp")
    sim = Simulation(num_envs, sim_cfg, scene.compile())
    scene.initialize(sim)
    sim.reset(forward=False)
    scene.reset(torch.arange(num_envs))
    sim.forward()
    return scene["arm"], sim


def _random_state(arm, sim, seed=0):
    gen = torch.Generator().manual_seed(seed)
    q = torch.rand(N, 3, generator=gen) - 0.5
    qd = torch.rand(N, 3, generator=gen) * 4 - 2
    arm.write_joint_state_to_sim(q, qd)
    return q, qd


def test_target_names_expr_and_joint_names_expr_select_the_same_joints():
    a = PositionActuatorCfg(joint_names_expr=("j1",), stiffness=5.0, damping=1.0)
    b = BuiltinPositionActuatorCfg(target_names_expr=("j1",), stiffness=5.0, damping=1.0)
    assert a.names_expr == b.names_expr == ("j1",)
    with pytest.raises(ValueError, match="exactly one of target_names_expr"):
        BuiltinPositionActuatorCfg(stiffness=1.0, damping=0.0)
    with pytest.raises(ValueError, match="exactly one of target_names_expr"):
        BuiltinPositionActuatorCfg(
            target_names_expr=("j1",), joint_names_expr=("j1",), stiffness=1.0, damping=0.0
        )
    _, sim_a = _arm(a)
    _, sim_b = _arm(b)
    assert np.array_equal(sim_a.mj_model.actuator_gainprm, sim_b.mj_model.actuator_gainprm)


def test_builtin_position_velocity_motor_pd_forces_match_their_formulas():
    arm, sim = _arm(
        BuiltinPdActuatorCfg(target_names_expr=("j1",), stiffness=40.0, damping=2.0),
        BuiltinVelocityActuatorCfg(target_names_expr=("j2",), damping=3.0),
        BuiltinMotorActuatorCfg(target_names_expr=("j3",), effort_limit=1.5, gear=1.0),
    )
    q, qd = _random_state(arm, sim)
    target = torch.tensor([[0.3, -1.0, 4.0]]).repeat(N, 1)  # motor ctrl 4 is clipped to 1.5
    arm.set_joint_position_target(target)
    sim.forward()
    expected = torch.stack(
        [40.0 * (0.3 - q[:, 0]) - 2.0 * qd[:, 0], 3.0 * (-1.0 - qd[:, 1]), torch.full((N,), 1.5)],
        dim=1,
    )
    torch.testing.assert_close(arm.data.actuator_force, expected, atol=1e-5, rtol=1e-5)
    assert arm.data.joint_stiffness[0].tolist() == [40.0, 0.0, 0.0]


def test_viscous_damping_armature_frictionloss_reach_the_joints():
    _, sim = _arm(
        BuiltinPositionActuatorCfg(
            target_names_expr=("j.*",),
            stiffness=1.0,
            damping=0.0,
            viscous_damping={"j1": 0.7, "j[23]": 0.1},
            armature=0.02,
            frictionloss=0.3,
        )
    )
    m = sim.mj_model
    assert np.allclose(m.dof_damping, [0.7, 0.1, 0.1])
    assert np.allclose(m.dof_armature, 0.02) and np.allclose(m.dof_frictionloss, 0.3)


def test_ideal_pd_torque_is_clipped_pd_plus_feedforward_and_reported_to_export():
    arm, sim = _arm(
        IdealPdActuatorCfg(
            target_names_expr=("j.*",), stiffness=20.0, damping={"j.*": 0.5}, effort_limit=3.0
        )
    )
    q, qd = _random_state(arm, sim)
    pos_t, vel_t, eff = torch.full((N, 3), 0.2), torch.full((N, 3), 0.5), torch.full((N, 3), -0.4)
    arm.set_joint_position_target(pos_t)
    arm.set_joint_velocity_target(vel_t)
    arm.set_joint_effort_target(eff)
    sim.step(1)  # ctrl is computed from the state before the step
    expected = torch.clamp(20.0 * (pos_t - q) + 0.5 * (vel_t - qd) + eff, -3.0, 3.0)
    assert (expected.abs() == 3.0).any() and (expected.abs() < 3.0).any()
    torch.testing.assert_close(arm.data.actuator_force, expected, atol=1e-5, rtol=1e-5)
    gains = arm.data.nominal_gains
    assert gains["stiffness"].tolist() == [20.0] * 3 and gains["damping"].tolist() == [0.5] * 3
    assert gains["effort_limit"].tolist() == [3.0] * 3
    assert sim.mj_model.actuator_biastype.tolist() == [0, 0, 0]  # plain motors in the spec


def _dc_expected(tau, qd, sat, vmax, limit):
    upper = torch.clamp(sat * (1 - qd / vmax), min=0.0).clamp(max=limit)
    lower = torch.clamp(sat * (-1 - qd / vmax), max=0.0).clamp(min=-limit)
    return torch.maximum(torch.minimum(tau, upper), lower)


def test_dc_motor_from_datasheet_clips_pd_by_the_torque_speed_line():
    sheet = DcMotorDatasheetParams(nominal_voltage=24.0, stall_torque=6.0, no_load_speed=3.0)
    arm, sim = _arm(
        DcMotorActuatorCfg(
            target_names_expr=("j.*",),
            stiffness=100.0,
            damping=0.0,
            effort_limit=5.0,
            saturation_effort=sheet.saturation_effort,
            velocity_limit=sheet.velocity_limit,
        )
    )
    q = torch.tensor([[-0.5, 0.5, -0.5], [0.5, -0.5, 0.0], [-0.05, 0.0, 0.5]])
    qd = torch.tensor([[2.0, -2.0, -1.0], [2.5, 0.5, 0.0], [1.0, -4.0, 0.0]])
    arm.write_joint_state_to_sim(q, qd)
    arm.set_joint_position_target(torch.zeros(N, 3))
    sim.step(1)
    expected = _dc_expected(100.0 * (0.0 - q), qd, 6.0, 3.0, 5.0)
    torch.testing.assert_close(arm.data.actuator_force, expected, atol=1e-5, rtol=1e-5)
    # Moving at +2 rad/s, pushing forward: only 6 (1 - 2/3) = 2 N m left.
    assert abs(float(arm.data.actuator_force[0, 1]) - 0.0) > 0  # sanity: non-trivial state
    assert float(arm.data.actuator_force[0, 0]) == pytest.approx(2.0, abs=1e-5)
    physical = DcMotorPhysicalParams(kt=0.5, ke=8.0, resistance=1.0)
    assert physical.stall_torque(24.0) == 12.0 and physical.no_load_speed(24.0) == 3.0


def test_learned_mlp_reads_scaled_history_in_input_order(tmp_path):
    SAT, VMAX = 0.3, 2.0
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    path = tmp_path / "actuator_net.pt"
    torch.jit.script(net).save(str(path))
    cfg = LearnedMlpActuatorCfg(
        target_names_expr=("j1", "j2"),
        network_file=str(path),
        pos_scale=2.0,
        vel_scale=0.5,
        torque_scale=3.0,
        input_order="vel_pos",
        history_length=2,
        saturation_effort=SAT,
        velocity_limit=VMAX,
    )
    assert isinstance(cfg, DcMotorActuatorCfg)
    arm, sim = _arm(cfg, BuiltinMotorActuatorCfg(target_names_expr=("j3",), effort_limit=1.0))
    arm.write_joint_state_to_sim(torch.zeros(N, 3), torch.tensor([[1.0, -1.5, 0.0]]).repeat(N, 1))
    target = torch.tensor([[0.4, -0.2, 0.0]]).repeat(N, 1)
    arm.set_joint_position_target(target)
    errors, vels = [], []
    for _ in range(2):
        q, qd = arm.data.joint_pos[:, :2].clone(), arm.data.joint_vel[:, :2].clone()
        errors.append(target[:, :2] - q)
        vels.append(qd)
        sim.step(1)
    # Newest first: [v_t, v_{t-1}] * vel_scale then [e_t, e_{t-1}] * pos_scale.
    x = torch.cat(
        [
            torch.stack([vels[1], vels[0]], -1) * 0.5,
            torch.stack([errors[1], errors[0]], -1) * 2.0,
        ],
        -1,
    ).reshape(-1, 4)
    with torch.no_grad():
        raw = (net(x).reshape(N, 2) * 3.0).float()
    # The network's torque goes through the DC motor's torque-speed clip (mjlab 1.6).
    expected = _dc_expected(raw, vels[1], SAT, VMAX, float("inf"))
    torch.testing.assert_close(arm.data.actuator_force[:, :2], expected, atol=1e-5, rtol=1e-5)
    assert expected.abs().min() > 1e-3
    assert (expected != raw).any()  # the clip acts here


def test_xml_actuators_are_kept_as_written():
    arm, sim = _arm(XmlActuatorCfg(target_names_expr=("j.*",), command_field=CommandField.POSITION))
    plain = mujoco.MjModel.from_xml_string(ARM)
    m = sim.mj_model
    assert m.nu == 3
    assert np.array_equal(m.actuator_gainprm, plain.actuator_gainprm)
    assert np.array_equal(m.actuator_biasprm, plain.actuator_biasprm)
    assert np.array_equal(m.actuator_gear, plain.actuator_gear)
    assert arm.data.joint_stiffness[0].tolist() == [7.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="no actuator in the MJCF"):
        spec = mujoco.MjSpec.from_string(ARM)
        spec.delete(spec.actuators[2])
        XmlActuatorCfg(target_names_expr=("j3",)).apply(spec, [spec.joint("j3")])


def test_delayed_position_command_lags_by_the_drawn_steps():
    arm, sim = _arm(
        BuiltinPositionActuatorCfg(
            target_names_expr=("j.*",),
            stiffness=10.0,
            damping=0.0,
            delay_min_lag=2,
            delay_max_lag=2,
        )
    )
    sent = []
    for k in range(6):
        target = torch.full((N, 3), 0.1 * (k + 1))
        arm.set_joint_position_target(target)
        sent.append(target)
        sim.step(1)
        # ctrl of this step = the command of two steps ago (the reset's default pose before).
        expected = sent[k - 2] if k >= 2 else torch.zeros(N, 3)
        torch.testing.assert_close(sim.data.ctrl.float(), expected)


def test_random_delay_per_env_stays_in_range_and_resets():
    arm, sim = _arm(
        IdealPdActuatorCfg(
            target_names_expr=("j.*",),
            stiffness=1.0,
            damping=0.0,
            delay_min_lag=1,
            delay_max_lag=4,
            delay_update_period=3,
            delay_hold_prob=0.5,
        ),
    )
    buf = arm.fused_actuators.actuators[0].delay
    seen = set()
    for _ in range(30):
        arm.set_joint_position_target(torch.zeros(N, 3))
        sim.step(1)
        assert buf.lag.min() >= 1 and buf.lag.max() <= 4
        seen |= set(buf.lag.tolist())
    assert len(seen) > 1


def test_sort_actuators_orders_ctrl_as_the_joints():
    cfgs = (
        BuiltinMotorActuatorCfg(target_names_expr=("j3",), effort_limit=1.0),
        BuiltinPositionActuatorCfg(target_names_expr=("j1", "j2"), stiffness=2.0, damping=0.0),
    )
    _, unsorted = _arm(*cfgs)
    _, ordered = _arm(*cfgs, sort=True)
    jnt = lambda sim: sim.mj_model.actuator_trnid[:, 0].tolist()  # noqa: E731
    assert jnt(unsorted) == [2, 0, 1]
    assert jnt(ordered) == [0, 1, 2]


def test_builtin_dc_motor_and_muscle_compile_with_their_parameters():
    arm, sim = _arm(
        BuiltinDcMotorActuatorCfg(
            target_names_expr=("j1",),
            motor_params=DcMotorPhysicalParams(kt=0.05, ke=0.05, resistance=0.5),
            voltage_limit=24.0,
        ),
        BuiltinMuscleActuatorCfg(target_names_expr=("j2",), length_range=(0.0, 1.0), force=50.0),
    )
    m = sim.mj_model
    dc, muscle = arm.joint_actuator_ids[:2]
    assert m.actuator_ctrlrange[dc].tolist() == [-24.0, 24.0]
    assert not m.actuator_forcelimited[dc]
    assert m.actuator_gaintype[muscle] == mujoco.mjtGain.mjGAIN_MUSCLE
    assert m.actuator_gainprm[muscle, 2] == 50.0  # force
    # Quasi-static DC motor: tau = kt (V - ke qd) / R.
    qd = torch.tensor([[3.0, 0.0, 0.0], [-5.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    arm.write_joint_state_to_sim(torch.zeros(N, 3), qd)
    volts = torch.tensor([12.0, -6.0, 30.0])  # 30 V is clipped to 24
    sim.data.ctrl[:, dc] = volts.to(sim.data.ctrl.dtype)
    sim.forward()
    expected = 0.05 * (volts.clamp(-24, 24) - 0.05 * qd[:, 0]) / 0.5
    torch.testing.assert_close(arm.data.actuator_force[:, 0], expected, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="thermal is not supported"):
        BuiltinDcMotorActuatorCfg(
            target_names_expr=("j1",),
            motor_params=DcMotorPhysicalParams(kt=1.0, ke=1.0, resistance=1.0),
            thermal=(1.0,),
        )


def test_models_without_explicit_actuators_keep_the_single_backend_step():
    def backend_calls(sim) -> list[int]:
        calls: list[int] = []
        step = sim._backend.step
        sim._backend.step = lambda n: (calls.append(n), step(n))[1]  # counts, then steps
        sim.step(4)
        return calls

    # Builtin actuators: MuJoCo computes their force inside the step, so 4 substeps are one
    # batched backend call.
    _, sim = _arm(
        BuiltinPositionActuatorCfg(target_names_expr=("j.*",), stiffness=1.0, damping=0.0)
    )
    assert sim.pre_substep_hooks == [] and backend_calls(sim) == [4]
    # An explicit actuator's torque is recomputed before every substep: 4 calls of one step.
    _, sim = _arm(
        IdealPdActuatorCfg(target_names_expr=("j.*",), stiffness=1.0, damping=0.0, effort_limit=1)
    )
    assert len(sim.pre_substep_hooks) == 1 and backend_calls(sim) == [1, 1, 1, 1]


def test_ideal_pd_on_warp_matches_the_formula():
    pytest.importorskip("mujoco_warp")
    arm, sim = _arm(
        IdealPdActuatorCfg(
            target_names_expr=("j.*",), stiffness=20.0, damping=0.5, effort_limit=3.0
        ),
        backend="warp",
        num_envs=2,
    )
    q = torch.tensor([[0.1, -0.2, 0.05], [0.0, 0.3, -0.1]])
    qd = torch.tensor([[0.5, 0.0, -1.0], [1.0, -0.5, 0.2]])
    arm.write_joint_state_to_sim(q.to(arm.device), qd.to(arm.device))
    arm.set_joint_position_target(torch.zeros(2, 3, device=arm.device))
    sim.step(1)
    expected = torch.clamp(20.0 * (0.0 - q) - 0.5 * qd, -3.0, 3.0)
    torch.testing.assert_close(arm.data.actuator_force.cpu(), expected, atol=1e-4, rtol=1e-4)


def test_snapshot_records_the_delay_and_history_state(tmp_path):
    from mjlab.utils.snapshot import capture

    arm, _ = _arm(
        IdealPdActuatorCfg(
            target_names_expr=("j.*",), stiffness=1.0, damping=0.0, delay_min_lag=1, delay_max_lag=2
        )
    )
    paths = set(capture(arm))
    assert any(p.endswith("delay.buf") for p in paths) and any(
        p.endswith("delay.lag") for p in paths
    )


def test_entity_groups_direct_builtin_actuators_and_fuses_the_stepped_ones():
    arm, _ = _arm(
        BuiltinPositionActuatorCfg(target_names_expr=("j1",), stiffness=2.0, damping=0.0),
        BuiltinVelocityActuatorCfg(target_names_expr=("j2",), damping=1.0),
        IdealPdActuatorCfg(target_names_expr=("j3",), stiffness=1.0, damping=0.0),
    )
    group = arm.builtin_actuators
    assert group.position[0] == (0,) and group.velocity[0] == (1,) and group.effort == ((), ())
    assert group.position[1] == (int(arm.joint_actuator_ids[0]),)
    assert [a.joint_ids for a in arm.fused_actuators.actuators] == [[2]]


def test_dr_pd_gains_and_effort_limits_reach_explicit_and_builtin_actuators():
    """`mdp.dr.pd_gains` / `effort_limits` write an explicit actuator's per-env gains (the
    torques it computes follow) and a builtin servo's model gains, only in the chosen envs; the
    exported (nominal) gains stay the configured ones."""
    from types import SimpleNamespace

    from mjlab.envs.mdp import dr
    from mjlab.managers import SceneEntityCfg

    arm, sim = _arm(
        IdealPdActuatorCfg(
            target_names_expr=("j1",), stiffness=10.0, damping=1.0, effort_limit=5.0
        ),
        PositionActuatorCfg(target_names_expr=("j2",), stiffness=20.0, damping=2.0),
    )
    env = SimpleNamespace(
        scene={"arm": arm}, sim=sim, rng=torch.Generator().manual_seed(0), num_envs=N
    )
    asset = SceneEntityCfg("arm", joint_names=("j1", "j2"))
    asset.joint_ids = [0, 1]
    rows = [0, 2]
    dr.pd_gains(env, rows, (2.0, 2.0), (3.0, 3.0), asset)
    pd = next(a for a in arm.actuators if a.cfg.target_names_expr == ("j1",))
    assert pd.stiffness[:, 0].tolist() == [20.0, 10.0, 20.0]
    assert pd.damping[:, 0].tolist() == [3.0, 1.0, 3.0]
    a2 = int(sim.mj_model.actuator("arm/j2").id)
    gain = sim.expand_model_field("actuator_gainprm")[:, a2, 0]
    assert gain.tolist() == pytest.approx([40.0, 20.0, 40.0])
    assert arm.data.joint_stiffness[:, :2].tolist() == [[20, 40], [10, 20], [20, 40]]
    # Twice: from the configured gains again, never compounding.
    dr.pd_gains(env, rows, (2.0, 2.0), (3.0, 3.0), asset)
    assert pd.stiffness[:, 0].tolist() == [20.0, 10.0, 20.0]
    j1 = SceneEntityCfg("arm", joint_names=("j1",))
    j1.joint_ids = [0]
    dr.effort_limits(env, [1], (0.5, 0.5), j1)
    assert pd.effort_limit[:, 0].tolist() == [5.0, 2.5, 5.0]
    assert arm.data.joint_effort_limits[:, 0].tolist() == [5.0, 2.5, 5.0]
    # The computed torque uses the drawn gains.
    from mjlab.actuator import ActuatorCmd

    z = torch.zeros(N, 1)
    cmd = ActuatorCmd(
        position_target=torch.full((N, 1), 0.1), velocity_target=z, effort_target=z, pos=z, vel=z
    )
    assert pd.compute(cmd)[:, 0].tolist() == pytest.approx([2.0, 1.0, 2.0])
    assert pd.nominal_gains()["stiffness"].tolist() == [10.0]


def test_overlapping_configs_the_last_one_owns_the_shared_joints():
    arm, sim = _arm(
        IdealPdActuatorCfg(target_names_expr=("j.*",), stiffness=20.0, damping=0.5),
        BuiltinPositionActuatorCfg(target_names_expr=("j1",), stiffness=5.0, damping=0.0),
    )
    pd, servo = arm.actuators
    assert pd.joint_ids == [1, 2] and pd.joint_names == ["j2", "j3"]
    assert servo.joint_ids == [0]
    assert arm.data.joint_stiffness[0].tolist() == [5.0, 20.0, 20.0]
    assert arm.data.joint_damping[0].tolist() == [0.0, 0.5, 0.5]
    q, qd = _random_state(arm, sim)
    target = torch.tensor([[0.3, -0.2, 0.1]]).repeat(N, 1)
    arm.set_joint_position_target(target)
    sim.step(1)
    j1 = arm.joint_actuator_ids[0]
    # j1's servo gets the position target as its ctrl (not a PD torque).
    torch.testing.assert_close(sim.data.ctrl[:, j1].float(), target[:, 0])
    torch.testing.assert_close(
        arm.data.actuator_force[:, 0], 5.0 * (target[:, 0] - q[:, 0]), atol=1e-5, rtol=1e-5
    )
    pd_torque = 20.0 * (target[:, 1:] - q[:, 1:]) + 0.5 * (0.0 - qd[:, 1:])
    torch.testing.assert_close(arm.data.actuator_force[:, 1:], pd_torque, atol=1e-5, rtol=1e-5)
    # A config left with no joint gets no runtime actuator.
    arm2, _ = _arm(
        BuiltinPositionActuatorCfg(target_names_expr=("j1",), stiffness=5.0, damping=0.0),
        IdealPdActuatorCfg(target_names_expr=("j.*",), stiffness=20.0, damping=0.5),
    )
    assert [type(a.cfg) for a in arm2.actuators] == [IdealPdActuatorCfg]


def test_builtin_dc_motor_datasheet_gives_its_stall_torque_and_no_load_speed():
    gear = 4.0
    sheet = DcMotorDatasheetParams(nominal_voltage=24.0, stall_torque=6.0, no_load_speed=3.0)
    arm, sim = _arm(
        BuiltinDcMotorActuatorCfg(target_names_expr=("j1",), motor_params=sheet, gear=gear)
    )
    dc = arm.joint_actuator_ids[0]
    assert not sim.mj_model.actuator_forcelimited[dc]
    # Datasheet at the output shaft: 6 N m at zero speed, zero torque at 3 rad/s, at 24 V.
    qd = torch.tensor([[0.0, 0.0, 0.0], [3.0, 0.0, 0.0], [1.5, 0.0, 0.0]])
    arm.write_joint_state_to_sim(torch.zeros(N, 3), qd)
    sim.data.ctrl[:, dc] = 24.0
    sim.forward()
    torch.testing.assert_close(
        arm.data.actuator_force[:, 0], torch.tensor([6.0, 0.0, 3.0]), atol=1e-5, rtol=1e-5
    )
    with pytest.raises(ValueError, match=r"kt=0.5 != ke=8.0"):
        _arm(
            BuiltinDcMotorActuatorCfg(
                target_names_expr=("j1",),
                motor_params=DcMotorPhysicalParams(kt=0.5, ke=8.0, resistance=1.0),
            )
        )
    # The config keeps effort_limit None (unlimited), as given.
    cfg = BuiltinDcMotorActuatorCfg(target_names_expr=("j1",), motor_params=sheet)
    assert cfg.effort_limit is None


def test_xml_actuator_cfg_rejects_an_effort_limit():
    with pytest.raises(ValueError, match="keep the MJCF's own forcerange"):
        XmlActuatorCfg(target_names_expr=("j.*",), effort_limit=1.0)


def _delayed():
    return IdealPdActuatorCfg(
        target_names_expr=("j.*",),
        stiffness=1.0,
        damping=0.0,
        delay_min_lag=0,
        delay_max_lag=8,
        delay_update_period=2,
        delay_hold_prob=0.3,
    )


def _arm_with_generator(seed, num_envs=8):
    cfg = EntityCfg(
        spec_fn=lambda: mujoco.MjSpec.from_string(ARM),
        articulation=EntityArticulationInfoCfg(actuators=(_delayed(),)),
    )
    scene = Scene(SceneCfg(num_envs=num_envs, entities={"arm": cfg}, terrain=None))
    sim = Simulation(num_envs, SimulationCfg(nthread=1), scene.compile())
    arm = scene["arm"]
    gen = torch.Generator().manual_seed(seed)  # the env's rng
    arm.initialize(sim.mj_model, sim, torch.zeros(num_envs, 3), generator=gen)
    sim.reset(forward=False)
    arm.reset(torch.arange(num_envs))
    sim.forward()
    return arm, sim


def test_delay_lags_come_from_the_given_generator_not_torch_global_rng():
    state = torch.get_rng_state()
    lags = []
    for _ in range(2):
        arm, sim = _arm_with_generator(seed=7)
        buf = arm.fused_actuators.actuators[0].delay
        seq = [buf.lag.clone()]
        for _ in range(6):
            arm.set_joint_position_target(torch.zeros(8, 3))
            sim.step(1)
            seq.append(buf.lag.clone())
        arm.reset(torch.arange(8))
        seq.append(buf.lag.clone())
        lags.append(torch.stack(seq))
    assert torch.equal(lags[0], lags[1])
    assert len(set(lags[0].flatten().tolist())) > 1
    assert torch.equal(torch.get_rng_state(), state)  # global RNG untouched
    other, _ = _arm_with_generator(seed=8)
    assert not torch.equal(other.fused_actuators.actuators[0].delay.lag, lags[0][-1])


def test_joint_pos_target_reports_position_targets_with_explicit_actuators():
    arm, sim = _arm(
        IdealPdActuatorCfg(target_names_expr=("j1", "j2"), stiffness=20.0, damping=0.5),
        BuiltinPositionActuatorCfg(target_names_expr=("j3",), stiffness=5.0, damping=0.0),
    )
    torch.testing.assert_close(arm.data.joint_pos_target, torch.zeros(N, 3))  # default pose
    target = torch.tensor([[0.3, -0.2, 0.1]]).repeat(N, 1)
    arm.set_joint_position_target(target)
    sim.step(1)
    torch.testing.assert_close(arm.data.joint_pos_target, target)
    arm.set_joint_position_target(torch.full((N, 1), 0.7), joint_ids=[0])
    assert arm.data.joint_pos_target[:, 0].tolist() == pytest.approx([0.7] * N)


def test_invalid_target_write_leaves_the_targets_unchanged():
    arm, _ = _arm(IdealPdActuatorCfg(target_names_expr=("j1", "j2"), stiffness=20.0, damping=0.5))
    before = arm._targets.clone()
    with pytest.raises(ValueError, match="actuated joints"):  # 3 actuated joints (j3: MJCF)
        arm.set_joint_position_target(torch.ones(N, 2))
    assert torch.equal(arm._targets, before)
    # The same joint list reuses one cached index tensor.
    assert arm._target_columns([0, 1]) is arm._target_columns([0, 1])

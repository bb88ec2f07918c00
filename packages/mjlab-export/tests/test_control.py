"""The robot-side control loop with faults injected: a real MuJoCo robot (`MujocoRobot`, case C02
model), real onnxruntime policies, and a wrapper that corrupts what the robot reports."""

import os
import signal
import time
from typing import ClassVar

import numpy as np
import pytest

from mjlab.deploy import DeploymentMetadata, ObservationTermSpec, OnnxPolicy, RobotModelSpec
from mjlab.deploy.control import ControlLoop, JointCommand, Robot, RobotState, SafetyCfg

mujoco = pytest.importorskip("mujoco")

from mjlab.deploy.mujoco_robot import MujocoRobot  # noqa: E402

DEFAULT = [0.1, 0.2, 0.3]
LIMITS = [[-1.0, 1.0], [-1.5, 1.5], [-2.0, 2.0]]


def _meta(**overrides) -> DeploymentMetadata:
    fields = dict(
        task_id="c02",
        robot=RobotModelSpec(init_pos=[0.0, 0.0, 0.5]),
        joint_names=["a", "b", "c"],
        stiffness=[10.0, 20.0, 30.0],
        damping=[1.0, 2.0, 3.0],
        effort_limit=[4.0, 5.0, 6.0],
        armature=[0.01, 0.02, 0.03],
        default_joint_pos=DEFAULT,
        action_scale=[0.5, 0.5, 0.5],
        action_offset=DEFAULT,
        joint_pos_limits=LIMITS,
        joint_vel_limit=[20.0, 20.0, 20.0],
        observations=[
            ObservationTermSpec(name="gravity", func="projected_gravity", dim=3),
            ObservationTermSpec(name="q", func="joint_pos_rel", dim=3, history_length=2),
            ObservationTermSpec(name="qd", func="joint_vel_rel", dim=3),
            ObservationTermSpec(name="last", func="last_action", dim=3, delay=1),
        ],
        step_dt=0.02,
        physics_dt=0.002,
        decimation=10,
    )
    fields.update(overrides)
    return DeploymentMetadata(**fields)


class Faulty:
    """A `Robot` that passes a real robot through and corrupts chosen cycles."""

    def __init__(self, robot, corrupt=None):
        self.robot, self.corrupt, self.cycle, self.sent = robot, corrupt, 0, []

    def read(self) -> RobotState:
        state = self.robot.read()
        if self.corrupt is not None:
            changed = self.corrupt(self.cycle, state)  # edits `state` in place or returns one
            state = changed if isinstance(changed, RobotState) else state
        self.cycle += 1
        return state

    def send(self, command: JointCommand) -> None:
        self.sent.append(command)
        self.robot.send(command)


class SlowPolicy(OnnxPolicy):
    """The real policy, with inference made slow on chosen calls."""

    slow_calls: ClassVar[set[int]] = set()
    delay_s = 0.03

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = 0

    def __call__(self, obs):
        self.calls += 1
        if self.calls in self.slow_calls:
            time.sleep(self.delay_s)
        return super().__call__(obs)


@pytest.fixture
def setup(tmp_path, c02_mjcf, make_policy):
    """(policy class, meta, weight, bias) -> (loop, faulty robot, mujoco robot)."""

    def build(corrupt=None, safety=None, meta=None, bias=None, policy_cls=OnnxPolicy):
        meta = meta or _meta()
        weight = np.zeros((meta.obs_dim, 3))
        weight[3:6] = np.eye(3) * 0.1  # a small, non-zero reaction to the joint positions
        bias = np.zeros(3) if bias is None else bias
        policy = policy_cls(make_policy(tmp_path / "p.onnx", weight, bias, meta))
        robot = MujocoRobot(policy, model=mujoco.MjModel.from_xml_string(c02_mjcf))
        faulty = Faulty(robot, corrupt)
        loop = ControlLoop(policy, faulty, safety or SafetyCfg(soft_start_s=0.0), realtime=False)
        return loop, faulty, robot

    return build


def _nan_at(cycles, field="joint_pos"):
    def corrupt(cycle, state):
        if cycle in cycles:
            value = np.array(getattr(state, field), dtype=float)
            value[1] = np.nan
            setattr(state, field, value)
        return state

    return corrupt


def test_mujoco_robot_satisfies_the_robot_protocol(setup):
    _, faulty, robot = setup()
    assert isinstance(robot, Robot) and isinstance(faulty, Robot)
    state = robot.read()
    np.testing.assert_allclose(state.joint_pos, DEFAULT)
    assert set(state.terms) == {"gravity", "q", "qd"}  # last_action is the loop's


def test_soft_start_moves_from_the_measured_pose_to_the_default_then_hands_over(setup):
    # Clamps off: this checks the interpolation itself.
    loop, _, robot = setup(safety=SafetyCfg(soft_start_s=0.1, clamp_to_effort_limits=False))
    start = np.array([0.5, -0.4, 0.9])
    qpos = robot.data.qpos.copy()
    qpos[robot.qpos_adr] = start
    robot.reset(qpos=qpos)
    loop.start()
    assert loop.mode == "soft_start"
    targets = [loop.step().q_target for _ in range(5)]  # 0.1 s = 5 cycles
    for k, target in enumerate(targets, start=1):
        np.testing.assert_allclose(target, start + k / 5 * (np.array(DEFAULT) - start), atol=1e-9)
    assert loop.mode == "policy" and loop.stats.policy_cycles == 0
    np.testing.assert_array_equal(loop.last_action, 0.0)
    loop.step()
    assert loop.stats.policy_cycles == 1 and not loop.stats.faults


def test_a_single_nan_state_holds_the_last_safe_command_and_recovers(setup):
    loop, _, _ = setup(corrupt=_nan_at({5}))
    loop.start()
    sent = [loop.step() for _ in range(10)]
    (fault,) = loop.stats.faults
    assert (
        fault.cycle == 5 and fault.kind == "state" and "NaN/Inf joint state at b" in fault.message
    )
    assert sent[5] is sent[4], "the last safe command is held"
    assert loop.mode == "policy" and loop.stats.policy_cycles == 9


def test_a_nan_observation_term_is_a_fault_naming_the_term(setup):
    loop, _, _ = setup(
        corrupt=lambda c, s: s.terms.update(qd=np.full(3, np.nan)) if c == 2 else None
    )
    loop.start()
    for _ in range(4):
        loop.step()
    (fault,) = loop.stats.faults
    assert fault.kind == "state" and "'qd'" in fault.message


def test_persistent_nan_switches_to_damping_for_good(setup):
    loop, _, _ = setup(corrupt=_nan_at(set(range(3, 9)), field="joint_vel"))
    loop.start()
    sent = [loop.step() for _ in range(12)]
    # Cycles 3, 4, 5 hold (max_fault_cycles = 3); the 4th fault in a row switches to damping.
    assert all(sent[k] is sent[2] for k in (3, 4, 5))
    for command in sent[6:]:
        np.testing.assert_array_equal(command.kp, 0.0)
        np.testing.assert_array_equal(command.kd, [1.0, 2.0, 3.0])
    assert loop.mode == "damping", "damping is latched after the faults stop"
    assert len(loop.stats.faults) == 6


def test_a_frozen_stamp_is_stale_from_its_first_repeat(setup):
    frozen = []

    def freeze(cycle, state):
        if cycle >= 4:
            frozen.append(state.stamp)
            state.stamp = frozen[0]  # the robot resends its cycle-4 state

    loop, _, _ = setup(corrupt=freeze)
    loop.start()
    for _ in range(12):
        loop.step()
    kinds = [f.kind for f in loop.stats.faults]
    assert kinds and set(kinds) == {"stale"} and loop.stats.faults[0].cycle == 5
    assert loop.mode == "damping"
    assert "repeated" in loop.stats.faults[0].message


def _stamps(stamp_of_cycle):
    def corrupt(cycle, state):
        state.stamp = stamp_of_cycle(cycle)

    return corrupt


@pytest.mark.parametrize(
    ("stamp_of_cycle", "first", "kind", "message"),
    [
        (lambda k: 1000.0 - 0.02 * k, 1, "stamp", "went backwards"),  # backwards
        (lambda k: 0.02 * (k % 2), 2, "stamp", "went backwards"),  # alternating 0, 0.02
        (lambda k: 5.0, 1, "stale", "repeated"),  # frozen
        (lambda k: 10.0 * k, 1, "stamp", "jumped ahead"),  # a clock in the wrong unit
    ],
    ids=["backwards", "alternating", "repeated", "jumping"],
)
def test_a_stamp_that_does_not_advance_with_the_loop_is_a_fault_then_damping(
    setup, stamp_of_cycle, first, kind, message
):
    loop, faulty, _ = setup(corrupt=_stamps(stamp_of_cycle))
    loop.start()
    for _ in range(12):
        loop.step()
    faults = list(loop.stats.faults)
    assert faults and faults[0].cycle == first and faults[0].kind == kind
    assert message in faults[0].message
    # Never acted on for long: the fourth fault in a row switches to damping for good.
    assert loop.mode == "damping" and loop.stats.policy_cycles <= first + 1
    assert all(not c.kp.any() for c in faulty.sent[first + 4 :])


def test_stamps_that_advance_by_the_period_within_tolerance_are_accepted(setup):
    # A state source at 50 Hz whose samples arrive up to half a period early or late.
    jitter = [0.0, 0.01, -0.009, 0.004, 0.0, -0.01, 0.009, 0.0]
    loop, _, _ = setup(corrupt=_stamps(lambda k: 7.0 + 0.02 * k + jitter[k % len(jitter)]))
    loop.start()
    for _ in range(24):
        loop.step()
    assert not loop.stats.faults and loop.mode == "policy"


def test_a_joint_beyond_its_range_is_a_fault_naming_the_joint(setup):
    def breach(cycle, state):
        if cycle == 3:
            state.joint_pos = np.array([0.1, 0.2, 2.5])  # c: range [-2, 2], margin 0.1

    loop, _, _ = setup(corrupt=breach)
    loop.start()
    for _ in range(6):
        loop.step()
    (fault,) = loop.stats.faults
    assert fault.cycle == 3 and "outside its range at c" in fault.message


def test_a_joint_above_its_speed_limit_is_a_fault(setup):
    def fast(cycle, state):
        if cycle == 2:
            state.joint_vel = np.array([0.0, 50.0, 0.0])

    loop, _, _ = setup(corrupt=fast, safety=SafetyCfg(soft_start_s=0.0, joint_vel_limit=20.0))
    loop.start()
    for _ in range(4):
        loop.step()
    (fault,) = loop.stats.faults
    assert "speed above its limit at b" in fault.message


def test_the_files_speed_limits_turn_the_speed_check_on(setup):
    # The limits come from the file (20 rad/s here, 30.1/20.06 on an exported Go1).
    def runaway(cycle, state):
        if cycle >= 2:
            state.joint_vel = np.array([0.0, 0.0, 1e6])

    loop, faulty, _ = setup(corrupt=runaway)
    loop.start()
    for _ in range(8):
        loop.step()
    assert loop.stats.faults[0].cycle == 2 and "speed above its limit at c" in (
        loop.stats.faults[0].message
    )
    assert loop.mode == "damping" and not faulty.sent[-1].kp.any()


def test_a_file_without_speed_limits_is_refused_unless_the_safety_cfg_gives_them(setup):
    with pytest.raises(ValueError, match=r"no joint_vel_limit.*SafetyCfg\.joint_vel_limit"):
        setup(meta=_meta(joint_vel_limit=[]))
    loop, _, _ = setup(
        meta=_meta(joint_vel_limit=[]), safety=SafetyCfg(soft_start_s=0, joint_vel_limit=np.inf)
    )
    np.testing.assert_array_equal(loop.joint_vel_limit, np.inf)


def test_an_out_of_range_action_never_reaches_the_robot(setup):
    loop, faulty, _ = setup(bias=np.array([0.0, 500.0, 0.0]))
    loop.start()
    for _ in range(5):
        loop.step()
    # Four faulty cycles (three held, then damping); in damping the policy no longer runs.
    assert [f.kind for f in loop.stats.faults] == ["action"] * 4
    assert "|action| > 100.0 at b" in loop.stats.faults[0].message
    assert loop.mode == "damping"
    assert len(faulty.sent) == 5
    for (
        command
    ) in faulty.sent:  # never a policy target: no safe command existed, so damping at once
        np.testing.assert_array_equal(command.kp, 0.0)


def test_slow_inference_is_held_once_and_leads_to_damping_when_it_persists(setup):
    # Deadlines exist in real time only (a lockstep simulation has none).
    SlowPolicy.slow_calls = {3}
    loop, _, _ = setup(policy_cls=SlowPolicy)
    loop.realtime = True
    loop.start()
    sent = [loop.step() for _ in range(6)]
    (fault,) = loop.stats.faults
    assert fault.kind == "inference" and "> 10.00 ms" in fault.message
    assert sent[2] is sent[1] and loop.mode == "policy"

    SlowPolicy.slow_calls = set(range(1, 100))
    loop, _, _ = setup(policy_cls=SlowPolicy)
    loop.realtime = True
    loop.start()
    for _ in range(6):
        loop.step()
    assert loop.mode == "damping"

    loop, _, _ = setup(policy_cls=SlowPolicy)  # lockstep: slow is not late
    loop.start()
    for _ in range(6):
        loop.step()
    assert loop.mode == "policy" and not loop.stats.faults


def test_a_read_that_raises_is_a_fault_and_stop_always_ends_in_damping(setup):
    def explode(cycle, state):
        if cycle >= 2:
            raise ConnectionError("link down")

    loop, faulty, _ = setup(corrupt=explode)

    def interrupt(loop):
        if loop.stats.cycles == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        loop.run(cycles=20, on_cycle=interrupt)
    assert "read() failed: ConnectionError('link down')" in loop.stats.faults[0].message
    last = faulty.sent[-1]
    np.testing.assert_array_equal(last.kp, 0.0)
    assert loop.mode == "damping" and loop.stopped
    with pytest.raises(RuntimeError, match="start"):
        loop.step()


def test_targets_stay_inside_the_effort_limit_and_the_joint_range(setup):
    # A bias of 8 -> target = default + 4 rad: beyond the range and beyond what 4-6 N m allow.
    # (C02's joints have no range in the MJCF, so they may leave it: a wide margin keeps that
    # from being a fault here.)
    loop, _, _ = setup(
        bias=np.array([8.0, -8.0, 8.0]), safety=SafetyCfg(soft_start_s=0.0, joint_pos_margin=10.0)
    )
    loop.start()
    effort = np.array([4.0, 5.0, 6.0])
    lo, hi = np.array(LIMITS).T
    for _ in range(20):
        command = loop.step()
        state = loop.last_state
        torque = command.kp * (command.q_target - state.joint_pos) - command.kd * state.joint_vel
        assert (np.abs(torque) <= effort + 1e-9).all()
        # Inside the range, unless the torque limit holds the target back on the way to it.
        inside = (command.q_target >= lo - 1e-12) & (command.q_target <= hi + 1e-12)
        saturated = np.isclose(np.abs(torque), effort)
        assert (inside | saturated).all()
    assert not loop.stats.faults


def test_loop_terms_are_fed_with_delay_and_history_as_in_training(setup):
    # Actions that differ every cycle: 0.1 * joint_pos_rel + a bias, on a robot that moves.
    loop, _, _ = setup(bias=np.array([0.3, -0.2, 0.1]))
    loop.start()
    actions = []
    for _ in range(6):
        loop.step()
        actions.append(loop.last_action.copy())
    assert np.abs(actions[-1] - actions[-2]).max() > 1e-4, "the actions must change"
    # "last" has delay 1: the observation of cycle k holds the action of cycle k - 2 (its
    # last_action is the action of k - 1, read one step late).
    obs = loop.last_observation
    np.testing.assert_array_equal(obs[-3:], actions[-3].astype(np.float32))
    # "q" has history 2: the last two joint_pos_rel values, oldest first.
    assert not np.array_equal(obs[3:6], obs[6:9])


def test_a_missing_term_is_a_fault_before_the_robot_moves(setup):
    loop, faulty, _ = setup(
        corrupt=lambda c, s: s.terms.pop("qd"), safety=SafetyCfg(soft_start_s=1.0)
    )
    loop.start()
    for _ in range(5):
        loop.step()
    assert "observation terms ['qd'] missing" in loop.stats.faults[0].message
    assert loop.mode == "damping" and loop.stats.faults[0].cycle == 0
    assert all(not command.kp.any() for command in faulty.sent), "never a stiff command"


def test_extra_terms_from_the_robot_are_ignored(setup):
    loop, _, _ = setup(corrupt=lambda c, s: s.terms.update(spare=np.zeros(5)))
    loop.start()
    for _ in range(3):
        loop.step()
    assert not loop.stats.faults and loop.stats.policy_cycles == 3


@pytest.mark.parametrize("stamp", [float("nan"), None, "t0"])
def test_a_stamp_that_is_not_a_finite_number_is_a_fault(setup, stamp):
    loop, _, _ = setup(corrupt=lambda c, s: setattr(s, "stamp", stamp))
    loop.start()
    loop.step()
    assert "stamp must be a finite number" in loop.stats.faults[0].message


def test_restart_runs_the_soft_start_again_and_drops_the_held_command(setup):
    loop, _, robot = setup(safety=SafetyCfg(soft_start_s=0.1))
    loop.start()
    for _ in range(8):
        loop.step()
    assert loop.mode == "policy"
    robot.reset()
    loop.restart()
    assert loop.mode == "soft_start" and loop._safe is None
    np.testing.assert_array_equal(loop.last_action, 0.0)
    assert loop.stats.cycles == 8, "statistics are kept"


def test_an_overrun_is_counted_and_the_schedule_restarts_from_now(setup):
    # A fake clock: the 3rd cycle takes 50 ms (2.5 periods).
    now = [0.0]

    class SlowRobot:
        def __init__(self, robot):
            self.robot, self.n = robot, 0

        def read(self):
            return self.robot.read()

        def send(self, command):
            self.n += 1
            now[0] += 0.05 if self.n == 3 else 0.001
            self.robot.send(command)

    loop, _, robot = setup()
    loop = ControlLoop(
        loop.policy,
        SlowRobot(robot),
        SafetyCfg(soft_start_s=0.0),
        clock=lambda: now[0],
        sleep=lambda dt: now.__setitem__(0, now[0] + dt),
        spin_s=0.0,
    )
    stats = loop.run(cycles=6)
    assert stats.overruns == 1
    # Periods: 20 ms, the slow cycle's 50 ms, then 20 ms again (no burst to catch up).
    np.testing.assert_allclose(list(stats.periods), [0.02, 0.02, 0.05, 0.02, 0.02], atol=1e-9)


def test_long_runs_keep_bounded_statistics(setup):
    from mjlab.deploy.control import STATS_WINDOW, LoopStats

    stats = LoopStats(step_dt=0.02)
    for i in range(STATS_WINDOW + 10):
        stats.overhead.append(float(i))
    assert len(stats.overhead) == STATS_WINDOW


def test_realtime_run_keeps_the_period(setup):
    loop, _, _ = setup()
    loop.realtime = True
    stats = loop.run(seconds=0.3)
    assert stats.cycles == 15 and len(stats.periods) == 14
    assert abs(np.median(stats.periods) - 0.02) < 0.004
    assert "period jitter p50" in stats.summary()


def test_safety_cfg_names_the_bad_field():
    with pytest.raises(ValueError, match=r"SafetyCfg\.soft_start_s"):
        SafetyCfg(soft_start_s=-1.0)
    with pytest.raises(ValueError, match=r"SafetyCfg\.max_fault_cycles"):
        SafetyCfg(max_fault_cycles=-2)
    with pytest.raises(ValueError, match=r"SafetyCfg\.state_timeout_s"):
        SafetyCfg(state_timeout_s=0.0)


def test_a_state_far_behind_the_loop_clock_is_stale(setup):
    # The loop's clock stalls for 10 periods once while the robot's stamp advances one period:
    # the state it then reads is 0.18 s old.
    now = [0.0]
    loop, _, robot = setup()
    loop = ControlLoop(loop.policy, robot, SafetyCfg(soft_start_s=0.0), clock=lambda: now[0])
    loop.start()
    for k in range(6):
        now[0] += 0.2 if k == 3 else 0.02
        loop.step()
    (fault,) = loop.stats.faults
    assert fault.kind == "stale" and fault.cycle == 3 and "behind" in fault.message


class SignalledRobot:
    """A robot whose damping send is interrupted by real signals to this process: the
    `signals` arrive after the send has begun and before the command is applied."""

    def __init__(self, robot, signals):
        self.robot, self.signals, self.sent = robot, list(signals), []

    def read(self):
        return self.robot.read()

    def send(self, command):
        if not command.kp.any():
            while self.signals:
                os.kill(os.getpid(), self.signals.pop(0))
            time.sleep(0.01)  # the signals are delivered by now (were they not held)
        self.robot.send(command)
        self.sent.append(command)


def test_a_second_ctrl_c_during_the_damping_send_cannot_leave_the_robot_on_its_gains(setup):
    loop, _, robot = setup()
    robot = SignalledRobot(robot, [signal.SIGINT])  # the twin of the first Ctrl-C
    loop = ControlLoop(loop.policy, robot, SafetyCfg(soft_start_s=0.0), realtime=False)

    def ctrl_c(loop):
        if loop.stats.cycles == 3:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        loop.run(cycles=50, on_cycle=ctrl_c)
    assert loop.stats.cycles == 3 and loop.mode == "damping"
    np.testing.assert_array_equal(robot.sent[-1].kp, 0.0)


def test_sigterm_during_the_damping_send_is_delivered_after_it(setup):
    loop, _, robot = setup()
    robot = SignalledRobot(robot, [signal.SIGTERM, signal.SIGINT])
    loop = ControlLoop(loop.policy, robot, SafetyCfg(soft_start_s=0.0), realtime=False)
    terms = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: terms.append(len(robot.sent)))
    try:
        with pytest.raises(KeyboardInterrupt):
            loop.run(cycles=2)
    finally:
        signal.signal(signal.SIGTERM, previous)
    # Both held until the damping command was applied, then delivered: SIGTERM to its
    # handler (which saw 3 commands sent), SIGINT as KeyboardInterrupt.
    assert terms == [3] and len(robot.sent) == 3
    np.testing.assert_array_equal(robot.sent[-1].kp, 0.0)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_twice_in_the_loop_stops_it_in_damping_then_raises_once(setup):
    loop, faulty, _ = setup()

    def double_ctrl_c(loop):
        if loop.stats.cycles == 3:  # as `uv run` forwards it: two SIGINTs microseconds apart
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        loop.run(cycles=50, on_cycle=double_ctrl_c)
    assert loop.stats.cycles == 3 and loop.mode == "damping"
    np.testing.assert_array_equal(faulty.sent[-1].kp, 0.0)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_sigterm_in_the_loop_ends_it_in_damping_before_the_previous_handler_runs(setup):
    loop, faulty, _ = setup()
    seen = []

    def on_term(signum, frame):
        seen.append((len(faulty.sent), float(np.abs(faulty.sent[-1].kp).sum())))

    def terminate(loop):
        if loop.stats.cycles == 3:
            os.kill(os.getpid(), signal.SIGTERM)

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        stats = loop.run(cycles=50, on_cycle=terminate)
        assert signal.getsignal(signal.SIGTERM) is on_term
    finally:
        signal.signal(signal.SIGTERM, previous)
    # Delivered once, after the loop stopped and the damping command (kp 0) went out.
    assert seen == [(4, 0.0)] and stats.cycles == 3 and loop.mode == "damping"


def test_an_ignored_sigint_stays_ignored_by_the_loop(setup):
    loop, _, _ = setup()

    def ctrl_c(loop):
        if loop.stats.cycles == 3:
            os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        stats = loop.run(cycles=10, on_cycle=ctrl_c)
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
    assert stats.cycles == 10 and loop.mode == "damping"

"""Fault cases of the robot-side watchdog (issues #54, #55), written as the cases handed to the
developers are (input, what went wrong, what is right) and run on the Go1 of the probe that
found them: the Menagerie robot in plain MuJoCo behind the `Robot` protocol, driven by
`ControlLoop` with a real onnxruntime policy. Stamps, speeds, plausibility and signals."""

import json
import os
import signal

import numpy as np
import pytest

from mjlab.deploy import OnnxPolicy
from mjlab.deploy.cli import main
from mjlab.deploy.control import ControlLoop, SafetyCfg
from mjlab.deploy.metadata import METADATA_KEY

pytest.importorskip("mujoco")
pytest.importorskip("mujoco_menagerie")

from mjlab.deploy.mujoco_robot import MujocoRobot

CYCLES = 100


@pytest.fixture
def go1(tmp_path, go1_meta, make_policy):
    """(policy, robot): the Go1 file (speed limits 30.1 / 20.06 rad/s, as exported) and its
    robot in MuJoCo."""
    policy = OnnxPolicy(
        make_policy(tmp_path / "go1.onnx", np.zeros((48, 12)), np.zeros(12), go1_meta)
    )
    return policy, MujocoRobot(policy)


class Probe:
    """The robot as the probe saw it, with `edit(cycle, state)` applied to each read; it
    records every command and whether the policy's gains were on (kp > 0)."""

    def __init__(self, robot, edit=None, on_damping=None):
        self.robot, self.edit, self.on_damping = robot, edit, on_damping
        self.cycle, self.sent = 0, []

    def read(self):
        state = self.robot.read()
        if self.edit is not None:
            self.edit(self.cycle, state)
        self.cycle += 1
        return state

    def send(self, command):
        if self.on_damping is not None and not command.kp.any():
            self.on_damping()
        self.robot.send(command)
        self.sent.append(command)


def _run(policy, probe, cycles=CYCLES):
    loop = ControlLoop(policy, probe, SafetyCfg(soft_start_s=0.0), realtime=False)
    loop.run(cycles=cycles)
    acted = sum(bool(c.kp.any()) for c in probe.sent)
    return loop, acted


def test_w01_backwards_stamps_are_acted_on_for_at_most_one_cycle(go1):
    """Input: a frozen state whose stamp runs backwards, 1000 - k. Wrong: acted on for 95 of
    100 cycles. Right: each backwards stamp is a fault; damping after max_fault_cycles."""
    policy, robot = go1
    loop, acted = _run(policy, Probe(robot, lambda k, s: setattr(s, "stamp", 1000.0 - k)))
    assert acted == 1 + 3, "the first read, then three held cycles"
    assert loop.stats.fault_counts()["stamp"] == CYCLES - 1 and loop.mode == "damping"


def test_w02_alternating_stamps_are_acted_on_for_at_most_one_cycle(go1):
    """Input: a stamp alternating k % 2 (two states resent in turn). Wrong: acted on for 95 of
    100 cycles. Right: faults (a jump of 1 s in 0.02 s, then repeats and backwards), damping."""
    policy, robot = go1
    loop, acted = _run(policy, Probe(robot, lambda k, s: setattr(s, "stamp", float(k % 2))))
    assert acted == 1 + 3 and loop.mode == "damping"
    assert set(loop.stats.fault_counts()) <= {"stamp", "stale"}


def test_w03_a_runaway_joint_speed_is_a_fault_with_the_exported_limits(go1):
    """Input: a measured joint speed of 1e6 rad/s on a Go1 file. Wrong: no fault (the file's
    joint_vel_limit was empty). Right: the file carries 30.1 / 20.06 rad/s; a fault naming
    the joint, then damping."""
    policy, robot = go1
    assert policy.metadata.joint_vel_limit == [30.1, 30.1, 20.06] * 4

    def runaway(cycle, state):
        if cycle >= 10:
            state.joint_vel = state.joint_vel.copy()
            state.joint_vel[5] = 1e6

    loop, acted = _run(policy, Probe(robot, runaway))
    fault = loop.stats.faults[0]
    assert fault.cycle == 10 and "speed above its limit at FL_calf_joint" in fault.message
    assert acted == 10 + 3 and loop.mode == "damping"


def _implausible(tmp_path, go1_meta, make_policy, edit):
    doc = json.loads(go1_meta.to_json())
    edit(doc)
    props = {METADATA_KEY: json.dumps(doc)}
    return make_policy(tmp_path / "edited.onnx", np.zeros((48, 12)), np.zeros(12), props=props)


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (lambda d: d["stiffness"].__setitem__(0, 1e12), "joint 'FR_hip_joint': stiffness 1e+12"),
        (
            lambda d: d.update(
                joint_pos_limits=[[-0.86, 0.86], [-0.69, 4.5], [-2.8, -0.9]] * 4,
                default_joint_pos=[0.0, 0.9, -0.5] * 4,
            ),
            "joint 'FR_calf_joint': default_joint_pos -0.5 is outside its range",
        ),
        (
            lambda d: d["mujoco_options"].update(gravity=[0.0, 0.0, float("nan")]),
            "mujoco_options.gravity' must be finite",
        ),
        (
            lambda d: d["robot"].update(geom_params={"friction": [[float("nan"), 0.0, 0.0]]}),
            "robot.geom_params.friction' is not finite for geom 0",
        ),
    ],
    ids=[
        "w04-stiffness-1e12",
        "w05-default-pose-outside-range",
        "w06-nan-gravity",
        "w06-nan-friction",
    ],
)
def test_w04_to_w06_an_implausible_file_is_refused_before_sim2sim_runs(
    tmp_path, go1_meta, make_policy, capsys, edit, named
):
    """Input: a Go1 file with a stiffness of 1e12, a default pose outside the joint range, or
    NaN gravity or friction. Wrong: accepted; sim2sim reports "walked 0.42 m in 0.0 s, FELL"
    or "mean v=(+nan, +nan)" and exits 0. Right: refused at load with a one-line error naming
    the joint or field, before anything runs."""
    path = _implausible(tmp_path, go1_meta, make_policy, edit)
    with pytest.raises(ValueError, match="Deployment metadata"):
        OnnxPolicy(path)
    with pytest.raises(SystemExit) as exit_info:
        main(["sim2sim", str(path), "--seconds", "0.5"])
    captured = capsys.readouterr()
    assert exit_info.value.code == 2 and named in captured.err
    assert len(captured.err.strip().splitlines()) == 1 and "sim2sim " not in captured.out


@pytest.mark.parametrize("twins", [1, 3])
def test_w07_more_ctrl_c_during_the_damping_send_still_leaves_the_robot_damped(go1, twins):
    """Input: Ctrl-C under `uv run` (two SIGINTs), the second while the damping command is
    being sent. Wrong: the send is cut short, the last command has kp 39.48. Right: the
    signals are held until damping has been sent, then KeyboardInterrupt."""
    policy, robot = go1
    pending = [signal.SIGINT] * twins

    def twin():
        while pending:
            os.kill(os.getpid(), pending.pop())

    probe = Probe(robot, on_damping=twin)
    loop = ControlLoop(policy, probe, SafetyCfg(soft_start_s=0.0), realtime=False)

    def ctrl_c(loop):
        if loop.stats.cycles == 20:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        loop.run(cycles=CYCLES, on_cycle=ctrl_c)
    assert not probe.sent[-1].kp.any() and loop.mode == "damping"
    np.testing.assert_array_equal(probe.sent[-1].kd, policy.metadata.damping)

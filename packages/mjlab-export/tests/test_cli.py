"""The `deploy` command: inspect and bench need only onnxruntime; sim2sim needs [sim]."""

import numpy as np
import pytest

from mjlab.deploy.cli import main, parse_command


@pytest.fixture
def policy_path(tmp_path, go1_meta, make_policy):
    return make_policy(tmp_path / "policy.onnx", np.zeros((48, 12)), np.zeros(12), go1_meta)


def test_inspect_prints_joint_and_observation_tables(policy_path, capsys):
    main(["inspect", str(policy_path)])
    out = capsys.readouterr().out
    joint_rows = [
        line for line in out.splitlines() if line.startswith(("FR_", "FL_", "RR_", "RL_"))
    ]
    assert len(joint_rows) == 12 and joint_rows[0].split()[:3] == [
        "FR_hip_joint",
        "39.478",
        "2.513",
    ]
    assert "joint_pos             joint_pos_rel" in out
    assert "Mjlab-Velocity-Flat-Unitree-Go1" in out and "unitree_go1/go1" in out


def test_bench_prints_p50_and_p99_latency(policy_path, capsys):
    main(["bench", str(policy_path), "--iterations", "50"])
    out = capsys.readouterr().out
    assert "latency over 50 calls, 1 thread: p50" in out and " p99 " in out


def test_command_is_parsed_from_comma_separated_values():
    assert parse_command("0.5,0,-0.25") == (0.5, 0.0, -0.25)
    with pytest.raises(ValueError, match="comma-separated numbers"):
        parse_command("0.5;0")


def test_sim2sim_command_reports_tracking_and_falls(policy_path, capsys):
    pytest.importorskip("mujoco")
    pytest.importorskip("mujoco_menagerie")
    main(["sim2sim", str(policy_path), "--command", "-0.2,0,0.1", "--seconds", "0.5"])
    out = capsys.readouterr().out
    assert "command (-0.20, +0.00, +0.10)" in out and "falls 0" in out


def test_run_drives_the_mujoco_robot_through_the_control_loop(policy_path, capsys):
    pytest.importorskip("mujoco")
    pytest.importorskip("mujoco_menagerie")
    args = ["--seconds", "1", "--soft-start-s", "0.2", "--no-realtime", "--command", "0,0,0"]
    main(["run", str(policy_path), "--robot", "mujoco", *args])
    out = capsys.readouterr().out
    assert "loop 50 cycles at 50 Hz (40 policy, 0 clamped)" in out and "faults: none" in out
    assert "ended in damping" in out and "FELL" not in out


def test_run_exits_1_and_names_the_fault(tmp_path, go1_meta, make_policy, capsys):
    pytest.importorskip("mujoco")
    pytest.importorskip("mujoco_menagerie")
    wild = make_policy(tmp_path / "wild.onnx", np.zeros((48, 12)), np.full(12, 1e3), go1_meta)
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(wild), "--seconds", "0.5", "--soft-start-s", "0", "--no-realtime"])
    assert exit_info.value.code == 1
    out = capsys.readouterr().out
    assert "fault at cycle 0 (action): |action| > 100.0" in out and "ended in damping" in out


def test_mistakes_are_one_line_errors_and_debug_shows_the_traceback(tmp_path, policy_path, capsys):
    not_onnx = tmp_path / "notes.onnx"
    not_onnx.write_text("not a model")
    for argv, message in [
        (["inspect", str(tmp_path / "missing.onnx")], "deploy: error: policy "),
        (["bench", str(not_onnx)], "is not an ONNX model onnxruntime can load"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    with pytest.raises(FileNotFoundError):
        main(["inspect", str(tmp_path / "missing.onnx"), "--debug"])


def test_the_command_must_have_the_policys_values_and_out_of_range_ones_are_noted(
    tmp_path, go1_twist_meta, make_policy, capsys
):
    pytest.importorskip("mujoco")
    pytest.importorskip("mujoco_menagerie")
    go1_meta = go1_twist_meta
    path = make_policy(tmp_path / "p.onnx", np.zeros((48, 12)), np.zeros(12), go1_meta)
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(path), "--command", "1,0,0,0", "--no-realtime", "--seconds", "0.1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--command has 4 values; the policy's command 'twist' has 3 (lin_vel_x, " in err
    main(["sim2sim", str(path), "--command", "0,2,0", "--seconds", "0.1"])
    assert "note: lin_vel_y 2 is outside the trained range [-0.5, 0.5]" in capsys.readouterr().out


@pytest.mark.parametrize("signals", [["SIGINT", "SIGINT"], ["SIGTERM"]], ids=["ctrl-c", "sigterm"])
def test_a_signal_ends_deploy_run_in_damping_with_its_summary(policy_path, signals):
    # The real CLI in a subprocess on the simulated robot; Ctrl-C under `uv run` is two
    # SIGINTs (the terminal's and the forwarded one).
    pytest.importorskip("mujoco")
    pytest.importorskip("mujoco_menagerie")
    import os
    import signal
    import subprocess
    import sys
    import time

    argv = [sys.executable, "-m", "mjlab.deploy.cli", "run", str(policy_path)]
    argv += ["--seconds", "60", "--soft-start-s", "0.2", "--command", "0,0,0"]
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    try:
        first = proc.stdout.readline()
        assert first.startswith("deploy run:"), first + proc.stderr.read()
        time.sleep(0.5)  # the loop runs
        for name in signals:
            proc.send_signal(getattr(signal, name))
            time.sleep(0.002)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    code = 128 + getattr(signal, signals[0])
    assert proc.returncode == code, (out, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    summary = next(line for line in out.splitlines() if line.startswith("loop "))
    assert int(summary.split()[1]) > 0, "the loop ran"
    assert f"ended in damping (stopped by {signals[0]})" in out


def test_deploy_run_of_a_file_without_speed_limits_names_the_fix(
    tmp_path, go1_meta, make_policy, capsys
):
    pytest.importorskip("mujoco")
    pytest.importorskip("mujoco_menagerie")
    go1_meta.joint_vel_limit = []  # as files exported before speed limits were recorded
    old = make_policy(tmp_path / "old.onnx", np.zeros((48, 12)), np.zeros(12), go1_meta)
    args = ["run", str(old), "--seconds", "0.1", "--no-realtime", "--command", "0,0,0"]
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "has no joint_vel_limit" in err and "--joint-vel-limit" in err
    main([*args, "--joint-vel-limit", "inf"])
    assert "ended in damping" in capsys.readouterr().out


def test_a_missing_policy_or_motion_file_is_refused_before_any_model_is_built(
    tmp_path, policy_path, capsys
):
    cases = [
        (["sim2sim", str(tmp_path / "nope.onnx"), "--seconds", "1"], "nope.onnx'"),
        (["run", str(policy_path), "--motion", str(tmp_path / "m.npz")], "--motion "),
        (["inspect", str(tmp_path)], "is a folder, not a file"),
    ]
    for argv, message in cases:
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1, err
        assert "give " in err or "folder" in err  # what a right value is


def test_sim2sim_of_a_policy_without_a_menagerie_robot_names_play_instead(
    tmp_path, make_meta, make_policy, capsys
):
    meta = make_meta()
    meta.task_id = "Mjlab-Cartpole-Balance"
    meta.robot.menagerie_name = None
    meta.robot.entry = None
    path = make_policy(tmp_path / "policy.onnx", np.zeros((48, 12)), np.zeros(12), meta)
    with pytest.raises(SystemExit) as exit_info:
        main(["sim2sim", str(path), "--seconds", "0.1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "play Mjlab-Cartpole-Balance --checkpoint-file" in err


@pytest.mark.slow
def test_a_bare_video_flag_writes_beside_the_policy(policy_path, capsys):
    pytest.importorskip("mujoco")
    pytest.importorskip("mujoco_menagerie")
    main(["sim2sim", str(policy_path), "--video", "--seconds", "0.2"])
    video = policy_path.parent / "videos" / "sim2sim.mp4"
    assert video.stat().st_size > 1000
    assert f"video: {video}" in capsys.readouterr().out


@pytest.mark.parametrize("subcommand", ["run", "sim2sim"])
def test_deploy_run_loads_the_policy_once_and_restores_the_signal_handlers(
    policy_path, subcommand, monkeypatch, capsys
):
    pytest.importorskip("mujoco")
    pytest.importorskip("mujoco_menagerie")
    import signal

    from mjlab.deploy.policy import OnnxPolicy

    loads = []
    real_init = OnnxPolicy.__init__

    def counted(self, *args, **kwargs):  # the real constructor, counted
        loads.append(args[0] if args else kwargs.get("path"))
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(OnnxPolicy, "__init__", counted)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    args = [subcommand, str(policy_path), "--seconds", "0.1", "--command", "0,0,0"]
    main([*args, "--no-realtime"] if subcommand == "run" else args)
    out = capsys.readouterr().out
    assert ("ended in damping" if subcommand == "run" else "sim2sim") in out, out
    # Each load hashes the whole file and builds an onnxruntime session.
    assert len(loads) == 1, loads
    assert {s: signal.getsignal(s) for s in before} == before


def test_after_a_ctrl_c_in_process_deploy_run_restores_the_signal_handlers(
    policy_path, monkeypatch, capsys
):
    pytest.importorskip("mujoco")
    pytest.importorskip("mujoco_menagerie")
    import os
    import signal

    from mjlab.deploy.mujoco_robot import MujocoRobot

    real_after_cycle = MujocoRobot.after_cycle

    def ctrl_c_at_cycle_3(self, loop):
        real_after_cycle(self, loop)
        if loop.stats.cycles == 3:  # twice, as `uv run` forwards it
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(MujocoRobot, "after_cycle", ctrl_c_at_cycle_3)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with pytest.raises(SystemExit) as stop:
        main(["run", str(policy_path), "--seconds", "5", "--no-realtime", "--command", "0,0,0"])
    out = capsys.readouterr().out
    assert stop.value.code == 128 + signal.SIGINT
    summary = next(line for line in out.splitlines() if line.startswith("loop "))
    assert summary.split()[1] == "3", summary  # stopped after the cycle under way
    assert "ended in damping (stopped by SIGINT)" in out
    assert {s: signal.getsignal(s) for s in before} == before

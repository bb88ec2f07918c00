"""A tracking policy on the robot side: the exported metadata names its motion, the robot-side
`MotionPlayer` plays the same file (checked by content hash) and the plain-MuJoCo robot computes
the same motion terms as the env, frame by frame. Real MuJoCo, real onnxruntime."""

import json

import numpy as np
import pytest
import torch

from mjlab.deploy import MotionPlayer, OnnxPolicy
from mjlab.deploy.cli import main as deploy_main
from mjlab.deploy.motion import motion_content_hash
from mjlab.deploy.mujoco_robot import MujocoRobot
from mjlab.envs import ManagerBasedRlEnv
from mjlab.export import metadata_from_env
from mjlab.tasks import load_env_cfg
from mjlab.tasks.tracking.motion import ARRAY_FIELDS
from mjlab.tasks.tracking.synthetic import g1_synthetic_motion

TASK = "Mjlab-Tracking-Flat-Unitree-G1"


@pytest.fixture(scope="module")
def squat():
    return g1_synthetic_motion("squat")


@pytest.fixture
def exported(tmp_path, squat, linear_policy_file):
    cfg = load_env_cfg(TASK, play=True)
    cfg.scene.num_envs = 1
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    meta = metadata_from_env(env, task_id=TASK)
    policy = linear_policy_file(tmp_path / "policy.onnx", meta)
    motion = squat.save(tmp_path / "squat.npz")
    yield env, meta, policy, motion
    env.close()


def test_both_packages_compute_the_same_motion_content_hash(squat):
    arrays = {k: getattr(squat, k) for k in ARRAY_FIELDS}
    digest = motion_content_hash(squat.fps, list(squat.joint_names), list(squat.body_names), arrays)
    assert digest == squat.content_hash()


def test_the_metadata_names_the_motion_and_the_robot_computes_the_envs_motion_terms(
    exported, squat
):
    env, meta, policy, motion = exported
    spec = meta.motion
    assert spec.command_name == "motion" and spec.anchor_body == "torso_link"
    assert len(spec.body_names) == 14 and spec.fps == 50.0 and spec.num_frames == 251
    assert spec.content_hash == squat.content_hash() and spec.source == "synthetic: squat"
    assert OnnxPolicy(policy).metadata.motion == spec  # survives the file's JSON
    robot = MujocoRobot(OnnxPolicy(policy), motion=motion)
    zero = torch.zeros(1, env.action_manager.total_action_dim)
    for step in range(6):
        raw = env.observation_manager.raw_terms("actor")
        terms = robot.observe_terms()
        assert set(terms) == set(raw) - {"actions"}  # the control loop adds the last action
        for name, value in terms.items():
            want = raw[name][0].numpy()
            # The same physics and the same formulas: equal up to float32 rounding.
            assert np.allclose(value, want, atol=1e-5), (step, name, np.abs(value - want).max())
        assert robot.motion.frame == env.command_manager.get_term("motion").time_steps[0]
        env.step(zero)
        from mjlab.deploy.control import JointCommand

        robot.send(
            JointCommand(
                q_target=np.asarray(meta.action_offset),
                kp=np.asarray(meta.stiffness),
                kd=np.asarray(meta.damping),
            )
        )
        robot.motion.advance()  # a control loop does this after each policy cycle
    assert json.loads(meta.to_json())["schema_version"] == 3


def test_the_player_refuses_another_motion_and_a_tracking_policy_needs_its_file(
    exported, tmp_path, capsys
):
    _, meta, policy, _ = exported
    other = g1_synthetic_motion("arm_swing").save(tmp_path / "swing.npz")
    with pytest.raises(ValueError, match="not the motion this policy was trained on"):
        MotionPlayer(other, meta)
    # A damaged copy of the right file is refused by its zip CRC-32s, naming the file.
    _, _, _, motion = exported
    damaged = tmp_path / "damaged.npz"
    raw = bytearray(motion.read_bytes())
    raw[200:208] = bytes(b ^ 0xFF for b in raw[200:208])
    damaged.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="damaged") as err:
        MotionPlayer(damaged, meta)
    assert str(damaged) in str(err.value)
    with pytest.raises(TypeError, match="frame must be an integer"):
        MotionPlayer(motion, meta).reset(2.5)
    with pytest.raises(SystemExit) as exit_info:
        deploy_main(["sim2sim", str(policy)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--motion" in err


def test_deploy_sim2sim_plays_the_motion_and_reports_the_tracking_error(exported, capsys):
    _, _, policy, motion = exported
    try:  # exit status 1 when the robot falls
        deploy_main(["sim2sim", str(policy), "--motion", str(motion)])
    except SystemExit as exit_info:
        assert exit_info.code == 1
    out = capsys.readouterr().out
    assert "sim2sim motion:" in out and "mean body position error" in out


def test_the_player_aligns_the_reference_to_where_the_robot_stands(exported, squat):
    _, meta, _, motion = exported
    player = MotionPlayer(motion, meta)
    yaw = 0.7
    quat = np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
    anchor = squat.body_names.index("torso_link")
    ref_quat = squat.body_quat_w[0, anchor].astype(np.float64)
    from mjlab.deploy.frames import quat_mul

    robot_quat = quat_mul(quat, ref_quat)
    robot_pos = np.array([3.0, -2.0, 0.9])
    player.align(robot_pos, robot_quat)
    terms = player.terms(robot_pos, robot_quat)
    pos, _ = player.anchor_pose_w()
    # Aligned: the reference anchor is over the robot's (the height stays the motion's) with
    # the same heading, so the anchor orientation term is the identity's columns.
    assert np.allclose(pos[:2], robot_pos[:2]) and np.isclose(
        pos[2], squat.body_pos_w[0, anchor, 2]
    )
    assert np.allclose(terms["motion_anchor_ori_b"], [1, 0, 0, 1, 0, 0], atol=1e-6)


@pytest.mark.slow
def test_a_tracking_policy_trained_by_the_train_command_plays_its_motion_in_deploy(
    tmp_path, capsys
):
    """`mjlab-motion synthetic` -> train on that file (2 small iterations) -> policy.onnx with
    the motion in its metadata and motion.npz beside it -> `deploy sim2sim --motion`."""
    import os
    import subprocess
    import sys

    from mjlab.tasks.tracking import cli as motion_cli

    motion_cli.main(["synthetic", "arm_swing", "-o", str(tmp_path / "swing.npz")])
    digest = capsys.readouterr().out.split("content hash: ")[1].split()[0]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "mjlab.rl.scripts.train",
            TASK + "-No-State-Estimation",
            "--env.scene.num-envs",
            "32",
            "--agent.num-steps-per-env",
            "8",
            "--agent.max-iterations",
            "2",
            "--agent.logger",
            "tensorboard",
            "--env.commands.motion.motion-file",
            str(tmp_path / "swing.npz"),
        ],
        cwd=tmp_path,
        env=dict(os.environ, CUDA_VISIBLE_DEVICES=""),
        check=True,
        capture_output=True,
        timeout=600,
    )
    (run,) = (tmp_path / "logs" / "rsl_rl" / "g1_tracking").iterdir()
    policy = OnnxPolicy(run / "policy.onnx")
    assert policy.metadata.task_id == TASK + "-No-State-Estimation"
    names = [t.func for t in policy.metadata.observations]
    assert "motion_anchor_ori_b" in names and "motion_anchor_pos_b" not in names
    assert policy.metadata.motion.content_hash == digest  # the file given on the command line
    # The train command wrote the motion it trained on beside the policy.
    assert MotionPlayer(run / "motion.npz", policy.metadata).num_frames == 201
    try:  # exit status 1 when the robot falls, as two iterations' policy may
        deploy_main(["sim2sim", str(run / "policy.onnx"), "--motion", str(tmp_path / "swing.npz")])
    except SystemExit as exit_info:
        assert exit_info.code == 1
    assert "sim2sim motion:" in capsys.readouterr().out


def test_deploy_run_starts_the_motion_when_the_policy_takes_over(exported):
    from mjlab.deploy.cli import run

    _, _, policy, motion = exported
    stats, robot, _ = run(
        policy, "mujoco", (), seconds=0.6, soft_start_s=0.2, realtime=False, motion=motion
    )
    # 10 soft-start cycles hold the motion at frame 0; each policy cycle advances it by one.
    assert stats.policy_cycles > 0 and stats.cycles > stats.policy_cycles
    assert robot.motion.frame == stats.policy_cycles

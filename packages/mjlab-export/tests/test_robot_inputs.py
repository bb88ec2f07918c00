"""Robot-side inputs are validated before the loop starts: a motion's anchor pose, the
command and the video path of `deploy sim2sim`. Real numpy motion files, real onnxruntime."""

import numpy as np
import pytest

from mjlab.deploy import CommandSpec, MotionPlayer
from mjlab.deploy.cli import main
from mjlab.deploy.metadata import MotionSpec
from mjlab.deploy.motion import ARRAY_FIELDS, motion_content_hash

JOINTS = ["a", "b", "c"]
BODIES = ["base", "tip"]


def _motion_file(path, fps=50.0, frames=4):
    rng = np.random.default_rng(0)
    quat = np.zeros((frames, len(BODIES), 4), np.float32)
    quat[..., 0] = 1.0
    arrays = {
        "joint_pos": rng.uniform(-0.5, 0.5, (frames, len(JOINTS))).astype(np.float32),
        "joint_vel": np.zeros((frames, len(JOINTS)), np.float32),
        "body_pos_w": rng.uniform(0.0, 1.0, (frames, len(BODIES), 3)).astype(np.float32),
        "body_quat_w": quat,
        "body_lin_vel_w": np.zeros((frames, len(BODIES), 3), np.float32),
        "body_ang_vel_w": np.zeros((frames, len(BODIES), 3), np.float32),
    }
    assert set(arrays) == set(ARRAY_FIELDS)
    np.savez(path, fps=fps, joint_names=JOINTS, body_names=BODIES, **arrays)
    return motion_content_hash(fps, JOINTS, BODIES, arrays), frames


@pytest.fixture
def player(tmp_path, go1_meta):
    path = tmp_path / "motion.npz"
    digest, frames = _motion_file(path)
    meta = go1_meta
    meta.commands = [CommandSpec(name="motion", dim=2 * len(JOINTS))]
    meta.motion = MotionSpec(
        command_name="motion",
        anchor_body="base",
        body_names=BODIES,
        fps=50.0,
        num_frames=frames,
        content_hash=digest,
    )
    return MotionPlayer(path, meta)


@pytest.mark.parametrize(
    ("pos", "quat", "named"),
    [
        ([0.0, np.nan, 0.8], [1.0, 0.0, 0.0, 0.0], "anchor_pos_w"),
        ([0.0, 0.0, 0.8], [np.nan, 0.0, 0.0, 0.0], "anchor_quat_w"),
        ([0.0, 0.0, 0.8], [0.0, 0.0, 0.0, 0.0], "anchor_quat_w"),
        ([0.0, 0.8], [1.0, 0.0, 0.0, 0.0], "anchor_pos_w"),
        ([0.0, 0.0, np.inf], [1.0, 0.0, 0.0, 0.0], "anchor_pos_w"),
    ],
)
def test_a_motion_reset_with_a_bad_anchor_pose_is_refused_and_changes_nothing(
    player, pos, quat, named
):
    player.reset(1, np.array([0.3, 0.2, 0.8]), np.array([1.0, 0.0, 0.0, 0.0]))
    before = player.anchor_pose_w()
    with pytest.raises(ValueError, match=named):
        player.reset(0, np.array(pos), np.array(quat))
    assert player.frame == 1
    for kept, now in zip(before, player.anchor_pose_w(), strict=True):
        np.testing.assert_array_equal(kept, now)
    terms = player.terms(np.array([0.3, 0.2, 0.8]), np.array([1.0, 0.0, 0.0, 0.0]))
    assert all(np.isfinite(v).all() for v in terms.values())


@pytest.fixture
def policy_path(tmp_path, go1_meta, make_policy):
    return make_policy(tmp_path / "policy.onnx", np.zeros((48, 12)), np.zeros(12), go1_meta)


@pytest.mark.parametrize("command", ["nan,0,0", "0,inf,0", "0,0,-inf"])
@pytest.mark.parametrize("subcommand", ["sim2sim", "run"])
def test_a_non_finite_command_is_a_one_line_error(policy_path, capsys, subcommand, command):
    with pytest.raises(SystemExit) as exit_info:
        main([subcommand, str(policy_path), "--command", command, "--seconds", "0.1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "--command" in err and "finite" in err


def test_a_video_path_that_cannot_be_written_is_refused_before_the_run(
    policy_path, tmp_path, capsys
):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    for video in (blocker / "run.mp4", tmp_path / "run.txt"):
        with pytest.raises(SystemExit) as exit_info:
            main(["sim2sim", str(policy_path), "--video", str(video), "--seconds", "0.1"])
        assert exit_info.value.code == 2
        captured = capsys.readouterr()
        assert len(captured.err.strip().splitlines()) == 1 and "--video" in captured.err
        assert "sim2sim " not in captured.out, "refused before the run"

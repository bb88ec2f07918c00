"""Motion files for the tracking tasks: the synthetic clips are physically plausible, velocities
agree with MuJoCo's own kinematics, the CSV converter reproduces a motion and refuses bad input
with one line naming the fix."""

import mujoco
import numpy as np
import pytest

from mjlab.tasks.robots import menagerie_spec
from mjlab.tasks.tracking import cli
from mjlab.tasks.tracking.motion import Motion, motion_from_csv
from mjlab.tasks.tracking.synthetic import g1_synthetic_motion


@pytest.fixture(scope="module")
def model():
    return menagerie_spec("unitree_g1", "scene_mjx").compile()


@pytest.fixture(scope="module")
def squat():
    return g1_synthetic_motion("squat")


def _qpos(motion: Motion, k: int) -> np.ndarray:
    return np.concatenate([motion.body_pos_w[k, 0], motion.body_quat_w[k, 0], motion.joint_pos[k]])


def test_the_synthetic_squat_keeps_both_feet_flat_on_the_ground_under_the_centre_of_mass(
    model, squat
):
    assert squat.source == "synthetic: squat"
    assert squat.fps == 50.0 and squat.num_frames == 251
    feet = [squat.body_names.index(n) for n in ("left_ankle_roll_link", "right_ankle_roll_link")]
    # Feet do not move (position and orientation) while the pelvis goes down ~8 cm and back.
    assert np.abs(squat.body_pos_w[:, feet] - squat.body_pos_w[:1, feet]).max() < 1e-5
    assert np.abs(np.abs(squat.body_quat_w[:, feet, 0]) - 1.0).max() < 1e-5
    pelvis_z = squat.body_pos_w[:, 0, 2]
    assert pelvis_z[0] - pelvis_z.min() > 0.07
    assert abs(pelvis_z[-1] - pelvis_z[0]) < 1e-6
    data = mujoco.MjData(model)
    lowest, com_x = [], []
    for k in range(0, squat.num_frames, 10):
        data.qpos[:] = _qpos(squat, k)
        mujoco.mj_forward(model, data)
        feet_geoms = [
            g
            for g in range(model.ngeom)
            if model.geom_bodyid[g]
            in (model.body(n).id for n in ("left_ankle_roll_link", "right_ankle_roll_link"))
            and model.geom_group[g] == 3
        ]
        lowest.append(min(data.geom_xpos[g][2] - model.geom_size[g][0] for g in feet_geoms))
        com_x.append(data.subtree_com[1][0])
        lo, hi = model.jnt_range[1:].T
        assert np.all((squat.joint_pos[k] >= lo) & (squat.joint_pos[k] <= hi))
    # The foot capsules touch z = 0 (their lowest points), and the centre of mass stays over the
    # soles (foot box from 5 cm behind to 13 cm ahead of the ankle).
    assert np.abs(np.array(lowest)).max() < 2e-3
    ankle_x = squat.body_pos_w[0, feet[0], 0]
    assert all(ankle_x - 0.05 < x < ankle_x + 0.13 for x in com_x)


def test_motion_velocities_agree_with_mujocos_kinematics(model, squat):
    """The file's body velocities (differences of poses) match MuJoCo's velocities for the same
    qpos and qvel: frames and conventions (world angular velocity, wxyz) are right."""
    data = mujoco.MjData(model)
    k = 110  # mid-squat, moving
    data.qpos[:] = _qpos(squat, k)
    quat = squat.body_quat_w[k, 0].astype(np.float64)
    data.qvel[:3] = squat.body_lin_vel_w[k, 0]
    ang_b = np.zeros(3)
    mujoco.mju_rotVecQuat(
        ang_b, squat.body_ang_vel_w[k, 0].astype(np.float64), quat * [1, -1, -1, -1]
    )
    data.qvel[3:6] = ang_b
    data.qvel[6:] = squat.joint_vel[k]
    mujoco.mj_forward(model, data)
    for i, name in enumerate(squat.body_names):
        body = model.body(name).id
        vel = np.zeros(6)
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_XBODY, body, vel, 0)
        assert np.allclose(vel[:3], squat.body_ang_vel_w[k, i], atol=2e-3), name
        assert np.allclose(vel[3:], squat.body_lin_vel_w[k, i], atol=2e-3), name


def test_a_motion_file_round_trips_with_the_same_content_hash(tmp_path, squat):
    path = squat.save(tmp_path / "squat.npz")
    again = Motion.load(path)
    assert (
        again.content_hash() == squat.content_hash() == g1_synthetic_motion("squat").content_hash()
    )
    assert again.joint_names == squat.joint_names and again.source == squat.source
    assert g1_synthetic_motion("arm_swing").content_hash() != squat.content_hash()


def test_a_file_that_is_not_a_motion_is_refused_naming_what_it_lacks(tmp_path):
    np.savez(tmp_path / "x.npz", fps=50.0, joint_pos=np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"lacks .*joint_names"):
        Motion.load(tmp_path / "x.npz")
    with pytest.raises(FileNotFoundError, match="mjlab-motion"):
        Motion.load(tmp_path / "missing.npz")


def _write_csv(path, squat, fps_stride=1, quat_order="xyzw"):
    rows = []
    for k in range(0, squat.num_frames, fps_stride):
        q = squat.body_quat_w[k, 0]
        quat = [q[1], q[2], q[3], q[0]] if quat_order == "xyzw" else list(q)
        rows.append([*squat.body_pos_w[k, 0], *quat, *squat.joint_pos[k]])
    np.savetxt(path, np.asarray(rows, dtype=np.float64), delimiter=",", fmt="%.9f")


def test_the_csv_converter_reproduces_the_motion_it_was_written_from(tmp_path, model, squat):
    _write_csv(tmp_path / "squat.csv", squat)
    motion = motion_from_csv(tmp_path / "squat.csv", model, fps=50.0, output_fps=None)
    assert motion.num_frames == squat.num_frames
    assert np.abs(motion.body_pos_w - squat.body_pos_w).max() < 1e-5
    assert np.abs(motion.body_ang_vel_w - squat.body_ang_vel_w).max() < 1e-3
    # 25 fps resampled to 50: every other frame is interpolated, close to the original.
    _write_csv(tmp_path / "half.csv", squat, fps_stride=2)
    resampled = motion_from_csv(tmp_path / "half.csv", model, fps=25.0, output_fps=50.0)
    assert resampled.num_frames == squat.num_frames
    assert np.abs(resampled.body_pos_w - squat.body_pos_w).max() < 2e-3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fps", "30"], None),
        ([], "does not record its frame rate; pass it with --fps"),
        (["--fps", "30", "--quat-order", "wxyz"], "row 1: the root quaternion .* --quat-order"),
    ],
)
def test_the_converter_command_refuses_bad_input_in_one_line(
    tmp_path, squat, capsys, args, message
):
    _write_csv(tmp_path / "m.csv", squat)
    out = tmp_path / "m.npz"
    if message is None:
        cli.main(["from-csv", str(tmp_path / "m.csv"), "-o", str(out), *args])
        assert "content hash" in capsys.readouterr().out
        assert Motion.load(out).fps == 50.0
        return
    # The xyzw columns read as wxyz: (x, y, z, w) of an upright root is (0, 0, 0, 1) -> norm 1
    # too, so break the quaternion for the wxyz case by scaling it.
    if "--quat-order" in args:
        rows = np.loadtxt(tmp_path / "m.csv", delimiter=",")
        rows[:, 3:7] *= 2.0
        np.savetxt(tmp_path / "m.csv", rows, delimiter=",")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["from-csv", str(tmp_path / "m.csv"), "-o", str(out), *args])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("mjlab-motion: error:")
    assert __import__("re").search(message, err), err


def test_a_csv_with_the_wrong_number_of_columns_names_what_the_robot_needs(tmp_path, model):
    np.savetxt(tmp_path / "bad.csv", np.zeros((4, 30)), delimiter=",")
    with pytest.raises(ValueError, match="30 columns per frame; this robot needs 36"):
        motion_from_csv(tmp_path / "bad.csv", model, fps=30.0)


def _convert(tmp_path, *args):
    return cli.main(["from-csv", str(tmp_path / "m.csv"), "-o", str(tmp_path / "m.npz"), *args])


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("mjlab-motion: error:"), err
    return err


def test_a_wxyz_csv_converted_as_xyzw_is_refused_as_upside_down(tmp_path, squat, capsys):
    _write_csv(tmp_path / "m.csv", squat, quat_order="wxyz")
    with pytest.raises(SystemExit) as stop:
        _convert(tmp_path, "--fps", "50")
    assert stop.value.code == 2
    err = _one_line_error(capsys)
    assert "upside down" in err and "--quat-order" in err
    assert not (tmp_path / "m.npz").exists()
    _convert(tmp_path, "--fps", "50", "--quat-order", "wxyz")  # the right order converts


def test_joint_angles_in_degrees_are_refused_with_a_degrees_hint(tmp_path, squat, capsys):
    _write_csv(tmp_path / "m.csv", squat)
    rows = np.loadtxt(tmp_path / "m.csv", delimiter=",")
    rows[:, 7:] = np.degrees(rows[:, 7:])
    np.savetxt(tmp_path / "m.csv", rows, delimiter=",")
    with pytest.raises(SystemExit):
        _convert(tmp_path, "--fps", "50")
    assert "Degrees?" in _one_line_error(capsys)


def test_a_root_position_in_centimetres_is_refused_naming_the_units(tmp_path, squat, capsys):
    _write_csv(tmp_path / "m.csv", squat)
    rows = np.loadtxt(tmp_path / "m.csv", delimiter=",")
    rows[:, :3] *= 100.0
    np.savetxt(tmp_path / "m.csv", rows, delimiter=",")
    with pytest.raises(SystemExit):
        _convert(tmp_path, "--fps", "50")
    assert "metres" in _one_line_error(capsys)


def test_a_jump_in_the_root_orientation_is_refused_naming_the_frames(tmp_path, squat, capsys):
    _write_csv(tmp_path / "m.csv", squat)
    rows = np.loadtxt(tmp_path / "m.csv", delimiter=",")
    rows[100:, 3:7] = [0.0, 0.0, np.sin(0.75), np.cos(0.75)]  # a 1.5 rad yaw step, xyzw
    np.savetxt(tmp_path / "m.csv", rows, delimiter=",")
    with pytest.raises(SystemExit):
        _convert(tmp_path, "--fps", "50")
    assert "jumps by 1.50 rad between frames 99 and 100" in _one_line_error(capsys)


def test_a_huge_output_fps_is_refused_before_anything_is_allocated(tmp_path, squat, capsys):
    import tracemalloc

    _write_csv(tmp_path / "m.csv", squat)
    tracemalloc.start()
    with pytest.raises(SystemExit):
        _convert(tmp_path, "--fps", "50", "--output-fps", "1e9")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert "--output-fps 1e+09 is beyond 1000 Hz" in _one_line_error(capsys)
    assert peak < 200e6


def test_info_on_a_text_file_is_one_line_without_pickle_advice(tmp_path, capsys):
    (tmp_path / "notes.npz").write_text("these are my notes\n")
    with pytest.raises(SystemExit):
        cli.main(["info", str(tmp_path / "notes.npz")])
    err = _one_line_error(capsys)
    assert "is not a .npz motion file" in err and "pickle" not in err


def test_a_damaged_motion_file_is_refused_naming_the_entry(tmp_path, squat):
    import zipfile

    path = squat.save(tmp_path / "squat.npz")
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("joint_pos.npy")
    raw = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 40
    raw[start : start + 8] = bytes(b ^ 0xFF for b in raw[start : start + 8])
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match="damaged") as err:
        Motion.load(path)
    assert str(path) in str(err.value)


def test_a_motion_file_without_checksums_is_refused_as_numpy_cannot_read_it(tmp_path, squat):
    # Unlike torch.load, np.load compares every entry with its stored CRC-32, also a 0 one
    # (a writer that skipped checksums): the early check must refuse what np.load would.
    import zipfile

    path = squat.save(tmp_path / "squat.npz")
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            raw[info.header_offset + 14 : info.header_offset + 18] = bytes(4)
    at = raw.find(b"PK\x01\x02")
    while at >= 0:
        raw[at + 16 : at + 20] = bytes(4)
        at = raw.find(b"PK\x01\x02", at + 4)
    path.write_bytes(bytes(raw))
    with pytest.raises(zipfile.BadZipFile):
        np.load(path)["joint_pos"]
    with pytest.raises(ValueError, match="does not match its CRC-32"):
        Motion.load(path)

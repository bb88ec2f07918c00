"""Reference motions for whole-body tracking: the `.npz` motion file, forward kinematics of a
joint trajectory, and conversion from a retargeted CSV.

A motion file is a numpy `.npz` archive whose schema (keys, shapes, dtypes, units), checks and
content hash are `mjlab.deploy.motion`'s (`REQUIRED_KEYS`, `ARRAY_FIELDS`, `array_shapes`,
`check_motion`, `motion_content_hash`), the one definition that the robot side's `MotionPlayer`
reads the same file with. Per frame: joint positions and velocities (T, J), and every body's
world pose and velocities (T, B, ...), float32; plus `fps`, `joint_names`, `body_names` and
an optional `source`.

Velocities are central finite differences of the poses (one-sided at the ends), so a file is
consistent with its own poses. `Motion.content_hash()` identifies a motion by its contents (not
by the archive's bytes); an exported tracking policy records it.
"""

from __future__ import annotations

import os
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from mjlab.deploy.frames import quat_conjugate, quat_mul, rotation_vector
from mjlab.deploy.frames import quat_slerp as quat_slerp
from mjlab.deploy.motion import ARRAY_FIELDS as ARRAY_FIELDS
from mjlab.deploy.motion import QUAT_NORM_TOL as _QUAT_NORM_TOL
from mjlab.deploy.motion import check_motion, missing_keys, motion_content_hash


@dataclass(frozen=True)
class Motion:
    """A reference motion (the file layout: `mjlab.deploy.motion`).

    Raises:
        ValueError: inconsistent shapes, a non-positive fps, non-finite values or non-unit
            quaternions (`mjlab.deploy.motion.check_motion`; the message names the field).
    """

    fps: float
    joint_names: tuple[str, ...]
    body_names: tuple[str, ...]
    joint_pos: np.ndarray
    joint_vel: np.ndarray
    body_pos_w: np.ndarray
    body_quat_w: np.ndarray
    body_lin_vel_w: np.ndarray
    body_ang_vel_w: np.ndarray
    source: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.fps, (np.floating, np.integer)):
            object.__setattr__(self, "fps", float(self.fps))
        if not (isinstance(self.fps, (int, float)) and np.isfinite(self.fps) and self.fps > 0):
            raise ValueError(
                f"Motion.fps must be a positive number of frames per second, got {self.fps!r}."
            )
        for name in ARRAY_FIELDS:
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.float32))
        check_motion(
            self.joint_names, self.body_names, {name: getattr(self, name) for name in ARRAY_FIELDS}
        )

    @property
    def num_frames(self) -> int:
        return int(self.joint_pos.shape[0])

    @property
    def duration_s(self) -> float:
        """Time from the first to the last frame, s."""
        return (self.num_frames - 1) / self.fps

    def content_hash(self) -> str:
        """sha256 (hex) of fps, names and the float32 arrays: equal for equal motions, whatever
        the archive's compression or timestamps (`mjlab.deploy.motion.motion_content_hash`)."""
        return motion_content_hash(
            self.fps,
            self.joint_names,
            self.body_names,
            {name: getattr(self, name) for name in ARRAY_FIELDS},
        )

    def save(self, path: str | os.PathLike) -> Path:
        """Write the motion as `.npz` (compressed); returns the path written."""
        path = Path(path)
        if path.suffix != ".npz":
            path = (
                path.with_suffix(path.suffix + ".npz") if path.suffix else path.with_suffix(".npz")
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {name: getattr(self, name) for name in ARRAY_FIELDS}
        np.savez_compressed(
            path,
            fps=np.float64(self.fps),
            joint_names=np.array(self.joint_names),
            body_names=np.array(self.body_names),
            source=np.array(self.source),
            **arrays,
        )
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> Motion:
        """Read a motion file.

        Raises:
            FileNotFoundError: no such file.
            ValueError: not a zip archive (`.npz`), damaged (an entry that fails its CRC-32
                is named), not a motion file (a missing entry is named) or inconsistent
                contents.
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(
                f"No motion file at {path}. Make one with `mjlab-motion from-csv` or "
                "`mjlab-motion synthetic`."
            )
        check_npz_archive(path)
        try:
            archive = np.load(path, allow_pickle=False)
        except Exception as err:
            raise ValueError(f"{path} is not a numpy .npz motion file ({_reason(err)}).") from err
        with archive:
            missing = missing_keys(archive)
            if missing:
                raise ValueError(
                    f"{path} is not an mjlab motion file: it lacks {missing}. See "
                    "mjlab.tasks.tracking.motion for the layout."
                )
            try:
                return cls(
                    fps=float(archive["fps"]),
                    joint_names=tuple(str(n) for n in archive["joint_names"]),
                    body_names=tuple(str(n) for n in archive["body_names"]),
                    source=str(archive["source"]) if "source" in archive else "",
                    **{name: archive[name] for name in ARRAY_FIELDS},
                )
            except ValueError as err:
                raise ValueError(f"{path}: {err}") from err

    def check_joints(self, joint_names: list[str] | tuple[str, ...], what: str) -> None:
        """Raise ValueError unless the motion's joints are exactly `joint_names` in order."""
        if tuple(joint_names) != self.joint_names:
            pairs = zip(self.joint_names, joint_names, strict=False)
            first = next((i for i, (a, b) in enumerate(pairs) if a != b), None)
            at = (
                f"first difference at joint {first}: motion '{self.joint_names[first]}', "
                f"model '{joint_names[first]}'"
                if first is not None
                else "one list is longer"
            )
            raise ValueError(
                f"The motion's {len(self.joint_names)} joints do not match the {len(joint_names)} "
                f"joints of {what} ({at}). Convert the motion with that robot's model."
            )


# --------------------------------------------------------------------------------------------
# Angular velocity of sampled orientations (quaternion math: mjlab.deploy.frames).
# --------------------------------------------------------------------------------------------


def angular_velocity(quat: np.ndarray, dt: float) -> np.ndarray:
    """World-frame angular velocity (T, ..., 3) rad/s of orientations (T, ..., 4) wxyz sampled
    every dt s: the rotation from frame t-1 to t+1 divided by 2 dt (one-sided at the ends)."""
    if quat.shape[0] < 2:
        return np.zeros((*quat.shape[:-1], 3))
    nxt = np.concatenate([quat[1:], quat[-1:]], axis=0)
    prv = np.concatenate([quat[:1], quat[:-1]], axis=0)
    span = np.full(quat.shape[0], 2.0 * dt)
    span[0] = span[-1] = dt
    # q_next = dq * q_prev with dq in the world frame.
    return rotation_vector(quat_mul(nxt, quat_conjugate(prv))) / span.reshape(
        -1, *([1] * (quat.ndim - 1))
    )


# --------------------------------------------------------------------------------------------
# Kinematics.
# --------------------------------------------------------------------------------------------


def _free_joint(model: mujoco.MjModel) -> int:
    free = [
        i for i in range(model.njnt) if int(model.jnt_type[i]) == int(mujoco.mjtJoint.mjJNT_FREE)
    ]
    if len(free) != 1 or model.jnt_qposadr[free[0]] != 0:
        raise ValueError(
            f"The model has {len(free)} free joints; motion kinematics needs a floating-base "
            "robot whose free joint comes first."
        )
    return free[0]


def model_joint_names(model: mujoco.MjModel) -> tuple[str, ...]:
    """The model's hinge and slide joints in model order (the order of a motion's joints)."""
    return tuple(model.joint(i).name for i in _actuable_joints(model))


def _actuable_joints(model: mujoco.MjModel) -> list[int]:
    keep = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    return [i for i in range(model.njnt) if int(model.jnt_type[i]) in keep]


def model_body_names(model: mujoco.MjModel) -> tuple[str, ...]:
    """Every body but the world, in model order (the order of a motion's bodies)."""
    return tuple(model.body(i).name for i in range(1, model.nbody))


def motion_from_qpos(
    model: mujoco.MjModel, qpos: np.ndarray, fps: float, source: str = ""
) -> Motion:
    """A motion from a generalized-position trajectory, by MuJoCo forward kinematics
    (`mj_kinematics`) and central differences.

    Args:
        model: a floating-base robot (its free joint first, then hinge/slide joints).
        qpos: (T, model.nq): root position (world, m), root quaternion (wxyz), joint positions.
        fps: frames per second of `qpos`.
        source: recorded in the file.

    Raises:
        ValueError: wrong shape, fps or model (the message says which).
    """
    _free_joint(model)
    qpos = np.asarray(qpos, dtype=np.float64)
    if qpos.ndim != 2 or qpos.shape[1] != model.nq:
        raise ValueError(f"qpos must be (T, {model.nq}) for this model, got {qpos.shape}.")
    if not (np.isfinite(fps) and fps > 0):
        raise ValueError(f"fps must be a positive number, got {fps!r}.")
    data = mujoco.MjData(model)
    t = qpos.shape[0]
    nb = model.nbody - 1
    pos = np.zeros((t, nb, 3))
    quat = np.zeros((t, nb, 4))
    for k in range(t):  # offline conversion, once per file: MuJoCo kinematics frame by frame
        data.qpos[:] = qpos[k]
        mujoco.mj_kinematics(model, data)
        pos[k] = data.xpos[1:]
        quat[k] = data.xquat[1:]
    dt = 1.0 / fps
    joints = _actuable_joints(model)
    joint_pos = qpos[:, model.jnt_qposadr[joints]]
    return Motion(
        fps=float(fps),
        joint_names=model_joint_names(model),
        body_names=model_body_names(model),
        joint_pos=joint_pos,
        joint_vel=np.gradient(joint_pos, dt, axis=0),
        body_pos_w=pos,
        body_quat_w=quat,
        body_lin_vel_w=np.gradient(pos, dt, axis=0),
        body_ang_vel_w=angular_velocity(quat, dt),
        source=source,
    )


def resample_qpos(qpos: np.ndarray, fps: float, output_fps: float) -> np.ndarray:
    """Resample a floating-base qpos trajectory (T, 7 + J) from `fps` to `output_fps`: linear
    interpolation of positions and joints, slerp of the root quaternion (wxyz)."""
    duration = (qpos.shape[0] - 1) / fps
    n = int(np.floor(duration * output_fps + 1e-9)) + 1
    times = np.arange(n) / output_fps * fps
    i0 = np.minimum(np.floor(times).astype(int), qpos.shape[0] - 1)
    i1 = np.minimum(i0 + 1, qpos.shape[0] - 1)
    frac = times - i0
    out = qpos[i0] + (qpos[i1] - qpos[i0]) * frac[:, None]
    out[:, 3:7] = quat_slerp(qpos[i0, 3:7], qpos[i1, 3:7], frac)
    return out


def motion_from_csv(
    path: str | os.PathLike,
    model: mujoco.MjModel,
    fps: float | None,
    quat_order: str = "xyzw",
    output_fps: float | None = None,
) -> Motion:
    """A motion from a retargeted CSV: one row per frame of root position (x, y, z, world, m),
    root quaternion (in `quat_order`) and the model's joint angles (rad) in model order. This
    is the layout of the public LAFAN1-to-G1 retargets (no header, quaternion xyzw, 30 fps).

    Args:
        path: the CSV file (comma-separated; a header row is skipped).
        model: the robot model the motion was retargeted to.
        fps: frames per second of the CSV (a CSV does not record it).
        quat_order: "xyzw" (scalar last) or "wxyz" (scalar first).
        output_fps: resample to this rate (e.g. the task's control rate, 50); None keeps `fps`.

    Raises:
        FileNotFoundError: no such file.
        ValueError: no fps, a wrong number of columns, a root quaternion that is not unit, joint
            angles outside the joints' ranges by more than `JOINT_RANGE_MARGIN` ("degrees?"),
            an output too large for memory (`check_output_size`, checked before resampling),
            or a reference that is not plausible (`check_plausible`: upside down, feet off the
            ground, jumps in the root orientation); the message names the likely cause.
    """
    path = Path(path)
    if fps is None:
        raise ValueError(
            f"{path.name}: a CSV does not record its frame rate; pass it with --fps "
            "(30 for the LAFAN1 retargets)."
        )
    if not (np.isfinite(fps) and fps > 0):
        raise ValueError(f"--fps must be a positive number, got {fps!r}.")
    if quat_order not in ("xyzw", "wxyz"):
        raise ValueError(f"--quat-order must be 'xyzw' or 'wxyz', got {quat_order!r}.")
    if output_fps is not None and not (np.isfinite(output_fps) and output_fps > 0):
        raise ValueError(f"--output-fps must be a positive number, got {output_fps!r}.")
    if not path.is_file():
        raise FileNotFoundError(
            f"No CSV file at {path} (relative to {Path.cwd()}); give the retargeted CSV to "
            "convert (per frame: root x y z, root quaternion, joint angles in model order)."
        )
    _free_joint(model)
    nj = model.nq - 7
    rows = _read_rows(path)
    if rows.shape[1] != 7 + nj:
        raise ValueError(
            f"{path.name} has {rows.shape[1]} columns per frame; this robot needs {7 + nj}: root "
            f"position (3), root quaternion (4) and its {nj} joint angles in model order "
            f"({', '.join(model_joint_names(model)[:3])}, ...)."
        )
    quat = rows[:, 3:7] if quat_order == "wxyz" else rows[:, [6, 3, 4, 5]]
    norm = np.linalg.norm(quat, axis=1)
    bad = np.flatnonzero(np.abs(norm - 1.0) > _QUAT_NORM_TOL)
    if bad.size:
        raise ValueError(
            f"{path.name} row {bad[0] + 1}: the root quaternion {rows[bad[0], 3:7].tolist()} has "
            f"norm {norm[bad[0]]:.3f}, not 1. Check the columns (root x y z, then the quaternion) "
            f"and --quat-order (now {quat_order})."
        )
    label = f"{path.name} (--quat-order {quat_order}, --fps {fps:g})"
    check_joint_ranges(rows[:, 7:], model_joint_names(model), model_joint_limits(model), label)
    qpos = np.concatenate([rows[:, :3], quat / norm[:, None], rows[:, 7:]], axis=1)
    if output_fps is not None and output_fps != fps:
        check_output_size(rows.shape[0], fps, output_fps, model)  # before allocating anything
        qpos = resample_qpos(qpos, fps, output_fps)
        fps = output_fps
    motion = motion_from_qpos(model, qpos, fps, source=f"csv: {path.name}")
    check_plausible(motion, label)
    return motion


def _read_rows(path: Path) -> np.ndarray:
    lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
    if not lines:
        raise ValueError(f"{path.name} is empty.")
    start = 0
    try:
        [float(x) for x in lines[0].split(",")]
    except ValueError:
        start = 1  # a header row
    rows = []
    for i, line in enumerate(lines[start:], start=start + 1):
        try:
            rows.append([float(x) for x in line.split(",")])
        except ValueError as err:
            raise ValueError(f"{path.name} line {i}: not comma-separated numbers ({err}).") from err
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise ValueError(f"{path.name}: rows have different numbers of columns {sorted(widths)}.")
    if len(rows) < 2:
        raise ValueError(f"{path.name} has {len(rows)} frame(s); a motion needs at least 2.")
    return np.asarray(rows, dtype=np.float64)


# --------------------------------------------------------------------------------------------
# Plausibility: what a wrong --quat-order, units or fps produce, refused where data enters.
# --------------------------------------------------------------------------------------------

JOINT_RANGE_MARGIN = 0.5
"""rad beyond a limited joint's range that a reference may reach (retargeting overshoots a
little; angles in degrees overshoot by tens of radians)."""
MAX_OUTPUT_FPS = 1000.0
"""The highest `--output-fps` (physics runs at <= 1 kHz; the tracking tasks step at 50 Hz)."""
MAX_OUTPUT_FRAMES = 2_000_000
"""The most frames a converted motion may have (11 h at 50 fps)."""
GROUND_TOLERANCE = 0.35
"""m: the lowest body origin of the first frame lies within this of z = 0 (feet on the ground)."""
MAX_ROOT_TURN_RATE = 30.0
"""rad/s between consecutive frames: faster than any human or robot pelvis turns."""


def check_npz_archive(path: str | os.PathLike) -> None:
    """Raise ValueError unless `path` is an undamaged zip archive (what `np.savez` writes):
    every entry is read and compared with its CRC-32. Never unpickles anything.

    Raises:
        ValueError: not a zip archive (the first bytes are shown), or a damaged or truncated
            archive (the failing entry is named).
    """
    path = Path(path)
    if not zipfile.is_zipfile(path):
        with path.open("rb") as handle:
            head = handle.read(12)
        if head.startswith(b"PK"):
            raise ValueError(
                f"{path} is a truncated or damaged .npz archive (its zip directory is missing); "
                "copy or convert it again."
            )
        raise ValueError(
            f"{path} is not a .npz motion file (a numpy zip archive; it starts with {head!r}). "
            "Make one with `mjlab-motion from-csv` or `mjlab-motion synthetic`."
        )
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError) as err:
        raise ValueError(f"{path} is damaged ({err}); copy or convert it again.") from None
    if bad is not None:
        raise ValueError(
            f"{path} is damaged: its entry '{bad}' does not match its CRC-32 (bit rot or an "
            "incomplete copy); copy or convert it again."
        )


def _reason(err: Exception) -> str:
    """numpy's message, without its advice to load untrusted data with allow_pickle."""
    text = str(err)
    if "pickle" in text:
        return "it holds pickled (object) data, which a motion file never has"
    return text


def check_joint_ranges(
    joint_pos: np.ndarray, joint_names: tuple[str, ...] | list[str], limits: np.ndarray, what: str
) -> None:
    """Raise ValueError when a joint angle of (T, J) `joint_pos` (rad) lies outside its joint's
    range by more than `JOINT_RANGE_MARGIN`.

    Args:
        joint_pos: (T, J) joint angles, rad.
        joint_names: the J joints' names.
        limits: (J, 2) [lower, upper] range per joint, rad; +-inf for an unlimited joint.
        what: names the data in the message.

    Raises:
        ValueError: naming the joint, the frame, the value and the range; "Degrees?" when the
            values look like degrees.
    """
    if joint_pos.size == 0:
        return
    lo, hi = limits[:, 0], limits[:, 1]
    excess = np.maximum(lo - joint_pos, joint_pos - hi)
    frame, joint = np.unravel_index(int(np.argmax(excess)), excess.shape)
    if not excess[frame, joint] > JOINT_RANGE_MARGIN:
        return
    value, largest = float(joint_pos[frame, joint]), float(np.abs(joint_pos).max())
    hint = (
        f" Degrees? The joint angles must be radians (the largest is {largest:.3g})."
        if largest > 2 * np.pi
        else " Check the joint columns' order (model order) and units (radians)."
    )
    raise ValueError(
        f"{what}: joint '{joint_names[joint]}' is {value:.3g} rad at frame {frame}, outside its "
        f"range [{lo[joint]:.3g}, {hi[joint]:.3g}] by more than {JOINT_RANGE_MARGIN} rad.{hint}"
    )


def model_joint_limits(model: mujoco.MjModel) -> np.ndarray:
    """(J, 2) range of the model's hinge/slide joints in model order; +-inf where unlimited."""
    joints = _actuable_joints(model)
    limited = model.jnt_limited[joints].astype(bool)
    return np.where(limited[:, None], model.jnt_range[joints], np.array([-np.inf, np.inf]))


def check_output_size(num_rows: int, fps: float, output_fps: float, model: mujoco.MjModel) -> int:
    """The number of frames resampling `num_rows` frames at `fps` to `output_fps` makes,
    checked before anything is allocated.

    Raises:
        ValueError: `output_fps` above `MAX_OUTPUT_FPS`, more than `MAX_OUTPUT_FRAMES` frames, or
            more memory than half of what the machine has available (the estimate is named).
    """
    if output_fps > MAX_OUTPUT_FPS:
        raise ValueError(
            f"--output-fps {output_fps:g} is beyond {MAX_OUTPUT_FPS:g} Hz; the tracking tasks "
            "step at 50 Hz (--output-fps 50)."
        )
    frames = int(np.floor((num_rows - 1) / fps * output_fps + 1e-9)) + 1
    nb = model.nbody - 1
    # float64 work arrays (qpos, kinematics, differences) and the float32 motion arrays.
    per_frame = 8 * (3 * model.nq + 20 * nb) + 4 * (2 * (model.nq - 7) + 13 * nb)
    need = frames * per_frame
    available = _available_memory()
    if frames > MAX_OUTPUT_FRAMES or (available is not None and need > available // 2):
        room = "" if available is None else f", {available / 2**30:.1f} GiB available"
        raise ValueError(
            f"--output-fps {output_fps:g} makes {frames} frames of {(num_rows - 1) / fps:.1f} s "
            f"(~{need / 2**30:.1f} GiB{room}); at most {MAX_OUTPUT_FRAMES} frames. Check --fps and "
            "--output-fps (the tracking tasks step at 50 Hz)."
        )
    return frames


def _available_memory() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_plausible(motion: Motion, what: str) -> None:
    """Raise ValueError unless `motion` starts the right way up on the ground and its root turns
    continuously: the first body (the root) is not upside down at frame 0, the lowest body
    origin of frame 0 is within `GROUND_TOLERANCE` of z = 0, and the root never turns faster
    than `MAX_ROOT_TURN_RATE` between frames.

    Args:
        motion: the motion (world frame z up, m; bodies in model order, the root first).
        what: names the data and its settings in the message (e.g. "walk.csv (--quat-order
            xyzw, --fps 30)").

    Raises:
        ValueError: the first implausible property, with its likely cause (the quaternion
            order, the units of the root position, the frame rate).
    """
    root_quat = motion.body_quat_w[:, 0].astype(np.float64)
    up_z = 1.0 - 2.0 * (root_quat[0, 1] ** 2 + root_quat[0, 2] ** 2)
    lowest = float(motion.body_pos_w[0, :, 2].min())
    if up_z < -0.5:
        raise ValueError(
            f"{what}: the root '{motion.body_names[0]}' is upside down at the first frame (its up "
            f"axis points {np.degrees(np.arccos(np.clip(up_z, -1, 1))):.0f} deg from world up). "
            "Likely the quaternion order: try the other --quat-order."
        )
    if abs(lowest) > GROUND_TOLERANCE:
        where = "above" if lowest > 0 else "below"
        cause = (
            "the root position looks like centimetres or millimetres: it must be metres"
            if abs(lowest) > 3.0
            else "likely the quaternion order (try the other --quat-order) or the root height "
            "column (z up, m)"
        )
        raise ValueError(
            f"{what}: at the first frame the lowest body is {abs(lowest):.2f} m {where} the "
            f"ground (feet should be within {GROUND_TOLERANCE} m of it); {cause}."
        )
    dot = np.abs((root_quat[1:] * root_quat[:-1]).sum(axis=1)).clip(max=1.0)
    rate = 2.0 * np.arccos(dot) * motion.fps
    if rate.size and rate.max() > MAX_ROOT_TURN_RATE:
        k = int(np.argmax(rate))
        raise ValueError(
            f"{what}: the root orientation jumps by {rate[k] / motion.fps:.2f} rad between "
            f"frames {k} and {k + 1} ({rate[k]:.0f} rad/s at {motion.fps:g} fps). Check the "
            "quaternion columns and --quat-order, and --fps."
        )

"""Reference motions for whole-body tracking: the `.npz` motion file, forward kinematics of a
joint trajectory, and conversion from a retargeted CSV.

A motion file is a numpy `.npz` archive with these entries (T frames, J joints, B bodies):

| key | shape, dtype | meaning |
|---|---|---|
| `fps` | () float64 | frames per second |
| `joint_names` | (J,) str | the model's hinge/slide joints, in model order |
| `body_names` | (B,) str | the robot's bodies, in model order (no world body) |
| `joint_pos` | (T, J) float32 | joint positions, rad (m for slide joints) |
| `joint_vel` | (T, J) float32 | joint velocities, rad/s |
| `body_pos_w` | (T, B, 3) float32 | body frame origins, world, m |
| `body_quat_w` | (T, B, 4) float32 | body orientations, world, wxyz |
| `body_lin_vel_w` | (T, B, 3) float32 | linear velocities of the body origins, world, m/s |
| `body_ang_vel_w` | (T, B, 3) float32 | angular velocities, world, rad/s |
| `source` | () str | where the motion came from (e.g. "synthetic: squat", a CSV's name) |

Velocities are central finite differences of the poses (one-sided at the ends), so a file is
consistent with its own poses. `Motion.content_hash()` identifies a motion by its contents (not
by the archive's bytes); an exported tracking policy records it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

ARRAY_FIELDS = (
    "joint_pos",
    "joint_vel",
    "body_pos_w",
    "body_quat_w",
    "body_lin_vel_w",
    "body_ang_vel_w",
)
"""The per-frame arrays of a motion file, in the order `Motion.content_hash` reads them."""
_QUAT_NORM_TOL = 1e-2


@dataclass(frozen=True)
class Motion:
    """A reference motion (see the module docstring for the file layout).

    Raises:
        ValueError: inconsistent shapes, a non-positive fps, non-finite values or non-unit
            quaternions (the message names the field).
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
        t, j, b = self.joint_pos.shape[0], len(self.joint_names), len(self.body_names)
        expected = {
            "joint_pos": (t, j),
            "joint_vel": (t, j),
            "body_pos_w": (t, b, 3),
            "body_quat_w": (t, b, 4),
            "body_lin_vel_w": (t, b, 3),
            "body_ang_vel_w": (t, b, 3),
        }
        if t < 2:
            raise ValueError(f"Motion has {t} frames; a motion needs at least 2.")
        for name, shape in expected.items():
            value = getattr(self, name)
            if value.shape != shape:
                raise ValueError(
                    f"Motion.{name} has shape {value.shape}; expected {shape} "
                    f"({t} frames, {j} joint names, {b} body names)."
                )
            if not np.isfinite(value).all():
                frame = int(np.argwhere(~np.isfinite(value))[0, 0])
                raise ValueError(f"Motion.{name} has NaN/Inf values (first at frame {frame}).")
        norm = np.linalg.norm(self.body_quat_w, axis=-1)
        if np.abs(norm - 1.0).max() > _QUAT_NORM_TOL:
            frame = int(np.argwhere(np.abs(norm - 1.0) > _QUAT_NORM_TOL)[0, 0])
            raise ValueError(f"Motion.body_quat_w is not unit (first at frame {frame}).")

    @property
    def num_frames(self) -> int:
        return int(self.joint_pos.shape[0])

    @property
    def duration_s(self) -> float:
        """Time from the first to the last frame, s."""
        return (self.num_frames - 1) / self.fps

    def content_hash(self) -> str:
        """sha256 (hex) of fps, names and the float32 arrays: equal for equal motions, whatever
        the archive's compression or timestamps."""
        h = hashlib.sha256()
        h.update(repr(float(self.fps)).encode())
        h.update("\n".join(self.joint_names).encode() + b"\0")
        h.update("\n".join(self.body_names).encode() + b"\0")
        for name in ARRAY_FIELDS:
            h.update(np.ascontiguousarray(getattr(self, name), dtype="<f4").tobytes())
        return h.hexdigest()

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
            ValueError: not a motion file (a missing entry is named) or inconsistent contents.
        """
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(
                f"No motion file at {path}. Make one with `mjlab-motion from-csv` or "
                "`mjlab-motion synthetic`."
            )
        try:
            archive = np.load(path, allow_pickle=False)
        except Exception as err:
            raise ValueError(f"{path} is not a numpy .npz motion file: {err}") from err
        with archive:
            missing = [
                k for k in ("fps", "joint_names", "body_names", *ARRAY_FIELDS) if k not in archive
            ]
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
# Quaternions (numpy, wxyz).
# --------------------------------------------------------------------------------------------


def _qmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def _qconj(q: np.ndarray) -> np.ndarray:
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def _rotation_vector(q: np.ndarray) -> np.ndarray:
    """Axis * angle (rad) of unit quaternions, angle in [0, pi]."""
    q = np.where(q[..., :1] < 0, -q, q)
    v = q[..., 1:]
    s = np.linalg.norm(v, axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., :1])
    # angle / sin(angle / 2) -> 2 as the angle -> 0.
    scale = np.where(s > 1e-12, angle / np.maximum(s, 1e-12), 2.0)
    return v * scale


def quat_slerp(q0: np.ndarray, q1: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Spherical linear interpolation of unit quaternions (..., 4) at fractions t (...)."""
    dot = (q0 * q1).sum(-1)
    q1 = np.where(dot[..., None] < 0, -q1, q1)
    dot = np.abs(dot).clip(max=1.0)
    theta = np.arccos(dot)
    sin = np.sin(theta)
    small = sin < 1e-6
    w0 = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / np.where(small, 1.0, sin))
    w1 = np.where(small, t, np.sin(t * theta) / np.where(small, 1.0, sin))
    q = w0[..., None] * q0 + w1[..., None] * q1
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


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
    return _rotation_vector(_qmul(nxt, _qconj(prv))) / span.reshape(-1, *([1] * (quat.ndim - 1)))


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
        ValueError: no fps, a wrong number of columns, or a root quaternion that is not unit
            (the message names the row and the likely fix).
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
    qpos = np.concatenate([rows[:, :3], quat / norm[:, None], rows[:, 7:]], axis=1)
    if output_fps is not None and output_fps != fps:
        qpos = resample_qpos(qpos, fps, output_fps)
        fps = output_fps
    return motion_from_qpos(model, qpos, fps, source=f"csv: {path.name}")


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

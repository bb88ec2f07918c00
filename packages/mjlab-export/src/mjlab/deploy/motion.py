"""`MotionPlayer`: play a tracking policy's reference motion on the robot side (numpy only).

A tracking policy (`Mjlab-Tracking-*`) reads, besides the robot's state, terms made from the
reference motion at the current frame: the command (reference joint positions and velocities)
and the reference anchor pose in the robot's anchor frame. `MotionPlayer` loads the motion file
(`.npz`, the schema below), checks that it is the motion the policy was trained on
(`DeploymentMetadata.motion.content_hash`), and produces those terms one frame per control step:

    player = MotionPlayer("motion.npz", policy.metadata)   # train writes it beside policy.onnx
    player.reset(0, anchor_pos_w, anchor_quat_w)      # frame 0, moved over the robot's anchor
    while not player.done:
        terms = player.terms(anchor_pos_w, anchor_quat_w)   # the robot's anchor pose (FK + IMU)
        ...                                           # with the robot's own terms, as usual
        player.advance()                              # after each cycle the policy acted in

Give `reset` the robot's anchor pose (or call `align`): the whole reference is then turned and
shifted about the world z axis so that its anchor is over the robot's with the robot's heading.
A robot does not stand where the motion was recorded, and training only saw a few centimetres
and 0.2 rad of difference at a start.

The motion file's schema lives here, once, for both sides (mjlab-core's
`mjlab.tasks.tracking.motion.Motion` writes and reads it with the same constants and checks): a
numpy `.npz` archive with these entries (T frames, J joints, B bodies):

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
| `source` | () str | optional: where the motion came from (e.g. "synthetic: squat") |

`REQUIRED_KEYS` are the entries a file must have, `array_shapes` the arrays' shapes,
`check_motion` the checks of their values and `motion_content_hash` the motion's identity.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import numpy as np

from mjlab.deploy.frames import (
    heading,
    quat_conjugate,
    quat_mul,
    quat_rotate,
    quat_rotate_inverse,
    yaw_quat,
)
from mjlab.deploy.indices import resolve_index
from mjlab.deploy.integrity import verify_zip_archive
from mjlab.deploy.metadata import DeploymentMetadata

ARRAY_FIELDS = (
    "joint_pos",
    "joint_vel",
    "body_pos_w",
    "body_quat_w",
    "body_lin_vel_w",
    "body_ang_vel_w",
)
"""The per-frame arrays of a motion file, in the order `motion_content_hash` reads them."""

REQUIRED_KEYS = ("fps", "joint_names", "body_names", *ARRAY_FIELDS)
"""The entries every motion file has (`source` is optional)."""

QUAT_NORM_TOL = 1e-2
"""Largest |norm - 1| of a motion's body quaternions (float32, written by forward kinematics)."""

TERMS = ("generated_commands", "motion_anchor_pos_b", "motion_anchor_ori_b")
"""Observation funcs a `MotionPlayer` provides."""


def missing_keys(entries: Collection[str]) -> list[str]:
    """The `REQUIRED_KEYS` that `entries` (an archive's names) lacks, in `REQUIRED_KEYS` order."""
    return [k for k in REQUIRED_KEYS if k not in entries]


def array_shapes(num_frames: int, num_joints: int, num_bodies: int) -> dict[str, tuple[int, ...]]:
    """The shape of each of `ARRAY_FIELDS` for a motion of T frames, J joints, B bodies:
    (T, J) for joint arrays, (T, B, 3) for positions and velocities, (T, B, 4) for quaternions.
    """
    t, j, b = num_frames, num_joints, num_bodies
    return {
        "joint_pos": (t, j),
        "joint_vel": (t, j),
        "body_pos_w": (t, b, 3),
        "body_quat_w": (t, b, 4),
        "body_lin_vel_w": (t, b, 3),
        "body_ang_vel_w": (t, b, 3),
    }


def check_motion(
    joint_names: Sequence[str],
    body_names: Sequence[str],
    arrays: Mapping[str, np.ndarray],
    owner: str = "Motion",
) -> None:
    """Raise ValueError unless a motion's arrays are consistent: at least 2 frames, each of
    `ARRAY_FIELDS` of its `array_shapes` and finite, unit body quaternions (`QUAT_NORM_TOL`).

    Args:
        joint_names: the J joint names.
        body_names: the B body names.
        arrays: every one of `ARRAY_FIELDS`, as arrays (T frames from `joint_pos`).
        owner: names the fields in the messages (`<owner>.<field>`).

    Raises:
        ValueError: the first inconsistency, naming the field (and the first bad frame).
    """
    t, j, b = arrays["joint_pos"].shape[0], len(joint_names), len(body_names)
    if t < 2:
        raise ValueError(f"{owner} has {t} frames; a motion needs at least 2.")
    for name, shape in array_shapes(t, j, b).items():
        value = arrays[name]
        if value.shape != shape:
            raise ValueError(
                f"{owner}.{name} has shape {value.shape}; expected {shape} "
                f"({t} frames, {j} joint names, {b} body names)."
            )
        if not np.isfinite(value).all():
            frame = int(np.argwhere(~np.isfinite(value))[0, 0])
            raise ValueError(f"{owner}.{name} has NaN/Inf values (first at frame {frame}).")
    norm = np.linalg.norm(arrays["body_quat_w"], axis=-1)
    if np.abs(norm - 1.0).max() > QUAT_NORM_TOL:
        frame = int(np.argwhere(np.abs(norm - 1.0) > QUAT_NORM_TOL)[0, 0])
        raise ValueError(f"{owner}.body_quat_w is not unit (first at frame {frame}).")


def motion_content_hash(
    fps: float,
    joint_names: Sequence[str],
    body_names: Sequence[str],
    arrays: Mapping[str, np.ndarray],
) -> str:
    """sha256 (hex) of a motion's fps, names and float32 arrays: equal for equal motions,
    whatever the archive's compression or timestamps. `Motion.content_hash` (mjlab-core) is
    this function; an exported tracking policy records it (`MotionSpec.content_hash`)."""
    h = hashlib.sha256()
    h.update(repr(float(fps)).encode())
    h.update("\n".join(joint_names).encode() + b"\0")
    h.update("\n".join(body_names).encode() + b"\0")
    for name in ARRAY_FIELDS:
        h.update(np.ascontiguousarray(arrays[name], dtype="<f4").tobytes())
    return h.hexdigest()


def _matrix_columns(q: np.ndarray) -> np.ndarray:
    """The first two columns of R(q) as (6,) = (R00, R01, R10, R11, R20, R21), the layout of
    the tracking tasks' 6D orientation terms."""
    w, x, y, z = q / np.linalg.norm(q)
    r = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )
    return r[:, :2].reshape(-1)


class MotionPlayer:
    """A reference motion played one frame per control step.

    Args:
        path: the motion file (.npz).
        metadata: the tracking policy's metadata (`OnnxPolicy.metadata`).

    Raises:
        FileNotFoundError: no such file.
        ValueError: the policy is not a tracking policy, the file is not a motion file or is
            damaged (a zip entry that fails its CRC-32), it is not the motion the policy was
            trained on (a different content hash, joints or rate), or its arrays are
            inconsistent (`check_motion`).
    """

    def __init__(self, path: str | os.PathLike, metadata: DeploymentMetadata):
        spec = metadata.motion
        if spec is None:
            raise ValueError(
                f"The policy of task '{metadata.task_id}' has no reference motion in its "
                "metadata: it is not a tracking policy."
            )
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"No motion file at {self.path}.")
        verify_zip_archive(self.path, what=".npz motion file")
        try:
            archive = np.load(self.path, allow_pickle=False)
        except Exception as err:
            raise ValueError(f"{self.path} is not a numpy .npz motion file: {err}") from err
        with archive:
            missing = missing_keys(archive)
            if missing:
                raise ValueError(f"{self.path} is not an mjlab motion file: it lacks {missing}.")
            fps = float(archive["fps"])
            joint_names = [str(n) for n in archive["joint_names"]]
            body_names = [str(n) for n in archive["body_names"]]
            arrays = {k: np.asarray(archive[k], dtype=np.float32) for k in ARRAY_FIELDS}
        digest = motion_content_hash(fps, joint_names, body_names, arrays)
        if digest != spec.content_hash:
            remake = ""
            if spec.source.startswith("synthetic: "):
                clip = spec.source.partition(": ")[2]
                remake = f" (or make it again: mjlab-motion synthetic {clip} -o FILE.npz)"
            raise ValueError(
                f"{self.path.name} is not the motion this policy was trained on (content hash "
                f"{digest[:12]}..., the policy's {spec.content_hash[:12]}..., "
                f"source '{spec.source}'). Use the motion.npz that train wrote beside "
                f"policy.onnx (<stem>_motion.npz beside a file export-onnx wrote){remake}."
            )
        try:
            check_motion(joint_names, body_names, arrays)
        except ValueError as err:  # the hash does not cover the arrays' shapes
            raise ValueError(f"{self.path}: {err}") from err
        command = next((c for c in metadata.commands if c.name == spec.command_name), None)
        if command is None or command.dim != 2 * len(joint_names):
            raise ValueError(
                f"{self.path.name} has {len(joint_names)} joints, so its command has "
                f"{2 * len(joint_names)} values; the policy's command '{spec.command_name}' has "
                f"{None if command is None else command.dim}."
            )
        if abs(fps * metadata.step_dt - 1.0) > 1e-6:
            raise ValueError(
                f"{self.path.name} has {fps:g} frames per second; the policy runs at "
                f"{1.0 / metadata.step_dt:g} Hz."
            )
        self.metadata = metadata
        self.spec = spec
        self.fps = fps
        self.num_frames = int(arrays["joint_pos"].shape[0])
        self.joint_names = joint_names
        """The motion's joints, in the order of its command (the model's joint order)."""
        self.joint_pos = arrays["joint_pos"].astype(np.float64)
        """(T, num_joints) reference joint positions, `joint_names` order, rad."""
        self.joint_vel = arrays["joint_vel"].astype(np.float64)
        """(T, num_joints) reference joint velocities, rad/s."""
        self.body_names = body_names
        index = {n: i for i, n in enumerate(body_names)}
        self._anchor = index[spec.anchor_body]
        self._tracked = [index[n] for n in spec.body_names]
        self._body_pos = arrays["body_pos_w"].astype(np.float64)
        self._body_quat = arrays["body_quat_w"].astype(np.float64)
        self._body_lin_vel = arrays["body_lin_vel_w"].astype(np.float64)
        self._body_ang_vel = arrays["body_ang_vel_w"].astype(np.float64)
        self._yaw_offset = yaw_quat(0.0)
        self._pos_offset = np.zeros(3)
        self.frame = 0
        """The current frame."""

    # -- time -----------------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """Whether the last frame has been reached."""
        return self.frame >= self.num_frames - 1

    def reset(
        self,
        frame: int = 0,
        anchor_pos_w: np.ndarray | None = None,
        anchor_quat_w: np.ndarray | None = None,
    ) -> None:
        """Go to `frame`; given the robot's anchor pose (world position m, quaternion wxyz),
        also `align` the reference to it (otherwise the alignment is kept).

        Raises:
            TypeError: a frame that is not an integer (a float is never rounded).
            ValueError: a frame outside the motion, only one of the two pose arguments, or a
                pose that is not finite, of the wrong shape or a zero quaternion (see `align`);
                nothing is changed then.
        """
        frame = resolve_index(frame, self.num_frames, "frame")
        if (anchor_pos_w is None) != (anchor_quat_w is None):
            raise ValueError("Give both anchor_pos_w and anchor_quat_w to align, or neither.")
        if anchor_pos_w is not None and anchor_quat_w is not None:
            _check_anchor_pose(anchor_pos_w, anchor_quat_w)
        self.frame = int(frame)
        if anchor_pos_w is not None and anchor_quat_w is not None:
            self.align(anchor_pos_w, anchor_quat_w)

    def advance(self) -> None:
        """One control step forward (stays at the last frame)."""
        self.frame = min(self.frame + 1, self.num_frames - 1)

    def align(self, anchor_pos_w: np.ndarray, anchor_quat_w: np.ndarray) -> None:
        """Turn and shift the reference about the world z axis so that the current frame's
        anchor has the robot anchor's x, y and heading (the heading of q_robot q_ref^-1, as the
        task's relative reference; its height and tilt stay the motion's).

        Raises:
            ValueError: `anchor_pos_w` is not 3 finite numbers (m) or `anchor_quat_w` not 4
                finite numbers of non-zero norm (wxyz): a bad estimate would otherwise put NaN
                into every later motion term. The alignment is kept then.
        """
        anchor_pos_w, robot_quat = _check_anchor_pose(anchor_pos_w, anchor_quat_w)
        # The heading of q_robot q_ref^-1, as the task's relative reference measures it.
        ref_quat = self._body_quat[self.frame, self._anchor]
        self._yaw_offset = yaw_quat(heading(quat_mul(robot_quat, quat_conjugate(ref_quat))))
        turned = quat_rotate(self._yaw_offset, self._body_pos[self.frame, self._anchor])
        self._pos_offset = np.array([anchor_pos_w[0] - turned[0], anchor_pos_w[1] - turned[1], 0.0])

    # -- the reference at the current frame (aligned) -------------------------------------------
    def command(self) -> np.ndarray:
        """(2 * num_joints,) reference joint positions then velocities: the command term."""
        return np.concatenate([self.joint_pos[self.frame], self.joint_vel[self.frame]])

    def body_pose_w(self, body: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(pos (..., 3) m, quat (..., 4) wxyz) of one motion body (index into `body_names`) or,
        with None, of the tracked bodies (the metadata's order), world, aligned."""
        ids = self._tracked if body is None else body
        pos = self._body_pos[self.frame, ids]
        quat = self._body_quat[self.frame, ids]
        w, _, _, z = self._yaw_offset
        cos, sin = w * w - z * z, 2.0 * w * z  # the yaw turn as a rotation about z
        turn = np.array([[cos, -sin, 0.0], [sin, cos, 0.0], [0.0, 0.0, 1.0]])
        # q' = yaw * q for a pure-z yaw quaternion (w, 0, 0, z), written out.
        qw, qx, qy, qz = np.moveaxis(quat, -1, 0)
        turned = np.stack(
            [w * qw - z * qz, w * qx - z * qy, w * qy + z * qx, w * qz + z * qw], axis=-1
        )
        return pos @ turn.T + self._pos_offset, turned

    def anchor_pose_w(self) -> tuple[np.ndarray, np.ndarray]:
        """(pos (3,) m, quat (4,) wxyz) of the reference anchor, world, aligned."""
        return self.body_pose_w(self._anchor)

    def root_state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The reference root body (the motion's first body) at the current frame, aligned:
        position (3,) m, quaternion (4,) wxyz, linear velocity (3,) m/s, angular velocity (3,)
        rad/s, all world: to start a simulated robot on the motion."""
        pos, quat = self.body_pose_w(0)
        lin = quat_rotate(self._yaw_offset, self._body_lin_vel[self.frame, 0])
        ang = quat_rotate(self._yaw_offset, self._body_ang_vel[self.frame, 0])
        return pos, quat, lin, ang

    def terms(self, anchor_pos_w: np.ndarray, anchor_quat_w: np.ndarray) -> dict[str, np.ndarray]:
        """The motion's observation terms by func (`TERMS`), given the robot's anchor body pose
        (world position m, quaternion wxyz; from the robot's kinematics and state estimate)."""
        ref_pos, ref_quat = self.anchor_pose_w()
        robot_quat = np.asarray(anchor_quat_w, dtype=np.float64)
        return {
            "generated_commands": self.command(),
            "motion_anchor_pos_b": quat_rotate_inverse(
                robot_quat, ref_pos - np.asarray(anchor_pos_w, dtype=np.float64)
            ),
            "motion_anchor_ori_b": _matrix_columns(quat_mul(quat_conjugate(robot_quat), ref_quat)),
        }


def _check_anchor_pose(pos: np.ndarray, quat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(pos (3,), quat (4,)) as float64 arrays, or ValueError naming the argument."""
    p = np.asarray(pos, dtype=np.float64)
    q = np.asarray(quat, dtype=np.float64)
    if p.shape != (3,) or not np.isfinite(p).all():
        raise ValueError(
            f"anchor_pos_w must be 3 finite numbers (world position, m), got {p.tolist()}: "
            "check the robot's state estimate before aligning the motion."
        )
    if q.shape != (4,) or not np.isfinite(q).all() or float(q @ q) < 1e-12:
        raise ValueError(
            f"anchor_quat_w must be 4 finite numbers of non-zero norm (wxyz), got {q.tolist()}: "
            "check the robot's orientation estimate before aligning the motion."
        )
    return p, q

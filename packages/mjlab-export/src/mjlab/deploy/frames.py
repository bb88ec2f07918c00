"""Frame math in numpy: what a robot adapter needs to produce mjlab's observation terms, and
the quaternion operations mjlab-core's offline numpy code (motion conversion) uses. The only
numpy frame math of the workspace; mjlab-core's batched torch twins (`mjlab.utils.math`) run
inside the env step, and mjlab-core's tests pin that both compute the same values.

Quaternions are wxyz and unit; "base frame" is the robot's root body frame, as in training.
"""

from __future__ import annotations

import numpy as np

GRAVITY_DIRECTION_W = np.array([0.0, 0.0, -1.0])
"""Unit gravity direction in the world frame."""


def quat_rotate_inverse(quat_wxyz: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate v (3,) by the inverse of the unit quaternion `quat_wxyz` (4,): R(q)^T v.

    Uses v + w t + u x t with u = -q_xyz and t = 2 u x v (the rotation of v by the conjugate).
    """
    q = np.asarray(quat_wxyz, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    w, u = q[0], -q[1:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def projected_gravity(quat_wxyz: np.ndarray) -> np.ndarray:
    """The `projected_gravity` term: gravity's unit direction in the base frame, (3,);
    (0, 0, -1) when the base is level. `quat_wxyz` is the base orientation in the world frame
    (e.g. an IMU's attitude quaternion)."""
    return quat_rotate_inverse(quat_wxyz, GRAVITY_DIRECTION_W)


def quat_rotate(quat_wxyz: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate v (3,) by the unit quaternion `quat_wxyz` (4,): R(q) v."""
    q = np.asarray(quat_wxyz, dtype=np.float64)
    return quat_rotate_inverse(q * np.array([1.0, -1.0, -1.0, -1.0]), v)


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a * b of quaternions (..., 4) wxyz (apply b first, then a), float64;
    leading axes broadcast. The numpy twin of `mjlab.utils.math.quat_mul` (same formula)."""
    aw, ax, ay, az = np.moveaxis(np.asarray(a, dtype=np.float64), -1, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b, dtype=np.float64), -1, 0)
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def quat_conjugate(quat_wxyz: np.ndarray) -> np.ndarray:
    """(w, -x, -y, -z): the inverse rotation of unit quaternions (..., 4) wxyz, float64."""
    return np.asarray(quat_wxyz, dtype=np.float64) * np.array([1.0, -1.0, -1.0, -1.0])


def heading(quat_wxyz: np.ndarray) -> float:
    """Yaw of the rotated x axis in the world xy plane, rad, (-pi, pi]."""
    w, x, y, z = np.asarray(quat_wxyz, dtype=np.float64)
    return float(np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)))


def yaw_quat(yaw: float) -> np.ndarray:
    """The unit quaternion (4,) wxyz of a rotation by `yaw` rad about the world z axis."""
    return np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])


def rotation_vector(quat_wxyz: np.ndarray) -> np.ndarray:
    """Axis * angle (rad) of unit quaternions (..., 4) wxyz, angle in [0, pi]: (..., 3).

    The numpy twin of `mjlab.utils.math.axis_angle_from_quat`.
    """
    q = np.asarray(quat_wxyz)
    q = np.where(q[..., :1] < 0, -q, q)
    v = q[..., 1:]
    s = np.linalg.norm(v, axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., :1])
    # angle / sin(angle / 2) -> 2 as the angle -> 0.
    scale = np.where(s > 1e-12, angle / np.maximum(s, 1e-12), 2.0)
    return v * scale


def quat_slerp(q0: np.ndarray, q1: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Spherical linear interpolation of unit quaternions (..., 4) wxyz at fractions t (...),
    along the shorter arc: (..., 4) unit quaternions (t = 0 gives q0, t = 1 gives +-q1)."""
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

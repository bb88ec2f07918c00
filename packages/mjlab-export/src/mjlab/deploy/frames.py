"""Frame helpers a robot adapter needs to produce mjlab's observation terms (numpy only).

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
    """Hamilton product a * b of quaternions (4,) wxyz (apply b first, then a)."""
    aw, ax, ay, az = np.asarray(a, dtype=np.float64)
    bw, bx, by, bz = np.asarray(b, dtype=np.float64)
    return np.array(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ]
    )


def quat_conjugate(quat_wxyz: np.ndarray) -> np.ndarray:
    """(w, -x, -y, -z): the inverse rotation of a unit quaternion (4,) wxyz."""
    return np.asarray(quat_wxyz, dtype=np.float64) * np.array([1.0, -1.0, -1.0, -1.0])


def heading(quat_wxyz: np.ndarray) -> float:
    """Yaw of the rotated x axis in the world xy plane, rad, (-pi, pi]."""
    w, x, y, z = np.asarray(quat_wxyz, dtype=np.float64)
    return float(np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)))


def yaw_quat(yaw: float) -> np.ndarray:
    """The unit quaternion (4,) wxyz of a rotation by `yaw` rad about the world z axis."""
    return np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])

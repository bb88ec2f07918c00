"""Batched rotation math in torch. Quaternions are (w, x, y, z) and unit length; every
function accepts any leading batch shape (..., 4) / (..., 3)."""

from __future__ import annotations

import math

import torch


def normalize(x: torch.Tensor, eps: float = 1e-9) -> torch.Tensor:
    """x / |x| over the last dimension."""
    return x / x.norm(dim=-1, keepdim=True).clamp(min=eps)


def quat_conjugate(q: torch.Tensor) -> torch.Tensor:
    """(w, -x, -y, -z). Returns: (..., 4)."""
    return torch.cat([q[..., :1], -q[..., 1:]], dim=-1)


def quat_inv(q: torch.Tensor) -> torch.Tensor:
    """Inverse of a (not necessarily unit) quaternion. Returns: (..., 4)."""
    return quat_conjugate(q) / q.square().sum(dim=-1, keepdim=True).clamp(min=1e-12)


def quat_mul(q1: torch.Tensor, q2: torch.Tensor) -> torch.Tensor:
    """Hamilton product q1 * q2 (apply q2, then q1). Returns: (..., 4)."""
    w1, x1, y1, z1 = q1.unbind(-1)
    w2, x2, y2, z2 = q2.unbind(-1)
    return torch.stack(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ],
        dim=-1,
    )


def quat_apply(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Rotate vectors v by unit quaternions q: v + 2w (u x v) + 2 u x (u x v), u = (x, y, z).
    Returns: (..., 3)."""
    w, u = q[..., :1], q[..., 1:]
    t = 2.0 * torch.cross(u, v, dim=-1)
    return v + w * t + torch.cross(u, t, dim=-1)


def quat_apply_inverse(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Rotate vectors v by the inverse of unit quaternions q (world -> body frame).
    Returns: (..., 3)."""
    return quat_apply(quat_conjugate(q), v)


def quat_from_euler_xyz(roll: torch.Tensor, pitch: torch.Tensor, yaw: torch.Tensor) -> torch.Tensor:
    """Quaternion of extrinsic x-y-z rotations (roll about x, then pitch about y, then yaw
    about z; R = Rz Ry Rx), rad. Returns: (..., 4)."""
    cr, sr = torch.cos(roll / 2), torch.sin(roll / 2)
    cp, sp = torch.cos(pitch / 2), torch.sin(pitch / 2)
    cy, sy = torch.cos(yaw / 2), torch.sin(yaw / 2)
    return torch.stack(
        [
            cy * cp * cr + sy * sp * sr,
            cy * cp * sr - sy * sp * cr,
            cy * sp * cr + sy * cp * sr,
            sy * cp * cr - cy * sp * sr,
        ],
        dim=-1,
    )


def euler_xyz_from_quat(q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(roll, pitch, yaw), rad, inverse of `quat_from_euler_xyz`; pitch in [-pi/2, pi/2]."""
    w, x, y, z = q.unbind(-1)
    roll = torch.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = torch.asin((2 * (w * y - z * x)).clamp(-1.0, 1.0))
    yaw = torch.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return roll, pitch, yaw


def quat_from_angle_axis(angle: torch.Tensor, axis: torch.Tensor) -> torch.Tensor:
    """Rotation by `angle` rad about `axis` (normalized here). Returns: (..., 4)."""
    axis = normalize(axis)
    half = (angle / 2).unsqueeze(-1)
    return torch.cat([torch.cos(half), torch.sin(half) * axis], dim=-1)


def axis_angle_from_quat(q: torch.Tensor) -> torch.Tensor:
    """Rotation vector (axis * angle, angle in [0, pi]). Returns: (..., 3) rad."""
    q = torch.where(q[..., :1] < 0, -q, q)
    sin_half = q[..., 1:].norm(dim=-1, keepdim=True)
    angle = 2 * torch.atan2(sin_half, q[..., :1])
    # angle / sin(angle / 2) -> 2 as the angle -> 0 (series limit).
    scale = torch.where(
        sin_half > 1e-6, angle / sin_half.clamp(min=1e-12), 2.0 + angle.square() / 12
    )
    return q[..., 1:] * scale


def quat_error_magnitude(q1: torch.Tensor, q2: torch.Tensor) -> torch.Tensor:
    """Angle of the rotation from q2 to q1, rad in [0, pi]. Returns: (...)."""
    return axis_angle_from_quat(quat_mul(q1, quat_conjugate(q2))).norm(dim=-1)


def yaw_quat(q: torch.Tensor) -> torch.Tensor:
    """The yaw-only part of q (rotation about world z by the heading). Returns: (..., 4)."""
    w, x, y, z = q.unbind(-1)
    yaw = torch.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    zero = torch.zeros_like(yaw)
    return torch.stack([torch.cos(yaw / 2), zero, zero, torch.sin(yaw / 2)], dim=-1)


def quat_apply_yaw(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Rotate v by the yaw part of q only. Returns: (..., 3)."""
    return quat_apply(yaw_quat(q), v)


def heading_from_quat(q: torch.Tensor) -> torch.Tensor:
    """Heading: yaw of the body x axis in the world xy plane, rad in (-pi, pi]. Returns: (...)."""
    fwd = quat_apply(
        q, torch.tensor([1.0, 0.0, 0.0], dtype=q.dtype, device=q.device).expand((*q.shape[:-1], 3))
    )
    return torch.atan2(fwd[..., 1], fwd[..., 0])


def matrix_from_quat(q: torch.Tensor) -> torch.Tensor:
    """Rotation matrices. Returns: (..., 3, 3)."""
    w, x, y, z = normalize(q).unbind(-1)
    return torch.stack(
        [
            1 - 2 * (y * y + z * z),
            2 * (x * y - z * w),
            2 * (x * z + y * w),
            2 * (x * y + z * w),
            1 - 2 * (x * x + z * z),
            2 * (y * z - x * w),
            2 * (x * z - y * w),
            2 * (y * z + x * w),
            1 - 2 * (x * x + y * y),
        ],
        dim=-1,
    ).reshape((*q.shape[:-1], 3, 3))


def quat_from_matrix(m: torch.Tensor) -> torch.Tensor:
    """Unit quaternion with w >= 0 of rotation matrices (..., 3, 3), branch-free up to the
    choice of the best-conditioned of four candidate formulas (Shepperd's method)."""
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    cands = torch.stack(
        [
            torch.stack(
                [
                    1 + m00 + m11 + m22,
                    m[..., 2, 1] - m[..., 1, 2],
                    m[..., 0, 2] - m[..., 2, 0],
                    m[..., 1, 0] - m[..., 0, 1],
                ],
                -1,
            ),
            torch.stack(
                [
                    m[..., 2, 1] - m[..., 1, 2],
                    1 + m00 - m11 - m22,
                    m[..., 0, 1] + m[..., 1, 0],
                    m[..., 0, 2] + m[..., 2, 0],
                ],
                -1,
            ),
            torch.stack(
                [
                    m[..., 0, 2] - m[..., 2, 0],
                    m[..., 0, 1] + m[..., 1, 0],
                    1 - m00 + m11 - m22,
                    m[..., 1, 2] + m[..., 2, 1],
                ],
                -1,
            ),
            torch.stack(
                [
                    m[..., 1, 0] - m[..., 0, 1],
                    m[..., 0, 2] + m[..., 2, 0],
                    m[..., 1, 2] + m[..., 2, 1],
                    1 - m00 - m11 + m22,
                ],
                -1,
            ),
        ],
        dim=-2,
    )
    diag = torch.stack(
        [1 + m00 + m11 + m22, 1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22], -1
    )
    best = diag.argmax(dim=-1, keepdim=True)
    q = torch.gather(cands, -2, best.unsqueeze(-1).expand((*best.shape, 4))).squeeze(-2)
    q = normalize(q)
    return torch.where(q[..., :1] < 0, -q, q)


def wrap_to_pi(angle: torch.Tensor) -> torch.Tensor:
    """Wrap angles to (-pi, pi]. Returns: same shape, rad."""
    wrapped = torch.remainder(angle + math.pi, 2 * math.pi) - math.pi
    return torch.where(wrapped == -math.pi, torch.full_like(wrapped, math.pi), wrapped)


def combine_frame_transforms(
    t01: torch.Tensor, q01: torch.Tensor, t12: torch.Tensor, q12: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pose of frame 2 in frame 0 from frame 1 in 0 and 2 in 1. Returns: ((..., 3), (..., 4))."""
    return t01 + quat_apply(q01, t12), quat_mul(q01, q12)


def subtract_frame_transforms(
    t01: torch.Tensor, q01: torch.Tensor, t02: torch.Tensor, q02: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pose of frame 2 in frame 1 from frames 1 and 2 in frame 0. Returns: ((..., 3), (..., 4))."""
    q10 = quat_conjugate(q01)
    return quat_apply(q10, t02 - t01), quat_mul(q10, q02)


def projected_gravity(q: torch.Tensor) -> torch.Tensor:
    """World gravity direction (0, 0, -1) in the frame of q. Returns: (..., 3)."""
    g = torch.tensor([0.0, 0.0, -1.0], dtype=q.dtype, device=q.device).expand((*q.shape[:-1], 3))
    return quat_apply_inverse(q, g)


def sample_uniform(
    lower, upper, shape, device, generator: torch.Generator | None = None
) -> torch.Tensor:
    """U(lower, upper) of `shape` (bounds broadcast). Returns: float32 tensor."""
    u = torch.rand(shape, device=device, generator=generator)
    return (
        torch.as_tensor(lower, device=device)
        + (torch.as_tensor(upper, device=device) - torch.as_tensor(lower, device=device)) * u
    )


def sample_log_uniform(
    lower: float, upper: float, shape, device, generator: torch.Generator | None = None
) -> torch.Tensor:
    """exp(U(log lower, log upper)); both bounds > 0."""
    return torch.exp(sample_uniform(math.log(lower), math.log(upper), shape, device, generator))

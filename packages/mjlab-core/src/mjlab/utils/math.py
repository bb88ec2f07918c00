"""Batched rotation, frame and sampling math on torch tensors.

Conventions used by every function here:

- Quaternions are ``(w, x, y, z)`` (scalar first, as in MuJoCo), shape ``(..., 4)``; leading
  dimensions broadcast. Functions that take a rotation do not require unit quaternions unless
  they say so; functions that build one return unit quaternions.
- A quaternion ``q_ab`` rotates vectors from frame ``b`` into frame ``a``:
  ``v_a = quat_apply(q_ab, v_b)``. For a body, ``quat_w`` maps body-frame vectors to world.
- Euler angles are extrinsic x-y-z (roll about world x, then pitch about world y, then yaw about
  world z), i.e. ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``. Angles are in radians.
- Results keep the dtype and device of the inputs.

These run inside the env step, batched on the simulation's device. Their numpy twins for the
robot side and offline (numpy) code are `mjlab.deploy.frames` (`quat_mul`, `quat_conjugate`,
`quat_rotate`, `quat_rotate_inverse`, `projected_gravity`, `heading`, `yaw_quat`,
`rotation_vector`); `tests/test_frame_math_twins.py` pins that the two compute the same values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

__all__ = [
    "axis_angle_from_quat",
    "combine_frame_transforms",
    "count_nonfinite",
    "euler_xyz_from_quat",
    "heading_from_quat",
    "matrix_from_quat",
    "maybe_nonfinite",
    "nonfinite_mask",
    "normalize",
    "projected_gravity",
    "quat_apply",
    "quat_apply_inverse",
    "quat_apply_yaw",
    "quat_conjugate",
    "quat_error_magnitude",
    "quat_from_angle_axis",
    "quat_from_euler_xyz",
    "quat_from_matrix",
    "quat_inv",
    "quat_mul",
    "quat_unique",
    "rand",
    "randn",
    "sample_log_uniform",
    "sample_uniform",
    "subtract_frame_transforms",
    "wrap_to_pi",
    "yaw_quat",
]


# --------------------------------------------------------------------------------------------
# Generic helpers.
# --------------------------------------------------------------------------------------------


_DOWN = (0.0, 0.0, -1.0)
"""World gravity direction, straight down (z up)."""


def normalize(x: torch.Tensor, eps: float = 1e-9) -> torch.Tensor:
    """Scale vectors to unit Euclidean length along the last dimension.

    Args:
        x: (..., D) vectors.
        eps: Lower bound on the norm, so a zero vector stays zero instead of becoming NaN.

    Returns:
        (..., D) unit vectors (zero vectors map to zero).
    """
    return x / x.norm(p=2, dim=-1, keepdim=True).clamp_min(eps)


def nonfinite_mask(x: torch.Tensor) -> torch.Tensor:
    """Where ``x`` is NaN or +-Inf, as ``~torch.isfinite(x)``, in two tensor operations.

    ``x - x`` is exactly 0 for every finite float and NaN for NaN and +-Inf (IEEE 754), so the
    mask is ``isnan(x - x)``: two kernels, where ``~torch.isfinite(x)`` takes four (the step's
    hot path calls it on every observation group).

    Args:
        x: (...) floating-point tensor.

    Returns:
        (...) bool tensor.
    """
    return torch.isnan(x - x)


def maybe_nonfinite(x: torch.Tensor) -> bool:
    """Whether ``x`` may hold NaN or +-Inf, read back to the host (a sync on a GPU: for the
    CPU path). True when the sum of ``x`` is not finite, which any NaN or +-Inf value makes it
    (IEEE 754); finite values whose sum overflows give True as well, so a True is confirmed
    with `count_nonfinite` or `nonfinite_mask`. One tensor operation, against three for
    ``bool(count_nonfinite(x))``.

    Args:
        x: (...) floating-point tensor.
    """
    return not math.isfinite(x.sum())


def count_nonfinite(x: torch.Tensor) -> torch.Tensor:
    """Number of NaN and +-Inf values of ``x``: a () int64 tensor (no host sync). The same
    count as ``(~torch.isfinite(x)).sum()``, as ``count_nonzero(x - x)`` (see
    `nonfinite_mask`).

    Args:
        x: (...) floating-point tensor.
    """
    return torch.count_nonzero(x - x)


def wrap_to_pi(angles: torch.Tensor) -> torch.Tensor:
    """Wrap angles to the interval (-pi, pi].

    Args:
        angles: (...) angles in rad.

    Returns:
        (...) the same angles modulo 2*pi, in (-pi, pi] (odd multiples of pi map to +pi).
    """
    wrapped = torch.remainder(angles + math.pi, 2.0 * math.pi) - math.pi
    return torch.where(wrapped <= -math.pi, wrapped + 2.0 * math.pi, wrapped)


# --------------------------------------------------------------------------------------------
# Quaternion algebra.
# --------------------------------------------------------------------------------------------


def quat_mul(q1: torch.Tensor, q2: torch.Tensor) -> torch.Tensor:
    """Hamilton product ``q1 * q2`` (apply ``q2`` first, then ``q1``).

    Args:
        q1: (..., 4) quaternions wxyz.
        q2: (..., 4) quaternions wxyz, broadcastable with ``q1``.

    Returns:
        (..., 4) product quaternions wxyz, e.g. ``q_ac = quat_mul(q_ab, q_bc)``.
    """
    w1, x1, y1, z1 = q1.unbind(-1)
    w2, x2, y2, z2 = q2.unbind(-1)
    return torch.stack(
        (
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ),
        dim=-1,
    )


def quat_conjugate(q: torch.Tensor) -> torch.Tensor:
    """Conjugate ``(w, -x, -y, -z)``; the inverse rotation for unit quaternions.

    Args:
        q: (..., 4) quaternions wxyz.

    Returns:
        (..., 4) conjugated quaternions wxyz.
    """
    return torch.cat((q[..., :1], -q[..., 1:]), dim=-1)


def quat_inv(q: torch.Tensor, eps: float = 1e-9) -> torch.Tensor:
    """Multiplicative inverse ``conj(q) / |q|^2`` (valid for non-unit quaternions too).

    Args:
        q: (..., 4) quaternions wxyz.
        eps: Lower bound on ``|q|^2`` to avoid division by zero.

    Returns:
        (..., 4) inverse quaternions wxyz.
    """
    return quat_conjugate(q) / q.square().sum(dim=-1, keepdim=True).clamp_min(eps)


def quat_unique(q: torch.Tensor) -> torch.Tensor:
    """Pick the representative with a non-negative real part (``q`` and ``-q`` are one rotation).

    Args:
        q: (..., 4) quaternions wxyz.

    Returns:
        (..., 4) quaternions wxyz with ``w >= 0``.
    """
    return torch.where(q[..., :1] < 0, -q, q)


def quat_apply(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Rotate vectors by unit quaternions: ``v_a = R(q_ab) v_b``.

    Args:
        q: (..., 4) unit quaternions wxyz (``q_ab``).
        v: (..., 3) vectors in frame b, broadcastable with ``q``'s leading dims.

    Returns:
        (..., 3) the vectors expressed in frame a.
    """
    return _rotate(q, v, inverse=False)


def quat_apply_inverse(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Rotate vectors by the inverse of unit quaternions: ``v_b = R(q_ab)^T v_a``.

    Args:
        q: (..., 4) unit quaternions wxyz (``q_ab``).
        v: (..., 3) vectors in frame a.

    Returns:
        (..., 3) the vectors expressed in frame b.
    """
    return _rotate(q, v, inverse=True)


def _rotate(q: torch.Tensor, v: torch.Tensor, inverse: bool) -> torch.Tensor:
    """``R(q) v``, or ``R(q)^T v`` with `inverse`: see `quat_apply` / `quat_apply_inverse`."""
    if q.shape[:-1] != v.shape[:-1]:  # torch.broadcast_shapes takes ~0.1 ms a call on a CPU
        batch = torch.broadcast_shapes(q.shape[:-1], v.shape[:-1])
        q = q.expand(*batch, 4)
        v = v.expand(*batch, 3)
    w = q[..., :1]
    # The inverse rotates by the conjugate (w, -u): one negation instead of building the
    # conjugate quaternion, and the same arithmetic as `quat_apply(quat_conjugate(q), v)`,
    # signed zeros included.
    u = -q[..., 1:] if inverse else q[..., 1:]
    # v' = v + 2 w (u x v) + 2 u x (u x v), the expanded form of q v q*.
    t = 2.0 * torch.linalg.cross(u, v, dim=-1)
    return v + w * t + torch.linalg.cross(u, t, dim=-1)


# --------------------------------------------------------------------------------------------
# Conversions.
# --------------------------------------------------------------------------------------------


def quat_from_angle_axis(angle: torch.Tensor, axis: torch.Tensor) -> torch.Tensor:
    """Quaternion for a rotation of ``angle`` about ``axis``.

    Args:
        angle: (...) rotation angles in rad.
        axis: (..., 3) rotation axes (normalized here; need not be unit).

    Returns:
        (..., 4) unit quaternions wxyz.
    """
    half = 0.5 * angle.unsqueeze(-1)
    return torch.cat((torch.cos(half), torch.sin(half) * normalize(axis)), dim=-1)


def axis_angle_from_quat(q: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Rotation vector (axis times angle) of unit quaternions, angle in [0, pi].

    Numerically stable for tiny angles (a Taylor expansion replaces ``angle / sin(angle/2)``)
    and for angles near pi.

    Args:
        q: (..., 4) unit quaternions wxyz.
        eps: Below this ``|(x, y, z)|`` the small-angle expansion is used.

    Returns:
        (..., 3) rotation vectors in rad (zero for the identity).
    """
    q = quat_unique(q)
    w = q[..., :1]
    xyz = q[..., 1:]
    s = xyz.norm(dim=-1, keepdim=True)
    angle = 2.0 * torch.atan2(s, w)
    # angle / s -> 2/w - 2 s^2 / (3 w^3) as s -> 0 (series of 2 atan(s/w) / s).
    small = 2.0 / w - 2.0 * s.square() / (3.0 * w.pow(3))
    scale = torch.where(s > eps, angle / s.clamp_min(eps), small)
    return xyz * scale


def quat_error_magnitude(q1: torch.Tensor, q2: torch.Tensor) -> torch.Tensor:
    """Angle of the rotation that takes ``q2`` to ``q1`` (geodesic distance on SO(3)).

    Args:
        q1: (..., 4) unit quaternions wxyz.
        q2: (..., 4) unit quaternions wxyz.

    Returns:
        (...) angles in rad, in [0, pi].
    """
    return axis_angle_from_quat(quat_mul(q1, quat_conjugate(q2))).norm(dim=-1)


def quat_from_euler_xyz(roll: torch.Tensor, pitch: torch.Tensor, yaw: torch.Tensor) -> torch.Tensor:
    """Quaternion from extrinsic x-y-z Euler angles, ``R = Rz(yaw) Ry(pitch) Rx(roll)``.

    Args:
        roll: (...) rotation about x in rad.
        pitch: (...) rotation about y in rad.
        yaw: (...) rotation about z in rad.

    Returns:
        (..., 4) unit quaternions wxyz.
    """
    cr, sr = torch.cos(roll * 0.5), torch.sin(roll * 0.5)
    cp, sp = torch.cos(pitch * 0.5), torch.sin(pitch * 0.5)
    cy, sy = torch.cos(yaw * 0.5), torch.sin(yaw * 0.5)
    return torch.stack(
        (
            cy * cp * cr + sy * sp * sr,
            cy * cp * sr - sy * sp * cr,
            cy * sp * cr + sy * cp * sr,
            sy * cp * cr - cy * sp * sr,
        ),
        dim=-1,
    )


def euler_xyz_from_quat(q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Extrinsic x-y-z Euler angles of unit quaternions (inverse of ``quat_from_euler_xyz``).

    At gimbal lock (pitch = +-pi/2) roll and yaw are not unique; the returned triple still
    reproduces the rotation.

    Args:
        q: (..., 4) unit quaternions wxyz.

    Returns:
        roll (...) in [-pi, pi], pitch (...) in [-pi/2, pi/2], yaw (...) in [-pi, pi]; rad.
    """
    w, x, y, z = q.unbind(-1)
    roll = torch.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = torch.asin((2.0 * (w * y - z * x)).clamp(-1.0, 1.0))
    yaw = torch.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return roll, pitch, yaw


def matrix_from_quat(q: torch.Tensor) -> torch.Tensor:
    """Rotation matrices of quaternions (normalized first).

    Args:
        q: (..., 4) quaternions wxyz.

    Returns:
        (..., 3, 3) rotation matrices ``R`` with ``v_a = R @ v_b`` for ``q = q_ab``.
    """
    w, x, y, z = normalize(q).unbind(-1)
    two = 2.0
    m = torch.stack(
        (
            1.0 - two * (y * y + z * z),
            two * (x * y - w * z),
            two * (x * z + w * y),
            two * (x * y + w * z),
            1.0 - two * (x * x + z * z),
            two * (y * z - w * x),
            two * (x * z - w * y),
            two * (y * z + w * x),
            1.0 - two * (x * x + y * y),
        ),
        dim=-1,
    )
    return m.reshape(*q.shape[:-1], 3, 3)


def quat_from_matrix(matrix: torch.Tensor) -> torch.Tensor:
    """Unit quaternions of rotation matrices, with ``w >= 0``.

    Each of the four algebraically equivalent formulas is evaluated and, per matrix, the one
    with the largest denominator is kept (Shepperd's method), so results stay accurate when the
    trace is close to -1 (rotations of about pi).

    Args:
        matrix: (..., 3, 3) rotation matrices.

    Returns:
        (..., 4) unit quaternions wxyz.

    Raises:
        ValueError: If the last two dimensions are not (3, 3).
    """
    if matrix.shape[-2:] != (3, 3):
        raise ValueError(f"matrix must have shape (..., 3, 3); got {tuple(matrix.shape)}.")
    m = matrix
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    # 4 * (w^2, x^2, y^2, z^2) from the diagonal.
    sq = torch.stack(
        (
            1.0 + m00 + m11 + m22,
            1.0 + m00 - m11 - m22,
            1.0 - m00 + m11 - m22,
            1.0 - m00 - m11 + m22,
        ),
        dim=-1,
    )
    d21 = m[..., 2, 1] - m[..., 1, 2]
    d02 = m[..., 0, 2] - m[..., 2, 0]
    d10 = m[..., 1, 0] - m[..., 0, 1]
    s10 = m[..., 1, 0] + m[..., 0, 1]
    s02 = m[..., 0, 2] + m[..., 2, 0]
    s21 = m[..., 2, 1] + m[..., 1, 2]
    # Row k is 4 * q_k * q (unnormalized), computed from the k-th diagonal candidate.
    candidates = torch.stack(
        (
            torch.stack((sq[..., 0], d21, d02, d10), dim=-1),
            torch.stack((d21, sq[..., 1], s10, s02), dim=-1),
            torch.stack((d02, s10, sq[..., 2], s21), dim=-1),
            torch.stack((d10, s02, s21, sq[..., 3]), dim=-1),
        ),
        dim=-2,
    )
    best = sq.argmax(dim=-1)
    index = best[..., None, None].expand(*best.shape, 1, 4)
    q = torch.gather(candidates, -2, index).squeeze(-2)
    return quat_unique(normalize(q))


# --------------------------------------------------------------------------------------------
# Yaw / heading.
# --------------------------------------------------------------------------------------------


def heading_from_quat(q: torch.Tensor) -> torch.Tensor:
    """Heading (yaw) angle: direction of the rotated x-axis projected on the world xy-plane.

    Equals the yaw of ``euler_xyz_from_quat``.

    Args:
        q: (..., 4) unit quaternions wxyz (body to world).

    Returns:
        (...) heading angles in rad, in [-pi, pi].
    """
    w, x, y, z = q.unbind(-1)
    return torch.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def yaw_quat(q: torch.Tensor) -> torch.Tensor:
    """Keep only the rotation about world z (the heading) of unit quaternions.

    Args:
        q: (..., 4) unit quaternions wxyz.

    Returns:
        (..., 4) unit quaternions wxyz of the form ``(cos(yaw/2), 0, 0, sin(yaw/2))``.
    """
    half = 0.5 * heading_from_quat(q)
    zeros = torch.zeros_like(half)
    return torch.stack((torch.cos(half), zeros, zeros, torch.sin(half)), dim=-1)


def quat_apply_yaw(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Rotate vectors by the heading part of ``q`` only (e.g. a base-yaw frame command).

    Args:
        q: (..., 4) unit quaternions wxyz.
        v: (..., 3) vectors.

    Returns:
        (..., 3) rotated vectors.
    """
    return quat_apply(yaw_quat(q), v)


def projected_gravity(
    quat_w: torch.Tensor, gravity_dir_w: Sequence[float] | torch.Tensor = _DOWN
) -> torch.Tensor:
    """Gravity direction expressed in the body frame (``projected_gravity_b``).

    Args:
        quat_w: (..., 4) body orientations wxyz (body to world).
        gravity_dir_w: (3,) or (..., 3) gravity direction in the world frame; unit length is
            the convention (default straight down).

    Returns:
        (..., 3) gravity direction in the body frame; ``(0, 0, -1)`` for an upright body.
    """
    if gravity_dir_w is _DOWN:  # the default: one constant tensor per dtype and device
        key = (quat_w.dtype, quat_w.device)
        g = _DOWN_TENSORS.get(key)
        if g is None:
            with torch.inference_mode(False):  # a plain tensor even when made in a rollout
                g = _DOWN_TENSORS[key] = torch.tensor(
                    _DOWN, dtype=quat_w.dtype, device=quat_w.device
                )
    else:
        g = torch.as_tensor(gravity_dir_w, dtype=quat_w.dtype, device=quat_w.device)
    return quat_apply_inverse(quat_w, g.expand(*quat_w.shape[:-1], 3))


_DOWN_TENSORS: dict[tuple[torch.dtype, torch.device], torch.Tensor] = {}
"""`projected_gravity`'s default direction as a tensor, by (dtype, device)."""


# --------------------------------------------------------------------------------------------
# Frame transforms.
# --------------------------------------------------------------------------------------------


def combine_frame_transforms(
    t01: torch.Tensor,
    q01: torch.Tensor,
    t12: torch.Tensor | None = None,
    q12: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Compose transforms: frame 2 in frame 0 from frame 1 in 0 and frame 2 in 1.

    ``t02 = t01 + R(q01) t12`` and ``q02 = q01 * q12``.

    Args:
        t01: (..., 3) position of frame 1 in frame 0.
        q01: (..., 4) orientation wxyz of frame 1 in frame 0.
        t12: (..., 3) position of frame 2 in frame 1; None means zero.
        q12: (..., 4) orientation wxyz of frame 2 in frame 1; None means identity.

    Returns:
        ``(t02, q02)``: (..., 3) position and (..., 4) orientation of frame 2 in frame 0.
    """
    t02 = t01 if t12 is None else t01 + quat_apply(q01, t12)
    q02 = q01 if q12 is None else quat_mul(q01, q12)
    return t02, q02


def subtract_frame_transforms(
    t01: torch.Tensor,
    q01: torch.Tensor,
    t02: torch.Tensor | None = None,
    q02: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Relative transform: frame 2 in frame 1 from frames 1 and 2 both given in frame 0.

    ``t12 = R(q01)^T (t02 - t01)`` and ``q12 = q01^-1 * q02``.

    Args:
        t01: (..., 3) position of frame 1 in frame 0.
        q01: (..., 4) unit orientation wxyz of frame 1 in frame 0.
        t02: (..., 3) position of frame 2 in frame 0; None means the origin of frame 0.
        q02: (..., 4) orientation wxyz of frame 2 in frame 0; None means identity.

    Returns:
        ``(t12, q12)``: (..., 3) position and (..., 4) orientation of frame 2 in frame 1.
    """
    q10 = quat_conjugate(q01)
    q12 = q10 if q02 is None else quat_mul(q10, q02)
    t12 = quat_apply(q10, -t01 if t02 is None else t02 - t01)
    return t12, q12


# --------------------------------------------------------------------------------------------
# Sampling.
# --------------------------------------------------------------------------------------------


def _draw(sampler, shape, device, generator, dtype) -> torch.Tensor:
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    device = torch.device(device)
    sample_device = device if generator is None else generator.device
    sample = sampler(shape, device=sample_device, generator=generator, dtype=dtype)
    return sample if sample_device == device else sample.to(device)


def rand(
    shape: Sequence[int] | int,
    device: torch.device | str,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Uniform [0, 1) samples of `shape` on `device`, drawn on the generator's device.

    With the generator on `device` (the env's default) this is `torch.rand`; with a CPU
    generator a CUDA env draws the same numbers as a CPU env seeded alike (then copies them).
    """
    return _draw(torch.rand, shape, device, generator, dtype)


def randn(
    shape: Sequence[int] | int,
    device: torch.device | str,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Standard normal samples of `shape` on `device`, drawn on the generator's device (see
    `rand`)."""
    return _draw(torch.randn, shape, device, generator, dtype)


def sample_uniform(
    lower: torch.Tensor | float,
    upper: torch.Tensor | float,
    shape: Sequence[int] | int,
    device: torch.device | str,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Samples from the uniform distribution on ``[lower, upper)``.

    Args:
        lower: Lower bound, a float or a tensor broadcastable to ``shape``.
        upper: Upper bound, a float or a tensor broadcastable to ``shape``.
        shape: Output shape.
        device: Device of the output.
        generator: Random generator (for seeded environments); samples are drawn on its device
            and moved to ``device``. None uses torch's global generator.

    Returns:
        Tensor of ``shape`` (float32, or the dtype of a floating tensor bound) on ``device``.
    """
    dtype = _bound_dtype(lower, upper)
    u = rand(shape, device, generator, dtype)
    if not isinstance(lower, torch.Tensor) and not isinstance(upper, torch.Tensor):
        # Python bounds: their difference in float64, as `lo + (hi - lo) * torch.rand(...)`.
        return lower + (upper - lower) * u
    lo = torch.as_tensor(lower, dtype=dtype, device=u.device)
    hi = torch.as_tensor(upper, dtype=dtype, device=u.device)
    return lo + (hi - lo) * u


def sample_duration_steps(
    range_s: tuple[float, float],
    step_dt: float,
    shape: Sequence[int] | int,
    device: torch.device | str,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Durations drawn from ``range_s`` seconds, counted in whole env steps.

    The steps are drawn uniformly from the integers in ``[ceil(lo / step_dt), floor(hi /
    step_dt)]`` (the lower end if that range is empty; at least 1), so a duration never falls
    short of ``lo`` and a 1.0 s period at ``step_dt = 0.02`` is exactly 50 steps (a float32
    countdown of ``T -= dt`` takes 51).

    Args:
        range_s: ``(lo, hi)`` duration, s.
        step_dt: Length of one env step, s (> 0).
        shape: Output shape.
        device: Device of the output.
        generator: Random generator; see ``sample_uniform``.

    Returns:
        int64 tensor of ``shape`` on ``device``, each >= 1.
    """
    lo_s, hi_s = range_s
    # A tolerance of 1e-9 steps: 10.0 s / 0.02 s is 500 steps, not 501 (or 499).
    lo = max(math.ceil(lo_s / step_dt - 1e-9), 1)
    hi = max(math.floor(hi_s / step_dt + 1e-9), lo)
    u = rand(shape, device, generator, torch.float64)
    return (lo + torch.floor(u * (hi - lo + 1))).long().clamp_max(hi)


def sample_log_uniform(
    lower: torch.Tensor | float,
    upper: torch.Tensor | float,
    shape: Sequence[int] | int,
    device: torch.device | str,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Samples whose logarithm is uniform on ``[log(lower), log(upper))`` (scale parameters).

    Args:
        lower: Positive lower bound, a float or a tensor broadcastable to ``shape``.
        upper: Positive upper bound, a float or a tensor broadcastable to ``shape``.
        shape: Output shape.
        device: Device of the output.
        generator: Random generator; see ``sample_uniform``.

    Returns:
        Tensor of ``shape`` on ``device`` with values in ``[lower, upper)``.

    Raises:
        ValueError: If a bound is not positive.
    """
    dtype = _bound_dtype(lower, upper)
    lo = torch.as_tensor(lower, dtype=dtype)
    hi = torch.as_tensor(upper, dtype=dtype)
    if bool((lo <= 0).any()) or bool((hi <= 0).any()):
        raise ValueError(
            f"sample_log_uniform needs positive bounds; got lower={lower}, upper={upper}. "
            "Use sample_uniform for ranges that include zero or negative values."
        )
    return torch.exp(sample_uniform(torch.log(lo), torch.log(hi), shape, device, generator))


def _bound_dtype(*bounds: torch.Tensor | float) -> torch.dtype:
    for b in bounds:
        if isinstance(b, torch.Tensor) and b.is_floating_point():
            return b.dtype
    return torch.float32

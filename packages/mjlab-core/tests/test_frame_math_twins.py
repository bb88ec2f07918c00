"""The frame math exists twice on purpose: batched torch in `mjlab.utils.math` (inside the env
step, on the simulation's device) and numpy in `mjlab.deploy.frames` (the robot side and
mjlab-core's offline motion conversion). These tests pin that the twins compute the same
values, so an observation term built on the robot equals the one training saw."""

import numpy as np
import pytest
import torch

from mjlab.deploy import frames
from mjlab.utils import math as tmath

# Exact where both sides are the same float64 products and sums; within a few ulps where a
# library routine (cross product, atan2) rounds its own way.
EXACT = {"rtol": 0.0, "atol": 0.0}
ULPS = {"rtol": 1e-12, "atol": 1e-12}


@pytest.fixture
def quats() -> np.ndarray:
    rng = np.random.default_rng(7)
    q = rng.normal(size=(64, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    q[0] = [1.0, 0.0, 0.0, 0.0]  # identity
    q[1] = [0.0, 0.0, 0.0, 1.0]  # half turn about z
    q[2] = [np.cos(1e-7), np.sin(1e-7), 0.0, 0.0]  # a tiny rotation
    return q


@pytest.fixture
def vectors() -> np.ndarray:
    return np.random.default_rng(8).normal(size=(64, 3))


def _t(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(x))


def test_quat_mul_and_conjugate_agree_bit_for_bit(quats):
    other = np.roll(quats, 5, axis=0)
    np.testing.assert_allclose(
        frames.quat_mul(quats, other), tmath.quat_mul(_t(quats), _t(other)).numpy(), **EXACT
    )
    np.testing.assert_allclose(
        frames.quat_conjugate(quats), tmath.quat_conjugate(_t(quats)).numpy(), **EXACT
    )


def test_one_quaternion_product_equals_the_batched_one(quats):
    batched = frames.quat_mul(quats[:8], quats[8:16])
    for i in range(8):
        assert frames.quat_mul(quats[i], quats[8 + i]).tobytes() == batched[i].tobytes()


def test_rotations_and_projected_gravity_agree(quats, vectors):
    for i, (q, v) in enumerate(zip(quats, vectors, strict=True)):
        np.testing.assert_allclose(
            frames.quat_rotate(q, v), tmath.quat_apply(_t(q), _t(v)).numpy(), **ULPS
        )
        np.testing.assert_allclose(
            frames.quat_rotate_inverse(q, v),
            tmath.quat_apply_inverse(_t(q), _t(v)).numpy(),
            **ULPS,
            err_msg=f"quaternion {i}",
        )
        np.testing.assert_allclose(
            frames.projected_gravity(q), tmath.projected_gravity(_t(q)).numpy(), **ULPS
        )


def test_heading_and_yaw_quaternion_agree(quats):
    for q in quats:
        yaw = frames.heading(q)
        assert yaw == pytest.approx(float(tmath.heading_from_quat(_t(q))), rel=0.0, abs=1e-12)
        np.testing.assert_allclose(frames.yaw_quat(yaw), tmath.yaw_quat(_t(q)).numpy(), **ULPS)


def test_rotation_vector_agrees_with_axis_angle(quats):
    np.testing.assert_allclose(
        frames.rotation_vector(quats), tmath.axis_angle_from_quat(_t(quats)).numpy(), **ULPS
    )

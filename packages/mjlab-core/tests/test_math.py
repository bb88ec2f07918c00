"""mjlab.utils.math against scipy.spatial.transform.Rotation (scipy quaternions are xyzw)."""

import math

import numpy as np
import pytest
import torch
from scipy.spatial.transform import Rotation

from mjlab.utils import math as m

N = 256
DTYPES = [torch.float32, torch.float64]
# float32 keeps ~7 digits; rotation formulas lose a little more through products.
TOL = {torch.float32: 2e-5, torch.float64: 1e-11}


def _wxyz(r: Rotation, dtype) -> torch.Tensor:
    return torch.as_tensor(r.as_quat()[:, [3, 0, 1, 2]], dtype=dtype)


def _scipy(q: torch.Tensor) -> Rotation:
    return Rotation.from_quat(q.double().numpy()[:, [1, 2, 3, 0]])


def _same_rotation(q1: torch.Tensor, q2: torch.Tensor, tol: float) -> None:
    """q and -q are the same rotation: compare up to sign."""
    dot = (q1 * q2).sum(-1).abs()
    assert (1.0 - dot).abs().max().item() < tol, (1.0 - dot).abs().max().item()


def _rotations(seed: int = 0) -> Rotation:
    """Random rotations plus the hard cases: identity, tiny angles, angles within 1e-6 of pi."""
    rng = np.random.default_rng(seed)
    axes = rng.normal(size=(8, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    tiny = axes * np.array([1e-9, 1e-7, 1e-5, 1e-3, 1e-9, 1e-7, 1e-5, 1e-3])[:, None]
    near_pi = axes * (math.pi - np.array([0.0, 1e-9, 1e-7, 1e-6, 0.0, 1e-9, 1e-7, 1e-6]))[:, None]
    hard = Rotation.from_rotvec(np.concatenate([np.zeros((1, 3)), tiny, near_pi]))
    return Rotation.concatenate([Rotation.random(N, random_state=seed), hard])


@pytest.mark.parametrize("dtype", DTYPES)
def test_quat_mul_and_apply_match_scipy_composition(dtype):
    r1, r2 = _rotations(0), _rotations(1)
    q1, q2 = _wxyz(r1, dtype), _wxyz(r2, dtype)
    _same_rotation(m.quat_mul(q1, q2), _wxyz(r1 * r2, dtype), TOL[dtype])
    v = torch.randn(len(r1), 3, dtype=dtype, generator=torch.Generator().manual_seed(0))
    expected = torch.as_tensor(r1.apply(v.double().numpy()), dtype=dtype)
    torch.testing.assert_close(m.quat_apply(q1, v), expected, atol=10 * TOL[dtype], rtol=0)
    inv = torch.as_tensor(r1.inv().apply(v.double().numpy()), dtype=dtype)
    torch.testing.assert_close(m.quat_apply_inverse(q1, v), inv, atol=10 * TOL[dtype], rtol=0)
    assert m.quat_apply(q1, v).dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_inverse_and_conjugate_undo_the_rotation(dtype):
    q = _wxyz(_rotations(), dtype)
    identity = torch.tensor([1.0, 0, 0, 0], dtype=dtype).expand_as(q)
    _same_rotation(m.quat_mul(q, m.quat_conjugate(q)), identity, TOL[dtype])
    # quat_inv also inverts non-unit quaternions.
    q3 = 3.0 * q
    torch.testing.assert_close(m.quat_mul(q3, m.quat_inv(q3)), identity, atol=TOL[dtype], rtol=0)


def test_quat_apply_broadcasts_one_quaternion_over_many_vectors():
    q = m.quat_from_angle_axis(torch.tensor(math.pi / 2), torch.tensor([0.0, 0.0, 1.0]))
    v = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    torch.testing.assert_close(
        m.quat_apply(q, v), torch.tensor([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]]), atol=1e-6, rtol=0
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_euler_xyz_round_trip_matches_scipy_extrinsic_xyz(dtype):
    r = _rotations()
    q = _wxyz(r, dtype)
    roll, pitch, yaw = m.euler_xyz_from_quat(q)
    # Away from gimbal lock the angles are unique and equal scipy's extrinsic "xyz".
    ref = torch.as_tensor(r.as_euler("xyz"), dtype=dtype)
    ok = ref[:, 1].abs() < 1.5
    got = torch.stack([roll, pitch, yaw], dim=-1)
    diff = m.wrap_to_pi(got[ok] - ref[ok])
    assert diff.abs().max().item() < 100 * TOL[dtype]
    # Everywhere (including the tiny and near-pi rotations) the angles rebuild the rotation.
    _same_rotation(m.quat_from_euler_xyz(roll, pitch, yaw), q, 100 * TOL[dtype])
    ref_q = _wxyz(Rotation.from_euler("xyz", got.double().numpy()), dtype)
    _same_rotation(m.quat_from_euler_xyz(roll, pitch, yaw), ref_q, TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
def test_axis_angle_round_trip_including_tiny_and_near_pi_angles(dtype):
    r = _rotations()
    q = _wxyz(r, dtype)
    rotvec = m.axis_angle_from_quat(q)
    ref = torch.as_tensor(r.as_rotvec(), dtype=dtype)
    angle = ref.norm(dim=-1)
    # Near pi, v and -v are the same rotation: compare as rotations there, exactly elsewhere.
    far = angle < math.pi - 1e-3
    torch.testing.assert_close(rotvec[far], ref[far], atol=10 * TOL[dtype], rtol=10 * TOL[dtype])
    back = m.quat_from_angle_axis(rotvec.norm(dim=-1), rotvec)
    _same_rotation(back[angle > 1e-6], q[angle > 1e-6], 10 * TOL[dtype])
    # Tiny angles keep their relative precision (no 0/0).
    tiny = (angle > 0) & (angle < 1e-2)
    rel = ((rotvec[tiny] - ref[tiny]).norm(dim=-1) / angle[tiny]).max().item()
    assert rel < 10 * TOL[dtype]
    assert torch.isfinite(rotvec).all()
    assert (rotvec.norm(dim=-1) <= math.pi + 1e-6).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_quat_error_magnitude_is_the_geodesic_angle(dtype):
    r1, r2 = _rotations(0), _rotations(1)
    got = m.quat_error_magnitude(_wxyz(r1, dtype), _wxyz(r2, dtype))
    ref = torch.as_tensor((r1 * r2.inv()).magnitude(), dtype=dtype)
    torch.testing.assert_close(got, ref, atol=1e-3 if dtype == torch.float32 else 1e-9, rtol=0)
    # The sign of a quaternion does not change the error.
    q = _wxyz(r1, dtype)
    assert m.quat_error_magnitude(q, -q).abs().max().item() < 1e-3


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_conversions_match_scipy_near_singular_traces(dtype):
    r = _rotations()
    q = _wxyz(r, dtype)
    mat = m.matrix_from_quat(q)
    torch.testing.assert_close(
        mat, torch.as_tensor(r.as_matrix(), dtype=dtype), atol=10 * TOL[dtype], rtol=0
    )
    back = m.quat_from_matrix(mat)
    assert (back[:, 0] >= 0).all()
    _same_rotation(back, q, 10 * TOL[dtype])
    torch.testing.assert_close(
        back.norm(dim=-1), torch.ones(len(r), dtype=dtype), atol=TOL[dtype], rtol=0
    )
    with pytest.raises(ValueError, match=r"\(\.\.\., 3, 3\)"):
        m.quat_from_matrix(torch.zeros(2, 4, 4))


@pytest.mark.parametrize("dtype", DTYPES)
def test_heading_and_yaw_quat_keep_only_the_rotation_about_z(dtype):
    r = _rotations()
    q = _wxyz(r, dtype)
    heading = m.heading_from_quat(q)
    fwd = r.apply(np.array([1.0, 0.0, 0.0]))
    ref = torch.as_tensor(np.arctan2(fwd[:, 1], fwd[:, 0]), dtype=dtype)
    assert m.wrap_to_pi(heading - ref).abs().max().item() < 100 * TOL[dtype]
    yq = m.yaw_quat(q)
    torch.testing.assert_close(yq[:, 1:3], torch.zeros(len(r), 2, dtype=dtype))
    torch.testing.assert_close(m.heading_from_quat(yq), heading, atol=100 * TOL[dtype], rtol=0)
    # quat_apply_yaw keeps a vertical vector vertical and turns x to the heading.
    up = torch.tensor([0.0, 0.0, 1.0], dtype=dtype).expand(len(r), 3)
    torch.testing.assert_close(m.quat_apply_yaw(q, up), up, atol=10 * TOL[dtype], rtol=0)
    x = m.quat_apply_yaw(q, torch.tensor([1.0, 0.0, 0.0], dtype=dtype).expand(len(r), 3))
    torch.testing.assert_close(
        x,
        torch.stack([heading.cos(), heading.sin(), torch.zeros_like(heading)], -1),
        atol=1e-5,
        rtol=0,
    )


def test_projected_gravity_points_down_when_upright_and_sideways_when_rolled():
    q = m.quat_from_euler_xyz(
        torch.tensor([0.0, math.pi / 2]), torch.tensor([0.0, 0.0]), torch.tensor([0.7, 0.0])
    )
    g = m.projected_gravity(q)
    torch.testing.assert_close(
        g, torch.tensor([[0.0, 0.0, -1.0], [0.0, -1.0, 0.0]]), atol=1e-6, rtol=0
    )


@pytest.mark.parametrize("dtype", DTYPES)
def test_frame_transforms_compose_and_subtract_like_scipy(dtype):
    r01, r12 = _rotations(0), _rotations(1)
    gen = torch.Generator().manual_seed(2)
    t01 = torch.randn(len(r01), 3, dtype=dtype, generator=gen)
    t12 = torch.randn(len(r01), 3, dtype=dtype, generator=gen)
    q01, q12 = _wxyz(r01, dtype), _wxyz(r12, dtype)
    t02, q02 = m.combine_frame_transforms(t01, q01, t12, q12)
    ref_t02 = t01.double().numpy() + r01.apply(t12.double().numpy())
    torch.testing.assert_close(t02, torch.as_tensor(ref_t02, dtype=dtype), atol=1e-5, rtol=0)
    _same_rotation(q02, _wxyz(r01 * r12, dtype), TOL[dtype])
    t12_back, q12_back = m.subtract_frame_transforms(t01, q01, t02, q02)
    torch.testing.assert_close(t12_back, t12, atol=1e-4, rtol=0)
    _same_rotation(q12_back, q12, 10 * TOL[dtype])
    # Missing child pose means the identity transform.
    t, q = m.combine_frame_transforms(t01, q01)
    assert torch.equal(t, t01) and torch.equal(q, q01)


def test_wrap_to_pi_lands_in_half_open_interval():
    a = torch.tensor(
        [0.0, math.pi, -math.pi, 3 * math.pi, 2 * math.pi + 0.5, -7.0], dtype=torch.float64
    )
    w = m.wrap_to_pi(a)
    assert ((w > -math.pi) & (w <= math.pi)).all()
    torch.testing.assert_close(torch.cos(w), torch.cos(a))
    torch.testing.assert_close(torch.sin(w), torch.sin(a), atol=1e-12, rtol=0)
    assert w[1].item() == pytest.approx(math.pi) and w[2].item() == pytest.approx(math.pi)


def test_normalize_keeps_zero_vectors_finite():
    x = torch.tensor([[3.0, 4.0], [0.0, 0.0]])
    torch.testing.assert_close(m.normalize(x), torch.tensor([[0.6, 0.8], [0.0, 0.0]]))


def test_sampling_is_reproducible_with_a_generator_and_respects_bounds():
    a = m.sample_uniform(-2.0, 3.0, (1000,), "cpu", torch.Generator().manual_seed(7))
    b = m.sample_uniform(-2.0, 3.0, (1000,), "cpu", torch.Generator().manual_seed(7))
    assert torch.equal(a, b) and a.dtype == torch.float32
    assert (a >= -2.0).all() and (a < 3.0).all() and a.std() > 1.0
    lo, hi = torch.tensor([0.0, 10.0], dtype=torch.float64), torch.tensor([1.0, 20.0])
    c = m.sample_uniform(lo, hi, (500, 2), "cpu", torch.Generator().manual_seed(0))
    assert c.dtype == torch.float64
    assert (c[:, 0] < 1.0).all() and (c[:, 1] >= 10.0).all()
    s = m.sample_log_uniform(1e-3, 1e1, (4000,), "cpu", torch.Generator().manual_seed(0))
    assert (s >= 1e-3).all() and (s < 1e1).all()
    # Log-uniform: each decade gets about a quarter of the samples.
    decade = torch.floor(torch.log10(s)).long()
    counts = torch.bincount(decade + 3, minlength=4).float() / len(s)
    assert (counts - 0.25).abs().max() < 0.04
    with pytest.raises(ValueError, match="positive bounds"):
        m.sample_log_uniform(0.0, 1.0, (2,), "cpu")


def test_sample_uniform_with_python_bounds_draws_what_the_plain_expression_draws():
    import torch

    lo, hi = 0.4, 1.2
    a = m.sample_uniform(lo, hi, (1000,), "cpu", torch.Generator().manual_seed(3))
    u = torch.rand((1000,), generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, lo + (hi - lo) * u)


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal values and equal signs of zero (torch.equal counts -0.0 == 0.0)."""
    return torch.equal(a, b) and torch.equal(torch.signbit(a), torch.signbit(b))


def test_quat_apply_inverse_rounds_exactly_like_applying_the_conjugate():
    g = torch.Generator().manual_seed(0)
    q = torch.nn.functional.normalize(torch.randn(4096, 4, generator=g), dim=-1)
    v = torch.randn(4096, 3, generator=g) * 10.0
    # Signed zeros and exact components too (a robot at its default pose: q = (1, 0, 0, 0)).
    grid = torch.tensor([0.0, -0.0, 1.0, -1.0, 0.5])
    qg = torch.cartesian_prod(grid, grid, grid, grid)
    vg = torch.cartesian_prod(grid, grid, grid)
    qg, vg = qg.repeat_interleave(len(vg), 0), vg.repeat(len(qg), 1)
    for quat, vec in ((q, v), (qg, vg), (q[0], v)):
        assert _same_bits(
            m.quat_apply_inverse(quat, vec), m.quat_apply(m.quat_conjugate(quat), vec)
        )
    gravity = torch.tensor([0.0, 0.0, -1.0]).expand(len(q), 3)
    assert _same_bits(m.projected_gravity(q), m.quat_apply(m.quat_conjugate(q), gravity))


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_nonfinite_mask_and_count_agree_with_isfinite(dtype):
    info = torch.finfo(dtype)
    x = torch.tensor(
        [
            0.0,
            -0.0,
            1.0,
            info.max,
            -info.max,
            info.tiny,
            info.tiny / 4,
            float("nan"),
            float("inf"),
            -float("inf"),
        ],
        dtype=dtype,
    )
    assert torch.equal(m.nonfinite_mask(x), ~torch.isfinite(x))
    assert m.count_nonfinite(x).item() == 3
    assert m.count_nonfinite(x[:7]).item() == 0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_maybe_nonfinite_sees_every_nan_and_inf_and_only_overflow_besides(dtype):
    info = torch.finfo(dtype)
    finite = torch.tensor(
        [[0.0, -0.0, 1.0, -3.5], [info.tiny, 2.0, info.max, -info.max]], dtype=dtype
    )
    assert not m.maybe_nonfinite(finite)
    assert not m.maybe_nonfinite(torch.zeros(0, 4, dtype=dtype))
    for bad in (float("nan"), float("inf"), -float("inf")):
        for i in range(finite.numel()):
            x = finite.clone().view(-1)
            x[i] = bad
            assert m.maybe_nonfinite(x.view(2, 4)), (bad, i)
    # A True may be finite values whose sum overflows (documented): the exact count says so.
    overflow = torch.full((4,), info.max, dtype=dtype)
    assert m.maybe_nonfinite(overflow) and m.count_nonfinite(overflow).item() == 0

import subprocess
import sys

import numpy as np
import pytest

from mjlab.deploy import OnnxPolicy
from mjlab.deploy.cli import bench, inspect


@pytest.fixture
def policy_file(tmp_path, go1_meta, make_policy):
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((go1_meta.obs_dim, 12)) * 0.1
    return make_policy(tmp_path / "policy.onnx", weight, rng.standard_normal(12), go1_meta), weight


def test_policy_exposes_metadata_and_matches_the_graph(policy_file):
    path, weight = policy_file
    policy = OnnxPolicy(path)
    assert policy.joint_names[0] == "FR_hip_joint" and policy.obs_dim == 48
    obs = np.random.default_rng(1).standard_normal((5, 48)).astype(np.float32)
    bias = policy(obs) - obs @ weight.astype(np.float32)
    np.testing.assert_allclose(bias, np.broadcast_to(bias[0], bias.shape), atol=1e-5)
    assert policy(obs[0]).shape == (12,)


def test_file_without_metadata_is_refused_unless_raw(tmp_path, make_policy):
    path = make_policy(tmp_path / "raw.onnx", np.eye(3), np.zeros(3))
    with pytest.raises(ValueError, match=r"has no 'mjlab\.deployment' metadata"):
        OnnxPolicy(path)
    policy = OnnxPolicy(path, allow_missing_metadata=True)
    np.testing.assert_allclose(policy(np.ones(3)), np.ones(3))
    with pytest.raises(ValueError, match="without metadata"):
        policy.joint_targets(np.zeros(3))


def test_garbled_metadata_in_the_file_is_a_clear_error(tmp_path, make_policy):
    path = make_policy(
        tmp_path / "bad.onnx", np.eye(3), np.zeros(3), props={"mjlab.deployment": "{not json"}
    )
    with pytest.raises(ValueError, match="not valid JSON"):
        OnnxPolicy(path)


def test_metadata_that_disagrees_with_the_network_is_refused(tmp_path, go1_meta, make_policy):
    path = make_policy(tmp_path / "p.onnx", np.zeros((40, 12)), np.zeros(12), go1_meta)
    with pytest.raises(ValueError, match="add up to 48 values but the network takes 40"):
        OnnxPolicy(path)


def test_nan_observation_is_rejected(policy_file):
    policy = OnnxPolicy(policy_file[0])
    obs = np.zeros(48, dtype=np.float32)
    obs[7] = np.nan
    with pytest.raises(ValueError, match=r"NaN or Inf at indices \[7\]"):
        policy(obs)


def _terms(value: float) -> dict:
    return {
        "base_lin_vel": np.full(3, value),
        "base_ang_vel": np.full(3, 4.0),
        "projected_gravity": np.array([0.0, 0.0, -1.0]),
        "command": np.array([0.5, 0.0, 0.0]),
        "joint_pos": np.full(12, value),
        "joint_vel": np.full(12, 20.0),
        "actions": np.zeros(12),
    }


def test_observation_is_assembled_in_file_order_with_scale_clip_and_history(
    tmp_path, make_policy, make_meta
):
    meta = make_meta(history=3)
    path = make_policy(tmp_path / "h.onnx", np.zeros((meta.obs_dim, 12)), np.zeros(12), meta)
    policy = OnnxPolicy(path)
    assert policy.obs_dim == 48 + 24
    obs = policy.build_observation(_terms(1.0))
    np.testing.assert_array_equal(obs[0:3], 1.0)
    np.testing.assert_array_equal(obs[3:6], 1.0)  # 4.0 scaled by 0.25
    np.testing.assert_array_equal(obs[9:12], [0.5, 0.0, 0.0])
    # History filled with the first value on reset, then shifted once per call, oldest first.
    np.testing.assert_array_equal(obs[12:48], 1.0)
    np.testing.assert_array_equal(obs[48:60], 10.0)  # joint_vel clipped to 10
    obs = policy.build_observation(_terms(2.0))
    np.testing.assert_array_equal(obs[12:36], 1.0)
    np.testing.assert_array_equal(obs[36:48], 2.0)
    obs = policy.build_observation(_terms(3.0))
    np.testing.assert_array_equal(obs[12:24], 1.0)
    np.testing.assert_array_equal(obs[24:36], 2.0)
    np.testing.assert_array_equal(obs[36:48], 3.0)
    policy.reset()
    np.testing.assert_array_equal(policy.build_observation(_terms(5.0))[12:48], 5.0)


def test_wrong_or_missing_terms_are_named(policy_file):
    policy = OnnxPolicy(policy_file[0])
    terms = _terms(0.0)
    terms["joint_pos"] = np.zeros(11)
    with pytest.raises(ValueError, match=r"'joint_pos' has shape \(11,\); expected \(12,\)"):
        policy.build_observation(terms)
    del terms["joint_pos"]
    with pytest.raises(ValueError, match=r"missing \['joint_pos'\]"):
        policy.build_observation(terms)


def test_joint_targets_follow_joint_order(tmp_path, go1_meta, make_policy):
    # Case C02 at the robot end: per-joint arrays are in joint_names order.
    go1_meta.stiffness = [10.0 + i for i in range(12)]
    path = make_policy(tmp_path / "p.onnx", np.zeros((48, 12)), np.zeros(12), go1_meta)
    policy = OnnxPolicy(path)
    actions = np.arange(12, dtype=np.float32)
    q, kp, kd = policy.joint_targets(actions)
    np.testing.assert_allclose(
        q, np.array(go1_meta.default_joint_pos) + np.array(go1_meta.action_scale) * actions
    )
    np.testing.assert_array_equal(kp, np.arange(10.0, 22.0))
    assert kd.shape == (12,)


def test_latency_bench_and_inspect_run(policy_file):
    result = bench(policy_file[0], iterations=200)
    assert 0 < result["p50_us"] <= result["p99_us"]
    text = inspect(policy_file[0])
    assert "FR_hip_joint" in text and "unitree_go1/go1" in text


def test_deploy_command_line_inspect(policy_file):
    out = subprocess.run(
        [sys.executable, "-m", "mjlab.deploy.cli", "inspect", str(policy_file[0])],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "Mjlab-Velocity-Flat-Unitree-Go1" in out


def test_batched_history_keeps_one_window_per_row(tmp_path, make_policy, make_meta):
    meta = make_meta(history=3)
    policy = OnnxPolicy(
        make_policy(tmp_path / "h.onnx", np.zeros((meta.obs_dim, 12)), np.zeros(12), meta)
    )

    def batch(values):
        terms = {k: np.stack([v, v]) for k, v in _terms(0.0).items()}
        terms["joint_pos"] = np.stack([np.full(12, values[0]), np.full(12, values[1])])
        return terms

    policy.build_observation(batch((1.0, 10.0)))
    obs = policy.build_observation(batch((2.0, 20.0)))
    assert obs.shape == (2, 72) and obs.dtype == np.float32
    np.testing.assert_array_equal(obs[0, 12:48], [1.0] * 24 + [2.0] * 12)
    np.testing.assert_array_equal(obs[1, 12:48], [10.0] * 24 + [20.0] * 12)
    assert policy(obs).shape == (2, 12)
    # Switching to a single observation mid-episode is a bug in the caller's loop.
    with pytest.raises(ValueError, match=r"'base_lin_vel' changed shape from \(2, 3\) to \(3,\)"):
        policy.build_observation(_terms(3.0))
    policy.reset()
    assert policy.build_observation(_terms(3.0)).shape == (72,)


def test_nan_term_is_named_and_does_not_advance_history(tmp_path, make_policy, make_meta):
    meta = make_meta(history=3)
    policy = OnnxPolicy(
        make_policy(tmp_path / "h.onnx", np.zeros((meta.obs_dim, 12)), np.zeros(12), meta)
    )
    policy.build_observation(_terms(1.0))
    bad = _terms(2.0)
    bad["base_ang_vel"][1] = np.inf
    with pytest.raises(ValueError, match="'base_ang_vel' contains NaN or Inf"):
        policy.build_observation(bad)
    obs = policy.build_observation(_terms(3.0))
    np.testing.assert_array_equal(obs[12:48], [1.0] * 24 + [3.0] * 12)


def test_nan_observation_error_names_the_term(policy_file):
    policy = OnnxPolicy(policy_file[0])
    obs = np.zeros((2, 48), dtype=np.float32)
    obs[1, 13] = np.inf  # inside joint_pos (values 12..23)
    with pytest.raises(ValueError, match=r"indices \[13\] \(terms \['joint_pos'\]\)"):
        policy(obs)


def test_metadata_with_the_wrong_number_of_joints_is_refused(tmp_path, go1_meta, make_policy):
    path = make_policy(tmp_path / "p.onnx", np.zeros((48, 10)), np.zeros(10), go1_meta)
    with pytest.raises(ValueError, match="lists 12 joints but the network outputs 10 actions"):
        OnnxPolicy(path)


def test_policy_attributes_are_typed_and_read_only(policy_file, go1_meta):
    policy = OnnxPolicy(policy_file[0])
    assert policy.step_dt == 0.02 and policy.physics_dt == 0.005 and policy.decimation == 4
    assert [t.name for t in policy.observation_terms][:2] == ["base_lin_vel", "base_ang_vel"]
    np.testing.assert_array_equal(policy.armature, go1_meta.armature)
    assert policy.effort_limit.dtype == np.float64
    with pytest.raises(ValueError, match="read-only"):
        policy.stiffness[0] = 0.0


def test_raw_policy_has_no_metadata_attributes(tmp_path, make_policy):
    policy = OnnxPolicy(
        make_policy(tmp_path / "raw.onnx", np.eye(3), np.zeros(3)), allow_missing_metadata=True
    )
    assert policy.metadata is None and policy.joint_names is None and policy.stiffness is None
    with pytest.raises(ValueError, match="without metadata"):
        policy.build_observation({})


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="No policy file"):
        OnnxPolicy(tmp_path / "nope.onnx")


def _delay_meta(make_meta, delay=2, history=3):
    meta = make_meta()
    meta.observations[4].delay = delay  # joint_pos
    meta.observations[4].history_length = history
    meta.observations[0].delay = 1  # base_lin_vel, no history
    return meta


def test_delay_reads_the_value_from_delay_steps_ago_filled_at_an_episode_start(
    tmp_path, make_meta, make_policy
):
    meta = _delay_meta(make_meta)
    d = meta.obs_dim
    policy = OnnxPolicy(make_policy(tmp_path / "p.onnx", np.zeros((d, 12)), np.zeros(12), meta))
    outs = [policy.build_observation(_terms(float(v))) for v in (1, 2, 3, 4, 5, 6)]
    # base_lin_vel (delay 1): the value of the previous call; the first call repeats itself.
    assert [o[0] for o in outs] == [1, 1, 2, 3, 4, 5]
    # joint_pos (delay 2, history 3): values k-4..k-2, clamped to the first value.
    start = 12
    windows = [o[start : start + 36].reshape(3, 12)[:, 0].tolist() for o in outs]
    assert windows == [[1, 1, 1], [1, 1, 1], [1, 1, 1], [1, 1, 2], [1, 2, 3], [2, 3, 4]]
    policy.reset()
    assert policy.build_observation(_terms(9.0))[start : start + 36].tolist() == [9.0] * 36


def test_reset_rows_refills_only_those_rows(tmp_path, make_meta, make_policy):
    meta = _delay_meta(make_meta, delay=1, history=2)
    d = meta.obs_dim
    policy = OnnxPolicy(make_policy(tmp_path / "p.onnx", np.zeros((d, 12)), np.zeros(12), meta))

    def rows(a, b):
        return {
            k: np.stack([np.full_like(v, a), np.full_like(v, b)]) for k, v in _terms(1.0).items()
        }

    for v in (1.0, 2.0, 3.0):
        obs = policy.build_observation(rows(v, 10 * v))
    policy.reset(rows=[1])
    obs = policy.build_observation(rows(4.0, 50.0))
    # Row 0 continues (base_lin_vel delay 1 -> 3); row 1 starts again from its new value.
    assert obs[0, 0] == 3.0 and obs[1, 0] == 50.0
    assert obs[1, 12:36].tolist() == [50.0] * 24
    with pytest.raises(ValueError, match=r"rows \[5\] outside \[0, 2\)"):
        policy.reset(rows=[5])


def test_reset_with_a_done_mask_refills_only_its_true_rows(tmp_path, make_meta, make_policy):
    meta = _delay_meta(make_meta, delay=1, history=2)
    d = meta.obs_dim
    policy = OnnxPolicy(make_policy(tmp_path / "p.onnx", np.zeros((d, 12)), np.zeros(12), meta))

    def rows(a, b):
        return {
            k: np.stack([np.full_like(v, a), np.full_like(v, b)]) for k, v in _terms(1.0).items()
        }

    for v in (1.0, 2.0, 3.0):
        policy.build_observation(rows(v, 10 * v))
    policy.reset(np.array([False, True]))  # as an env returns `done`: row 1 ended
    obs = policy.build_observation(rows(4.0, 50.0))
    assert obs[0, 0] == 3.0 and obs[1, 0] == 50.0
    for bad, error in (
        (np.array([0.7]), TypeError),
        ([1.0], TypeError),
        (np.array([True, False, True]), ValueError),
        ([-1], ValueError),
    ):
        with pytest.raises(error, match="rows"):
            policy.reset(bad)


def test_values_beyond_float32_are_refused_like_nan(tmp_path, go1_meta, make_policy):
    policy = OnnxPolicy(
        make_policy(tmp_path / "p.onnx", np.zeros((48, 12)), np.zeros(12), go1_meta)
    )
    terms = _terms(1.0)
    terms["joint_vel"] = np.full(12, 1e39)
    with pytest.raises(
        ValueError, match="'joint_vel' contains NaN or Inf \\(or values beyond float32\\)"
    ):
        policy.build_observation(terms)


def test_clip_actions_of_training_is_applied_to_the_network_output(
    tmp_path, make_meta, make_policy
):
    meta = make_meta()
    meta.clip_actions = 0.5
    policy = OnnxPolicy(
        make_policy(tmp_path / "p.onnx", np.zeros((48, 12)), np.full(12, 3.0), meta)
    )
    assert (policy(np.zeros(48, np.float32)) == 0.5).all()
    assert OnnxPolicy(tmp_path / "p.onnx").metadata.clip_actions == 0.5


def test_the_headless_gl_choice_keeps_the_users_tries_egl_then_osmesa_and_names_both(
    monkeypatch,
):
    import sys

    from mjlab.deploy import headless

    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    assert headless.choose_gl_backend() == "osmesa"  # the user's choice is kept
    monkeypatch.delenv("MUJOCO_GL")
    monkeypatch.delenv("PYOPENGL_PLATFORM", raising=False)
    monkeypatch.delitem(sys.modules, "mujoco", raising=False)
    tried = []

    def fake(backend):
        tried.append(backend)
        return backend == "osmesa", f"{backend} failed"

    monkeypatch.setattr(headless, "_works", fake)
    assert headless.choose_gl_backend() == "osmesa" and tried == ["egl", "osmesa"]
    assert headless.os.environ["PYOPENGL_PLATFORM"] == "osmesa"
    monkeypatch.delenv("MUJOCO_GL")
    monkeypatch.setattr(headless, "_works", lambda b: (False, f"no {b}"))
    with pytest.raises(headless.HeadlessGLError, match=r"egl: no egl; osmesa: no osmesa.*libegl1"):
        headless.choose_gl_backend()

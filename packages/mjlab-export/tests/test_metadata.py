import json
import math

import numpy as np
import pytest

from mjlab.deploy import DeploymentMetadata, ObservationTermSpec
from mjlab.deploy.metadata import FLAT_KEYS


def test_json_round_trip_keeps_full_precision(go1_meta):
    go1_meta.stiffness[0] = float(np.float32(17.723456789))  # a float32 value
    go1_meta.stiffness[1] = 1.0 / 3.0  # a float64 value
    go1_meta.effort_limit[2] = math.inf
    back = DeploymentMetadata.from_json(go1_meta.to_json())
    assert back == go1_meta
    assert np.float32(back.stiffness[0]) == np.float32(17.723456789)
    assert back.stiffness[1] == 1.0 / 3.0
    assert back.effort_limit[2] == math.inf


def test_flat_keys_follow_joint_order(go1_meta):
    flat = go1_meta.flat_items()
    assert flat["joint_names"].split(",") == go1_meta.joint_names
    assert [float(v) for v in flat["default_joint_pos"].split(",")] == go1_meta.default_joint_pos
    assert (
        flat["observation_names"]
        == "base_lin_vel,base_ang_vel,projected_gravity,command,joint_pos,joint_vel,actions"
    )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d.update(stiffness=d["stiffness"][:-1]),
            "'stiffness' has 11 values; expected 12",
        ),
        (lambda d: d.pop("joint_names"), r"missing fields \['joint_names'\]"),
        (lambda d: d.update(schema_version=99), "schema_version 99 is not supported"),
        (lambda d: d["observations"][0].update(dim=0), "'base_lin_vel': dim must be >= 1"),
        (lambda d: d["observations"][0].update(colour="red"), "malformed"),
    ],
)
def test_malformed_metadata_names_the_field(go1_meta, edit, message):
    raw = json.loads(go1_meta.to_json())
    edit(raw)
    with pytest.raises(ValueError, match=message):
        DeploymentMetadata.from_json(json.dumps(raw))


def test_garbled_json_is_a_clear_error():
    with pytest.raises(ValueError, match="not valid JSON"):
        DeploymentMetadata.from_json("{joint_names: [")


def test_float32_arrays_and_plain_dicts_are_accepted_and_round_trip_exactly(go1_meta):
    raw = json.loads(go1_meta.to_json())
    values = np.linspace(0.1, 1.3, 12, dtype=np.float32)
    raw["stiffness"] = values  # numpy float32, as read from a torch tensor
    raw["robot"]["init_rot"] = (1.0, 0.0, 0.0, 0.0)
    meta = DeploymentMetadata(**raw)  # dicts for robot/observations/commands
    assert meta.robot.menagerie_name == "unitree_go1"
    assert meta.observations[1].scale == 0.25
    back = DeploymentMetadata.from_json(meta.to_json())
    np.testing.assert_array_equal(np.asarray(back.stiffness, dtype=np.float32), values)
    assert back == meta


def test_onnx_metadata_has_the_json_document_and_the_flat_keys(go1_meta):
    props = go1_meta.to_onnx_metadata()
    assert set(props) == {"mjlab.deployment", *FLAT_KEYS}
    assert DeploymentMetadata.from_onnx_metadata(props) == go1_meta
    assert props["command_names"] == ""
    with pytest.raises(
        ValueError, match=r"No 'mjlab\.deployment' metadata \(keys present: \['joint_names'\]\)"
    ):
        DeploymentMetadata.from_onnx_metadata({"joint_names": "a"})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"damping": [-1.0] * 12}, "'damping' is negative for joints"),
        ({"effort_limit": [0.0] * 12}, "'effort_limit' is <= 0"),
        ({"default_joint_pos": [float("nan")] * 12}, "'default_joint_pos' must be finite"),
        ({"stiffness": [float("inf")] * 12}, "'stiffness' is not finite"),
        ({"decimation": 5}, r"step_dt \(0.02 s\) must equal physics_dt \* decimation"),
        ({"joint_names": ["a"] * 12}, r"'joint_names' repeats \['a'\]"),
        ({"action_type": "torque"}, "'action_type' is 'torque'; use one of"),
        ({"mujoco_options": {"integrator": "RK45"}}, r"'mujoco_options.integrator' is 'RK45'"),
        ({"mujoco_options": {"timestep": 0.002}}, "mujoco_options.timestep .* must be equal"),
        ({"robot": {"init_pos": [0, 0]}}, "robot.init_pos' must be 3 numbers"),
        ({"observations": []}, "'observations' is empty"),
    ],
)
def test_inconsistent_metadata_is_refused_at_construction(go1_meta, change, message):
    fields = {f: getattr(go1_meta, f) for f in go1_meta.__dataclass_fields__}
    fields.update(change)
    with pytest.raises(ValueError, match=message):
        DeploymentMetadata(**fields)


def test_observation_term_checks_scale_and_clip():
    with pytest.raises(ValueError, match="'q': scale has 2 values, dim is 3"):
        ObservationTermSpec(name="q", func="joint_pos_rel", dim=3, scale=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"'q': clip must be \[min, max\] with min < max"):
        ObservationTermSpec(name="q", func="joint_pos_rel", dim=3, clip=(1.0, -1.0))
    term = ObservationTermSpec(name="q", func="joint_pos_rel", dim=3, history_length=4)
    assert term.total_dim == 12


def test_document_that_is_not_an_object_or_lacks_a_version_is_refused():
    with pytest.raises(ValueError, match="must be a JSON object"):
        DeploymentMetadata.from_json("[1, 2]")
    with pytest.raises(ValueError, match="no valid 'schema_version'"):
        DeploymentMetadata.from_json('{"joint_names": ["a"]}')


def test_a_version_1_file_reads_with_no_delay_and_no_clips_and_is_rewritten_as_the_current_version(
    go1_meta,
):
    import json

    from mjlab.deploy import SCHEMA_VERSION

    raw = json.loads(go1_meta.to_json())
    for key in ("action_clip", "clip_actions", "joint_pos_limits", "joint_vel_limit"):
        raw.pop(key)
    for term in raw["observations"]:
        term.pop("delay")
    raw["schema_version"] = 1
    old = DeploymentMetadata.from_json(json.dumps(raw))
    assert old.schema_version == 1
    assert all(t.delay == 0 for t in old.observations)
    assert old.action_clip is None and old.clip_actions is None and old.joint_pos_limits == []
    # Written as the lowest version that holds it: 2 without a motion (3 adds `motion`, 4
    # `images`, 5 `clamp_to_joint_limits`).
    assert SCHEMA_VERSION == 5
    assert json.loads(old.to_json())["schema_version"] == 2


def test_version_2_fields_are_validated_naming_them(go1_meta):
    import dataclasses

    fields = dataclasses.asdict(go1_meta)
    with pytest.raises(ValueError, match="'joint_pos_limits' has lower > upper for joints"):
        DeploymentMetadata(**{**fields, "joint_pos_limits": [[1.0, -1.0]] * 12})
    with pytest.raises(ValueError, match="'joint_pos_limits' has 2 entries; expected 12"):
        DeploymentMetadata(**{**fields, "joint_pos_limits": [[-1.0, 1.0]] * 2})
    with pytest.raises(ValueError, match="'clip_actions' must be > 0"):
        DeploymentMetadata(**{**fields, "clip_actions": -1.0})
    with pytest.raises(ValueError, match="'action_clip' must be \\[min, max\\]"):
        DeploymentMetadata(**{**fields, "action_clip": [1.0, 0.0]})
    with pytest.raises(ValueError, match="delay >= 0"):
        DeploymentMetadata(
            **{**fields, "observations": [{**fields["observations"][0], "delay": -2}]}
        )


def test_clamped_targets_are_version_5_and_the_runtime_clamps_like_the_env(
    go1_meta, make_policy, tmp_path
):
    """`clamp_to_joint_limits` is written only when on (as version 5, which older readers
    refuse), read back, validated, and applied by `OnnxPolicy.process_actions` after the clip."""
    import dataclasses
    import json

    assert "clamp_to_joint_limits" not in json.loads(go1_meta.to_json())
    fields = dataclasses.asdict(go1_meta)
    limits = [[-0.2, 0.3], [0.8, 1.0], [-1.9, -1.7]] * 4
    meta = DeploymentMetadata(
        **{**fields, "joint_pos_limits": limits, "clamp_to_joint_limits": True}
    )
    raw = json.loads(meta.to_json())
    assert raw["clamp_to_joint_limits"] is True and raw["schema_version"] == 5
    again = DeploymentMetadata.from_json(json.dumps(raw))
    assert again.clamp_to_joint_limits is True
    raw.pop("clamp_to_joint_limits")
    raw["schema_version"] = 4
    assert DeploymentMetadata.from_json(json.dumps(raw)).clamp_to_joint_limits is False
    with pytest.raises(ValueError, match="'clamp_to_joint_limits' must be true or false"):
        DeploymentMetadata(**{**fields, "clamp_to_joint_limits": "false"}).validate()
    with pytest.raises(ValueError, match="needs joint_position actions and 'joint_pos_limits'"):
        DeploymentMetadata(
            **{**fields, "joint_pos_limits": [], "clamp_to_joint_limits": True}
        ).validate()

    import numpy as np

    from mjlab.deploy import OnnxPolicy

    obs_dim = go1_meta.obs_dim
    path = make_policy(tmp_path / "p.onnx", np.zeros((obs_dim, 12)), np.zeros(12), meta)
    policy = OnnxPolicy(path)
    actions = np.zeros((3, 12), dtype=np.float32)
    actions[0] = 100.0
    actions[1] = -100.0
    actions[2, 0] = 0.1
    scale = np.asarray(meta.action_scale, np.float32)
    unclamped = actions * scale + np.asarray(meta.action_offset, np.float32)
    targets = policy.process_actions(actions)
    lo, hi = np.asarray(limits, np.float32).T
    assert np.array_equal(targets[0], hi.astype(np.float64))
    assert np.array_equal(targets[1], lo.astype(np.float64))
    inside = (unclamped[2] >= lo) & (unclamped[2] <= hi)
    assert inside.any()
    assert np.array_equal(targets[2][inside], unclamped[2][inside].astype(np.float64))

import json
import math

import numpy as np
import pytest

from mjlab.deploy import DeploymentMetadata


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

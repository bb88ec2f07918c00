"""The schema's builders from a training env's plain description (`observation_term_spec`,
`joint_action_spec`): mjlab-core's managers describe themselves with them, and what the runtime
cannot reproduce is an `UnsupportedTermError` naming the term. Torch-free."""

import pytest

from mjlab.deploy.metadata import (
    JointActionSpec,
    ObservationTermSpec,
    UnsupportedTermError,
    joint_action_spec,
    observation_term_spec,
    require_concatenated,
)


def _term(**changes):
    term = {
        "name": "joint_pos",
        "func": "joint_pos_rel",
        "shape": [12],
        "clip": None,
        "scale": 0.5,
        "delay": 1,
        "history_length": 3,
        "flatten_history_dim": True,
        "params": {"asset_cfg": {"entity": "robot"}, "command_name": "twist"},
    }
    return {**term, **changes}


def _action(**changes):
    term = {
        "name": "joint_pos",
        "type": "JointPositionAction",
        "action_type": "joint_position",
        "entity": "robot",
        "dim": 2,
        "joint_names": ["a", "b"],
        "scale": [0.25, 0.25],
        "offset": [0.0, 0.1],
        "clip": None,
        "stiffness": [20.0, 20.0],
        "damping": [1.0, 1.0],
        "effort_limit": [10.0, 10.0],
        "armature": [0.01, 0.01],
        "default_joint_pos": [0.0, 0.1],
        "joint_pos_limits": [[-1.0, 1.0], [-1.0, 1.0]],
    }
    return {**term, **changes}


def test_a_flat_term_becomes_its_spec_without_an_entity_only_selection():
    spec = observation_term_spec("actor", **_term())
    assert spec == ObservationTermSpec(
        name="joint_pos",
        func="joint_pos_rel",
        dim=12,
        scale=0.5,
        history_length=3,
        delay=1,
        params={"command_name": "twist"},
    )


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"shape": [2, 12]}, r"'actor/joint_pos' has per-step shape \(2, 12\)"),
        ({"flatten_history_dim": False}, r"'actor/joint_pos' has flatten_history_dim=False"),
    ],
)
def test_a_term_the_runtime_cannot_hold_is_refused_naming_it(changes, says):
    with pytest.raises(UnsupportedTermError, match=says):
        observation_term_spec("actor", **_term(**changes))


def test_an_unconcatenated_group_is_refused():
    require_concatenated("actor", True)
    with pytest.raises(UnsupportedTermError, match="'actor' has concatenate_terms=False"):
        require_concatenated("actor", False)


def test_the_one_joint_action_term_becomes_its_spec():
    spec = joint_action_spec([_action()])
    assert isinstance(spec, JointActionSpec)
    assert spec.joint_names == ["a", "b"] and spec.offset == [0.0, 0.1]
    assert spec.joint_vel_limit == [None, None] and spec.clamp_to_joint_limits is False
    spec = joint_action_spec([_action(joint_vel_limit=[3.0, None], clamp_to_joint_limits=True)])
    assert spec.joint_vel_limit == [3.0, None] and spec.clamp_to_joint_limits is True


@pytest.mark.parametrize(
    ("terms", "says"),
    [
        ([], "no action terms"),
        ([_action(), _action(name="other")], r"2 action terms \['joint_pos', 'other'\]"),
        ([_action(action_type=None, type="RelativeAction")], "does not command joints"),
    ],
)
def test_action_terms_the_runtime_cannot_drive_are_refused(terms, says):
    with pytest.raises(UnsupportedTermError, match=says):
        joint_action_spec(terms)


def test_the_exporters_error_is_the_schemas_and_a_value_error():
    pytest.importorskip("torch")  # mjlab.export needs mjlab-export[torch]
    pytest.importorskip("onnx")
    from mjlab.export import ExportError

    assert issubclass(ExportError, UnsupportedTermError) and issubclass(ExportError, ValueError)

"""Physically implausible metadata is refused at export (constructing the metadata, as
`metadata_from_env` and `export_policy` do) and at load (`OnnxPolicy`), naming the joint or
field: gains that saturate the motor within a milliradian or ring above 500 Hz, a default
pose outside the joint range, non-finite or unphysical gravity, friction, timestep and solver
settings. Files are written with the raw JSON, as a corrupted or hand-edited file would be."""

import json

import numpy as np
import pytest

from mjlab.deploy import DeploymentMetadata, OnnxPolicy
from mjlab.deploy.cli import main
from mjlab.deploy.metadata import METADATA_KEY


def _edit_stiffness(doc):
    doc["stiffness"][3] = 1e12  # FL_hip_joint


def _edit_damping(doc):
    doc["damping"][0] = 1e9


def _edit_default_pose(doc):
    doc["joint_pos_limits"] = [[-1.0, 1.0], [-1.0, 3.0], [-2.7, -0.8]] * 4
    doc["default_joint_pos"][2] = -3.0  # FR_calf_joint


def _edit_gravity(doc):
    doc["mujoco_options"]["gravity"] = [0.0, 0.0, float("nan")]


def _edit_gravity_unit(doc):
    doc["mujoco_options"]["gravity"] = [0.0, 0.0, -981.0]  # cm/s^2


def _edit_friction(doc):
    doc["robot"]["geom_params"] = {"friction": [[0.8, 0.005, 0.0001], [float("nan"), 0.0, 0.0]]}


def _edit_friction_range(doc):
    doc["robot"]["geom_params"] = {"friction": [[80.0, 0.005, 0.0001]]}


def _edit_timestep(doc):
    doc.update(physics_dt=2.0, step_dt=8.0)
    doc["mujoco_options"]["timestep"] = 2.0


def _edit_iterations(doc):
    doc["mujoco_options"]["iterations"] = 10**9


def _edit_impratio(doc):
    doc["mujoco_options"]["impratio"] = float("inf")


CASES = {
    "stiffness": (_edit_stiffness, "joint 'FL_hip_joint': stiffness 1e+12"),
    "damping": (_edit_damping, "joint 'FR_hip_joint': damping 1e+09"),
    "default pose": (_edit_default_pose, "joint 'FR_calf_joint': default_joint_pos -3"),
    "gravity nan": (_edit_gravity, "mujoco_options.gravity' must be finite"),
    "gravity unit": (_edit_gravity_unit, "mujoco_options.gravity' is [0.0, 0.0, -981.0]"),
    "friction nan": (_edit_friction, "robot.geom_params.friction' is not finite for geom 1"),
    "friction range": (_edit_friction_range, "robot.geom_params.friction' of geom 0"),
    "timestep": (_edit_timestep, "physics_dt 2.0 s is not a plausible MuJoCo timestep"),
    "iterations": (_edit_iterations, "mujoco_options.iterations' is 1000000000"),
    "impratio": (_edit_impratio, "mujoco_options.impratio' must be finite"),
}


def _document(meta, edit):
    doc = json.loads(meta.to_json())
    edit(doc)
    return json.dumps(doc)  # NaN/Infinity as Python's json writes them


@pytest.mark.parametrize("case", list(CASES))
def test_implausible_metadata_is_refused_at_export_and_at_load(
    case, tmp_path, go1_meta, make_policy, capsys
):
    edit, message = CASES[case]
    text = _document(go1_meta, edit)
    raw = json.loads(text)
    raw.pop("schema_version")
    with pytest.raises(ValueError, match="Deployment metadata") as refused:
        DeploymentMetadata(**raw)  # what metadata_from_env and export_policy build
    assert message in str(refused.value)
    path = make_policy(
        tmp_path / "p.onnx", np.zeros((48, 12)), np.zeros(12), props={METADATA_KEY: text}
    )
    with pytest.raises(ValueError) as refused:
        OnnxPolicy(path)
    assert message in str(refused.value) and str(path) in str(refused.value)
    with pytest.raises(SystemExit) as exit_info:
        main(["sim2sim", str(path), "--seconds", "0.1"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_plausible_gains_of_the_shipped_robots_pass(go1_meta):
    # Go1 at 10 Hz on 0.01 kg m^2, and the rule's edges: 1 mrad to saturation, 500 Hz.
    go1_meta.validate()
    doc = json.loads(go1_meta.to_json())
    doc.pop("schema_version")
    doc["stiffness"][0] = 23.7 / 1e-3 * 0.999
    doc["armature"][0] = 1.0
    DeploymentMetadata(**doc)

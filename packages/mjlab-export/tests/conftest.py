"""Torch-free fixtures: ONNX policies built with onnx.helper and matching metadata."""

from pathlib import Path

import numpy as np
import pytest

from mjlab.deploy import DeploymentMetadata, ObservationTermSpec, RobotModelSpec
from mjlab.deploy.testing import write_linear_policy


def linear_policy(
    path: Path,
    weight: np.ndarray,
    bias: np.ndarray,
    metadata: DeploymentMetadata | None = None,
    props=None,
) -> Path:
    """actions = obs @ weight + bias, dynamic batch, input "obs", output "actions"."""
    return write_linear_policy(path, weight, bias, metadata, props)


def go1_like_metadata(history: int = 0) -> DeploymentMetadata:
    joints = [
        f"{leg}_{part}_joint"
        for leg in ("FR", "FL", "RR", "RL")
        for part in ("hip", "thigh", "calf")
    ]
    default = [0.0, 0.9, -1.8] * 4
    obs = [
        ObservationTermSpec(name="base_lin_vel", func="base_lin_vel", dim=3),
        ObservationTermSpec(name="base_ang_vel", func="base_ang_vel", dim=3, scale=0.25),
        ObservationTermSpec(name="projected_gravity", func="projected_gravity", dim=3),
        ObservationTermSpec(
            name="command", func="generated_commands", dim=3, params={"command_name": "twist"}
        ),
        ObservationTermSpec(name="joint_pos", func="joint_pos_rel", dim=12, history_length=history),
        ObservationTermSpec(name="joint_vel", func="joint_vel_rel", dim=12, clip=[-10.0, 10.0]),
        ObservationTermSpec(name="actions", func="last_action", dim=12),
    ]
    return DeploymentMetadata(
        task_id="Mjlab-Velocity-Flat-Unitree-Go1",
        robot=RobotModelSpec(menagerie_name="unitree_go1", entry="go1", init_pos=[0.0, 0.0, 0.3]),
        joint_names=joints,
        stiffness=[39.47841760435743] * 12,
        damping=[2.5132741228718345] * 12,
        effort_limit=[23.7, 23.7, 35.55] * 4,
        armature=[0.01] * 12,
        default_joint_pos=default,
        action_scale=[0.15, 0.15, 0.225] * 4,
        action_offset=default,
        joint_vel_limit=[30.1, 30.1, 20.06] * 4,
        observations=obs,
        step_dt=0.02,
        physics_dt=0.005,
        decimation=4,
        mujoco_options={
            "timestep": 0.005,
            "integrator": "implicitfast",
            "cone": "pyramidal",
            "iterations": 10,
        },
    )


@pytest.fixture
def go1_meta() -> DeploymentMetadata:
    return go1_like_metadata()


@pytest.fixture
def go1_twist_meta() -> DeploymentMetadata:
    """`go1_meta` with the velocity command's names and training ranges (schema 2)."""
    from mjlab.deploy import CommandSpec

    meta = go1_like_metadata()
    meta.commands = [
        CommandSpec(
            name="twist",
            dim=3,
            ranges={"lin_vel_x": [-1, 1], "lin_vel_y": [-0.5, 0.5], "ang_vel_z": [-1, 1]},
            components=["lin_vel_x", "lin_vel_y", "ang_vel_z"],
        )
    ]
    return meta


@pytest.fixture
def make_policy():
    """The `linear_policy` builder, for tests (test modules cannot import conftest)."""
    return linear_policy


@pytest.fixture
def make_meta():
    """The `go1_like_metadata` builder."""
    return go1_like_metadata


# Case C02: hinge joints a, b, c in body order; position actuators declared c, b, a.
C02_MJCF = """
<mujoco>
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="base" pos="0 0 0.5">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.05" mass="2"/>
      <body name="l1" pos="0.1 0 0">
        <joint name="a" type="hinge" axis="0 1 0" armature="0.01"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.1" size="0.02" mass="0.1"/>
        <body name="l2" pos="0 0 -0.1">
          <joint name="b" type="hinge" axis="0 1 0" armature="0.02"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.1" size="0.02" mass="0.1"/>
          <body name="l3" pos="0 0 -0.1">
            <joint name="c" type="hinge" axis="0 1 0" armature="0.03"/>
            <geom type="capsule" fromto="0 0 0 0 0 -0.1" size="0.02" mass="0.1"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="act_c" joint="c" kp="30" kv="3" forcerange="-33 33"/>
    <position name="act_b" joint="b" kp="20" kv="2" forcerange="-22 22"/>
    <position name="act_a" joint="a" kp="10" kv="1" forcerange="-11 11"/>
  </actuator>
</mujoco>
"""


@pytest.fixture
def c02_mjcf() -> str:
    """MJCF of case C02: joints a, b, c; actuators declared c, b, a with kp 30, 20, 10."""
    return C02_MJCF

"""Robot-side runtime for exported mjlab policies: onnxruntime + numpy only, no torch.

`OnnxPolicy` runs the file (the observation pipeline and action processing exactly as in
training); `DeploymentMetadata` is what the file carries; `ControlLoop` runs it on a `Robot` at the
file's control rate with a soft start, limits, fault handling and damping. `mjlab.deploy.gains`
reads per-joint gains from a MuJoCo model; `MotionPlayer` plays a tracking policy's reference
motion and produces its command terms; `mjlab.deploy.mujoco_robot.MujocoRobot` and
`mjlab.deploy.sim2sim` run the policy in plain MuJoCo (both need mjlab-export[sim]).
"""

from mjlab.deploy.control import (
    ControlLoop,
    Fault,
    JointCommand,
    LoopStats,
    Robot,
    RobotState,
    SafetyCfg,
)
from mjlab.deploy.gains import JointGains, joint_gains_from_model
from mjlab.deploy.metadata import (
    METADATA_KEY,
    SCHEMA_VERSION,
    CommandSpec,
    DeploymentMetadata,
    ImageInputSpec,
    MotionSpec,
    ObservationTermSpec,
    RobotModelSpec,
)
from mjlab.deploy.motion import MotionPlayer
from mjlab.deploy.policy import OnnxPolicy

__all__ = [
    "METADATA_KEY",
    "SCHEMA_VERSION",
    "CommandSpec",
    "ControlLoop",
    "DeploymentMetadata",
    "Fault",
    "ImageInputSpec",
    "JointCommand",
    "JointGains",
    "LoopStats",
    "MotionPlayer",
    "MotionSpec",
    "ObservationTermSpec",
    "OnnxPolicy",
    "Robot",
    "RobotModelSpec",
    "RobotState",
    "SafetyCfg",
    "joint_gains_from_model",
]

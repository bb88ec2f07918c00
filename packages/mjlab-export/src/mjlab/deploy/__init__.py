"""Robot-side runtime for exported mjlab policies: onnxruntime + numpy only, no torch.

`OnnxPolicy` runs the file; `DeploymentMetadata` is what the file carries. `mjlab.deploy.gains`
reads per-joint gains from a MuJoCo model and `mjlab.deploy.sim2sim` runs the policy in plain
MuJoCo (both need mjlab-export[sim]).
"""

from mjlab.deploy.gains import JointGains, joint_gains_from_model
from mjlab.deploy.metadata import (
    METADATA_KEY,
    SCHEMA_VERSION,
    CommandSpec,
    DeploymentMetadata,
    ObservationTermSpec,
    RobotModelSpec,
)
from mjlab.deploy.policy import OnnxPolicy

__all__ = [
    "METADATA_KEY",
    "SCHEMA_VERSION",
    "CommandSpec",
    "DeploymentMetadata",
    "JointGains",
    "ObservationTermSpec",
    "OnnxPolicy",
    "RobotModelSpec",
    "joint_gains_from_model",
]

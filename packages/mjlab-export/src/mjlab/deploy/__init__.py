"""Robot-side runtime for exported mjlab policies: onnxruntime + numpy only, no torch."""

from mjlab.deploy.metadata import (
    METADATA_KEY,
    CommandSpec,
    DeploymentMetadata,
    ObservationTermSpec,
    RobotModelSpec,
)
from mjlab.deploy.policy import OnnxPolicy

__all__ = [
    "METADATA_KEY",
    "CommandSpec",
    "DeploymentMetadata",
    "ObservationTermSpec",
    "OnnxPolicy",
    "RobotModelSpec",
]

"""Export trained policies to ONNX with deployment metadata (needs torch: mjlab-export[torch])."""

from mjlab.deploy.metadata import (
    CommandSpec,
    DeploymentMetadata,
    ImageInputSpec,
    ObservationTermSpec,
    RobotModelSpec,
)
from mjlab.export.exporter import PARITY_TOLERANCE, check_onnx_parity, export_policy
from mjlab.export.from_env import ExportError, metadata_from_env
from mjlab.export.rsl_rl import actor_from_rsl_rl

__all__ = [
    "PARITY_TOLERANCE",
    "CommandSpec",
    "DeploymentMetadata",
    "ExportError",
    "ImageInputSpec",
    "ObservationTermSpec",
    "RobotModelSpec",
    "actor_from_rsl_rl",
    "check_onnx_parity",
    "export_policy",
    "metadata_from_env",
]

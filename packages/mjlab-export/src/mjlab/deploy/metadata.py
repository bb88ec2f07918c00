"""Deployment metadata: everything a robot needs to run an exported policy.

Stored in the ONNX file as one versioned JSON document under the metadata key
`mjlab.deployment` (floats written with Python's repr, so float64 values round-trip exactly),
plus flat comma-separated keys for tools that read mjlab's older format.
numpy + json only: importable on a robot without torch.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

SCHEMA_VERSION = 1
METADATA_KEY = "mjlab.deployment"
FLAT_KEYS = (
    "joint_names",
    "joint_stiffness",
    "joint_damping",
    "default_joint_pos",
    "action_scale",
    "observation_names",
    "command_names",
)


@dataclass(kw_only=True)
class RobotModelSpec:
    """Where the robot model comes from."""

    menagerie_name: str | None = None
    """mujoco-menagerie robot, e.g. "unitree_go1"."""
    entry: str | None = None
    """Menagerie entry point, e.g. "go1"."""
    oid: str | None = None
    """Content id (commit/oid) of the model files."""
    init_pos: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    """Spawn position of the root, m."""
    init_rot: list[float] = field(default_factory=lambda: [1.0, 0.0, 0.0, 0.0])
    """Spawn orientation, wxyz."""
    geom_params: dict[str, list] = field(default_factory=dict)
    """Contact parameters of the robot's geoms as trained, in the MJCF's geom order: condim,
    friction (3), priority, solref (2), contype, conaffinity (the task may edit them)."""


@dataclass(kw_only=True)
class ObservationTermSpec:
    """One actor observation term, in the order the policy reads them."""

    name: str
    """Term name in the task, e.g. "joint_pos"."""
    func: str
    """What the term computes, e.g. "joint_pos_rel" (see mjlab.envs.mdp)."""
    dim: int
    """Values per step."""
    scale: float | list[float] | None = None
    """Multiplier applied after clipping."""
    clip: list[float] | None = None
    """[min, max] applied before scaling."""
    history_length: int = 0
    """Past steps kept (0: only the current value); flattened oldest first."""
    params: dict[str, Any] = field(default_factory=dict)
    """Extra parameters (e.g. the command name), JSON values only."""

    @property
    def total_dim(self) -> int:
        return self.dim * max(self.history_length, 1)


@dataclass(kw_only=True)
class CommandSpec:
    """A command the policy follows."""

    name: str
    """Command name, e.g. "twist"."""
    dim: int
    """Values in the command vector."""
    ranges: dict[str, list[float]] = field(default_factory=dict)
    """Training ranges per component, e.g. {"lin_vel_x": [-1, 1]}."""


@dataclass(kw_only=True)
class DeploymentMetadata:
    """Versioned description of a policy's interface and of the robot it drives.

    Every per-joint list follows `joint_names` (the control order), never the actuator
    declaration order (case C02). q_target = action_offset + action_scale * action.
    """

    schema_version: int = SCHEMA_VERSION
    """Version of this layout."""
    task_id: str = ""
    """Task the policy was trained on."""
    robot: RobotModelSpec = field(default_factory=RobotModelSpec)
    """Model source and spawn pose."""
    joint_names: list[str] = field(default_factory=list)
    """Controlled joints, control order, MJCF names without scene prefixes."""
    stiffness: list[float] = field(default_factory=list)
    """PD kp per joint, N m/rad."""
    damping: list[float] = field(default_factory=list)
    """PD kd per joint, N m s/rad."""
    effort_limit: list[float] = field(default_factory=list)
    """Torque limit per joint, N m (inf: none)."""
    armature: list[float] = field(default_factory=list)
    """Reflected inertia per joint, kg m^2."""
    default_joint_pos: list[float] = field(default_factory=list)
    """Default pose per joint, rad."""
    action_scale: list[float] = field(default_factory=list)
    """rad of target per unit action."""
    action_offset: list[float] = field(default_factory=list)
    """Target at zero action, rad (includes the default pose when the task uses it)."""
    action_type: str = "joint_position"
    """What the action drives: "joint_position" (PD targets), "joint_velocity" or "joint_effort"
    (then q_target is not meaningful and `action_offset + action_scale * action` is the
    velocity or torque)."""
    observations: list[ObservationTermSpec] = field(default_factory=list)
    """Actor observation terms in order."""
    commands: list[CommandSpec] = field(default_factory=list)
    """Commands."""
    step_dt: float = 0.02
    """Control period, s."""
    physics_dt: float = 0.005
    """Physics timestep, s."""
    decimation: int = 4
    """Physics steps per control step."""
    mujoco_options: dict[str, Any] = field(default_factory=dict)
    """MuJoCo options of training (timestep, integrator, cone, solver, iterations, ...)."""
    package_versions: dict[str, str] = field(default_factory=dict)
    """Versions of the packages that produced the file."""

    @property
    def num_joints(self) -> int:
        return len(self.joint_names)

    @property
    def obs_dim(self) -> int:
        return sum(t.total_dim for t in self.observations)

    def validate(self) -> DeploymentMetadata:
        """Check internal consistency.

        Raises:
            ValueError: naming the field that is wrong and how to fix it.
        """
        if self.schema_version != SCHEMA_VERSION:
            raise ValueError(
                f"Deployment metadata schema_version {self.schema_version} is not supported "
                f"(this mjlab-export reads {SCHEMA_VERSION}); upgrade mjlab-export or re-export the policy."
            )
        n = len(self.joint_names)
        if n == 0:
            raise ValueError(
                "Deployment metadata field 'joint_names' is empty; the policy must control joints."
            )
        for name in (
            "stiffness",
            "damping",
            "effort_limit",
            "armature",
            "default_joint_pos",
            "action_scale",
            "action_offset",
        ):
            values = getattr(self, name)
            if len(values) != n:
                raise ValueError(
                    f"Deployment metadata field '{name}' has {len(values)} values; expected {n}, "
                    "one per entry of 'joint_names' in the same order."
                )
            if any(isinstance(v, float) and math.isnan(v) for v in values):
                raise ValueError(f"Deployment metadata field '{name}' contains NaN.")
        if not self.observations:
            raise ValueError("Deployment metadata field 'observations' is empty.")
        for term in self.observations:
            if term.dim < 1 or term.history_length < 0:
                raise ValueError(
                    f"Observation term '{term.name}': dim must be >= 1 and history_length >= 0."
                )
            if term.clip is not None and (len(term.clip) != 2 or term.clip[0] > term.clip[1]):
                raise ValueError(
                    f"Observation term '{term.name}': clip must be [min, max], got {term.clip}."
                )
            if isinstance(term.scale, list) and len(term.scale) != term.dim:
                raise ValueError(
                    f"Observation term '{term.name}': scale has {len(term.scale)} values, dim is {term.dim}."
                )
        if not self.step_dt > 0 or not self.physics_dt > 0 or self.decimation < 1:
            raise ValueError(
                "Deployment metadata: step_dt and physics_dt must be > 0 and decimation >= 1."
            )
        return self

    # -- serialization ---------------------------------------------------------------------------
    def to_json(self) -> str:
        """The JSON document (floats as repr: full precision; inf as the string "inf")."""
        return json.dumps(_encode(asdict(self)), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> DeploymentMetadata:
        """Parse and validate a JSON document.

        Raises:
            ValueError: not JSON, missing fields, or inconsistent values (the message names them).
        """
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(
                f"Deployment metadata '{METADATA_KEY}' is not valid JSON: {err}."
            ) from err
        if not isinstance(raw, dict):
            raise ValueError(f"Deployment metadata '{METADATA_KEY}' must be a JSON object.")
        raw = _decode(raw)
        known = {f.name for f in fields(cls)}
        missing = [
            f.name
            for f in fields(cls)
            if f.name not in raw and f.name not in ("package_versions", "mujoco_options")
        ]
        if missing:
            raise ValueError(
                f"Deployment metadata is missing fields {missing}; re-export the policy with mjlab-export."
            )
        try:
            meta = cls(
                **{
                    k: v
                    for k, v in raw.items()
                    if k in known and k not in ("robot", "observations", "commands")
                },
                robot=RobotModelSpec(**raw["robot"]),
                observations=[ObservationTermSpec(**t) for t in raw["observations"]],
                commands=[CommandSpec(**c) for c in raw["commands"]],
            )
        except TypeError as err:
            raise ValueError(f"Deployment metadata is malformed: {err}.") from err
        return meta.validate()

    def flat_items(self) -> dict[str, str]:
        """The flat comma-separated keys mjlab tools read."""

        def join(values):
            return ",".join(repr(float(v)) if not isinstance(v, str) else v for v in values)

        return {
            "joint_names": ",".join(self.joint_names),
            "joint_stiffness": join(self.stiffness),
            "joint_damping": join(self.damping),
            "default_joint_pos": join(self.default_joint_pos),
            "action_scale": join(self.action_scale),
            "observation_names": ",".join(t.name for t in self.observations),
            "command_names": ",".join(c.name for c in self.commands),
        }


def _encode(value: Any) -> Any:
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    return value


def _decode(value: Any) -> Any:
    if value == "inf":
        return math.inf
    if value == "-inf":
        return -math.inf
    if isinstance(value, dict):
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value

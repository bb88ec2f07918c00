"""Deployment metadata: everything a robot needs to run an exported policy.

Stored in the ONNX file as one versioned JSON document under the metadata key
`mjlab.deployment` (floats written with Python's repr, so float64 values round-trip exactly),
plus flat comma-separated keys for tools that read mjlab's older format.
numpy + json only: importable on a robot without torch.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from mjlab.deploy.strict import Config

SCHEMA_VERSION = 5
"""Version of the JSON layout this module writes; it reads versions 1..SCHEMA_VERSION.
Version 2 added observation `delay`, `action_clip`, `clip_actions`, `joint_pos_limits`,
`joint_vel_limit` and command `components` (a version-1 file reads as delay 0, no clips,
unlimited joints and unnamed command values); version 3 added `motion` (a tracking policy's
reference motion; older files read as None); version 4 added `images` (camera inputs of an
image policy; older files read as none); version 5 added `clamp_to_joint_limits` (older files
read as False). A file is written as the lowest version that holds it: 5 when its targets are
clamped to the joint range, 4 with images, 3 with a motion, else 2, so a robot with an older
runtime still reads other policies, and refuses one whose targets it would compute
differently."""
METADATA_KEY = "mjlab.deployment"
"""ONNX `metadata_props` key of the JSON document."""
FLAT_KEYS = (
    "joint_names",
    "joint_stiffness",
    "joint_damping",
    "default_joint_pos",
    "action_scale",
    "observation_names",
    "command_names",
)
"""Comma-separated `metadata_props` keys written for tools that predate the JSON document."""
PER_JOINT_FIELDS = (
    "stiffness",
    "damping",
    "effort_limit",
    "armature",
    "default_joint_pos",
    "action_scale",
    "action_offset",
)
"""Fields of `DeploymentMetadata` holding one value per joint, in `joint_names` order."""
MIN_SATURATION_ERROR = 1e-3
"""Plausibility rule for gains: a joint's effort limit must not be reached below this position
error by its stiffness (rad) or below this speed by its damping (rad/s): kp <= effort / 1e-3
and kd <= effort / 1e-3. A PD law that saturates the motor within a milliradian is a
bang-bang controller, which no mjlab task trains; it is how a unit or exponent slip (N m/deg,
1e12) shows."""
MAX_NATURAL_FREQ = 2 * math.pi * 500.0
"""Plausibility rule for gains, rad/s: a joint with armature I > 0 must have a closed-loop
natural frequency sqrt(kp / I) below 500 Hz (motor drivers close the PD loop at 1-40 kHz; half
a kilohertz is beyond any joint's bandwidth, and I is a lower bound of the joint's inertia, so
this is generous), and a damping rate kd / I below 2 * 10 * this (damping ratio 10)."""
MAX_GRAVITY = 100.0
"""Plausibility rule: |mujoco_options.gravity| <= this, m/s^2 (about 10 g)."""
MAX_PHYSICS_DT = 0.1
"""Plausibility rule: physics_dt (MuJoCo's timestep) <= this, s (MuJoCo's default is 0.002;
no contact or PD law is stable beyond a tenth of a second)."""
MAX_FRICTION = 10.0
"""Plausibility rule: every geom friction coefficient (sliding, torsional, rolling) is in
[0, this] (real contacts have sliding friction below ~2; 10 catches a decimal slip)."""
ACTION_TYPES = ("joint_position", "joint_velocity", "joint_effort")
"""Values of `DeploymentMetadata.action_type`."""
MUJOCO_OPTION_NAMES: dict[str, tuple[str, ...]] = {
    "integrator": ("euler", "rk4", "implicit", "implicitfast"),
    "cone": ("pyramidal", "elliptic"),
    "solver": ("pgs", "cg", "newton"),
}
"""Accepted names of the enum-valued MuJoCo options (mjtIntegrator, mjtCone, mjtSolver)."""


@dataclass(kw_only=True)
class RobotModelSpec(Config):
    """Where the robot model comes from and where its base starts.

    Raises:
        ValueError: a malformed pose or name (the message names the field).
    """

    menagerie_name: str | None = None
    """mujoco-menagerie robot, e.g. "unitree_go1"; None when the model is not from Menagerie."""
    entry: str | None = None
    """Menagerie entry point (XML file stem), e.g. "go1"."""
    oid: str | None = None
    """Content id (Menagerie git tree oid or commit) of the model files; None when unknown."""
    init_pos: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    """Spawn position of the root in the world frame, m (3 values)."""
    init_rot: list[float] = field(default_factory=lambda: [1.0, 0.0, 0.0, 0.0])
    """Spawn orientation of the root in the world frame, quaternion wxyz (4 values)."""
    geom_params: dict[str, list] = field(default_factory=dict)
    """Contact parameters of the robot's geoms as trained, in the MJCF's geom order: condim,
    friction (3), priority, solref (2), solimp (5), margin, gap, contype, conaffinity (the task may
    edit them; files written before solimp/margin/gap were recorded lack those keys)."""

    def __post_init__(self) -> None:
        for name in ("menagerie_name", "entry", "oid"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(f"robot.{name} must be a non-empty string or None, got {value!r}.")
        self.init_pos = _floats(self.init_pos, "robot.init_pos", length=3)
        self.init_rot = _floats(self.init_rot, "robot.init_rot", length=4)
        if math.fsum(v * v for v in self.init_rot) < 1e-12:
            raise ValueError("robot.init_rot is a zero quaternion; give wxyz, e.g. [1, 0, 0, 0].")
        if not isinstance(self.geom_params, Mapping):
            raise ValueError("robot.geom_params must map a parameter name to per-geom values.")
        self.geom_params = dict(self.geom_params)


@dataclass(kw_only=True)
class ObservationTermSpec(Config):
    """One actor observation term, in the order the policy reads them.

    Processing (as mjlab's ObservationManager, in float32): raw value -> clip -> scale -> a line
    of `delay + max(H, 1)` values, filled with the first value of an episode. A term with
    `history_length` H > 0 contributes the H values ending `delay` steps ago, oldest first
    (H * dim values); with H = 0 it contributes the value from `delay` steps ago (dim values).

    Raises:
        ValueError: a malformed field (the message names the term and the field).
    """

    name: str
    """Term name in the task, e.g. "joint_pos"."""
    func: str
    """What the term computes, e.g. "joint_pos_rel" (see mjlab.envs.mdp)."""
    dim: int
    """Values per step (positive)."""
    scale: float | list[float] | None = None
    """Multiplier applied after clipping: one number, one per value (dim of them), or None."""
    clip: list[float] | None = None
    """[min, max] applied before scaling, or None."""
    history_length: int = 0
    """Past steps kept (0: only the current value); flattened oldest first."""
    delay: int = 0
    """Steps of latency: the policy reads the value from `delay` control steps ago."""
    params: dict[str, Any] = field(default_factory=dict)
    """Extra parameters (e.g. the command name), JSON values only."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(
                f"Observation term name must be a non-empty string, got {self.name!r}."
            )
        where = f"Observation term '{self.name}'"
        if not isinstance(self.func, str) or not self.func:
            raise ValueError(f"{where}: func must be a non-empty string, e.g. 'joint_pos_rel'.")
        self.dim = _int(self.dim, f"{where}: dim")
        self.history_length = _int(self.history_length, f"{where}: history_length")
        self.delay = _int(self.delay, f"{where}: delay")
        if self.dim < 1 or self.history_length < 0 or self.delay < 0:
            raise ValueError(
                f"{where}: dim must be >= 1, history_length >= 0 (0: no history) and delay >= 0, "
                f"got dim={self.dim}, history_length={self.history_length}, delay={self.delay}."
            )
        if self.scale is not None:
            if np.ndim(self.scale) == 0:
                (self.scale,) = _floats([self.scale], f"{where}: scale")
            else:
                self.scale = _floats(self.scale, f"{where}: scale")
                if len(self.scale) != self.dim:
                    raise ValueError(
                        f"{where}: scale has {len(self.scale)} values, dim is {self.dim}; give "
                        "one number or one per value."
                    )
        if self.clip is not None:
            clip = _floats(self.clip, f"{where}: clip", allow_inf=True)
            if len(clip) != 2 or not clip[0] < clip[1] or math.isnan(clip[0] + clip[1]):
                raise ValueError(f"{where}: clip must be [min, max] with min < max, got {clip}.")
            self.clip = clip
        if not isinstance(self.params, Mapping):
            raise ValueError(f"{where}: params must be a dict of JSON values.")
        self.params = dict(self.params)

    @property
    def total_dim(self) -> int:
        """Values this term contributes to the observation vector: dim * max(history_length, 1)."""
        return self.dim * max(self.history_length, 1)


class UnsupportedTermError(ValueError):
    """A term of the training env that the robot-side runtime cannot reproduce exactly; the
    message names the term and what to change. `mjlab.export` raises it as its `ExportError`."""


def require_concatenated(group: str, concatenate_terms: bool) -> None:
    """Raise UnsupportedTermError unless observation group `group` is one vector (its terms
    concatenated): the policy file takes one observation vector."""
    if not concatenate_terms:
        raise UnsupportedTermError(
            f"Observation group '{group}' has concatenate_terms=False: the policy file takes one "
            "observation vector. Set concatenate_terms=True for the exported group."
        )


def observation_term_spec(
    group: str,
    *,
    name: str,
    func: str,
    shape: Sequence[int],
    clip: list[float] | None,
    scale: float | list[float] | None,
    delay: int,
    history_length: int,
    flatten_history_dim: bool,
    params: Mapping[str, Any],
) -> ObservationTermSpec:
    """One term of a training env's observation group as the policy file's spec. The keywords
    are the training side's per-term description (mjlab-core's
    `ObservationManager.describe(group)["terms"]`), so that a manager describes itself with
    `observation_term_spec(group, **term)`.

    Args:
        group: the term's group, for messages.
        name, func, clip, scale, delay, history_length, params: as `ObservationTermSpec`; a
            param that is an entity selection naming nothing but the entity ({"entity": name})
            is dropped (it tells a robot nothing).
        shape: the per-step value's shape per env; one axis (its length is `dim`).
        flatten_history_dim: whether a history is flattened to (history_length * dim,).

    Raises:
        UnsupportedTermError: a per-step value of more than one axis, or a history kept as
            (history_length, dim): a flat observation vector cannot hold either.
        ValueError: a malformed field (`ObservationTermSpec`).
    """
    where = f"Observation term '{group}/{name}'"
    if len(shape) != 1:
        raise UnsupportedTermError(
            f"{where} has per-step shape {tuple(shape)}; the policy file reads flat terms "
            "(one axis). Flatten the term in its function, or leave it out of the group."
        )
    if history_length > 0 and not flatten_history_dim:
        raise UnsupportedTermError(
            f"{where} has flatten_history_dim=False: its value is (history, dim), which a "
            "flat observation vector cannot hold. Set flatten_history_dim=True (on the term "
            "or the group) to export it."
        )
    return ObservationTermSpec(
        name=name,
        func=func,
        dim=int(shape[0]),
        scale=scale,
        clip=clip,
        history_length=history_length,
        delay=delay,
        params={
            k: v for k, v in params.items() if not (isinstance(v, dict) and set(v) == {"entity"})
        },
    )


@dataclass(kw_only=True)
class JointActionSpec(Config):
    """The one joint action term a policy file drives, as the training env describes it
    (mjlab-core's `ActionManager.deployment_spec()`, built by `joint_action_spec`). Not written
    to the file itself: its values become `DeploymentMetadata`'s action fields
    (`joint_names`, gains, `action_scale`/`offset`/`clip`, joint limits, `action_type`), which
    validate them. Per-joint lists follow `joint_names`.
    """

    name: str
    """Term name, e.g. "joint_pos"."""
    type: str
    """Class name of the term, e.g. "JointPositionAction"."""
    action_type: str
    """One of `ACTION_TYPES`."""
    entity: str
    """Entity the term drives, e.g. "robot"."""
    joint_names: list[str]
    """Joints in action order."""
    scale: list[float]
    """Per-joint multiplier of the action (-> `action_scale`)."""
    offset: list[float]
    """Per-joint offset, the command's unit (-> `action_offset`)."""
    clip: list[float] | None
    """[min, max] of the processed action, or None (-> `action_clip`)."""
    stiffness: list[float]
    """Per-joint PD kp, N m/rad."""
    damping: list[float]
    """Per-joint PD kd, N m s/rad."""
    effort_limit: list[float]
    """Per-joint actuator force limit, N m (inf: none)."""
    armature: list[float]
    """Per-joint armature, kg m^2."""
    default_joint_pos: list[float]
    """Per-joint default position, rad."""
    joint_pos_limits: list[list[float]]
    """Per-joint [lower, upper], rad (+-inf: unlimited)."""
    joint_vel_limit: list[float | None]
    """Per-joint speed limit of the entity's config, rad/s; None where the config states none
    (the exporter then needs one from its caller)."""
    clamp_to_joint_limits: bool = False
    """Position terms: targets clamped to `joint_pos_limits` after `clip`."""


def joint_action_spec(terms: Sequence[Mapping[str, Any]]) -> JointActionSpec:
    """A training env's action terms (mjlab-core's `ActionManager.describe()`: one dict per
    term, in action order) as the one joint action term a policy file drives.

    Raises:
        UnsupportedTermError: no terms, several (a policy file drives one), or a term that does
            not command joints (its `action_type` is not one of `ACTION_TYPES`).
    """
    if not terms:
        raise UnsupportedTermError("The env has no action terms to describe.")
    if len(terms) > 1:
        raise UnsupportedTermError(
            f"The env has {len(terms)} action terms {[t['name'] for t in terms]}; a policy file "
            "drives one joint action term. Merge them into one term (one regex list of joints)."
        )
    (term,) = terms
    if term.get("action_type") not in ACTION_TYPES:
        raise UnsupportedTermError(
            f"Action term '{term['name']}' ({term['type']}) does not command joints; the robot "
            "runtime reproduces joint position, velocity and effort terms only."
        )
    names = list(term["joint_names"])
    return JointActionSpec(
        name=term["name"],
        type=term["type"],
        action_type=term["action_type"],
        entity=term["entity"],
        joint_names=names,
        scale=term["scale"],
        offset=term["offset"],
        clip=term["clip"],
        stiffness=term["stiffness"],
        damping=term["damping"],
        effort_limit=term["effort_limit"],
        armature=term["armature"],
        default_joint_pos=term["default_joint_pos"],
        joint_pos_limits=term["joint_pos_limits"],
        joint_vel_limit=list(term.get("joint_vel_limit") or [None] * len(names)),
        clamp_to_joint_limits=bool(term.get("clamp_to_joint_limits", False)),
    )


@dataclass(kw_only=True)
class CommandSpec(Config):
    """A command the policy follows.

    Raises:
        ValueError: a malformed field (the message names the command and the field).
    """

    name: str
    """Command name, e.g. "twist"."""
    dim: int
    """Values in the command vector (positive)."""
    ranges: dict[str, list[float]] = field(default_factory=dict)
    """Training ranges [lo, hi] per component, e.g. {"lin_vel_x": [-1, 1]}."""
    components: list[str] = field(default_factory=list)
    """Names of the command vector's values in order, e.g. ["lin_vel_x", "lin_vel_y",
    "ang_vel_z"] (v2); empty: unnamed."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Command name must be a non-empty string, got {self.name!r}.")
        self.dim = _int(self.dim, f"Command '{self.name}': dim")
        if self.dim < 1:
            raise ValueError(f"Command '{self.name}': dim must be >= 1, got {self.dim}.")
        if not isinstance(self.ranges, Mapping):
            raise ValueError(f"Command '{self.name}': ranges must map a component to [lo, hi].")
        ranges = {}
        for key, value in self.ranges.items():
            lo_hi = _floats(value, f"Command '{self.name}': ranges['{key}']", length=2)
            if lo_hi[0] > lo_hi[1]:
                raise ValueError(
                    f"Command '{self.name}': ranges['{key}'] must be [lo, hi] with lo <= hi, "
                    f"got {lo_hi}."
                )
            ranges[str(key)] = lo_hi
        self.ranges = ranges
        names = _sequence(self.components, f"commands '{self.name}'.components")
        if names and (len(names) != self.dim or not all(isinstance(c, str) and c for c in names)):
            raise ValueError(
                f"Command '{self.name}': components must be {self.dim} names (one per value) or "
                f"empty, got {names}."
            )
        self.components = [str(c) for c in names]


@dataclass(kw_only=True)
class MotionSpec(Config):
    """The reference motion a tracking policy was trained on (`mjlab.deploy.motion` plays it).

    Raises:
        ValueError: a malformed field (the message names it).
    """

    command_name: str
    """The command the motion produces, e.g. "motion"."""
    anchor_body: str
    """The body whose pose anchors the reference, e.g. "torso_link"."""
    body_names: list[str]
    """The tracked bodies, in the order of the policy's body terms."""
    fps: float
    """Frames per second of the motion (1 / step_dt)."""
    num_frames: int
    """Frames in the motion."""
    content_hash: str
    """sha256 of the motion's contents (`mjlab.deploy.motion.motion_content_hash`): the file
    played on the robot must have the same."""
    source: str = ""
    """Where the motion came from (e.g. "synthetic: squat")."""

    def __post_init__(self) -> None:
        for name in ("command_name", "anchor_body", "content_hash"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"motion.{name} must be a non-empty string.")
        self.body_names = [str(n) for n in _sequence(self.body_names, "motion.body_names")]
        (self.fps,) = _floats([self.fps], "motion.fps")
        self.num_frames = _int(self.num_frames, "motion.num_frames")
        if self.fps <= 0 or self.num_frames < 2:
            raise ValueError(
                f"motion.fps must be > 0 and motion.num_frames >= 2, got {self.fps}, "
                f"{self.num_frames}."
            )
        self.source = str(self.source)


IMAGE_DATA_TYPES = ("rgb", "depth")
"""Values of `ImageInputSpec.data_type`."""


@dataclass(kw_only=True)
class ImageInputSpec(Config):
    """One camera input of an image policy (v4): an ONNX input besides "obs".

    What the robot gives (`OnnxPolicy.preprocess_image`): "rgb", an (H, W, 3) uint8 frame;
    "depth", an (H, W) float32 depth image in metres (distance along the camera axis).
    What the network reads, as mjlab's image terms compute it (float32, channels first):
    "rgb": frame / 255, shape (3, H, W); "depth": depth / max_depth, shape (1, H, W), where a
    pixel without a measurement (<= 0, NaN, Inf) or beyond max_depth reads max_depth (the
    training camera reports a miss so).

    Raises:
        ValueError: a malformed field (the message names it).
    """

    name: str
    """The ONNX input (the training's observation group), e.g. "camera"."""
    term: str
    """The observation term that produced it, e.g. "rgb"."""
    data_type: str
    """"rgb" or "depth"."""
    shape: list[int]
    """(C, H, W) the network reads: C = 3 for rgb, 1 for depth."""
    max_depth: float | None = None
    """Depth normalization range, m ("depth" only)."""
    camera: dict[str, Any] = field(default_factory=dict)
    """The training camera as compiled (before any per-env jitter): sensor and camera names,
    parent body, pos (m) and quat (wxyz) in the parent body's frame, fovy (degrees), width and
    height (pixels); JSON values only. A robot's camera should match it."""

    def __post_init__(self) -> None:
        where = f"images['{self.name}']"
        if not isinstance(self.name, str) or not self.name or self.name == "obs":
            raise ValueError(
                f"{where}: name must be a non-empty string other than 'obs' (the ONNX input)."
            )
        if self.data_type not in IMAGE_DATA_TYPES:
            raise ValueError(
                f"{where}.data_type is {self.data_type!r}; use one of {list(IMAGE_DATA_TYPES)}."
            )
        shape = [_int(v, f"{where}.shape") for v in _sequence(self.shape, f"{where}.shape")]
        channels = 3 if self.data_type == "rgb" else 1
        if len(shape) != 3 or shape[0] != channels or min(shape) < 1:
            raise ValueError(
                f"{where}.shape must be [C, H, W] with C = {channels} for {self.data_type}, got "
                f"{shape}."
            )
        self.shape = shape
        if self.data_type == "depth":
            if self.max_depth is None:
                raise ValueError(f"{where}.max_depth (m) is required for a depth image.")
            (self.max_depth,) = _floats([self.max_depth], f"{where}.max_depth")
            if not self.max_depth > 0:
                raise ValueError(f"{where}.max_depth must be > 0 m, got {self.max_depth}.")
        if not isinstance(self.camera, Mapping):
            raise ValueError(f"{where}.camera must be a dict of JSON values.")
        self.camera = dict(self.camera)

    @property
    def raw_shape(self) -> tuple[int, ...]:
        """Shape of the frame the robot gives: (H, W, 3) for rgb, (H, W) for depth."""
        _, h, w = self.shape
        return (h, w, 3) if self.data_type == "rgb" else (h, w)


@dataclass(kw_only=True)
class DeploymentMetadata(Config):
    """Versioned description of a policy's interface and of the robot it drives.

    Every per-joint list follows `joint_names` (the control order), never the actuator
    declaration order. q_target = action_offset + action_scale * action (rad), and
    the PD law is tau = stiffness * (q_target - q) - damping * qd, clipped to +-effort_limit.

    Plain lists, tuples, numpy arrays and dicts are accepted for every field and normalized
    (numbers become Python floats, exactly: a float32 value stays the same number). The
    metadata is validated at construction and again by `validate()` / `to_json()`.

    Raises:
        ValueError: a missing, malformed or inconsistent field; the message names it and says
            how to fix it.
    """

    schema_version: int = SCHEMA_VERSION
    """Version of this layout: 1 as read from a version-1 file, else 3 with a motion and 2
    without (what `to_json` writes)."""
    task_id: str = ""
    """Task the policy was trained on, e.g. "Mjlab-Velocity-Flat-Unitree-Go1"."""
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
    action_clip: list[float] | None = None
    """[min, max] applied to `action_offset + action_scale * action` (after scaling, as the
    env's action term), or None."""
    clip_actions: float | None = None
    """Raw policy actions are clamped to [-clip_actions, clip_actions] before the env sees them
    (rsl_rl's wrapper `clip_actions`; `OnnxPolicy.__call__` applies it), or None."""
    joint_pos_limits: list[list[float]] = field(default_factory=list)
    """[lower, upper] range per joint, rad (+-inf: unlimited); empty: unknown (unlimited)."""
    clamp_to_joint_limits: bool = False
    """The env clamped the position targets to `joint_pos_limits` after `action_clip`
    (`JointPositionActionCfg.clamp_to_joint_limits`); `OnnxPolicy.process_actions` does the same.
    Written only when True, as schema version 5 (a reader that predates it refuses the file
    rather than compute other targets)."""
    joint_vel_limit: list[float] = field(default_factory=list)
    """Speed limit per joint, rad/s (inf: none stated); empty: unknown. MuJoCo models carry no
    speed limits: an env's file takes them from `EntityCfg.joint_vel_limit` (the motors' data
    sheet) and `export_policy` refuses joint-position metadata without them. The control loop
    treats a faster joint as a fault and refuses a file without them unless
    `SafetyCfg.joint_vel_limit` is given (older files)."""
    action_type: str = "joint_position"
    """What the action drives: "joint_position" (PD targets), "joint_velocity" or "joint_effort"
    (then q_target is not meaningful and `action_offset + action_scale * action` is the
    velocity or torque)."""
    observations: list[ObservationTermSpec] = field(default_factory=list)
    """Actor observation terms in order."""
    commands: list[CommandSpec] = field(default_factory=list)
    """Commands."""
    motion: MotionSpec | None = None
    """The reference motion of a tracking policy (v3); None for other policies."""
    images: list[ImageInputSpec] = field(default_factory=list)
    """Camera inputs of an image policy (v4), in the ONNX graph's input order after "obs";
    empty for other policies."""
    step_dt: float = 0.02
    """Control period, s; equals physics_dt * decimation."""
    physics_dt: float = 0.005
    """Physics timestep, s."""
    decimation: int = 4
    """Physics steps per control step."""
    mujoco_options: dict[str, Any] = field(default_factory=dict)
    """MuJoCo options of training (timestep, integrator, cone, solver, iterations,
    ls_iterations, impratio, ...); sim2sim applies the keys that are present."""
    package_versions: dict[str, str] = field(default_factory=dict)
    """Versions of the packages that produced the file."""

    def __post_init__(self) -> None:
        if isinstance(self.robot, Mapping):
            self.robot = RobotModelSpec(**self.robot)
        self.observations = [
            ObservationTermSpec(**t) if isinstance(t, Mapping) else t
            for t in _sequence(self.observations, "observations")
        ]
        self.commands = [
            CommandSpec(**c) if isinstance(c, Mapping) else c
            for c in _sequence(self.commands, "commands")
        ]
        if isinstance(self.motion, Mapping):
            self.motion = MotionSpec(**self.motion)
        self.images = [
            ImageInputSpec(**i) if isinstance(i, Mapping) else i
            for i in _sequence(self.images, "images")
        ]
        if isinstance(self.schema_version, int) and 2 <= self.schema_version <= SCHEMA_VERSION:
            # The layout of what it holds (what `to_json` writes).
            self.schema_version = self._layout_version()
        self.joint_names = [
            str(n) if isinstance(n, np.str_) else n
            for n in _sequence(self.joint_names, "joint_names")
        ]
        for name in PER_JOINT_FIELDS:
            setattr(self, name, _floats(getattr(self, name), name, allow_inf=True))
        if self.action_clip is not None:
            self.action_clip = _floats(self.action_clip, "action_clip", length=2, allow_inf=True)
        if self.clip_actions is not None:
            (self.clip_actions,) = _floats([self.clip_actions], "clip_actions")
            if self.clip_actions <= 0:
                raise ValueError(
                    f"Deployment metadata field 'clip_actions' must be > 0 or None, got "
                    f"{self.clip_actions}."
                )
        self.joint_pos_limits = [
            _floats(lim, f"joint_pos_limits[{i}]", length=2, allow_inf=True)
            for i, lim in enumerate(_sequence(self.joint_pos_limits, "joint_pos_limits"))
        ]
        vel = _sequence(self.joint_vel_limit, "joint_vel_limit")
        self.joint_vel_limit = _floats(vel, "joint_vel_limit", allow_inf=True) if vel else []
        for name in ("step_dt", "physics_dt"):
            (value,) = _floats([getattr(self, name)], name)
            setattr(self, name, value)
        self.decimation = _int(self.decimation, "decimation")
        if not isinstance(self.mujoco_options, Mapping):
            raise ValueError("mujoco_options must be a dict of MuJoCo option names to values.")
        self.mujoco_options = dict(self.mujoco_options)
        if not isinstance(self.package_versions, Mapping):
            raise ValueError("package_versions must be a dict of package names to versions.")
        self.package_versions = {str(k): str(v) for k, v in self.package_versions.items()}
        self.validate()

    def _layout_version(self) -> int:
        """The lowest schema version that holds this metadata: 5 with `clamp_to_joint_limits`,
        4 with images, 3 with a motion, else 2."""
        if self.clamp_to_joint_limits is True:
            return 5
        return 4 if self.images else 3 if self.motion is not None else 2

    @property
    def num_joints(self) -> int:
        """Number of controlled joints, which is the action dimension."""
        return len(self.joint_names)

    @property
    def obs_dim(self) -> int:
        """Length of the observation vector the policy reads (history included)."""
        return sum(t.total_dim for t in self.observations)

    def validate(self) -> DeploymentMetadata:
        """Check every field and their consistency.

        Returns:
            self, for chaining.

        Raises:
            ValueError: naming the field that is wrong and how to fix it.
        """
        if (
            not isinstance(self.schema_version, int)
            or not 1 <= self.schema_version <= SCHEMA_VERSION
        ):
            raise ValueError(
                f"Deployment metadata schema_version {self.schema_version} is not supported "
                f"(this mjlab-export reads 1..{SCHEMA_VERSION}); upgrade mjlab-export or re-export the policy."
            )
        if not isinstance(self.task_id, str):
            raise ValueError(
                f"Deployment metadata field 'task_id' must be a string, got {self.task_id!r}."
            )
        if not isinstance(self.robot, RobotModelSpec):
            raise ValueError(
                "Deployment metadata field 'robot' must be a RobotModelSpec or a dict."
            )
        n = len(self.joint_names)
        if n == 0:
            raise ValueError(
                "Deployment metadata field 'joint_names' is empty; the policy must control joints."
            )
        if not isinstance(self.clamp_to_joint_limits, bool):
            raise ValueError(
                "Deployment metadata field 'clamp_to_joint_limits' must be true or false, got "
                f"{self.clamp_to_joint_limits!r}."
            )
        if self.clamp_to_joint_limits and (
            self.action_type != "joint_position" or not self.joint_pos_limits
        ):
            raise ValueError(
                "Deployment metadata field 'clamp_to_joint_limits' is true but the policy has "
                f"action_type {self.action_type!r} and {len(self.joint_pos_limits)} joint ranges; "
                "it needs joint_position actions and 'joint_pos_limits'. Re-export the policy."
            )
        for i, name in enumerate(self.joint_names):
            if not isinstance(name, str) or not name or "," in name:
                raise ValueError(
                    f"Deployment metadata field 'joint_names[{i}]' is {name!r}; joint names are "
                    "non-empty strings without commas."
                )
        repeated = sorted({j for j in self.joint_names if self.joint_names.count(j) > 1})
        if repeated:
            raise ValueError(f"Deployment metadata field 'joint_names' repeats {repeated}.")
        for name in PER_JOINT_FIELDS:
            values = getattr(self, name)
            if len(values) != n:
                raise ValueError(
                    f"Deployment metadata field '{name}' has {len(values)} values; expected {n}, "
                    "one per entry of 'joint_names' in the same order."
                )
            may_be_inf = name == "effort_limit"
            bad = [
                self.joint_names[i]
                for i, v in enumerate(values)
                if math.isnan(v) or (math.isinf(v) and not may_be_inf)
            ]
            if bad:
                raise ValueError(
                    f"Deployment metadata field '{name}' is not finite for joints {bad}."
                )
        for name in ("stiffness", "damping", "armature"):
            negative = [self.joint_names[i] for i, v in enumerate(getattr(self, name)) if v < 0]
            if negative:
                raise ValueError(
                    f"Deployment metadata field '{name}' is negative for joints {negative}; "
                    "gains and armature are >= 0."
                )
        not_positive = [self.joint_names[i] for i, v in enumerate(self.effort_limit) if v <= 0]
        if not_positive:
            raise ValueError(
                f"Deployment metadata field 'effort_limit' is <= 0 for joints {not_positive}; "
                "give the torque limit in N m (inf: none)."
            )
        if self.joint_pos_limits and len(self.joint_pos_limits) != n:
            raise ValueError(
                f"Deployment metadata field 'joint_pos_limits' has {len(self.joint_pos_limits)} "
                f"entries; expected {n} [lower, upper] pairs in 'joint_names' order (or none)."
            )
        bad = [self.joint_names[i] for i, (lo, hi) in enumerate(self.joint_pos_limits) if lo > hi]
        if bad:
            raise ValueError(
                f"Deployment metadata field 'joint_pos_limits' has lower > upper for joints {bad}."
            )
        self._validate_plausible_joints()
        if self.joint_vel_limit and len(self.joint_vel_limit) != n:
            raise ValueError(
                f"Deployment metadata field 'joint_vel_limit' has {len(self.joint_vel_limit)} "
                f"values; expected {n} in 'joint_names' order (or none)."
            )
        bad = [self.joint_names[i] for i, v in enumerate(self.joint_vel_limit) if v <= 0]
        if bad:
            raise ValueError(
                f"Deployment metadata field 'joint_vel_limit' is <= 0 for joints {bad}; give "
                "rad/s (inf: none)."
            )
        if self.action_clip is not None and not self.action_clip[0] < self.action_clip[1]:
            raise ValueError(
                f"Deployment metadata field 'action_clip' must be [min, max] with min < max, got "
                f"{self.action_clip}."
            )
        if self.action_type not in ACTION_TYPES:
            raise ValueError(
                f"Deployment metadata field 'action_type' is {self.action_type!r}; use one of "
                f"{list(ACTION_TYPES)}."
            )
        if not self.observations:
            raise ValueError("Deployment metadata field 'observations' is empty.")
        if not all(isinstance(t, ObservationTermSpec) for t in self.observations):
            raise ValueError(
                "Deployment metadata field 'observations' must hold ObservationTermSpec."
            )
        names = [t.name for t in self.observations]
        repeated = sorted({t for t in names if names.count(t) > 1})
        if repeated or any("," in t for t in names):
            raise ValueError(
                f"Deployment metadata field 'observations': term names must be unique and have "
                f"no commas; got {names}."
            )
        if not all(isinstance(c, CommandSpec) for c in self.commands):
            raise ValueError("Deployment metadata field 'commands' must hold CommandSpec.")
        if self.motion is not None:
            if not isinstance(self.motion, MotionSpec):
                raise ValueError("Deployment metadata field 'motion' must be a MotionSpec or None.")
            if self.motion.command_name not in {c.name for c in self.commands}:
                raise ValueError(
                    f"Deployment metadata: motion.command_name '{self.motion.command_name}' is "
                    f"not one of the commands {[c.name for c in self.commands]}."
                )
        if not all(isinstance(i, ImageInputSpec) for i in self.images):
            raise ValueError("Deployment metadata field 'images' must hold ImageInputSpec.")
        image_names = [i.name for i in self.images]
        repeated = sorted({n for n in image_names if image_names.count(n) > 1})
        if repeated:
            raise ValueError(f"Deployment metadata field 'images' repeats the inputs {repeated}.")
        if not (self.step_dt > 0 and self.physics_dt > 0 and self.decimation >= 1):
            raise ValueError(
                "Deployment metadata: step_dt and physics_dt must be > 0 and decimation >= 1, got "
                f"step_dt={self.step_dt}, physics_dt={self.physics_dt}, decimation={self.decimation}."
            )
        if not math.isclose(self.step_dt, self.physics_dt * self.decimation, rel_tol=1e-6):
            raise ValueError(
                f"Deployment metadata: step_dt ({self.step_dt} s) must equal physics_dt * "
                f"decimation ({self.physics_dt} * {self.decimation})."
            )
        if self.physics_dt > MAX_PHYSICS_DT:
            raise ValueError(
                f"Deployment metadata: physics_dt {self.physics_dt} s is not a plausible MuJoCo "
                f"timestep (at most {MAX_PHYSICS_DT} s); give seconds, e.g. 0.005."
            )
        self._validate_mujoco_options()
        self._validate_geom_params()
        return self

    def _validate_plausible_joints(self) -> None:
        """The physical rules of `MIN_SATURATION_ERROR` and `MAX_NATURAL_FREQ`, and the
        default pose inside the joint range; the message names the joint and the field."""
        for i, name in enumerate(self.joint_names):
            kp, kd = self.stiffness[i], self.damping[i]
            effort, armature = self.effort_limit[i], self.armature[i]
            where = f"Deployment metadata: joint '{name}'"
            for field_name, gain, unit in (("stiffness", kp, "rad"), ("damping", kd, "rad/s")):
                if math.isfinite(effort) and gain * MIN_SATURATION_ERROR > effort:
                    raise ValueError(
                        f"{where}: {field_name} {gain:g} reaches the effort limit {effort:g} N m "
                        f"within {effort / gain:.3g} {unit} (less than {MIN_SATURATION_ERROR} "
                        f"{unit}): not a plausible gain; check its unit (per rad, not per "
                        "degree) and exponent."
                    )
            if armature > 0 and (
                kp > armature * MAX_NATURAL_FREQ**2 or kd > armature * 20 * MAX_NATURAL_FREQ
            ):
                raise ValueError(
                    f"{where}: stiffness {kp:g} / damping {kd:g} on armature {armature:g} kg m^2 "
                    f"give a natural frequency of {math.sqrt(kp / armature) / (2 * math.pi):.3g} "
                    f"Hz and a damping rate of {kd / armature:.3g} 1/s (at most 500 Hz and "
                    f"{20 * MAX_NATURAL_FREQ:.3g} 1/s): not plausible gains for the joint."
                )
            if self.joint_pos_limits:
                lo, hi = self.joint_pos_limits[i]
                q = self.default_joint_pos[i]
                slack = 1e-6 * max(1.0, abs(q))  # float32 round trips of a pose on the limit
                if not lo - slack <= q <= hi + slack:
                    raise ValueError(
                        f"{where}: default_joint_pos {q:g} is outside its range "
                        f"joint_pos_limits [{lo:g}, {hi:g}]."
                    )

    def _validate_geom_params(self) -> None:
        """Contact parameters of `robot.geom_params` finite and physical (friction in
        [0, MAX_FRICTION], margin and gap >= 0, solimp's dmin/dmax in [0, 1])."""
        params = self.robot.geom_params
        for key, values in params.items():
            where = f"Deployment metadata field 'robot.geom_params.{key}'"
            try:
                numbers = np.asarray(values, dtype=np.float64)
            except (TypeError, ValueError) as err:
                raise ValueError(f"{where} must hold numbers per geom: {err}.") from err
            if not np.isfinite(numbers).all():
                geom = int(np.argwhere(~np.isfinite(numbers))[0][0])
                raise ValueError(
                    f"{where} is not finite for geom {geom}: {np.asarray(numbers[geom]).tolist()}."
                )
            if key == "friction" and ((numbers < 0) | (numbers > MAX_FRICTION)).any():
                geom = int(np.argwhere((numbers < 0) | (numbers > MAX_FRICTION))[0][0])
                raise ValueError(
                    f"{where} of geom {geom} is {numbers[geom].tolist()}: friction coefficients "
                    f"are in [0, {MAX_FRICTION}]."
                )
            if key in ("margin", "gap") and (numbers < 0).any():
                geom = int(np.argwhere(numbers < 0)[0][0])
                raise ValueError(f"{where} of geom {geom} is {numbers[geom]}: it must be >= 0 m.")
            if key == "solimp" and numbers.ndim == 2 and numbers.shape[1] >= 2:
                dminmax = numbers[:, :2]
                if ((dminmax < 0) | (dminmax > 1)).any():
                    geom = int(np.argwhere((dminmax < 0) | (dminmax > 1))[0][0])
                    raise ValueError(
                        f"{where} of geom {geom} is {numbers[geom].tolist()}: dmin and dmax "
                        "(the first two values) are in [0, 1]."
                    )

    def _validate_mujoco_options(self) -> None:
        options = self.mujoco_options
        for key, allowed in MUJOCO_OPTION_NAMES.items():
            if key in options and options[key] not in allowed:
                raise ValueError(
                    f"Deployment metadata field 'mujoco_options.{key}' is {options[key]!r}; use "
                    f"one of {list(allowed)}."
                )
        for key in ("iterations", "ls_iterations"):
            if key in options and _int(options[key], f"mujoco_options.{key}") < 1:
                raise ValueError(f"Deployment metadata field 'mujoco_options.{key}' must be >= 1.")
        for key in ("timestep", "impratio", "tolerance", "ls_tolerance"):
            if key in options:
                (value,) = _floats([options[key]], f"mujoco_options.{key}")
                if value < 0 or (key != "tolerance" and key != "ls_tolerance" and value == 0):
                    raise ValueError(
                        f"Deployment metadata field 'mujoco_options.{key}' must be positive, "
                        f"got {value}."
                    )
        if "gravity" in options:
            gravity = _floats(options["gravity"], "mujoco_options.gravity", length=3)
            if math.hypot(*gravity) > MAX_GRAVITY:
                raise ValueError(
                    f"Deployment metadata field 'mujoco_options.gravity' is {gravity} m/s^2: "
                    f"its magnitude must be at most {MAX_GRAVITY} m/s^2 (Earth: 9.81)."
                )
        for key in ("wind", "magnetic"):
            if key in options:
                _floats(options[key], f"mujoco_options.{key}", length=3)
        for key in ("density", "viscosity", "o_margin"):
            if key in options:
                (value,) = _floats([options[key]], f"mujoco_options.{key}")
                if value < 0:
                    raise ValueError(
                        f"Deployment metadata field 'mujoco_options.{key}' must be >= 0, got "
                        f"{value}."
                    )
        for key, upper in (("tolerance", 1.0), ("ls_tolerance", 1.0), ("impratio", 1e3)):
            if key in options and float(options[key]) > upper:
                raise ValueError(
                    f"Deployment metadata field 'mujoco_options.{key}' is {options[key]}; a "
                    f"physical setting is at most {upper:g}."
                )
        for key in ("iterations", "ls_iterations"):
            if key in options and options[key] > 10_000:
                raise ValueError(
                    f"Deployment metadata field 'mujoco_options.{key}' is {options[key]}; a "
                    "solver needs at most 10000 (MuJoCo's default: 100)."
                )
        timestep = options.get("timestep")
        if timestep is not None and not math.isclose(timestep, self.physics_dt, rel_tol=1e-9):
            raise ValueError(
                f"Deployment metadata: mujoco_options.timestep ({timestep}) and physics_dt "
                f"({self.physics_dt}) describe the same step and must be equal."
            )

    # -- serialization ---------------------------------------------------------------------------
    def to_json(self) -> str:
        """The JSON document (floats as repr: full precision; an infinite effort limit as the
        string "inf").

        Raises:
            ValueError: the metadata does not validate.
        """
        self.validate()
        # Always the current layout: a file read as version 1 and written again may carry
        # version-2 fields, which a version-1 reader would ignore.
        document = {**asdict(self), "schema_version": self._layout_version()}
        if self.motion is None:
            document.pop("motion")
        if not self.images:
            document.pop("images")
        if not self.clamp_to_joint_limits:
            document.pop("clamp_to_joint_limits")
        return json.dumps(_encode(document), sort_keys=True, allow_nan=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> DeploymentMetadata:
        """Parse and validate a JSON document written by `to_json`.

        Keys this version does not know are ignored (a newer writer may add fields without
        changing the meaning of these ones); every field without a default must be present.

        Raises:
            ValueError: not JSON, missing fields, or inconsistent values (the message names them).
        """
        try:
            raw = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise ValueError(
                f"Deployment metadata '{METADATA_KEY}' is not valid JSON: {err}. Re-export the "
                "policy with mjlab-export."
            ) from err
        if not isinstance(raw, dict):
            raise ValueError(f"Deployment metadata '{METADATA_KEY}' must be a JSON object.")
        version = raw.get("schema_version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise ValueError(
                f"Deployment metadata has no valid 'schema_version' (got {version!r}); it was not "
                "written by mjlab-export."
            )
        optional = (
            "package_versions",
            "mujoco_options",
            "action_type",
            "task_id",
            "action_clip",
            "clip_actions",
            "joint_pos_limits",
            "clamp_to_joint_limits",
            "joint_vel_limit",
            "motion",
            "images",
        )
        missing = [f.name for f in fields(cls) if f.name not in raw and f.name not in optional]
        if missing:
            raise ValueError(
                f"Deployment metadata is missing fields {missing}; re-export the policy with mjlab-export."
            )
        for key in ("effort_limit", "joint_vel_limit", "action_clip"):
            if isinstance(raw.get(key), list):
                raw[key] = [_decode_inf(v) for v in raw[key]]
        if isinstance(raw.get("joint_pos_limits"), list):
            raw["joint_pos_limits"] = [
                [_decode_inf(v) for v in lim] if isinstance(lim, list) else lim
                for lim in raw["joint_pos_limits"]
            ]
        for term in raw.get("observations") or []:
            if isinstance(term, dict) and isinstance(term.get("clip"), list):
                term["clip"] = [_decode_inf(v) for v in term["clip"]]
        known = {f.name for f in fields(cls)}
        try:
            return cls(**{k: v for k, v in raw.items() if k in known})
        except TypeError as err:
            raise ValueError(f"Deployment metadata is malformed: {err}.") from err

    def flat_items(self) -> dict[str, str]:
        """The flat comma-separated keys mjlab tools read (floats as repr)."""

        def join(values: Sequence[float]) -> str:
            return ",".join(repr(float(v)) for v in values)

        return {
            "joint_names": ",".join(self.joint_names),
            "joint_stiffness": join(self.stiffness),
            "joint_damping": join(self.damping),
            "default_joint_pos": join(self.default_joint_pos),
            "action_scale": join(self.action_scale),
            "observation_names": ",".join(t.name for t in self.observations),
            "command_names": ",".join(c.name for c in self.commands),
        }

    def to_onnx_metadata(self) -> dict[str, str]:
        """Every ONNX `metadata_props` entry: the JSON document under `METADATA_KEY` and the
        flat keys.

        Raises:
            ValueError: the metadata does not validate.
        """
        return {METADATA_KEY: self.to_json(), **self.flat_items()}

    @classmethod
    def from_onnx_metadata(cls, props: Mapping[str, str]) -> DeploymentMetadata:
        """Read the metadata from ONNX `metadata_props` given as a dict.

        Raises:
            ValueError: no `METADATA_KEY` entry (the message lists the keys present), or see
                `from_json`.
        """
        if METADATA_KEY not in props:
            raise ValueError(
                f"No '{METADATA_KEY}' metadata (keys present: {sorted(props)}): the file was not "
                "exported by mjlab-export. Re-export it with mjlab.export.export_policy."
            )
        return cls.from_json(props[METADATA_KEY])


def _sequence(value: Any, name: str) -> list:
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
        raise ValueError(f"Deployment metadata field '{name}' must be a list, got {value!r}.")
    return list(value)


def _floats(
    value: Any, name: str, *, length: int | None = None, allow_inf: bool = False
) -> list[float]:
    """A flat list of Python floats (exact for float32 input)."""
    if isinstance(value, (str, bytes, Mapping)):
        raise ValueError(f"Deployment metadata field '{name}' must be numbers, got {value!r}.")
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"Deployment metadata field '{name}' must be numbers: {err}.") from err
    if array.ndim != 1 or (length is not None and array.shape[0] != length):
        expected = f"{length} numbers" if length is not None else "a flat list of numbers"
        raise ValueError(
            f"Deployment metadata field '{name}' must be {expected}, got shape {array.shape}."
        )
    if np.isnan(array).any() or (not allow_inf and np.isinf(array).any()):
        raise ValueError(
            f"Deployment metadata field '{name}' must be finite, got {array.tolist()}."
        )
    return [float(v) for v in array]


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}.")
    return int(value)


def _encode(value: Any) -> Any:
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    return value


def _decode_inf(value: Any) -> Any:
    return (
        {"inf": math.inf, "-inf": -math.inf}.get(value, value) if isinstance(value, str) else value
    )

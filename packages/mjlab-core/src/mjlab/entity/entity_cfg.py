"""Configs describing one entity (robot or object) of a scene."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import mujoco

from mjlab.actuator import ActuatorCfg
from mjlab.utils.config import Config
from mjlab.utils.spec_config import (
    SPEC_EDITOR_FIELDS,
    CameraCfg,
    GeomCfg,
    LightCfg,
    MaterialCfg,
    MeshCfg,
    TextureCfg,
)


@dataclass(kw_only=True)
class InitialStateCfg(Config):
    """Default state an entity is reset to (before reset events randomize it)."""

    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Root position relative to the env origin, m (world-aligned)."""
    rot: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    """Root orientation, quaternion wxyz, world frame."""
    lin_vel: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Root linear velocity, world frame, m/s (floating base only)."""
    ang_vel: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Root angular velocity, world frame, rad/s (floating base only)."""
    joint_pos: Mapping[str, float] = field(default_factory=lambda: {".*": 0.0})
    """{joint regex: position}, rad or m; later patterns win; every joint needs a value."""
    joint_vel: Mapping[str, float] = field(default_factory=lambda: {".*": 0.0})
    """{joint regex: velocity}, rad/s or m/s."""

    def __post_init__(self) -> None:
        norm = sum(c * c for c in self.rot) ** 0.5
        if abs(norm - 1.0) > 1e-3:
            raise ValueError(
                f"InitialStateCfg.rot must be a unit quaternion (wxyz), got norm {norm:.4f}."
            )


@dataclass(kw_only=True)
class CollisionCfg(Config):
    """Edits contact properties of the geoms whose names match; None leaves a property as is."""

    geom_names_expr: tuple[str, ...]
    """Regexes (full match) over the entity's geom names."""
    contype: int | None = None
    """MuJoCo contype bitmask."""
    conaffinity: int | None = None
    """MuJoCo conaffinity bitmask."""
    condim: int | None = None
    """Contact dimensionality: 1, 3, 4 or 6."""
    friction: tuple[float, ...] | None = None
    """Sliding, torsional, rolling friction (1 to 3 values)."""
    solref: tuple[float, float] | None = None
    """Contact solver reference (timeconst, dampratio)."""
    solimp: tuple[float, ...] | None = None
    """Contact solver impedance (up to 5 values)."""
    priority: int | None = None
    """Contact priority."""
    disable_other_geoms: bool = False
    """Turn collisions off (contype = conaffinity = 0) for every geom NOT matched."""

    def __post_init__(self) -> None:
        if self.condim is not None and self.condim not in (1, 3, 4, 6):
            raise ValueError(f"CollisionCfg.condim must be 1, 3, 4 or 6, got {self.condim}.")
        if self.friction is not None and not 1 <= len(self.friction) <= 3:
            raise ValueError("CollisionCfg.friction takes 1 to 3 values (slide, torsion, roll).")


TERRAIN = "@terrain"
"""Stands for the scene's terrain geom in `ContactPairCfg.geom2`."""


@dataclass(kw_only=True)
class ContactPairCfg(Config):
    """Explicit MuJoCo contact pairs (MJCF `<pair>`): every geom matching `geom1` with every geom
    matching `geom2`, whatever their contype/conaffinity. The pair's own parameters replace the
    geoms' (MuJoCo doc: "Contact/pair")."""

    geom1: tuple[str, ...]
    """Regexes (full match) over the entity's geom names."""
    geom2: tuple[str, ...] | str = TERRAIN
    """Regexes over the same entity's geom names (self-collision pairs), or `TERRAIN` for the
    scene's ground geom (`TerrainImporter`'s "terrain": the plane or the height field)."""
    condim: int = 3
    """Contact dimensionality: 1, 3, 4 or 6."""
    friction: tuple[float, float, float, float, float] = (1.0, 1.0, 0.005, 0.0001, 0.0001)
    """Tangential (2), torsional and rolling (2) friction coefficients."""
    solref: tuple[float, float] = (0.02, 1.0)
    """Contact solver reference (timeconst s, dampratio), MuJoCo's default."""
    solimp: tuple[float, float, float, float, float] = (0.9, 0.95, 0.001, 0.5, 2.0)
    """Contact solver impedance, MuJoCo's default."""
    margin: float = 0.0
    """Distance at which the contact becomes active, m."""
    gap: float = 0.0
    """Part of the margin that generates no force, m."""

    def __post_init__(self) -> None:
        if isinstance(self.geom1, str):
            raise ValueError(
                f"ContactPairCfg.geom1 must be a tuple of regexes, got the string '{self.geom1}'; "
                f"write ('{self.geom1}',)."
            )
        if self.condim not in (1, 3, 4, 6):
            raise ValueError(f"ContactPairCfg.condim must be 1, 3, 4 or 6, got {self.condim}.")
        if len(self.friction) != 5 or min(self.friction) < 0:
            raise ValueError(
                f"ContactPairCfg.friction needs 5 values >= 0 (tangent1, tangent2, spin, roll1, "
                f"roll2), got {self.friction}."
            )
        for name, n in (("solref", 2), ("solimp", 5)):
            if len(getattr(self, name)) != n:
                raise ValueError(
                    f"ContactPairCfg.{name} needs {n} values, got {getattr(self, name)} "
                    "(MuJoCo's defaults: solref (0.02, 1), solimp (0.9, 0.95, 0.001, 0.5, 2))."
                )
        if not 0.0 <= self.gap <= self.margin:
            raise ValueError(
                f"ContactPairCfg: need 0 <= gap <= margin (m), got margin {self.margin}, "
                f"gap {self.gap}."
            )
        if isinstance(self.geom2, str) and self.geom2 != TERRAIN:
            raise ValueError(
                f"ContactPairCfg.geom2 = '{self.geom2}': use a tuple of regexes over the entity's "
                "geoms, or TERRAIN for the scene's ground."
            )


@dataclass(kw_only=True)
class EntityArticulationInfoCfg(Config):
    """Actuation of an articulated entity."""

    actuators: tuple[ActuatorCfg, ...] = ()
    """Actuator configs, applied in order; joints none selects keep their MJCF actuators."""
    soft_joint_pos_limit_factor: float = 1.0
    """Fraction of each joint range, about its centre, used as the soft limit (0, 1]."""

    def __post_init__(self) -> None:
        if not 0.0 < self.soft_joint_pos_limit_factor <= 1.0:
            raise ValueError(
                "EntityArticulationInfoCfg.soft_joint_pos_limit_factor must be in (0, 1]."
            )


@dataclass(kw_only=True)
class EntityCfg(Config):
    """An entity: its MJCF, default state, actuation and contact edits."""

    spec_fn: Callable[[], mujoco.MjSpec]
    """Returns a fresh MjSpec, e.g. `lambda: mujoco_menagerie.get("unitree_go1").spec("go1")` or
    `lambda: mujoco.MjSpec.from_file(path)`."""
    init_state: InitialStateCfg = field(default_factory=InitialStateCfg)
    """Default state on reset."""
    articulation: EntityArticulationInfoCfg | None = None
    """Actuation; None keeps the MJCF's actuators."""
    sort_actuators: bool = False
    """Add the configured actuators in joint order (so their ctrl columns follow the joints)
    instead of config order; the MJCF's own kept actuators stay first."""
    lights: tuple[LightCfg, ...] = ()
    """Lights added to the entity's bodies or worldbody, in order."""
    cameras: tuple[CameraCfg, ...] = ()
    """Cameras added to the entity's bodies or worldbody, in order (named "<entity>/<name>"
    in the compiled model)."""
    textures: tuple[TextureCfg, ...] = ()
    """Procedural textures added to the entity's assets (before the materials, which may
    name them)."""
    materials: tuple[MaterialCfg, ...] = ()
    """Materials added to the entity's assets, each optionally given to matching geoms."""
    meshes: tuple[MeshCfg, ...] = ()
    """Edits of the entity's mesh assets (e.g. the collision hull's `maxhullvert`)."""
    geoms: tuple[GeomCfg, ...] = ()
    """Edits of the entity's geoms (visual group, contact attributes), applied before
    `collisions`. The spec editors (lights, cameras, textures, materials, meshes, geoms, in
    that order) run after `ground_geoms` is removed and before `collisions`, `contact_pairs`
    and the actuators; names in them are the MJCF's own, without the scene prefix."""
    collisions: tuple[CollisionCfg, ...] = ()
    """Contact property edits, applied in order."""
    contact_pairs: tuple[ContactPairCfg, ...] = ()
    """Explicit contact pairs added to the entity (with the terrain or between its own geoms),
    in order; one for two geoms that already have a pair replaces that pair's parameters. Pair
    contacts ignore geom parameters: `CollisionCfg` and `TerrainImporterCfg.friction` do not
    change them."""
    ground_geoms: tuple[str, ...] = ()
    """Names of geoms of the MJCF that stand for the ground, e.g. ("floor",) for a Menagerie
    `scene_*` entry. They are removed when the entity is built, and every MJCF `<pair>` that
    names one of them is carried over to the scene's terrain with its own parameters (condim,
    friction, solref, solreffriction, solimp, margin, gap). Robots such as Menagerie's G1 MJX
    model collide only through such pairs: without this they would fall through any terrain.
    Raises ValueError at build time when a name is not a geom of the MJCF."""
    menagerie: tuple[str, str] | None = None
    """(robot, entry) in mujoco-menagerie that spec_fn loads, recorded in exported policies
    so that deploy tools can load the same model; None for other sources."""
    joint_vel_limit: float | Mapping[str, float] | None = None
    """Speed limit of the joints, rad/s (m/s for slide joints): one number, or {joint regex:
    value} covering every joint (later patterns win); from the motor data sheet, since MuJoCo
    models carry none. Not simulated: it is exported (`joint_vel_limit` of the deployment
    metadata) so that the robot-side control loop faults on a faster joint. None: unknown, and
    `metadata_from_env` refuses to export a policy for the entity until it is given;
    `math.inf` states that the joints have no limit (the robot-side speed check is off)."""

    def __post_init__(self) -> None:
        if not callable(self.spec_fn):
            raise ValueError("EntityCfg.spec_fn must be a callable returning a mujoco.MjSpec.")
        for name, kind in zip(
            SPEC_EDITOR_FIELDS,
            (LightCfg, CameraCfg, TextureCfg, MaterialCfg, MeshCfg, GeomCfg),
            strict=True,
        ):
            value = getattr(self, name)
            if not isinstance(value, (tuple, list)) or not all(isinstance(v, kind) for v in value):
                raise ValueError(
                    f"EntityCfg.{name} must be a tuple of {kind.__name__}, got {value!r}; "
                    f"write ({kind.__name__}(...),)."
                )
        if isinstance(self.contact_pairs, ContactPairCfg):
            raise ValueError(
                "EntityCfg.contact_pairs must be a tuple of ContactPairCfg; write "
                "(ContactPairCfg(...),)."
            )
        limits = self.joint_vel_limit
        if limits is not None:
            values = limits.values() if isinstance(limits, Mapping) else [limits]
            bad = [v for v in values if isinstance(v, bool) or not float(v) > 0]
            if bad:
                raise ValueError(
                    f"EntityCfg.joint_vel_limit must be > 0 rad/s (math.inf: no limit), got {bad}."
                )
        if isinstance(self.ground_geoms, str):
            raise ValueError(
                f"EntityCfg.ground_geoms must be a tuple of geom names, got the string "
                f"'{self.ground_geoms}'; write ('{self.ground_geoms}',)."
            )


def load_mjcf(path: str | os.PathLike) -> mujoco.MjSpec:
    """An MjSpec parsed from the MJCF file at `path` (for `EntityCfg.spec_fn`, e.g.
    `spec_fn=lambda: load_mjcf("robot.xml")`).

    Raises:
        FileNotFoundError: no such file (the path is named).
        ValueError: MuJoCo cannot parse it; the message names the file and gives MuJoCo's error
            (with its line number).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"No MJCF file at {path}.")
    try:
        return mujoco.MjSpec.from_file(str(path))
    except ValueError as err:
        raise ValueError(f"MJCF file {path}: {err}") from None

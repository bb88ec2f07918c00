"""Spec editors: small configs that add elements to, or edit elements of, an entity's MjSpec
(`EntityCfg.lights`, `cameras`, `textures`, `materials`, `meshes`, `geoms`).

Every name in these configs (bodies, geoms, meshes, textures) is the entity's own name, without
the scene prefix "<entity>/": the entity applies them to its spec before the scene attaches it,
and the attachment prefixes the elements and every reference between them alike. "world" is the
entity's worldbody, whose contents the scene places in the entity's attachment frame (at
`init_state.pos`/`rot` for a fixed-base entity, at the world origin otherwise).

Each class validates its values where it is made (`validate`, ValueError naming the field) and
`edit_spec(spec, owner)` applies it; `owner` names the entity in errors about names that the
spec does not have. Applying never changes the config.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import mujoco

from mjlab.utils.config import Config
from mjlab.utils.string import resolve_matching_names

WORLD = "world"
"""The entity's worldbody in `LightCfg.body` and `CameraCfg.body`."""

_MODES = {
    "fixed": mujoco.mjtCamLight.mjCAMLIGHT_FIXED,
    "track": mujoco.mjtCamLight.mjCAMLIGHT_TRACK,
    "trackcom": mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM,
    "targetbody": mujoco.mjtCamLight.mjCAMLIGHT_TARGETBODY,
    "targetbodycom": mujoco.mjtCamLight.mjCAMLIGHT_TARGETBODYCOM,
}
_LIGHT_TYPES = {
    "spot": mujoco.mjtLightType.mjLIGHT_SPOT,
    "directional": mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
}
_TEXTURE_TYPES = {
    "2d": mujoco.mjtTexture.mjTEXTURE_2D,
    "cube": mujoco.mjtTexture.mjTEXTURE_CUBE,
    "skybox": mujoco.mjtTexture.mjTEXTURE_SKYBOX,
}
_BUILTINS = {
    "none": mujoco.mjtBuiltin.mjBUILTIN_NONE,
    "gradient": mujoco.mjtBuiltin.mjBUILTIN_GRADIENT,
    "checker": mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
    "flat": mujoco.mjtBuiltin.mjBUILTIN_FLAT,
}
_MARKS = {
    "none": mujoco.mjtMark.mjMARK_NONE,
    "edge": mujoco.mjtMark.mjMARK_EDGE,
    "cross": mujoco.mjtMark.mjMARK_CROSS,
    "random": mujoco.mjtMark.mjMARK_RANDOM,
}


def _check_choice(cls: str, name: str, value: object, table: Mapping[str, object]) -> None:
    if value not in table:
        raise ValueError(f"{cls}.{name}={value!r} is not one of {sorted(table)}.")


def _check_vector(cls: str, name: str, value: object, n: int, lo: float = -math.inf) -> None:
    """`value` holds `n` finite numbers >= lo."""
    try:
        ok = len(value) == n and all(  # type: ignore[arg-type]
            not isinstance(v, bool) and math.isfinite(v) and v >= lo
            for v in value  # type: ignore[union-attr]
        )
    except TypeError:
        ok = False
    if not ok:
        bound = f" >= {lo:g}" if lo > -math.inf else ""
        raise ValueError(f"{cls}.{name} needs {n} finite numbers{bound}, got {value!r}.")


def _check_unit(cls: str, name: str, value: object, n: int) -> None:
    """`value` holds `n` numbers in [0, 1] (colours)."""
    _check_vector(cls, name, value, n, lo=0.0)
    if any(v > 1.0 for v in value):  # type: ignore[union-attr]
        raise ValueError(f"{cls}.{name} needs {n} values in [0, 1], got {value!r}.")


def _check_name(cls: str, name: str, value: object, optional: bool = False) -> None:
    if optional and value is None:
        return
    if not isinstance(value, str) or not value:
        raise ValueError(f"{cls}.{name} must be a non-empty string, got {value!r}.")
    if "/" in value:
        raise ValueError(
            f"{cls}.{name}={value!r}: give the entity's own name, without the scene prefix "
            "'<entity>/' (the scene adds it)."
        )


def _check_patterns(cls: str, name: str, value: object) -> None:
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise ValueError(
            f"{cls}.{name} must be a non-empty tuple of regexes, got {value!r}"
            + (f"; write ({value!r},)." if isinstance(value, str) else ".")
        )


def _check_dict_patterns(cls: str, name: str, value: object) -> None:
    """The keys of a {regex: value} field are valid regular expressions."""
    if not isinstance(value, Mapping):
        return
    for pattern in value:
        try:
            re.compile(pattern)
        except (re.error, TypeError) as err:
            raise ValueError(
                f"{cls}.{name}: {pattern!r} is not a valid regular expression ({err})."
            ) from None


def _per_name(values: object, names: Sequence[str]) -> list[object]:
    """One value (or None: leave as is) per name, from a scalar or a {regex: value} dict in
    which later patterns win and names no pattern matches get None."""
    if not isinstance(values, Mapping):
        return [values] * len(names)
    out: list[object] = [None] * len(names)
    for pattern, value in values.items():
        regex = re.compile(pattern)
        for i, n in enumerate(names):
            if regex.fullmatch(n):
                out[i] = value
    return out


def _body(spec: mujoco.MjSpec, name: str, cls: str, owner: str) -> mujoco.MjsBody:
    if name == WORLD:
        return spec.worldbody
    body = spec.body(name)
    if body is None:
        bodies = [b.name for b in spec.bodies if b.name and b.name != "world"]
        raise ValueError(
            f"{owner}: {cls}.body names '{name}', which is not a body of its MjSpec. Bodies: "
            f"{bodies} (or '{WORLD}' for its worldbody)."
        )
    return body


def _check_target(spec: mujoco.MjSpec, cfg: LightCfg | CameraCfg, owner: str) -> None:
    cls = type(cfg).__name__
    if cfg.target is None:
        if cfg.mode in ("targetbody", "targetbodycom"):
            raise ValueError(f"{owner}: {cls}.mode='{cfg.mode}' needs {cls}.target (a body).")
        return
    if spec.body(cfg.target) is None:
        bodies = [b.name for b in spec.bodies if b.name and b.name != "world"]
        raise ValueError(
            f"{owner}: {cls}.target names '{cfg.target}', which is not a body of its MjSpec. "
            f"Bodies: {bodies}."
        )


@dataclass(kw_only=True)
class LightCfg(Config):
    """A light added to the entity (MJCF `<light>`, MuJoCo doc: "body/light")."""

    name: str | None = None
    """Name of the light (unique within the entity); None leaves it unnamed."""
    body: str = WORLD
    """Body the light is attached to: a body of the entity, or "world" for its worldbody."""
    mode: Literal["fixed", "track", "trackcom", "targetbody", "targetbodycom"] = "fixed"
    """How the light moves: fixed to its body, tracking it (track, trackcom) or pointing at
    `target` (targetbody, targetbodycom)."""
    target: str | None = None
    """Body the light points at in the targetbody modes (required there); None otherwise."""
    type: Literal["spot", "directional"] = "spot"
    """Spot light (position, direction, cutoff) or directional light (direction only)."""
    castshadow: bool = True
    """Whether the light casts shadows (rendering only)."""
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Position in the frame of `body`, m."""
    dir: tuple[float, float, float] = (0.0, 0.0, -1.0)
    """Direction in the frame of `body` (non-zero; MuJoCo normalizes it)."""
    cutoff: float = 45.0
    """Spot light cutoff angle, degrees, in (0, 180]."""
    exponent: float = 10.0
    """Spot light attenuation exponent, >= 0."""
    diffuse: tuple[float, float, float] | None = None
    """Diffuse colour, RGB in [0, 1]; None keeps MuJoCo's default."""
    specular: tuple[float, float, float] | None = None
    """Specular colour, RGB in [0, 1]; None keeps MuJoCo's default."""
    ambient: tuple[float, float, float] | None = None
    """Ambient colour, RGB in [0, 1]; None keeps MuJoCo's default."""
    active: bool = True
    """Whether the light is on."""
    attenuation: tuple[float, float, float] = (1.0, 0.0, 0.0)
    """Constant, linear and quadratic distance attenuation coefficients, >= 0."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid."""
        _check_name("LightCfg", "name", self.name, optional=True)
        _check_name("LightCfg", "body", self.body)
        _check_name("LightCfg", "target", self.target, optional=True)
        _check_choice("LightCfg", "mode", self.mode, _MODES)
        _check_choice("LightCfg", "type", self.type, _LIGHT_TYPES)
        _check_vector("LightCfg", "pos", self.pos, 3)
        _check_vector("LightCfg", "dir", self.dir, 3)
        if not any(self.dir):
            raise ValueError("LightCfg.dir must be a non-zero vector, got (0, 0, 0).")
        if not (isinstance(self.cutoff, (int, float)) and 0.0 < self.cutoff <= 180.0):
            raise ValueError(f"LightCfg.cutoff must be in (0, 180] degrees, got {self.cutoff!r}.")
        if not (isinstance(self.exponent, (int, float)) and self.exponent >= 0.0):
            raise ValueError(f"LightCfg.exponent must be >= 0, got {self.exponent!r}.")
        for name in ("diffuse", "specular", "ambient"):
            if getattr(self, name) is not None:
                _check_unit("LightCfg", name, getattr(self, name), 3)
        _check_vector("LightCfg", "attenuation", self.attenuation, 3, lo=0.0)

    def edit_spec(self, spec: mujoco.MjSpec, owner: str = "entity") -> None:
        """Add the light to `spec`.

        Raises:
            ValueError: `body` or `target` is not a body of `spec`.
        """
        self.validate()
        body = _body(spec, self.body, "LightCfg", owner)
        _check_target(spec, self, owner)
        light = body.add_light(
            mode=_MODES[self.mode],
            type=_LIGHT_TYPES[self.type],
            castshadow=self.castshadow,
            pos=list(self.pos),
            dir=list(self.dir),
            cutoff=self.cutoff,
            exponent=self.exponent,
            active=self.active,
            attenuation=list(self.attenuation),
        )
        for name in ("diffuse", "specular", "ambient"):
            if getattr(self, name) is not None:
                setattr(light, name, list(getattr(self, name)))
        if self.name is not None:
            light.name = self.name
        if self.target is not None:
            light.targetbody = self.target


@dataclass(kw_only=True)
class CameraCfg(Config):
    """A camera added to the entity (MJCF `<camera>`, MuJoCo doc: "body/camera"); a camera
    sensor (`mjlab.sensor.CameraSensorCfg`) or a video can then render from it by name
    ("<entity>/<name>" in the compiled model)."""

    name: str
    """Name of the camera (unique within the entity)."""
    body: str = WORLD
    """Body the camera is attached to: a body of the entity, or "world" for its worldbody."""
    mode: Literal["fixed", "track", "trackcom", "targetbody", "targetbodycom"] = "fixed"
    """How the camera moves: fixed to its body, tracking it (track, trackcom) or looking at
    `target` (targetbody, targetbodycom)."""
    target: str | None = None
    """Body the camera looks at in the targetbody modes (required there); None otherwise."""
    fovy: float = 45.0
    """Vertical field of view, degrees, in (0, 180)."""
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Position in the frame of `body`, m."""
    quat: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    """Orientation in the frame of `body`, unit quaternion wxyz; the camera looks along its
    -z axis with +y up (MuJoCo's convention)."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid."""
        _check_name("CameraCfg", "name", self.name)
        _check_name("CameraCfg", "body", self.body)
        _check_name("CameraCfg", "target", self.target, optional=True)
        _check_choice("CameraCfg", "mode", self.mode, _MODES)
        if not (isinstance(self.fovy, (int, float)) and 0.0 < self.fovy < 180.0):
            raise ValueError(f"CameraCfg.fovy must be in (0, 180) degrees, got {self.fovy!r}.")
        _check_vector("CameraCfg", "pos", self.pos, 3)
        _check_vector("CameraCfg", "quat", self.quat, 4)
        norm = math.sqrt(sum(c * c for c in self.quat))
        if abs(norm - 1.0) > 1e-3:
            raise ValueError(
                f"CameraCfg.quat must be a unit quaternion (wxyz), got norm {norm:.4f}."
            )

    def edit_spec(self, spec: mujoco.MjSpec, owner: str = "entity") -> None:
        """Add the camera to `spec`.

        Raises:
            ValueError: `body` or `target` is not a body of `spec`.
        """
        self.validate()
        body = _body(spec, self.body, "CameraCfg", owner)
        _check_target(spec, self, owner)
        camera = body.add_camera(
            name=self.name,
            mode=_MODES[self.mode],
            fovy=self.fovy,
            pos=list(self.pos),
            quat=list(self.quat),
        )
        if self.target is not None:
            camera.targetbody = self.target


@dataclass(kw_only=True)
class TextureCfg(Config):
    """A procedural texture added to the entity's assets (MJCF `<texture builtin=...>`, MuJoCo
    doc: "asset/texture"), for a `MaterialCfg.texture`."""

    name: str
    """Name of the texture (unique within the entity)."""
    type: Literal["2d", "cube", "skybox"]
    """How the texture maps: "2d" (planes, hfields, meshes with texture coordinates), "cube"
    (boxes, spheres) or "skybox"."""
    builtin: Literal["checker", "gradient", "flat", "none"]
    """Procedural pattern between `rgb1` and `rgb2`."""
    rgb1: tuple[float, float, float]
    """First colour, RGB in [0, 1]."""
    rgb2: tuple[float, float, float]
    """Second colour, RGB in [0, 1]."""
    width: int
    """Width, pixels, >= 1."""
    height: int
    """Height, pixels, >= 1."""
    mark: Literal["edge", "cross", "random", "none"] = "none"
    """Marks drawn over the pattern in `markrgb`."""
    markrgb: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Colour of the marks, RGB in [0, 1]."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid."""
        _check_name("TextureCfg", "name", self.name)
        _check_choice("TextureCfg", "type", self.type, _TEXTURE_TYPES)
        _check_choice("TextureCfg", "builtin", self.builtin, _BUILTINS)
        _check_choice("TextureCfg", "mark", self.mark, _MARKS)
        for name in ("rgb1", "rgb2", "markrgb"):
            _check_unit("TextureCfg", name, getattr(self, name), 3)
        for name in ("width", "height"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"TextureCfg.{name} must be an integer >= 1, got {value!r}.")

    def edit_spec(self, spec: mujoco.MjSpec, owner: str = "entity") -> None:
        """Add the texture to `spec`'s assets."""
        self.validate()
        spec.add_texture(
            name=self.name,
            type=_TEXTURE_TYPES[self.type],
            builtin=_BUILTINS[self.builtin],
            mark=_MARKS[self.mark],
            rgb1=list(self.rgb1),
            rgb2=list(self.rgb2),
            markrgb=list(self.markrgb),
            width=self.width,
            height=self.height,
        )


@dataclass(kw_only=True)
class MaterialCfg(Config):
    """A material added to the entity's assets (MJCF `<material>`, MuJoCo doc:
    "asset/material"), optionally given to the geoms whose names match."""

    name: str
    """Name of the material (unique within the entity)."""
    rgba: tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0)
    """Colour, RGBA in [0, 1]: the surface colour, or the factor on the texture's colours."""
    texuniform: bool = False
    """Texture coordinates from the geom's size (uniform tiling) instead of per object."""
    texrepeat: tuple[float, float] = (1.0, 1.0)
    """Repetitions of the texture along its two axes, > 0."""
    reflectance: float = 0.0
    """Reflectance in [0, 1] (rendering only)."""
    texture: str | None = None
    """Name of a texture of the entity (a `TextureCfg` or the MJCF's own) used as the
    colour (RGB) texture; None: no texture."""
    geom_names_expr: tuple[str, ...] | None = None
    """Regexes (full match) over the entity's geom names: those geoms get this material (a
    geom's own rgba is then ignored by MuJoCo unless it was set explicitly). Each regex must
    match a geom. None: only add the material."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid."""
        _check_name("MaterialCfg", "name", self.name)
        _check_name("MaterialCfg", "texture", self.texture, optional=True)
        _check_unit("MaterialCfg", "rgba", self.rgba, 4)
        _check_vector("MaterialCfg", "texrepeat", self.texrepeat, 2)
        if min(self.texrepeat) <= 0:
            raise ValueError(f"MaterialCfg.texrepeat must be > 0, got {self.texrepeat!r}.")
        if not (isinstance(self.reflectance, (int, float)) and 0.0 <= self.reflectance <= 1.0):
            raise ValueError(
                f"MaterialCfg.reflectance must be in [0, 1], got {self.reflectance!r}."
            )
        if self.geom_names_expr is not None:
            _check_patterns("MaterialCfg", "geom_names_expr", self.geom_names_expr)

    def edit_spec(self, spec: mujoco.MjSpec, owner: str = "entity") -> None:
        """Add the material to `spec`'s assets and give it to the matching geoms.

        Raises:
            ValueError: `texture` is not a texture of `spec`, or a regex matches no geom.
        """
        self.validate()
        if self.texture is not None and self.texture not in {t.name for t in spec.textures}:
            raise ValueError(
                f"{owner}: MaterialCfg '{self.name}' names the texture '{self.texture}', which "
                f"is not in its MjSpec. Textures: {[t.name for t in spec.textures]} (add it "
                "with EntityCfg.textures)."
            )
        geoms: list[mujoco.MjsGeom] = []
        if self.geom_names_expr is not None:
            every = list(spec.geoms)
            ids, _ = resolve_matching_names(
                self.geom_names_expr,
                [g.name for g in every],
                what="geom",
                owner=f"{owner} (MaterialCfg '{self.name}')",
            )
            geoms = [every[i] for i in ids]
        material = spec.add_material(
            name=self.name,
            rgba=list(self.rgba),
            texuniform=self.texuniform,
            texrepeat=list(self.texrepeat),
            reflectance=self.reflectance,
        )
        if self.texture is not None:
            material.textures[int(mujoco.mjtTextureRole.mjTEXROLE_RGB)] = self.texture
        for geom in geoms:
            geom.material = self.name


@dataclass(kw_only=True)
class MeshCfg(Config):
    """Edits the mesh assets whose names match. A mesh asset is shared by every geom that uses
    it, so these are asset attributes, matched by mesh name (not geom name); attributes left
    None keep what the MJCF compiled to."""

    mesh_names_expr: tuple[str, ...]
    """Regexes (full match) over the entity's mesh asset names; each must match a mesh."""
    maxhullvert: int | Mapping[str, int] | None = None
    """Most vertices of each matched mesh's collision convex hull: fewer make the
    narrowphase cheaper and the hull coarser. -1: no limit (MuJoCo's default), otherwise > 3.
    One value for every matched mesh, or {regex: value} (later patterns win; meshes no
    pattern matches are left as they are)."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid."""
        _check_patterns("MeshCfg", "mesh_names_expr", self.mesh_names_expr)
        _check_dict_patterns("MeshCfg", "maxhullvert", self.maxhullvert)
        values = (
            self.maxhullvert.items()
            if isinstance(self.maxhullvert, Mapping)
            else [(None, self.maxhullvert)]
        )
        for pattern, value in values:
            if value is None:
                continue
            if (
                isinstance(value, bool)
                or not isinstance(value, int)
                or not (value == -1 or value > 3)
            ):
                where = f" for '{pattern}'" if pattern is not None else ""
                raise ValueError(
                    f"MeshCfg.maxhullvert must be -1 (no limit) or an integer > 3, got "
                    f"{value!r}{where}."
                )

    def edit_spec(self, spec: mujoco.MjSpec, owner: str = "entity") -> None:
        """Set the attributes of the matching meshes of `spec`.

        Raises:
            ValueError: a regex matches no mesh.
        """
        self.validate()
        meshes = list(spec.meshes)
        ids, names = resolve_matching_names(
            self.mesh_names_expr, [m.name for m in meshes], what="mesh", owner=owner
        )
        for i, value in zip(ids, _per_name(self.maxhullvert, names), strict=True):
            if value is not None:
                meshes[i].maxhullvert = int(value)  # type: ignore[arg-type]


_GEOM_INT_ATTRS = ("group", "contype", "conaffinity", "condim", "priority")
_GEOM_FLOAT_ATTRS = ("margin", "gap", "solmix")
_GEOM_ARRAY_ATTRS = {"friction": (1, 3), "solref": (2, 2), "solimp": (1, 5)}


@dataclass(kw_only=True)
class GeomCfg(Config):
    """Edits the geoms whose names match (unnamed geoms match the empty string); attributes
    left None keep what the MJCF compiled to. Each attribute takes one value for every matched
    geom or {regex: value} (later patterns win; geoms no pattern matches are left as they
    are). `CollisionCfg`, applied after, edits the collision attributes too."""

    geom_names_expr: tuple[str, ...]
    """Regexes (full match) over the entity's geom names; each must match a geom."""
    group: int | Mapping[str, int] | None = None
    """Visual group in [0, 6): viewers and camera sensors draw groups 0-2 by default, so a
    geom in group 3-5 still collides but is not drawn."""
    contype: int | Mapping[str, int] | None = None
    """Contact type bitmask, >= 0."""
    conaffinity: int | Mapping[str, int] | None = None
    """Contact affinity bitmask, >= 0."""
    condim: int | Mapping[str, int] | None = None
    """Contact dimensionality: 1, 3, 4 or 6."""
    priority: int | Mapping[str, int] | None = None
    """Contact priority, >= 0."""
    friction: tuple[float, ...] | Mapping[str, tuple[float, ...]] | None = None
    """Sliding, torsional and rolling friction (1 to 3 values, >= 0)."""
    solref: tuple[float, float] | Mapping[str, tuple[float, float]] | None = None
    """Contact solver reference (timeconst s, dampratio)."""
    solimp: tuple[float, ...] | Mapping[str, tuple[float, ...]] | None = None
    """Contact solver impedance (1 to 5 values)."""
    margin: float | Mapping[str, float] | None = None
    """Distance at which contacts become active, m, >= 0."""
    gap: float | Mapping[str, float] | None = None
    """Part of the margin that generates no force, m, >= 0."""
    solmix: float | Mapping[str, float] | None = None
    """Weight of this geom's solver parameters when two geoms meet, in [0, 1]."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid."""
        _check_patterns("GeomCfg", "geom_names_expr", self.geom_names_expr)
        for name in (*_GEOM_INT_ATTRS, *_GEOM_FLOAT_ATTRS, *_GEOM_ARRAY_ATTRS):
            field_value = getattr(self, name)
            _check_dict_patterns("GeomCfg", name, field_value)
            items = (
                field_value.items() if isinstance(field_value, Mapping) else [(None, field_value)]
            )
            for pattern, value in items:
                if value is None:
                    continue
                problem = _geom_value_problem(name, value)
                if problem:
                    where = f" for '{pattern}'" if pattern is not None else ""
                    raise ValueError(f"GeomCfg.{name} {problem}, got {value!r}{where}.")

    def edit_spec(self, spec: mujoco.MjSpec, owner: str = "entity") -> None:
        """Set the attributes of the matching geoms of `spec`.

        Raises:
            ValueError: a regex matches no geom.
        """
        self.validate()
        geoms = list(spec.geoms)
        ids, names = resolve_matching_names(
            self.geom_names_expr, [g.name for g in geoms], what="geom", owner=owner
        )
        for name in (*_GEOM_INT_ATTRS, *_GEOM_FLOAT_ATTRS, *_GEOM_ARRAY_ATTRS):
            for i, value in zip(ids, _per_name(getattr(self, name), names), strict=True):
                if value is None:
                    continue
                geom = geoms[i]
                if name in _GEOM_ARRAY_ATTRS:
                    getattr(geom, name)[: len(value)] = list(value)  # type: ignore[arg-type]
                elif name in _GEOM_INT_ATTRS:
                    setattr(geom, name, int(value))  # type: ignore[arg-type]
                else:
                    setattr(geom, name, float(value))  # type: ignore[arg-type]


def _geom_value_problem(name: str, value: object) -> str:
    """What is wrong with one value of a `GeomCfg` attribute ("" when nothing is)."""
    if name in _GEOM_INT_ATTRS:
        if isinstance(value, bool) or not isinstance(value, int):
            return "must be an integer"
        if name == "group" and not 0 <= value < mujoco.mjNGROUP:
            return f"must be in [0, {mujoco.mjNGROUP})"
        if name == "condim" and value not in (1, 3, 4, 6):
            return "must be 1, 3, 4 or 6"
        if value < 0:
            return "must be >= 0"
        return ""
    if name in _GEOM_FLOAT_ATTRS:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "must be a number"
        if not math.isfinite(value) or value < 0 or (name == "solmix" and value > 1):
            return "must be in [0, 1]" if name == "solmix" else "must be a finite number >= 0"
        return ""
    lo, hi = _GEOM_ARRAY_ATTRS[name]
    try:
        n = len(value)  # type: ignore[arg-type]
        finite = all(
            not isinstance(v, bool) and math.isfinite(v)
            for v in value  # type: ignore[union-attr]
        )
    except TypeError:
        return f"must be a tuple of {lo} to {hi} numbers"
    if not (lo <= n <= hi and finite):
        return f"must be a tuple of {lo} to {hi} finite numbers"
    if name == "friction" and min(value) < 0:  # type: ignore[type-var]
        return "must be >= 0"
    return ""


SPEC_EDITOR_FIELDS = ("lights", "cameras", "textures", "materials", "meshes", "geoms")
"""`EntityCfg` fields holding spec editors, in the order the entity applies them (textures
before the materials that use them)."""

"""`ViewerConfig`: where the camera of a viewer or of the offscreen renderer looks, what it
draws and at what size (mjlab 1.6's config of that name, field for field), and how its origin
becomes a body to follow in a compiled model (`track_body`)."""

from __future__ import annotations

import enum
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from mjlab.deploy.strict import Config


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_finite(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(kw_only=True)
class ViewerConfig(Config):
    """Camera and drawing settings shared by `ViserPlayViewer`, `NativeMujocoViewer` and
    `OffscreenRenderer`. Checked at construction (`validate`), and again by each of them: a
    bad value raises ValueError naming the field."""

    class OriginType(enum.Enum):
        """What the camera is centred on."""

        AUTO = enum.auto()
        """The first body that is not welded to the world (a robot's floating base, a cart); a
        free camera around `lookat` when every body is fixed."""
        WORLD = enum.auto()
        """A free camera around `lookat`, world frame."""
        ASSET_ROOT = enum.auto()
        """The root body of the entity `entity_name`."""
        ASSET_BODY = enum.auto()
        """The body `body_name` of the entity `entity_name`."""

    origin_type: OriginType = OriginType.AUTO
    """What the camera is centred on (see `OriginType`)."""
    height: int = 240
    """Frame height of the offscreen renderer, pixels."""
    width: int = 320
    """Frame width of the offscreen renderer, pixels."""
    enable_reflections: bool = True
    """Draw reflective materials' reflections (offscreen renderer)."""
    enable_shadows: bool = True
    """Draw shadows (offscreen renderer and native window)."""
    geom_group: tuple[int, int, int, int, int, int] = (1, 1, 1, 0, 0, 0)
    """Per MuJoCo geom group 0..5: 1 draws that group (the web viewer and the offscreen
    renderer)."""
    site_group: tuple[int, int, int, int, int, int] = (1, 1, 1, 0, 0, 0)
    """Per MuJoCo site group 0..5: 1 draws that group (offscreen renderer)."""
    env_idx: int = 0
    """The world shown first and followed by the camera (clipped to the worlds there are)."""
    max_extra_envs: int = 2
    """Worlds nearest to `env_idx` (by env origin) the offscreen renderer also draws, for
    context."""
    reward_bar_max_terms: int = 20
    """Most reward terms the web viewer plots; further terms are left out with a warning."""
    distance: float = 5.0
    """Camera distance from its centre, m."""
    elevation: float = -45.0
    """Camera elevation, degrees in [-90, 90] (negative: looking down)."""
    azimuth: float = 90.0
    """Camera azimuth about +z, degrees."""
    fovy: float | None = None
    """Vertical field of view, degrees in (0, 180); None: the model's (`vis.global_.fovy`)."""
    lookat: tuple[float, float, float] = (0.0, 0.0, 0.0)
    """Centre of a free camera (AUTO without a moving body, WORLD), world frame, m; a tracking
    camera centres on its body instead."""
    entity_name: str | None = None
    """The entity ASSET_ROOT / ASSET_BODY follow; None: the scene's only entity."""
    body_name: str | None = None
    """The entity's body ASSET_BODY follows (its name within the entity, e.g. "torso_link")."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field (and what it takes) when a value is invalid."""
        if not isinstance(self.origin_type, OriginType):
            names = ", ".join(f"OriginType.{o.name}" for o in OriginType)
            raise ValueError(
                f"ViewerConfig.origin_type must be one of {names} "
                f"(mjlab.viewer.ViewerConfig.OriginType), got {self.origin_type!r}."
            )
        for name, minimum in (
            ("height", 1),
            ("width", 1),
            ("env_idx", 0),
            ("max_extra_envs", 0),
            ("reward_bar_max_terms", 1),
        ):
            value = getattr(self, name)
            if not _is_int(value) or value < minimum:
                raise ValueError(
                    f"ViewerConfig.{name} must be an integer >= {minimum}, got {value!r}."
                )
        for name in ("enable_reflections", "enable_shadows"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(
                    f"ViewerConfig.{name} must be True or False, got {getattr(self, name)!r}."
                )
        for name in ("geom_group", "site_group"):
            groups = getattr(self, name)
            if (
                isinstance(groups, (str, bytes, Mapping))
                or not hasattr(groups, "__len__")
                or len(groups) != 6
                or any(isinstance(g, bool) or g not in (0, 1) for g in groups)
            ):
                raise ValueError(
                    f"ViewerConfig.{name} must be 6 values of 0 or 1 (one per MuJoCo group "
                    f"0..5, 1: drawn), got {groups!r}."
                )
        if not _is_finite(self.distance) or self.distance <= 0:
            raise ValueError(
                f"ViewerConfig.distance must be a finite number > 0 m, got {self.distance!r}."
            )
        if not _is_finite(self.elevation) or not -90 <= self.elevation <= 90:
            raise ValueError(
                f"ViewerConfig.elevation must be in [-90, 90] degrees, got {self.elevation!r}."
            )
        if not _is_finite(self.azimuth):
            raise ValueError(
                f"ViewerConfig.azimuth must be a finite number of degrees, got {self.azimuth!r}."
            )
        if self.fovy is not None and (not _is_finite(self.fovy) or not 0 < self.fovy < 180):
            raise ValueError(
                f"ViewerConfig.fovy must be None or in (0, 180) degrees, got {self.fovy!r}."
            )
        lookat = self.lookat
        if (
            isinstance(lookat, (str, bytes))
            or not hasattr(lookat, "__len__")
            or len(lookat) != 3
            or not all(_is_finite(v) for v in lookat)
        ):
            raise ValueError(
                f"ViewerConfig.lookat must be 3 finite numbers (x, y, z in m), got {lookat!r}."
            )
        for name in ("entity_name", "body_name"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value):
                raise ValueError(
                    f"ViewerConfig.{name} must be None or a non-empty name, got {value!r}."
                )


OriginType = ViewerConfig.OriginType
"""`ViewerConfig.OriginType`, by its own name."""


def viewer_config_of(env: Any) -> ViewerConfig:
    """The `ViewerConfig` of `env` (anything with `cfg.viewer`, wrappers included): the config
    itself when it is one; from mjlab-core's `ViewerCfg` (what `env.render` and `play --video`
    use), its distance, elevation, azimuth, width and height, centred AUTO (its named camera
    and body id have no ViewerConfig field); None or no `viewer` field: the defaults."""
    cfg = getattr(getattr(env, "cfg", None), "viewer", None)
    if isinstance(cfg, ViewerConfig):
        cfg.validate()  # edited after construction: checked again before it is used
        return cfg
    if cfg is None:
        return ViewerConfig()
    taken = ("distance", "elevation", "azimuth", "width", "height")
    return ViewerConfig(**{name: getattr(cfg, name) for name in taken if hasattr(cfg, name)})


def first_moving_body(model: Any) -> int | None:
    """The first body of `model` that is not welded to the world and not a mocap body's
    subtree (a floating base, a cart on a rail), or None when every body is fixed."""
    for body in range(1, model.nbody):
        if int(model.body_weldid[body]) != 0 and model.body_mocapid[model.body_rootid[body]] < 0:
            return body
    return None


def track_body(cfg: ViewerConfig, model: Any, entities: Mapping[str, Any] | None) -> int | None:
    """The body id in `model` the camera follows for `cfg.origin_type`, or None for a free
    camera around `cfg.lookat` (WORLD; AUTO when every body is fixed).

    Args:
        cfg: the viewer config.
        model: the compiled model.
        entities: the scene's entities by name (`Scene.entities`: each with `body_names`, its
            bodies' names within it, and `body_ids_global`, their ids in `model`); needed for
            ASSET_ROOT / ASSET_BODY.

    Raises:
        ValueError: ASSET_ROOT / ASSET_BODY without entities, with no `entity_name` while the
            scene has several, with an unknown entity or body, or ASSET_BODY without
            `body_name` (each message names the field).
    """
    origin = cfg.origin_type
    if origin is OriginType.WORLD:
        return None
    if origin is OriginType.AUTO:
        return first_moving_body(model)
    entities = dict(entities or {})
    name = cfg.entity_name
    if name is None:
        if len(entities) != 1:
            raise ValueError(
                f"ViewerConfig.entity_name is needed for {origin.name}: the scene has "
                f"{len(entities)} entities ({', '.join(entities) or 'none'}); name one."
            )
        name = next(iter(entities))
    elif name not in entities:
        raise ValueError(
            f"ViewerConfig.entity_name '{name}' is not in the scene; its entities: "
            f"{', '.join(entities) or 'none'}."
        )
    entity = entities[name]
    ids = list(entity.body_ids_global)
    if origin is OriginType.ASSET_ROOT:
        return int(ids[0])
    if not cfg.body_name:
        raise ValueError("ViewerConfig.body_name is needed for OriginType.ASSET_BODY.")
    names = list(entity.body_names)
    if cfg.body_name not in names:
        raise ValueError(
            f"ViewerConfig.body_name '{cfg.body_name}' is not a body of entity '{name}'; its "
            f"bodies: {', '.join(names)}."
        )
    return int(ids[names.index(cfg.body_name)])

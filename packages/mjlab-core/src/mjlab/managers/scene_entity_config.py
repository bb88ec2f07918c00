"""`SceneEntityCfg`: which entity and which of its joints/bodies/geoms a term uses."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from mjlab.utils.config import Config

_ALL = slice(None)
_KINDS = (
    "joint",
    "body",
    "geom",
    "site",
    "actuator",
    "tendon",
    "camera",
    "light",
    "material",
    "texture",
    "pair",
)


@dataclass
class SceneEntityCfg(Config):
    """Selects an entity of the scene and, by regex, some of its parts; resolved once when the
    managers start (so terms index with precomputed ids, never regexes, in the hot path).

    `SceneEntityCfg("robot", joint_names=(".*_hip_joint",))`.
    """

    name: str
    """Entity (or sensor) name in the scene."""
    joint_names: tuple[str, ...] | None = None
    """Joint regexes; None: all joints."""
    joint_ids: list[int] | slice = field(default_factory=lambda: slice(None))
    """Resolved joint indices (entity order); slice(None) for all."""
    body_names: tuple[str, ...] | None = None
    """Body regexes; None: all bodies."""
    body_ids: list[int] | slice = field(default_factory=lambda: slice(None))
    """Resolved body indices (entity order); slice(None) for all."""
    geom_names: tuple[str, ...] | None = None
    """Geom regexes; None: all geoms."""
    geom_ids: list[int] | slice = field(default_factory=lambda: slice(None))
    """Resolved geom indices (entity order); slice(None) for all."""
    site_names: tuple[str, ...] | None = None
    """Site regexes; None: all."""
    site_ids: list[int] | slice = field(default_factory=lambda: slice(None))
    """Resolved site indices (entity order); slice(None) for all."""
    actuator_names: tuple[str, ...] | None = None
    """Actuator (actuated joint) regexes; None: all."""
    actuator_ids: list[int] | slice = field(default_factory=lambda: slice(None))
    """Resolved actuator (actuated joint) indices (entity order); slice(None) for all."""
    tendon_names: tuple[str, ...] | None = None
    """Tendon regexes; None: all."""
    tendon_ids: list[int] | slice = field(default_factory=lambda: slice(None))
    """Resolved tendon indices (entity order); slice(None) for all."""
    camera_names: tuple[str, ...] | None = None
    """Camera regexes; None: all."""
    camera_ids: list[int] | slice = field(default_factory=lambda: slice(None))
    """Resolved camera indices (entity order); slice(None) for all."""
    light_names: tuple[str, ...] | None = None
    """Light regexes; None: all."""
    light_ids: list[int] | slice = field(default_factory=lambda: slice(None))
    """Resolved light indices (entity order); slice(None) for all."""
    material_names: tuple[str, ...] | None = None
    """Material regexes; None: all."""
    material_ids: list[int] | slice = field(default_factory=lambda: slice(None))
    """Resolved material indices (entity order); slice(None) for all."""
    texture_names: tuple[str, ...] | None = None
    """Texture regexes; None: all."""
    texture_ids: list[int] | slice = field(default_factory=lambda: slice(None))
    """Resolved texture indices (entity order); slice(None) for all."""
    pair_names: tuple[str, ...] | None = None
    """Contact pair regexes; None: all."""
    pair_ids: list[int] | slice = field(default_factory=lambda: slice(None))
    """Resolved contact pair indices (entity order); slice(None) for all."""
    preserve_order: bool = False
    """Order every *_ids as the patterns of its *_names are listed (each pattern's matches in
    entity order; a part matched twice is kept at its first place) instead of entity order;
    e.g. `joint_names=("FR_.*", "FL_.*")` then yields the FR joints first."""

    def resolve(self, scene) -> None:
        """Fill the *_ids from the regexes (entity order, or the patterns' order with
        `preserve_order`).

        Raises:
            KeyError: unknown entity. ValueError: a regex matches nothing.
        """
        obj = scene[self.name]
        for kind in _KINDS:
            names = getattr(self, f"{kind}_names")
            if names is None:
                continue
            find = getattr(obj, "find_bodies" if kind == "body" else f"find_{kind}s")
            if not self.preserve_order or isinstance(names, str):
                ids = find(names)[0]
            else:
                ids = []
                for pattern in names:
                    ids += [i for i in find(pattern)[0] if i not in ids]
            setattr(self, f"{kind}_ids", ids)

    def select_joints(self, x: torch.Tensor) -> torch.Tensor:
        """`x[:, joint_ids]` of a (num_envs, num_joints, ...) tensor; `x` itself when every
        joint is selected (a full slice would cost a tensor operation of its own, one of the
        few hundred that make an env step's time outside the physics on a CPU).

        Returns:
            (num_envs, num_selected, ...) a view or `x`; read-only, as `x` is.
        """
        ids = self.joint_ids
        return x if isinstance(ids, slice) and ids == _ALL else x[:, ids]

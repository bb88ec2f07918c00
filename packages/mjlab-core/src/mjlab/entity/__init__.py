"""Entities (robots and objects) of a scene: MjSpec edits and named torch views."""

from mjlab.entity.entity import Entity, EntityData
from mjlab.entity.entity_cfg import (
    TERRAIN,
    CollisionCfg,
    ContactPairCfg,
    EntityArticulationInfoCfg,
    EntityCfg,
    InitialStateCfg,
    load_mjcf,
)

__all__ = [
    "TERRAIN",
    "CollisionCfg",
    "ContactPairCfg",
    "Entity",
    "EntityArticulationInfoCfg",
    "EntityCfg",
    "EntityData",
    "InitialStateCfg",
    "load_mjcf",
]

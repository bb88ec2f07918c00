"""Entities (robots and objects) of a scene: MjSpec edits and named torch views."""

from mjlab.entity.entity import Entity, EntityData
from mjlab.entity.entity_cfg import (
    CollisionCfg,
    EntityArticulationInfoCfg,
    EntityCfg,
    InitialStateCfg,
)

__all__ = [
    "CollisionCfg",
    "Entity",
    "EntityArticulationInfoCfg",
    "EntityCfg",
    "EntityData",
    "InitialStateCfg",
]

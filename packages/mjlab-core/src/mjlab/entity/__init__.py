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
from mjlab.entity.indexing import EntityIndexing
from mjlab.utils.spec_config import (
    CameraCfg,
    GeomCfg,
    LightCfg,
    MaterialCfg,
    MeshCfg,
    TextureCfg,
)

__all__ = [
    "TERRAIN",
    "CameraCfg",
    "CollisionCfg",
    "ContactPairCfg",
    "Entity",
    "EntityArticulationInfoCfg",
    "EntityCfg",
    "EntityData",
    "EntityIndexing",
    "GeomCfg",
    "InitialStateCfg",
    "LightCfg",
    "MaterialCfg",
    "MeshCfg",
    "TextureCfg",
    "load_mjcf",
]

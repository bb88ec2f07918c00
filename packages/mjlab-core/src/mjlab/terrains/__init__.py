"""Terrains: a ground plane, or a generated height-field grid with difficulty levels.

`TerrainImporter` adds the ground to a scene's `mujoco.MjSpec` and places env origins on it;
`TerrainGenerator` builds the height map from sub-terrain kinds (`height_field`).
"""

from mjlab.terrains.height_field import (
    FlatTerrainCfg,
    PyramidSlopedTerrainCfg,
    PyramidStairsTerrainCfg,
    RandomBoxesTerrainCfg,
    RandomGridBoxesTerrainCfg,
    RandomRoughTerrainCfg,
    SubTerrainCfg,
)
from mjlab.terrains.terrain_generator import TerrainGenerator, TerrainGeneratorCfg
from mjlab.terrains.terrain_importer import TerrainImporter, TerrainImporterCfg

__all__ = [
    "FlatTerrainCfg",
    "PyramidSlopedTerrainCfg",
    "PyramidStairsTerrainCfg",
    "RandomBoxesTerrainCfg",
    "RandomGridBoxesTerrainCfg",
    "RandomRoughTerrainCfg",
    "SubTerrainCfg",
    "TerrainGenerator",
    "TerrainGeneratorCfg",
    "TerrainImporter",
    "TerrainImporterCfg",
]

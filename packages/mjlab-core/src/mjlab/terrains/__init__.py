"""Terrains: a plane, or a generated height-field grid with difficulty levels."""

from mjlab.terrains.terrain_generator import (
    FlatTerrainCfg,
    PyramidSlopedTerrainCfg,
    PyramidStairsTerrainCfg,
    RandomGridBoxesTerrainCfg,
    RandomRoughTerrainCfg,
    SubTerrainCfg,
    TerrainGenerator,
    TerrainGeneratorCfg,
)
from mjlab.terrains.terrain_importer import TerrainImporter, TerrainImporterCfg

__all__ = [
    "FlatTerrainCfg",
    "PyramidSlopedTerrainCfg",
    "PyramidStairsTerrainCfg",
    "RandomGridBoxesTerrainCfg",
    "RandomRoughTerrainCfg",
    "SubTerrainCfg",
    "TerrainGenerator",
    "TerrainGeneratorCfg",
    "TerrainImporter",
    "TerrainImporterCfg",
]

"""Terrains: a ground plane, or a generated height-field grid with difficulty levels.

`TerrainImporter` adds the ground to a scene's `mujoco.MjSpec` and places env origins on it;
`TerrainGenerator` builds the height map from sub-terrain kinds (`height_field`).
"""

from mjlab.terrains.box_geometry import BoxSubTerrainCfg, TerrainBoxes
from mjlab.terrains.height_field import (
    FlatPatchSamplingCfg,
    FlatTerrainCfg,
    PyramidSlopedTerrainCfg,
    PyramidStairsTerrainCfg,
    RandomBoxesTerrainCfg,
    RandomGridBoxesTerrainCfg,
    RandomRoughTerrainCfg,
    SubTerrainCfg,
)
from mjlab.terrains.hf_terrains import (
    HfDiscreteObstaclesTerrainCfg,
    HfPerlinNoiseTerrainCfg,
    HfPyramidSlopedTerrainCfg,
    HfRandomUniformTerrainCfg,
    HfWaveTerrainCfg,
)
from mjlab.terrains.terrain_entity import TerrainEntity, TerrainEntityCfg
from mjlab.terrains.terrain_generator import TerrainGenerator, TerrainGeneratorCfg
from mjlab.terrains.terrain_importer import (
    TERRAIN_GEOMS,
    TERRAIN_NAME,
    TerrainImporter,
    TerrainImporterCfg,
)

__all__ = [
    "TERRAIN_GEOMS",
    "TERRAIN_NAME",
    "BoxSubTerrainCfg",
    "FlatPatchSamplingCfg",
    "FlatTerrainCfg",
    "HfDiscreteObstaclesTerrainCfg",
    "HfPerlinNoiseTerrainCfg",
    "HfPyramidSlopedTerrainCfg",
    "HfRandomUniformTerrainCfg",
    "HfWaveTerrainCfg",
    "PyramidSlopedTerrainCfg",
    "PyramidStairsTerrainCfg",
    "RandomBoxesTerrainCfg",
    "RandomGridBoxesTerrainCfg",
    "RandomRoughTerrainCfg",
    "SubTerrainCfg",
    "TerrainBoxes",
    "TerrainEntity",
    "TerrainEntityCfg",
    "TerrainGenerator",
    "TerrainGeneratorCfg",
    "TerrainImporter",
    "TerrainImporterCfg",
]

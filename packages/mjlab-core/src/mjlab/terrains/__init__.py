"""Terrains: a ground plane, or a generated grid of sub-terrains with difficulty levels.

`TerrainImporter` (mjlab 1.6: `TerrainEntity`) adds the ground to a scene's `mujoco.MjSpec`
and places env origins on it; `TerrainGenerator` builds one height field from the height-field
kinds (`height_field`, mjlab's `Hf*` in `hf_terrains`) and box geoms from the box kinds
(mjlab's `Box*` in `box_terrains`), and samples flat patches.
"""

from mjlab.terrains.box_geometry import BoxSubTerrainCfg, TerrainBoxes
from mjlab.terrains.box_terrains import (
    BoxFlatTerrainCfg,
    BoxInvertedPyramidStairsTerrainCfg,
    BoxNarrowBeamsTerrainCfg,
    BoxNestedRingsTerrainCfg,
    BoxOpenStairsTerrainCfg,
    BoxPyramidStairsTerrainCfg,
    BoxRandomGridTerrainCfg,
    BoxRandomSpreadTerrainCfg,
    BoxRandomStairsTerrainCfg,
    BoxSteppingStonesTerrainCfg,
    BoxTiltedGridTerrainCfg,
)
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
    "BoxFlatTerrainCfg",
    "BoxInvertedPyramidStairsTerrainCfg",
    "BoxNarrowBeamsTerrainCfg",
    "BoxNestedRingsTerrainCfg",
    "BoxOpenStairsTerrainCfg",
    "BoxPyramidStairsTerrainCfg",
    "BoxRandomGridTerrainCfg",
    "BoxRandomSpreadTerrainCfg",
    "BoxRandomStairsTerrainCfg",
    "BoxSteppingStonesTerrainCfg",
    "BoxSubTerrainCfg",
    "BoxTiltedGridTerrainCfg",
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

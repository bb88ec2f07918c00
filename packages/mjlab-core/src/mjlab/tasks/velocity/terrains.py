"""Rough terrain of the velocity tasks: rough ground, slopes, stairs and boxes in 5 levels."""

from mjlab.terrains import (
    FlatTerrainCfg,
    PyramidSlopedTerrainCfg,
    PyramidStairsTerrainCfg,
    RandomGridBoxesTerrainCfg,
    RandomRoughTerrainCfg,
    TerrainGeneratorCfg,
    TerrainImporterCfg,
)


def rough_terrain_cfg() -> TerrainImporterCfg:
    return TerrainImporterCfg(
        terrain_type="generator",
        max_init_terrain_level=1,
        terrain_generator=TerrainGeneratorCfg(
            size=(8.0, 8.0),
            num_rows=5,
            num_cols=10,
            sub_terrains={
                "flat": FlatTerrainCfg(proportion=0.1),
                "rough": RandomRoughTerrainCfg(proportion=0.2),
                "slope": PyramidSlopedTerrainCfg(proportion=0.15),
                "slope_inv": PyramidSlopedTerrainCfg(proportion=0.15, inverted=True),
                "stairs": PyramidStairsTerrainCfg(proportion=0.15),
                "stairs_inv": PyramidStairsTerrainCfg(proportion=0.15, inverted=True),
                "boxes": RandomGridBoxesTerrainCfg(proportion=0.1),
            },
        ),
    )

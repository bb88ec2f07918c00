"""Terrains: a plane, or generated height fields with difficulty levels."""

from mjlab.terrains.terrain_importer import TerrainImporter, TerrainImporterCfg

__all__ = ["TerrainImporter", "TerrainImporterCfg"]

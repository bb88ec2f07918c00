"""Scenes: terrain, entities and sensors composed into one MuJoCo model."""

from mjlab.scene.scene import Scene, SceneCfg

__all__ = ["Scene", "SceneCfg"]

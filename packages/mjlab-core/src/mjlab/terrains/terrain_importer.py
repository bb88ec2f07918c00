"""Terrain of a scene: a ground plane, or a generated height-field grid with difficulty rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import mujoco
import torch


@dataclass(kw_only=True)
class TerrainImporterCfg:
    """Which ground the scene gets."""

    terrain_type: Literal["plane", "generator"] = "plane"
    """A flat plane, or a height-field grid built by `terrain_generator`."""
    terrain_generator: Any | None = None
    """`TerrainGeneratorCfg` when terrain_type is "generator"."""
    env_spacing: float = 2.5
    """Spacing of env origins on a plane, m."""
    max_init_terrain_level: int | None = None
    """Highest difficulty row envs start on (None: all rows)."""
    friction: tuple[float, float, float] = (1.0, 0.005, 0.0001)
    """Ground friction (slide, torsion, roll)."""

    def __post_init__(self) -> None:
        if self.terrain_type not in ("plane", "generator"):
            raise ValueError(
                f"TerrainImporterCfg.terrain_type '{self.terrain_type}' not in plane/generator."
            )
        if self.terrain_type == "generator" and self.terrain_generator is None:
            raise ValueError(
                "TerrainImporterCfg.terrain_generator is required with terrain_type='generator'."
            )


class TerrainImporter:
    """Adds the ground to a scene spec (geom group 0, named "terrain") and places env origins."""

    def __init__(self, cfg: TerrainImporterCfg, device: str | torch.device = "cpu"):
        self.cfg = cfg
        self.device = torch.device(device)
        self.terrain_levels: torch.Tensor | None = None
        self.env_origins = torch.zeros(0, 3, device=self.device)

    def add_to_spec(self, spec: mujoco.MjSpec) -> None:
        if self.cfg.terrain_type != "plane":
            raise NotImplementedError(
                "generated terrains come with mjlab.terrains.TerrainGenerator"
            )
        geom = spec.worldbody.add_geom(
            name="terrain", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05], group=0
        )
        geom.friction = list(self.cfg.friction)
        geom.rgba = [0.35, 0.38, 0.42, 1.0]

    def configure_env_origins(
        self, num_envs: int, generator: torch.Generator | None = None
    ) -> None:
        """(num_envs, 3) origins on a square grid centred at the world origin, m."""
        spacing = self.cfg.env_spacing
        cols = int(num_envs**0.5 + 0.999999)
        rows = (num_envs + cols - 1) // cols
        i = torch.arange(num_envs, device=self.device)
        x = (i // cols).float() - (rows - 1) / 2
        y = (i % cols).float() - (cols - 1) / 2
        self.env_origins = torch.stack([x * spacing, y * spacing, torch.zeros_like(x)], dim=-1)

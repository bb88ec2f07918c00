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
        """Add the ground (a plane, or the generated height field) as geoms named "terrain"."""
        if self.cfg.terrain_type == "generator":
            from mjlab.terrains.terrain_generator import TerrainGenerator

            self.generator = TerrainGenerator(self.cfg.terrain_generator)
            self.generator.add_to_spec(spec, friction=self.cfg.friction)
            self.terrain_origins = torch.as_tensor(
                self.generator.origins, dtype=torch.float32, device=self.device
            )
            return
        geom = spec.worldbody.add_geom(
            name="terrain", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05], group=0
        )
        geom.friction = list(self.cfg.friction)
        geom.rgba = [0.35, 0.38, 0.42, 1.0]

    def configure_env_origins(
        self, num_envs: int, generator: torch.Generator | None = None
    ) -> None:
        """Set `env_origins` (num_envs, 3), world, m: a square grid on a plane; on a generated
        terrain, env i gets column i % num_cols and a random level up to
        `max_init_terrain_level`, and sits at that sub-terrain's centre."""
        if self.cfg.terrain_type == "generator":
            rows, cols = self.terrain_origins.shape[:2]
            top = rows - 1
            if self.cfg.max_init_terrain_level is not None:
                top = min(self.cfg.max_init_terrain_level, rows - 1)
            self.terrain_levels = torch.randint(
                0, top + 1, (num_envs,), device=self.device, generator=generator
            )
            self.terrain_types = torch.arange(num_envs, device=self.device) % cols
            self._rng = generator
            self.env_origins = self.terrain_origins[self.terrain_levels, self.terrain_types].clone()
            return
        spacing = self.cfg.env_spacing
        cols = int(num_envs**0.5 + 0.999999)
        rows = (num_envs + cols - 1) // cols
        i = torch.arange(num_envs, device=self.device)
        x = (i // cols).float() - (rows - 1) / 2
        y = (i % cols).float() - (cols - 1) / 2
        self.env_origins = torch.stack([x * spacing, y * spacing, torch.zeros_like(x)], dim=-1)

    def update_env_origins(
        self, env_ids: torch.Tensor, move_up: torch.Tensor, move_down: torch.Tensor
    ) -> None:
        """Curriculum hook: envs that did well move one level up, badly one level down; an env
        that passes the top level goes to a random level (so the hardest rows stay visited),
        one below 0 stays at 0 (Isaac Lab's rule). Updates `env_origins` of `env_ids`."""
        if self.terrain_levels is None:
            return
        rows = self.terrain_origins.shape[0]
        levels = self.terrain_levels[env_ids] + move_up.long() - move_down.long()
        wrap = torch.randint(0, rows, levels.shape, device=self.device, generator=self._rng)
        levels = torch.where(levels >= rows, wrap, levels.clamp(min=0))
        self.terrain_levels[env_ids] = levels
        self.env_origins[env_ids] = self.terrain_origins[levels, self.terrain_types[env_ids]]

"""mjlab 1.6's terrain config: `TerrainEntityCfg` / `TerrainEntity`.

A `TerrainEntityCfg` is a `TerrainImporterCfg` with mjlab 1.6's extra fields (`num_envs`,
`textures`, `materials`, `lights`, `debug_vis`), so a scene takes either as `SceneCfg.terrain`.
Unlike mjlab, the terrain is not an `mjlab.entity.Entity` (it has no joints, no entity data and
no "terrain/" name prefix): its geoms sit in a static body named "terrain", "terrain" and
``terrain_box_<row>_<col>_<k>`` (`TERRAIN_GEOMS` matches them all).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco

from mjlab.terrains.terrain_importer import TerrainImporter, TerrainImporterCfg
from mjlab.utils.spec_config import LightCfg, MaterialCfg, TextureCfg

__all__ = ["TerrainEntity", "TerrainEntityCfg"]


@dataclass(kw_only=True)
class TerrainEntityCfg(TerrainImporterCfg):
    """The ground of a scene, in mjlab 1.6's form (see `TerrainImporterCfg` for the shared
    fields: `terrain_type`, `terrain_generator`, `env_spacing`, `max_init_terrain_level`,
    `friction`, `rgba`, `checker`)."""

    env_spacing: float | None = 2.0
    """Distance between neighbouring env origins on a plane, m."""
    num_envs: int = 1
    """Number of envs for a terrain used on its own; inside a scene `SceneCfg.num_envs` wins
    (the scene places that many env origins and leaves this config as it is)."""
    textures: tuple[TextureCfg, ...] = ()
    """Textures added to the scene spec (before any robot), e.g. for `materials`."""
    materials: tuple[MaterialCfg, ...] = ()
    """Materials added to the scene spec; a material with ``geom_names_expr`` (e.g.
    ``(mjlab.terrains.TERRAIN_GEOMS,)``) is put on the terrain's geoms. Empty: the `checker` / `rgba` look."""
    lights: tuple[LightCfg, ...] = ()
    """Lights added to the world body. The scene already lights the world from above (its
    light "sun"), so the default adds none."""
    debug_vis: bool = False
    """Add visual-only sites (no collision, no mass) at each sub-terrain origin (group 5) and
    each flat patch (group 3), for the viewers."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.num_envs < 1:
            raise ValueError(f"TerrainEntityCfg.num_envs = {self.num_envs}: must be >= 1.")


class TerrainEntity(TerrainImporter):
    """The terrain of a `TerrainEntityCfg`: a `TerrainImporter` (flat patches and
    `randomize_env_origins` included) with the config's textures, materials, lights and debug
    sites."""

    cfg: TerrainEntityCfg

    def add_to_spec(self, spec: mujoco.MjSpec) -> None:
        """Add the ground (as `TerrainImporter.add_to_spec`), then the config's textures,
        materials and lights, and with `debug_vis` the origin and flat-patch sites.

        Raises:
            ValueError: A material's texture or geom pattern names nothing in the spec.
        """
        super().add_to_spec(spec)
        for texture in self.cfg.textures:
            texture.edit_spec(spec, owner="terrain")
        for material in self.cfg.materials:
            material.edit_spec(spec, owner="terrain")
        for light in self.cfg.lights:
            light.edit_spec(spec, owner="terrain")
        if self.cfg.debug_vis and self.generator is not None:
            self._add_debug_sites(spec)

    def _add_debug_sites(self, spec: mujoco.MjSpec) -> None:
        assert self.generator is not None
        origins = self.generator.origins
        for i in range(origins.shape[0]):
            for j in range(origins.shape[1]):
                spec.worldbody.add_site(
                    name=f"terrain_origin_{i}_{j}",
                    pos=origins[i, j].tolist(),
                    size=[0.5, 0.5, 0.5],
                    type=mujoco.mjtGeom.mjGEOM_SPHERE,
                    rgba=[0.2, 0.2, 0.6, 0.3],
                    group=5,
                )
        for name, patches in self.generator.flat_patches.items():
            r = self.flat_patch_radii[name]
            rows, cols, count = patches.shape[:3]
            for i in range(rows):
                for j in range(cols):
                    for k in range(count):
                        spec.worldbody.add_site(
                            name=f"flat_patch_{name}_{i}_{j}_{k}",
                            pos=patches[i, j, k].tolist(),
                            size=[r, r, 0.01],
                            type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                            rgba=[0.9, 0.6, 0.1, 0.2],
                            group=3,
                        )

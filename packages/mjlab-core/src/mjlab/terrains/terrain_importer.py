"""Terrain of a scene: a ground plane or a generated height field, and the env origins on it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import mujoco
import torch

from mjlab.terrains.terrain_generator import (
    TerrainGenerator,
    TerrainGeneratorCfg,
    paint_ground_geom,
)
from mjlab.utils.config import Config

__all__ = ["TerrainImporter", "TerrainImporterCfg"]

TERRAIN_NAME = "terrain"
"""Name of the ground geom, of the height-field asset and of the static body holding every
terrain geom (match the whole ground in a contact sensor with
``ContactMatch(mode="body", pattern="terrain", entity=None)``, as in mjlab)."""
TERRAIN_GEOMS = r"terrain(_box_\d+_\d+_\d+)?"
"""Regex (full match) of every terrain geom: the plane or height field and the box geoms of
box sub-terrains (``terrain_box_<row>_<col>_<k>``), e.g. to select them for a material. A
contact sensor names the ground as one body instead, "terrain" (`TERRAIN_NAME`)."""


@dataclass(kw_only=True)
class TerrainImporterCfg(Config):
    """Which ground the scene gets and where env origins go on it."""

    terrain_type: Literal["plane", "generator"] = "plane"
    """"plane": an infinite flat plane at z = 0. "generator": the height-field grid built from
    ``terrain_generator``."""
    terrain_generator: TerrainGeneratorCfg | None = None
    """Grid of sub-terrains; required when terrain_type is "generator"."""
    env_spacing: float | None = 2.5
    """Distance between neighbouring env origins on a plane, m (None: only with a generated
    terrain, whose sub-terrains place the origins)."""
    max_init_terrain_level: int | None = None
    """Highest difficulty row envs start on (with a curriculum); None: any row."""
    friction: tuple[float, float, float] = (1.0, 0.005, 0.0001)
    """Ground friction (slide, torsion, roll), MuJoCo geom friction."""
    rgba: tuple[float, float, float, float] = (0.45, 0.47, 0.5, 1.0)
    """Ground colour when ``checker`` is False."""
    checker: bool = True
    """Draw a 1 m checker texture on the ground (helps judge motion in videos)."""

    def __post_init__(self) -> None:
        if self.terrain_type not in ("plane", "generator"):
            raise ValueError(
                f"TerrainImporterCfg.terrain_type = '{self.terrain_type}': use 'plane' or "
                "'generator'."
            )
        if self.terrain_type == "generator" and self.terrain_generator is None:
            raise ValueError(
                "TerrainImporterCfg.terrain_generator is None but terrain_type is 'generator'; "
                "pass a TerrainGeneratorCfg."
            )
        name = type(self).__name__
        if self.env_spacing is None:
            if self.terrain_type == "plane":
                raise ValueError(
                    f"{name}.env_spacing is None, but a plane places env origins on a grid "
                    "of that spacing: give it in metres (e.g. 2.5)."
                )
        elif self.env_spacing <= 0:
            raise ValueError(f"{name}.env_spacing = {self.env_spacing}: must be > 0.")
        if self.max_init_terrain_level is not None and self.max_init_terrain_level < 0:
            raise ValueError(
                f"TerrainImporterCfg.max_init_terrain_level = {self.max_init_terrain_level}: "
                "must be >= 0 or None."
            )
        if len(self.friction) != 3 or min(self.friction) < 0:
            raise ValueError(
                f"TerrainImporterCfg.friction = {self.friction}: need three values >= 0 "
                "(slide, torsion, roll)."
            )


class TerrainImporter:
    """Adds the ground to a scene spec and places env origins on it.

    For a generated terrain each env has a level (grid row, difficulty) and a type (grid column);
    its origin is that sub-terrain's origin. The curriculum moves levels with
    ``update_env_origins``.

    Attributes:
        cfg: The configuration.
        device: Device of the torch tensors below.
        generator: The ``TerrainGenerator`` (height map, origins), or None for a plane.
        terrain_origins: (num_rows, num_cols, 3) float32 sub-terrain origins, world, m; None
            for a plane.
        env_origins: (num_envs, 3) float32 env origins, world, m (empty before
            ``configure_env_origins``).
        terrain_levels: (num_envs,) long grid row of each env; None for a plane.
        terrain_types: (num_envs,) long grid column of each env; None for a plane.
        flat_patches: name -> (num_rows, num_cols, num_patches, 3) float32 world positions of
            flat spots (`SubTerrainCfg.flat_patch_sampling`); empty for a plane.
        flat_patch_radii: name -> patch radius, m.
    """

    _snapshot_exclude = ("generator", "_heights", "flat_patches", "flat_patch_radii")
    """The generated map never changes after construction: not part of an env's state."""

    def __init__(self, cfg: TerrainImporterCfg, device: str | torch.device = "cpu"):
        self.cfg = cfg
        self.device = torch.device(device)
        self.generator: TerrainGenerator | None = None
        self.terrain_origins: torch.Tensor | None = None
        if cfg.terrain_type == "generator":
            assert cfg.terrain_generator is not None  # checked by the config
            self.generator = TerrainGenerator(cfg.terrain_generator)
            self.terrain_origins = torch.as_tensor(
                self.generator.origins, dtype=torch.float32, device=self.device
            )
        self._heights: torch.Tensor | None = None
        if self.generator is not None:
            self._heights = torch.as_tensor(
                self.generator.surface, dtype=torch.float32, device=self.device
            )
        self.flat_patches: dict[str, torch.Tensor] = {}
        self.flat_patch_radii: dict[str, float] = {}
        if self.generator is not None:
            self.flat_patches = {
                k: torch.as_tensor(v, dtype=torch.float32, device=self.device)
                for k, v in self.generator.flat_patches.items()
            }
            self.flat_patch_radii = dict(self.generator.flat_patch_radii)
        self.env_origins = torch.zeros(0, 3, device=self.device)
        self.terrain_levels: torch.Tensor | None = None
        self.terrain_types: torch.Tensor | None = None
        self._rng: torch.Generator | None = None

    @property
    def max_terrain_level(self) -> int:
        """Number of difficulty rows (levels are 0 .. max_terrain_level - 1); 1 for a plane."""
        return 1 if self.terrain_origins is None else int(self.terrain_origins.shape[0])

    @property
    def geom_names(self) -> list[str]:
        """Names of the terrain's geoms in the scene: "terrain" (plane or height field), then
        the box geoms of box sub-terrains (all matching `TERRAIN_GEOMS`)."""
        boxes = [] if self.generator is None else self.generator.box_geom_names
        return [TERRAIN_NAME, *boxes]

    def height_at(self, pos_xy: torch.Tensor) -> torch.Tensor:
        """Height of the ground under world points: the nearest vertex of the walkable surface
        (height field and box tops, as ``TerrainGenerator.height_at``), 0 on a plane. Batched,
        no host read.

        Args:
            pos_xy: (..., 2) world x, y, m, on this importer's device (clipped to the map).

        Returns:
            (...) float32 ground heights, m. MuJoCo's surface interpolates linearly between
            vertices, so it can differ from this by up to the height change across half a cell's
            diagonal (``horizontal_scale``, 0.1 m by default): on a slope a few cm, at a stair
            or box edge up to the step's rise (a vertex on the edge counts as the upper step);
            where a tilted box shows a side face from above, by up to that face's drop.
        """
        if self._heights is None:
            return torch.zeros(pos_xy.shape[:-1], device=pos_xy.device)
        assert self.generator is not None
        hs = self.generator.cfg.horizontal_scale
        nx, ny = self._heights.shape
        ix = torch.round((pos_xy[..., 0] - float(self.generator.x[0])) / hs).long().clamp(0, nx - 1)
        iy = torch.round((pos_xy[..., 1] - float(self.generator.y[0])) / hs).long().clamp(0, ny - 1)
        return self._heights[ix, iy]

    def add_to_spec(self, spec: mujoco.MjSpec) -> None:
        """Add the ground to ``spec``: a plane geom, or one height-field asset and geom plus the
        box geoms of box sub-terrains (`geom_names`), in a static body named "terrain".

        All are in geom group 0; the plane's surface is z = 0.

        Args:
            spec: The scene spec to edit.
        """
        material = self._add_checker_material(spec) if self.cfg.checker else None
        # One static body (no joints: welded to the world) holds every terrain geom, so a
        # contact sensor can name the whole ground as one MuJoCo reference object.
        body = spec.worldbody.add_body(name=TERRAIN_NAME)
        if self.generator is not None:
            self.generator.add_to_spec(
                spec,
                name=TERRAIN_NAME,
                friction=self.cfg.friction,
                rgba=self.cfg.rgba,
                material=material,
                body=body,
            )
            return
        geom = body.add_geom(
            name=TERRAIN_NAME, type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.0, 0.0, 0.05], group=0
        )
        paint_ground_geom(geom, self.cfg.friction, self.cfg.rgba, material)

    def configure_env_origins(
        self, num_envs: int, generator: torch.Generator | None = None
    ) -> None:
        """Set ``env_origins`` (and, on a generated terrain, levels and types).

        Plane: a square grid spaced ``env_spacing``, centred on the world origin, env ``i`` at
        row ``i // cols`` (along x) and column ``i % cols`` (along y), ``cols = ceil(sqrt(N))``.
        Generated terrain: envs are split into equal consecutive blocks, one per grid column,
        and get a random level in ``[0, max_init_terrain_level]`` (every row without a
        curriculum).

        Args:
            num_envs: Number of envs.
            generator: Random generator for the levels, kept for ``update_env_origins``
                (samples are drawn on its device). None uses torch's global generator.

        Raises:
            ValueError: If ``num_envs < 1``.
        """
        if num_envs < 1:
            raise ValueError(f"configure_env_origins: num_envs = {num_envs}, must be >= 1.")
        self._rng = generator
        if self.terrain_origins is None:
            self.env_origins = self._grid_origins(num_envs)
            return
        rows, cols = self.terrain_origins.shape[:2]
        top = rows - 1
        curriculum = (
            self.cfg.terrain_generator is not None and self.cfg.terrain_generator.curriculum
        )
        if curriculum and self.cfg.max_init_terrain_level is not None:
            top = min(self.cfg.max_init_terrain_level, rows - 1)
        self.terrain_levels = self._randint(top + 1, num_envs)
        env_ids = torch.arange(num_envs, device=self.device)
        self.terrain_types = torch.div(env_ids * cols, num_envs, rounding_mode="floor")
        self.env_origins = self.terrain_origins[self.terrain_levels, self.terrain_types].clone()

    def update_env_origins(
        self, env_ids: torch.Tensor, move_up: torch.Tensor, move_down: torch.Tensor
    ) -> None:
        """Curriculum hook: move envs one level up or down and re-place their origins.

        An env moved past the top level goes to a random level (so solved envs keep visiting
        every row); one moved below level 0 stays at 0. No-op on a plane.

        Args:
            env_ids: (K,) long ids of the envs to update.
            move_up: (K,) bool, True moves that env one row harder.
            move_down: (K,) bool, True moves that env one row easier (applied with move_up;
                both True leaves the level unchanged).

        Raises:
            RuntimeError: If called before ``configure_env_origins``.
        """
        if self.terrain_origins is None:
            return
        if self.terrain_levels is None or self.terrain_types is None:
            raise RuntimeError(
                "update_env_origins called before configure_env_origins(num_envs, generator)."
            )
        env_ids = env_ids.to(self.device)
        rows = self.max_terrain_level
        levels = (
            self.terrain_levels[env_ids]
            + move_up.to(self.device).long()
            - move_down.to(self.device).long()
        )
        wrapped = self._randint(rows, levels.numel())
        levels = torch.where(levels >= rows, wrapped, levels.clamp_min(0))
        self.terrain_levels[env_ids] = levels
        self.env_origins[env_ids] = self.terrain_origins[levels, self.terrain_types[env_ids]]

    def randomize_env_origins(self, env_ids: torch.Tensor) -> None:
        """Move envs to random sub-terrains (random level and type, each uniform), drawn with
        the generator given to ``configure_env_origins``. No-op on a plane.

        Args:
            env_ids: (K,) long ids of the envs to move.

        Raises:
            RuntimeError: If called before ``configure_env_origins``.
        """
        if self.terrain_origins is None:
            return
        if self.terrain_levels is None or self.terrain_types is None:
            raise RuntimeError(
                "randomize_env_origins called before configure_env_origins(num_envs, generator)."
            )
        env_ids = env_ids.to(self.device)
        rows, cols = self.terrain_origins.shape[:2]
        self.terrain_levels[env_ids] = self._randint(rows, env_ids.numel())
        self.terrain_types[env_ids] = self._randint(cols, env_ids.numel())
        self.env_origins[env_ids] = self.terrain_origins[
            self.terrain_levels[env_ids], self.terrain_types[env_ids]
        ]

    def _randint(self, high: int, n: int) -> torch.Tensor:
        sample_device = self.device if self._rng is None else self._rng.device
        values = torch.randint(0, high, (n,), device=sample_device, generator=self._rng)
        return values.to(self.device)

    def _grid_origins(self, num_envs: int) -> torch.Tensor:
        cols = math.ceil(math.sqrt(num_envs))
        rows = math.ceil(num_envs / cols)
        ids = torch.arange(num_envs, device=self.device)
        x = (torch.div(ids, cols, rounding_mode="floor") - (rows - 1) / 2) * self.cfg.env_spacing
        y = (ids % cols - (cols - 1) / 2) * self.cfg.env_spacing
        return torch.stack([x, y, torch.zeros_like(x)], dim=-1).to(torch.float32)

    @staticmethod
    def _add_checker_material(spec: mujoco.MjSpec) -> str:
        texture, material = f"{TERRAIN_NAME}_checker", f"{TERRAIN_NAME}_material"
        spec.add_texture(
            name=texture,
            type=mujoco.mjtTexture.mjTEXTURE_2D,
            builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
            width=256,
            height=256,
            rgb1=[0.42, 0.45, 0.5],
            rgb2=[0.32, 0.35, 0.4],
        )
        mat = spec.add_material(name=material, texrepeat=[0.5, 0.5], texuniform=True)
        mat.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = texture
        return material

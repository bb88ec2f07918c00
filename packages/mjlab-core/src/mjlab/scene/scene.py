"""`Scene`: terrain, entities and sensors composed into one MjSpec, then named torch views."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import mujoco
import torch

from mjlab.entity import Entity, EntityCfg
from mjlab.sensor import Sensor, SensorCfg
from mjlab.utils.config import Config
from mjlab.utils.env_ids import resolve_env_ids

_MANY_PAIRS = 5000
"""Terrain contact pairs above which building a scene warns (each is checked every step)."""


class SceneLookupError(KeyError):
    """A name that is neither an entity nor a sensor of the scene (`scene[name]`); a KeyError
    whose message prints without quotes."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(kw_only=True)
class SceneCfg(Config):
    """What the world holds."""

    num_envs: int = 1
    """Number of parallel environments (simulation worlds)."""
    env_spacing: float = 2.0
    """Distance between env origins on a plane terrain, m (worlds are separate simulations;
    origins matter for where robots spawn on a shared terrain)."""
    terrain: Any | None = None
    """`mjlab.terrains.TerrainImporterCfg` or mjlab 1.6's `TerrainEntityCfg`; None: no ground
    at all."""
    entities: dict[str, EntityCfg] = field(default_factory=dict)
    """Entities by name; each is attached under the prefix "<name>/"."""
    sensors: tuple[SensorCfg, ...] = ()
    """Scene sensors."""
    extent: float | None = None
    """The model's spatial extent, m (MJCF `<statistic extent>`, `mj_model.stat.extent`):
    the scale MuJoCo's viewers and renderers use for the free camera's distance, clipping
    planes and the size of drawn forces and frames. None keeps the value MuJoCo computes
    from the geometry at compile time; a value replaces it (rendering only: the physics does
    not read it)."""
    spec_fn: Callable[[mujoco.MjSpec], None] | None = None
    """Called with the scene's MjSpec once the terrain, the entities (names prefixed
    "<entity>/") and the sensors are in it and `extent` is set, before it is compiled: a
    last edit of the whole scene (a light, a camera between two robots, an option). It edits
    the spec in place; its return value is ignored. Removing or renaming what entities or
    sensors refer to makes the scene fail at `initialize`. None: no edit."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid (called at construction
        and by `mjlab.utils.config.validate_config` when an env is built)."""
        if (
            isinstance(self.num_envs, bool)
            or not isinstance(self.num_envs, int)
            or self.num_envs < 1
        ):
            raise ValueError(f"SceneCfg.num_envs must be an integer >= 1, got {self.num_envs!r}.")
        if self.extent is not None and (
            isinstance(self.extent, bool)
            or not isinstance(self.extent, (int, float))
            or not math.isfinite(self.extent)
            or self.extent <= 0
        ):
            raise ValueError(
                f"SceneCfg.extent must be a finite number > 0 (m) or None (computed by MuJoCo), "
                f"got {self.extent!r}."
            )
        if self.spec_fn is not None and not callable(self.spec_fn):
            raise ValueError(
                f"SceneCfg.spec_fn must be a callable taking the scene's mujoco.MjSpec, or "
                f"None, got {self.spec_fn!r}."
            )
        names = [s.name for s in self.sensors]
        clash = (set(names) & set(self.entities)) | {n for n in names if names.count(n) > 1}
        if clash:
            raise ValueError(f"SceneCfg: duplicate entity/sensor names {sorted(clash)}.")
        for name in self.entities:
            if not name or "/" in name:
                raise ValueError(
                    f"SceneCfg.entities: bad entity name '{name}' (non-empty, no '/')."
                )


class Scene:
    """Builds the scene's MjSpec at construction; `initialize(sim)` binds it to a simulation.

    `scene["robot"]` returns an `Entity`, `scene["feet_contact"]` a `Sensor`.
    """

    def __init__(self, cfg: SceneCfg, device: str | torch.device = "cpu"):
        self.cfg = cfg
        self.device = torch.device(device)
        self.num_envs = cfg.num_envs
        self.spec = mujoco.MjSpec()
        self.spec.visual.headlight.ambient = [0.4, 0.4, 0.4]
        self.spec.worldbody.add_light(name="sun", pos=[0, 0, 10], dir=[0, 0, -1], castshadow=False)
        # A sky for videos and the native viewer (camera sensors do not draw it: their
        # background stays black on both backends).
        self.spec.add_texture(
            name="skybox",
            type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
            builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT,
            rgb1=[0.45, 0.62, 0.8],
            rgb2=[0.08, 0.1, 0.14],
            width=64,
            height=384,
        )
        self.terrain = None
        if cfg.terrain is not None:
            from mjlab.terrains import TerrainEntity, TerrainEntityCfg, TerrainImporter

            kind = TerrainEntity if isinstance(cfg.terrain, TerrainEntityCfg) else TerrainImporter
            self.terrain = kind(cfg.terrain, self.device)
            self.terrain.add_to_spec(self.spec)
        self.entities: dict[str, Entity] = {}
        for name, ent_cfg in cfg.entities.items():
            entity = Entity(ent_cfg, name)
            frame = self.spec.worldbody.add_frame()
            if _is_fixed_base(entity.spec):
                frame.pos = list(ent_cfg.init_state.pos)
                frame.quat = list(ent_cfg.init_state.rot)
            # The physics options are the task's (SimulationCfg sets them on the compiled
            # model): an MJCF's own <option> (Menagerie's go1.xml asks for an elliptic cone and
            # impratio 100) is replaced by the scene's before attaching, so MuJoCo has no
            # conflict to print.
            _adopt_options(entity.spec, self.spec)
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Attach conflict")
                self.spec.attach(entity.spec, prefix=f"{name}/", frame=frame)
            self._add_terrain_pairs(name, entity)
            self.entities[name] = entity
        self.sensors: dict[str, Sensor] = {}
        for s_cfg in cfg.sensors:
            sensor = s_cfg.build()
            sensor.edit_spec(self.spec, self.entities)
            self.sensors[s_cfg.name] = sensor
        if cfg.extent is not None:
            self.spec.stat.extent = float(cfg.extent)
        if cfg.spec_fn is not None:
            cfg.spec_fn(self.spec)

    def _add_terrain_pairs(self, name: str, entity: Entity) -> None:
        """Give the entity's terrain contact pairs (`Entity.terrain_pairs`) this scene's ground."""
        if not entity.terrain_pairs:
            return
        if self.terrain is None:
            warnings.warn(
                f"Scene: entity '{name}' declares {len(entity.terrain_pairs)} contact pairs with "
                "the terrain, but SceneCfg.terrain is None: they are dropped and nothing holds "
                "the entity up.",
                stacklevel=3,
            )
            return
        ground = self.terrain.geom_names
        total = len(ground) * len(entity.terrain_pairs)
        if total > _MANY_PAIRS:
            warnings.warn(
                f"Scene: entity '{name}' declares {len(entity.terrain_pairs)} contact pairs with "
                f"the terrain, which has {len(ground)} geoms (box sub-terrains): {total} pairs "
                "are added, one per terrain geom, and every physics step checks them. On box "
                "terrain prefer a robot that collides through contype/conaffinity "
                "(EntityCfg.ground_geoms empty).",
                stacklevel=3,
            )
        for pair in entity.terrain_pairs:
            kwargs = dict(pair)
            kwargs["geomname1"] = f"{name}/{pair['geomname1']}"
            # One pair per terrain geom: the height field (or plane) keeps the pair's own name.
            for k, geom in enumerate(ground):
                suffix = "" if k == 0 else f"/{geom}"
                kwargs["name"] = f"{name}/{pair['name']}{suffix}"
                self.spec.add_pair(geomname2=geom, **kwargs)

    def compile(self) -> mujoco.MjModel:
        """Compile the composed spec into the scene's MjModel."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Attach conflict")
            return self.spec.compile()

    def initialize(self, sim, generator: torch.Generator | None = None) -> None:
        """Bind entities and sensors to the compiled model and the simulation."""
        self.sim = sim
        model = sim.mj_model
        if self.terrain is not None:
            self.terrain.configure_env_origins(self.num_envs, generator)
            origins = self.terrain.env_origins
        else:
            origins = _grid_origins(self.num_envs, self.cfg.env_spacing, self.device)
        self._env_origins = origins.to(self.device, torch.float32)
        for entity in self.entities.values():
            entity.initialize(model, sim, self._env_origins, generator=generator)
        for sensor in self.sensors.values():
            sensor.initialize(model, sim, self)

    @property
    def env_origins(self) -> torch.Tensor:
        """(num_envs, 3) env origins, world, m (follow the terrain curriculum)."""
        if self.terrain is not None:
            return self.terrain.env_origins
        return self._env_origins

    def __getitem__(self, name: str) -> Any:
        if name in self.entities:
            return self.entities[name]
        if name in self.sensors:
            return self.sensors[name]
        raise SceneLookupError(
            f"Scene has no entity or sensor '{name}'. Entities: {list(self.entities)}; "
            f"sensors: {list(self.sensors)}."
        )

    def reset(self, env_ids: torch.Tensor) -> None:
        """Default state for every entity in `env_ids` (at the current env origins), sensors
        cleared. The caller runs `sim.forward(env_ids)` once all writes are done."""
        env_ids = resolve_env_ids(env_ids, self.cfg.num_envs, self.device)
        origins = self.env_origins
        for entity in self.entities.values():
            entity.data.env_origins = origins
            entity.reset(env_ids)
        for sensor in self.sensors.values():
            sensor.reset(env_ids)

    def update(self, dt: float) -> None:
        """Advance sensors by one env step of `dt` s."""
        for sensor in self.sensors.values():
            sensor.update(dt)


_OPTION_FIELDS = [
    "ccd_iterations",
    "ccd_tolerance",
    "cone",
    "density",
    "disableactuator",
    "disableflags",
    "enableflags",
    "gravity",
    "impratio",
    "integrator",
    "iterations",
    "jacobian",
    "ls_iterations",
    "ls_tolerance",
    "magnetic",
    "noslip_iterations",
    "noslip_tolerance",
    "o_friction",
    "o_margin",
    "o_solimp",
    "o_solref",
    "sdf_initpoints",
    "sdf_iterations",
    "sleep_tolerance",
    "solver",
    "timestep",
    "tolerance",
    "viscosity",
    "wind",
]


def _adopt_options(child: mujoco.MjSpec, parent: mujoco.MjSpec) -> None:
    """Give `child` the `<option>` values of `parent` (those this MuJoCo has)."""
    for name in _OPTION_FIELDS:
        if hasattr(parent.option, name):
            value = getattr(parent.option, name)
            setattr(child.option, name, value.copy() if hasattr(value, "copy") else value)


def _is_fixed_base(spec: mujoco.MjSpec) -> bool:
    return not any(j.type == mujoco.mjtJoint.mjJNT_FREE for j in spec.joints)


def _grid_origins(num_envs: int, spacing: float, device: torch.device) -> torch.Tensor:
    """(num_envs, 3) origins on a square grid centred at the world origin, m."""
    cols = int(num_envs**0.5 + 0.999999)
    rows = (num_envs + cols - 1) // cols
    i = torch.arange(num_envs, device=device)
    x = (i // cols).float() - (rows - 1) / 2
    y = (i % cols).float() - (cols - 1) / 2
    return torch.stack([x * spacing, y * spacing, torch.zeros_like(x)], dim=-1)

"""Base of scene sensors: configured at the scene level, optionally referring to an entity."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import torch

from mjlab.utils.config import Config


@dataclass(kw_only=True)
class SensorCfg(Config):
    """A sensor of the scene."""

    name: str
    """Unique name; `scene[name]` returns the sensor."""

    def __post_init__(self) -> None:
        if not self.name or "/" in self.name:
            raise ValueError(
                f"{type(self).__name__}.name must be non-empty without '/': '{self.name}'."
            )

    def build(self) -> Sensor:
        raise NotImplementedError


class Sensor:
    """Lifecycle: `edit_spec` (before compile), `initialize` (after), then `update(dt)` once per
    env step and `reset(env_ids)` when envs reset."""

    requires_sensor_context: bool = False
    """mjlab 1.6: the sensor uses the scene's shared `SensorContext` (cameras). When True,
    `initialize` sets `self.sensor_context` to the one context of the simulation and registers
    the sensor in it."""
    _snapshot_exclude = ("sensor_context",)  # shared wiring, not env state

    def __init__(self, cfg: SensorCfg):
        self.cfg = cfg
        self.name = cfg.name

    def edit_spec(self, spec: mujoco.MjSpec, entities: dict) -> None:
        """Add what the sensor needs to the scene spec (entities are attached under "<name>/")."""

    def initialize(self, model: mujoco.MjModel, sim, scene) -> None:
        self.sim = sim
        self.device = sim.device
        self.num_envs = sim.num_envs
        if self.requires_sensor_context:
            from mjlab.sensor.sensor_context import SensorContext

            self.sensor_context = SensorContext.of(sim, scene)
            self.sensor_context.register(self)

    def update(self, dt: float) -> None:
        """Advance internal state by one env step of `dt` seconds."""

    def reset(self, env_ids: torch.Tensor) -> None:
        """Clear per-env state of the given envs."""

    def close(self) -> None:
        """Free what the sensor holds outside the simulation (a camera's GL context)."""


def sensordata_slice(model: mujoco.MjModel, full_name: str) -> slice:
    """The slice of `sensordata` that the MuJoCo sensor `full_name` writes.

    Raises:
        ValueError: no such sensor in the model.
    """
    sid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, full_name)
    if sid < 0:
        names = [
            mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_SENSOR, i) for i in range(model.nsensor)
        ]
        raise ValueError(f"No MuJoCo sensor named '{full_name}'. Sensors in the model: {names}.")
    adr = int(model.sensor_adr[sid])
    return slice(adr, adr + int(model.sensor_dim[sid]))

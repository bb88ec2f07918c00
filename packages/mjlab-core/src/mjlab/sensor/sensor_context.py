"""`SensorContext`: what the sensors of one simulation that declare
`Sensor.requires_sensor_context` share (mjlab 1.6).

In mjlab the context owns one MuJoCo Warp render context (a BVH of the scene and the image
buffers of every camera), which the simulation refits and renders once per step for all camera
and ray-cast sensors together. Here each camera sensor keeps its own renderer (OpenGL on C
MuJoCo, the MuJoCo Warp ray tracer on MuJoCo Warp) and ray-cast sensors cast on the physics
backend, so there is no shared render state to own. The context is the registry of those
sensors and the access mjlab gives through it: images by MuJoCo camera id (`get_rgb`,
`get_depth`), and the lists of camera and ray-cast sensors.

Not provided (no counterpart here): `render_context` (a MuJoCo Warp `RenderContext`),
`recreate` (camera renderers read the per-world model fields at each render already),
`prepare` / `finalize` / `unpack_rgb` (steps of mjlab's captured sensing graph), and
`get_segmentation` (no segmentation images are rendered).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from mjlab.sensor.camera_sensor import CameraSensor
    from mjlab.sensor.sensor_base import Sensor

_CONTEXTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Simulation -> its SensorContext (dropped with the simulation)."""


class SensorContext:
    """Shared state of the sensors of one simulation that need it (camera sensors, and any
    sensor class setting `requires_sensor_context = True`).

    Made on demand by `SensorContext.of(sim, scene)` when the first such sensor initializes;
    every later one gets the same object (`Sensor.sensor_context`).
    """

    def __init__(self, sim, scene=None) -> None:
        self.sim = sim
        """The `Simulation` the sensors read."""
        self.scene = scene
        """The `Scene` holding the sensors (None when sensors are initialized without one)."""
        self.sensors: list[Sensor] = []
        """Registered sensors, in registration (scene) order."""

    @classmethod
    def of(cls, sim, scene=None) -> SensorContext:
        """The context of `sim`, made at the first call."""
        context = _CONTEXTS.get(sim)
        if context is None:
            context = _CONTEXTS[sim] = cls(sim, scene)
        elif context.scene is None:
            context.scene = scene
        return context

    def register(self, sensor: Sensor) -> None:
        """Add `sensor` (once) to the sensors sharing this context."""
        if not any(s is sensor for s in self.sensors):
            self.sensors.append(sensor)

    @property
    def num_envs(self) -> int:
        return self.sim.num_envs

    @property
    def device(self) -> torch.device:
        return self.sim.device

    @property
    def camera_sensors(self) -> list[CameraSensor]:
        """Registered camera sensors, ordered by MuJoCo camera id (mjlab's order)."""
        from mjlab.sensor.camera_sensor import CameraSensor

        cams = [s for s in self.sensors if isinstance(s, CameraSensor)]
        return sorted(cams, key=lambda s: s.camera_id)

    @property
    def raycast_sensors(self) -> list[Sensor]:
        """Registered sensors other than cameras (ray-cast sensors in mjlab)."""
        from mjlab.sensor.camera_sensor import CameraSensor

        return [s for s in self.sensors if not isinstance(s, CameraSensor)]

    @property
    def has_cameras(self) -> bool:
        return bool(self.camera_sensors)

    @property
    def has_raycasts(self) -> bool:
        return bool(self.raycast_sensors)

    def _camera(self, cam_idx: int, data_type: str) -> CameraSensor:
        cams = self.camera_sensors
        for cam in cams:
            if cam.camera_id == cam_idx and data_type in cam.cfg.data_types:
                return cam
        ids = [c.camera_id for c in cams]
        if cam_idx in ids:
            raise ValueError(
                f"SensorContext: no camera sensor renders {data_type} of camera {cam_idx}; add "
                f"'{data_type}' to its CameraSensorCfg.data_types."
            )
        raise KeyError(f"SensorContext: no camera sensor of camera id {cam_idx}; ids: {ids}.")

    def get_rgb(self, cam_idx: int) -> torch.Tensor:
        """(num_envs, H, W, 3) uint8 RGB image of the camera sensor of MuJoCo camera
        `cam_idx` (rendered now if stale, see `CameraSensor.rgb`).

        Raises:
            KeyError: no camera sensor of that camera. ValueError: it renders no RGB.
        """
        return self._camera(cam_idx, "rgb").rgb

    def get_depth(self, cam_idx: int) -> torch.Tensor:
        """(num_envs, H, W, 1) float32 depth along the camera axis, m, of the camera sensor
        of MuJoCo camera `cam_idx`.

        Raises:
            KeyError: no camera sensor of that camera. ValueError: it renders no depth.
        """
        return self._camera(cam_idx, "depth").depth.unsqueeze(-1)

    def get_segmentation(self, cam_idx: int) -> torch.Tensor:
        """mjlab 1.6's per-pixel object ids; not rendered here.

        Raises:
            ValueError: always.
        """
        raise ValueError(
            f"SensorContext.get_segmentation({cam_idx}): segmentation images are not rendered "
            "by this library's camera renderers (CameraSensorCfg.data_types: 'rgb', 'depth')."
        )

"""Height scan: a grid of rays cast straight down from a body frame."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from mjlab.sensor.sensor_base import Sensor, SensorCfg
from mjlab.utils.env_ids import resolve_env_ids
from mjlab.utils.math import quat_apply, yaw_quat


@dataclass(kw_only=True)
class HeightScanCfg(SensorCfg):
    """A size[0] x size[1] grid of rays, spaced `resolution`, centred under a body, aligned with
    the body's yaw (not its roll/pitch), cast straight down (-z world) from `offset_z` above it."""

    entity: str = "robot"
    """Entity owning the body."""
    body_name: str
    """Body the grid follows, e.g. "trunk"."""
    size: tuple[float, float] = (1.6, 1.0)
    """Grid extent along the body's x and y, m."""
    resolution: float = 0.1
    """Ray spacing, m."""
    offset_z: float = 0.5
    """Ray origins are this far above the body origin, m."""
    max_distance: float = 5.0
    """Rays that hit nothing within this distance report it as their distance, m."""
    geomgroup: tuple[int, ...] = (1, 1, 0, 0, 0, 0)
    """Geom groups the rays see. Terrain geoms are in group 0; robot collision geoms in
    mujoco-menagerie models are in groups 2-4, so the rays skip the robot."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.resolution <= 0 or min(self.size) < 0:
            raise ValueError("HeightScanCfg.resolution must be > 0 and size >= 0.")

    def build(self) -> HeightScan:
        return HeightScan(self)


class HeightScan(Sensor):
    """`heights`: (num_envs, num_rays) world z of the ground under each ray, m; misses (and rays
    of a world whose state is not finite) report `origin_z - max_distance`.

    The rays are cast when `heights` is first read after an env step or a reset, so that an
    observation computed after a reset describes the reset state, not the one before it.
    """

    cfg: HeightScanCfg

    def initialize(self, model, sim, scene) -> None:
        super().initialize(model, sim, scene)
        cfg = self.cfg
        self._entity = scene[cfg.entity]
        (self._body,), _ = self._entity.find_bodies(cfg.body_name)
        xs = torch.arange(-cfg.size[0] / 2, cfg.size[0] / 2 + 1e-9, cfg.resolution)
        ys = torch.arange(-cfg.size[1] / 2, cfg.size[1] / 2 + 1e-9, cfg.resolution)
        gx, gy = torch.meshgrid(xs, ys, indexing="xy")
        self.pattern_b = torch.stack(
            [gx.flatten(), gy.flatten(), torch.zeros(gx.numel())], dim=-1
        ).to(self.device)
        """(num_rays, 3) ray origins in the yaw-aligned body frame (before offset_z), m."""
        self.num_rays = self.pattern_b.shape[0]
        self._heights = torch.zeros(self.num_envs, self.num_rays, device=self.device)
        self._origin_z = torch.zeros(self.num_envs, device=self.device)
        self._hit = torch.zeros(self.num_envs, self.num_rays, dtype=torch.bool, device=self.device)
        self._stale = True

    def update(self, dt: float) -> None:
        self._stale = True

    def reset(self, env_ids) -> None:
        env_ids = resolve_env_ids(env_ids, self.num_envs, self.device)
        self._stale = True

    def _cast(self) -> None:
        data = self._entity.data
        pos = data.body_link_pos_w[:, self._body]
        quat = yaw_quat(data.body_link_quat_w[:, self._body])
        n = self.num_envs
        pts = quat_apply(
            quat[:, None, :].expand(n, self.num_rays, 4).reshape(-1, 4),
            self.pattern_b.expand(n, -1, -1).reshape(-1, 3),
        ).reshape(n, self.num_rays, 3)
        origin = pts + pos[:, None, :]
        origin[..., 2] = pos[:, None, 2] + self.cfg.offset_z
        down = torch.tensor([0.0, 0.0, -1.0], device=self.device).expand(n, self.num_rays, 3)
        dist, _ = self.sim.ray(origin, down, geomgroup=self.cfg.geomgroup)
        dist = dist.float()
        # A NaN distance (a world whose physics diverged) fails every comparison: test for the
        # valid range, not the invalid one.
        valid = (dist >= 0) & (dist <= self.cfg.max_distance)
        self._hit = valid
        dist = torch.where(valid, dist, self.cfg.max_distance)
        origin_z = torch.nan_to_num(origin[..., 2].float(), nan=0.0, posinf=0.0, neginf=0.0)
        self._origin_z = origin_z[:, 0]
        self._heights = origin_z - dist
        self._stale = False

    @property
    def heights(self) -> torch.Tensor:
        """(num_envs, num_rays) ground height under each ray, world z, m."""
        if self._stale:
            self._cast()
        return self._heights

    @property
    def hit(self) -> torch.Tensor:
        """(num_envs, num_rays) bool, True where the ray hit something within max_distance."""
        if self._stale:
            self._cast()
        return self._hit

    @property
    def origin_z(self) -> torch.Tensor:
        """(num_envs,) world z of the ray origins, m."""
        if self._stale:
            self._cast()
        return self._origin_z

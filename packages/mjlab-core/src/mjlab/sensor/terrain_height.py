"""Terrain height sensor (mjlab 1.6 API): how high each frame is above the ground below it.

A `RayCastSensor` whose `data` also carries `heights`: per frame, the vertical distance from
the frame origin down to the surfaces its rays hit, reduced over the pattern's rays (e.g. the
clearance of each foot, with one site per foot as the frames and a small ring pattern).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from mjlab.sensor.ray_cast import RayCastData, RayCastSensor, RayCastSensorCfg

_REDUCTIONS = ("min", "max", "mean", "none")


@dataclass
class TerrainHeightData(RayCastData):
    """`RayCastData` (all its fields, same shapes) plus the frames' clearance."""

    heights: torch.Tensor
    """Height of each frame above the terrain, m, float32: (B, F) after the reduction over the
    pattern's rays, or (B, F, num_rays_per_frame) with `reduction="none"`.

    Per ray the value is `frame_z - hit_z` (world z of the frame origin minus that of the hit
    point), with two exceptions: a ray that hits a surface from behind (surface normal z < 0:
    the frame is inside a geom) gives 0, and a ray that misses gives `max_distance`, or, when
    every ray of that frame missed, the frame's own z clamped to [0, max_distance] (its height
    above a ground plane at z = 0).
    """


@dataclass(kw_only=True)
class TerrainHeightSensorCfg(RayCastSensorCfg):
    """A ray-cast sensor reporting each frame's height above the terrain (`data.heights`).

    All ray settings are `RayCastSensorCfg`'s (defaults: a 1 m x 1 m grid at 0.1 m of
    downward rays, "base" alignment; for clearance use `ray_alignment="yaw"` or "world" so
    the rays point down whatever the frame's tilt).
    """

    reduction: Literal["min", "max", "mean", "none"] = "min"
    """How the per-ray heights of a frame are combined: "min" (the highest terrain point
    under the pattern, i.e. the smallest clearance), "max", "mean", or "none" (keep every ray:
    `heights` is then (B, F, num_rays_per_frame))."""

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid."""
        super().validate()
        if self.reduction not in _REDUCTIONS:
            raise ValueError(
                f"TerrainHeightSensorCfg.reduction must be one of {list(_REDUCTIONS)}, got "
                f"{self.reduction!r}."
            )

    def build(self) -> TerrainHeightSensor:
        return TerrainHeightSensor(self)


class TerrainHeightSensor(RayCastSensor):
    """Each frame's height above the terrain below it: `data.heights`, (B, F) (or
    (B, F, num_rays_per_frame) with `reduction="none"`); see `TerrainHeightData.heights`.

    Cast like every `RayCastSensor` (on the first read of `data` in a new physics state).
    """

    cfg: TerrainHeightSensorCfg

    @property
    def data(self) -> TerrainHeightData:
        """The cast in the current physics state, with `heights` (see `TerrainHeightData`)."""
        return super().data  # type: ignore[return-value]

    def _compute_data(self) -> TerrainHeightData:
        raw = super()._compute_data()
        b = raw.distances.shape[0]
        f, n = self.num_frames, self.num_rays_per_frame
        max_distance = float(self.cfg.max_distance)
        frame_z = raw.frame_pos_w[..., 2][..., None]  # (B, F, 1)
        dist = raw.distances.view(b, f, n)
        per_ray = frame_z - raw.hit_pos_w[..., 2].view(b, f, n)
        hit = dist >= 0
        # Hit from behind: the frame is inside the geom, so it has no clearance.
        behind = hit & (raw.normals_w[..., 2].view(b, f, n) < 0)
        per_ray = torch.where(behind, torch.zeros_like(per_ray), per_ray)
        # A miss counts as max_distance, unless all of the frame's rays missed: then the
        # frame's z (its height above z = 0), clamped to [0, max_distance].
        all_missed = (~hit).all(dim=-1, keepdim=True)
        fallback = frame_z.clamp(0.0, max_distance)
        miss_value = torch.where(all_missed, fallback, torch.full_like(fallback, max_distance))
        per_ray = torch.where(hit, per_ray, miss_value.expand_as(per_ray))
        mode = self.cfg.reduction
        if mode == "min":
            heights = per_ray.amin(dim=-1)
        elif mode == "max":
            heights = per_ray.amax(dim=-1)
        elif mode == "mean":
            heights = per_ray.mean(dim=-1)
        else:
            heights = per_ray
        return TerrainHeightData(**vars(raw), heights=heights)

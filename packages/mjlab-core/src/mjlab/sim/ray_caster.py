"""Reusable batched ray casters over a `Simulation`'s worlds, with hit normals and a body to
exclude per ray (`Simulation.ray_caster`; the ray-cast sensors use them)."""

from __future__ import annotations

import numpy as np
import torch


class CMujocoRayCaster:
    """C MuJoCo: `mujoco.batch.Batch.ray` over all worlds (thread pool), with normals and a
    body to exclude per ray."""

    def __init__(self, sim, flags: tuple[int, ...] | None, exclude: np.ndarray):
        self._batch = sim._backend.batch
        self._device = sim.device
        self._flags = None if flags is None else np.asarray(flags, dtype=np.uint8)
        self._exclude = exclude

    def __call__(self, origins: torch.Tensor, dirs: torch.Tensor):
        dist, _geomid, normal = self._batch.ray(
            origins.detach().contiguous().cpu().numpy(),
            dirs.detach().contiguous().cpu().numpy(),
            geomgroup=self._flags,
            flg_static=True,
            bodyexclude=self._exclude,
            normal=True,
        )
        return (
            torch.from_numpy(np.asarray(dist)).to(self._device, torch.float32),
            torch.from_numpy(np.asarray(normal)).to(self._device, torch.float32),
        )


class WarpRayCaster:
    """MuJoCo Warp: one `mujoco_warp.rays` launch over (worlds, rays) into buffers allocated
    once; no host transfer or sync."""

    def __init__(self, sim, nray: int, flags: tuple[int, ...] | None, exclude: np.ndarray):
        import warp as wp
        from mujoco_warp._src.types import vec6

        backend = sim._backend
        self._wp = wp
        self._backend = backend
        n, dev = sim.num_envs, sim.device
        self._pnt = torch.zeros(n, nray, 3, dtype=torch.float32, device=dev)
        self._vec = torch.zeros(n, nray, 3, dtype=torch.float32, device=dev)
        self._dist = torch.zeros(n, nray, dtype=torch.float32, device=dev)
        self._geomid = torch.zeros(n, nray, dtype=torch.int32, device=dev)
        self._normal = torch.zeros(n, nray, 3, dtype=torch.float32, device=dev)
        self._exclude = torch.as_tensor(exclude, dtype=torch.int32, device=dev)
        # MuJoCo Warp: a group whose flag is 0 is skipped; all -1 means every group.
        self._group = vec6(*(flags if flags is not None else (-1,) * 6))
        self._args = (
            wp.from_torch(self._pnt, dtype=wp.vec3),
            wp.from_torch(self._vec, dtype=wp.vec3),
            self._group,
            True,
            wp.from_torch(self._exclude),
            wp.from_torch(self._dist),
            wp.from_torch(self._geomid),
            wp.from_torch(self._normal, dtype=wp.vec3),
        )

    def __call__(self, origins: torch.Tensor, dirs: torch.Tensor):
        self._pnt.copy_(origins)
        self._vec.copy_(dirs)
        backend = self._backend
        with self._wp.ScopedDevice(backend.wp_device):
            backend.mjw.rays(backend.m, backend.d, *self._args)
        # Copies: the buffers are rewritten by the next cast.
        return self._dist.clone(), self._normal.clone()

"""MuJoCo Warp backend: all worlds in one set of device arrays, CUDA graphs on CUDA."""

from __future__ import annotations

import mujoco
import numpy as np
import torch

from mjlab.sim.sim_cfg import SimulationCfg


class WarpBackend:
    """Runs `num_envs` worlds with MuJoCo Warp; views are float32 tensors on `device`.

    On CUDA, `step` (nstep substeps plus the position/velocity stages at the new state) and
    `forward` are captured once per nstep as CUDA graphs and replayed. On CPU ("cpu" device),
    the same kernels run through Warp's CPU backend, slowly; it exists for parity tests.
    """

    name = "warp"

    def __init__(
        self, model: mujoco.MjModel, num_envs: int, cfg: SimulationCfg, device: torch.device
    ):
        import mujoco_warp as mjw
        import warp as wp

        self.mjw, self.wp = mjw, wp
        wp.init()
        self.num_envs = num_envs
        self.device = device
        self.wp_device = wp.device_from_torch(device)
        self.use_graph = cfg.use_cuda_graph and device.type == "cuda"
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        with wp.ScopedDevice(self.wp_device):
            self.m = mjw.put_model(model)
            self.d = mjw.put_data(
                model, data, nworld=num_envs, nconmax=cfg.nconmax, njmax=cfg.njmax
            )
        self.host_model = model
        self._graphs: dict[object, object] = {}
        self._views: dict[str, torch.Tensor] = {}
        self._reset_mask = torch.zeros(num_envs, dtype=torch.bool, device=device)
        self._key = torch.full((num_envs,), -1, dtype=torch.int32, device=device)

    # -- views ------------------------------------------------------------------------------
    def field(self, name: str) -> torch.Tensor:
        view = self._views.get(name)
        if view is None:
            array = getattr(self.d, name, None)
            if array is None or not hasattr(array, "ptr"):
                raise AttributeError(f"'{name}' is not a MuJoCo Warp Data array.")
            view = self.wp.to_torch(array)
            self._views[name] = view
        return view

    def expand(self, name: str) -> torch.Tensor:
        array = getattr(self.m, name, None)
        if array is None or not hasattr(array, "ptr"):
            raise ValueError(f"Model field '{name}' is not a MuJoCo Warp Model array.")
        if array.shape[0] != self.num_envs:
            if array.shape[0] != 1:
                raise ValueError(f"Model field '{name}' has leading size {array.shape[0]}.")
            tiled = np.repeat(array.numpy(), self.num_envs, axis=0)
            array = self.wp.array(tiled, dtype=array.dtype, device=self.wp_device)
            setattr(self.m, name, array)
            self._graphs.clear()  # graphs hold the old array's pointer
        return self.wp.to_torch(array)

    def set_const(self, env_ids: np.ndarray | None) -> None:
        # MuJoCo Warp recomputes the constants of every world at once.
        with self.wp.ScopedDevice(self.wp_device):
            self.mjw.set_const(self.m, self.d)

    # -- calls ------------------------------------------------------------------------------
    def _launch(self, key: object, fn) -> None:
        if not self.use_graph:
            with self.wp.ScopedDevice(self.wp_device):
                fn()
            return
        graph = self._graphs.get(key)
        if graph is None:
            with self.wp.ScopedDevice(self.wp_device):
                fn()  # compile kernels and warm up outside the capture
                with self.wp.ScopedCapture() as capture:
                    fn()
            graph = self._graphs[key] = capture.graph
        self.wp.capture_launch(graph)

    def step(self, nstep: int) -> None:
        def run() -> None:
            for _ in range(nstep):
                self.mjw.step(self.m, self.d)
            # Position/velocity stages at the new state, as the C backend's stage=VEL.
            self.mjw.step1(self.m, self.d)

        self._launch(("step", nstep), run)

    def forward(self, env_ids: np.ndarray | None) -> None:
        # Worlds are independent and forward writes no state: run it for all of them.
        self._launch("forward", lambda: self.mjw.forward(self.m, self.d))

    def reset(self, env_ids: np.ndarray | None, keyframe: int, forward: bool) -> None:
        mask = self._reset_mask
        mask.zero_()
        if env_ids is None:
            mask.fill_(True)
        else:
            mask[torch.as_tensor(env_ids, device=self.device, dtype=torch.long)] = True
        with self.wp.ScopedDevice(self.wp_device):
            self.mjw.reset_data(self.m, self.d, reset=self.wp.from_torch(mask))
            if keyframe >= 0:
                self._key.fill_(-1)
                self._key[mask] = keyframe
                self.mjw.reset_data_keyframe(self.m, self.d, self.wp.from_torch(self._key))
        if forward:
            self.forward(env_ids)

    def newly_diverged(self) -> torch.Tensor:
        qpos, qvel = self.field("qpos"), self.field("qvel")
        return ~(torch.isfinite(qpos).all(dim=1) & torch.isfinite(qvel).all(dim=1))

    def ray(self, pnt, vec, geomgroup, flg_static, bodyexclude):
        wp, mjw = self.wp, self.mjw
        n, nray = pnt.shape[:2]
        pnt = pnt.to(self.device, torch.float32).contiguous()
        vec = vec.to(self.device, torch.float32).contiguous()
        dist = torch.empty((n, nray), dtype=torch.float32, device=self.device)
        geomid = torch.empty((n, nray), dtype=torch.int32, device=self.device)
        normal = torch.empty((n, nray, 3), dtype=torch.float32, device=self.device)
        exclude = torch.full((nray,), bodyexclude, dtype=torch.int32, device=self.device)
        from mujoco_warp._src.types import vec6

        group = vec6(*(geomgroup if geomgroup is not None else (-1,) * 6))
        with wp.ScopedDevice(self.wp_device):
            mjw.rays(
                self.m,
                self.d,
                wp.from_torch(pnt, dtype=wp.vec3),
                wp.from_torch(vec, dtype=wp.vec3),
                group,
                flg_static,
                wp.from_torch(exclude),
                wp.from_torch(dist),
                wp.from_torch(geomid),
                wp.from_torch(normal, dtype=wp.vec3),
            )
        return dist, geomid

    def get_data(self, env_id: int) -> mujoco.MjData:
        data = mujoco.MjData(self.host_model)
        for name in (
            "qpos",
            "qvel",
            "act",
            "ctrl",
            "qfrc_applied",
            "xfrc_applied",
            "mocap_pos",
            "mocap_quat",
        ):
            getattr(data, name)[:] = (
                self.field(name)[env_id].detach().cpu().numpy().reshape(getattr(data, name).shape)
            )
        data.time = float(self.field("time")[env_id])
        mujoco.mj_forward(self.host_model, data)
        return data

    def get_model(self, env_id: int) -> mujoco.MjModel:
        return self.host_model

"""MuJoCo Warp backend: all worlds in one set of device arrays, CUDA graphs on CUDA.

What this backend adds to MuJoCo Warp so that it behaves like the C MuJoCo backend (the contract
is `SimData`'s docstring; `tests/test_backend_parity.py` checks it):

- After `step`, acceleration-stage sensors (contact, touch, force, accelerometer, ...) keep the
  values of the last physics substep. MuJoCo Warp's `step1` (the position/velocity stages at the
  new state) clears all of `sensordata`; the backend saves those columns before it and restores
  them after.
- `set_const` gives every world constants derived from its own fields: the derived model arrays
  (`body_subtreemass`, `dof_invweight0`, `actuator_acc0`, ...) are made per-world first, otherwise
  MuJoCo Warp writes world 0's values into a single shared row.
- `forward(env_ids)` leaves the other worlds' outputs as they were (MuJoCo Warp runs every world).
- The world clock is kept in float64 (`data.time`); MuJoCo Warp's float32 clock drifts by
  ~5 ms per 1000 steps of 0.005 s at t = 1000 s.
- Divergence: worlds whose qpos, qvel or qacc are non-finite or exceed 1e10 (C MuJoCo's
  mjMAXVAL, the bound of mj_checkPos/Vel/Acc) are flagged.
"""

from __future__ import annotations

import copy
import warnings

import mujoco
import numpy as np
import torch
import warp as wp

from mjlab.sim.sim_cfg import SimulationCfg
from mjlab.sim.state_fields import MAXVAL as _MAXVAL
from mjlab.sim.state_fields import STATE_FIELDS

# Model fields that mujoco_warp.set_const writes (its docstring). Each is made per-world before
# the first set_const, so that every world keeps the constants of its own fields.
_DERIVED_FIELDS = (
    "body_subtreemass",
    "body_invweight0",
    "dof_invweight0",
    "tendon_invweight0",
    "actuator_acc0",
    "tendon_length0",
    "geom_aabb",
    "geom_rbound",
    "eq_data",
    "cam_pos0",
    "cam_poscom0",
    "cam_mat0",
    "light_pos0",
    "light_poscom0",
    "light_dir0",
)
# Outputs that forward(env_ids) restores for the worlds it was not asked to recompute: the
# acceleration-stage results a caller may read after a partial reset (C MuJoCo leaves them).
_FORWARD_KEEP = (
    "sensordata",
    "qacc",
    "qacc_smooth",
    "act_dot",
    "actuator_force",
    "qfrc_actuator",
    "qfrc_smooth",
    "qfrc_constraint",
    "cfrc_ext",
    "cfrc_int",
    "cacc",
)


def _quiet_warp() -> None:
    """No init banner and no line per loaded kernel module (hundreds for MuJoCo Warp), unless
    the user asked Warp for more (a log level below INFO)."""
    level = getattr(wp, "LOG_WARNING", None)
    if level is not None and hasattr(wp.config, "log_level"):
        if wp.config.log_level == getattr(wp, "LOG_INFO", level):  # Warp's default
            wp.config.log_level = level
    else:
        wp.config.quiet = True


def _set_warp_options(mjw, opt, cfg: SimulationCfg) -> None:
    """Write the MuJoCo Warp-only options of `cfg` that are set (not None) into the device
    model's `opt`, before anything is compiled or captured."""
    if cfg.broadphase is not None:
        opt.broadphase = mjw.BroadphaseType[cfg.broadphase.upper()]
    if cfg.broadphase_filter is not None:
        flags = mjw.BroadphaseFilter(0)
        for name in cfg.broadphase_filter:
            flags |= mjw.BroadphaseFilter[name.upper()]
        opt.broadphase_filter = flags
    if cfg.contact_sensor_maxmatch is not None:
        opt.contact_sensor_maxmatch = int(cfg.contact_sensor_maxmatch)
    if cfg.ls_parallel is not None:
        try:
            opt.ls_parallel = cfg.ls_parallel
        except AttributeError:  # removed in MuJoCo Warp 3.9.1
            warnings.warn(
                f"SimulationCfg.ls_parallel={cfg.ls_parallel} has no effect: MuJoCo Warp "
                f"{getattr(mjw, '__version__', '?')} has no ls_parallel option (removed in "
                "3.9.1). Leave it None.",
                stacklevel=4,
            )


@wp.kernel
def _restore_columns(
    saved: wp.array2d(dtype=float), cols: wp.array(dtype=int), out: wp.array2d(dtype=float)
):
    world, i = wp.tid()
    col = cols[i]
    out[world, col] = saved[world, col]


class WarpBackend:
    """Runs `num_envs` worlds with MuJoCo Warp; views are float32 tensors on `device` (the clock,
    `time`, is float64).

    On CUDA, `step` (nstep substeps plus the position/velocity stages at the new state) and
    `forward` are captured once per nstep as CUDA graphs and replayed. On CPU ("cpu" device),
    the same kernels run through Warp's CPU backend, slowly; it exists for parity tests.
    """

    name = "warp"

    def __init__(
        self, model: mujoco.MjModel, num_envs: int, cfg: SimulationCfg, device: torch.device
    ):
        import mujoco_warp as mjw

        self.mjw, self.wp = mjw, wp
        _quiet_warp()
        wp.init()
        self.num_envs = num_envs
        self.device = device
        self.wp_device = wp.device_from_torch(device)
        self.use_graph = cfg.use_cuda_graph and device.type == "cuda"
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        with wp.ScopedDevice(self.wp_device):
            self.m = mjw.put_model(model)
            if cfg.deterministic:
                self.m.opt.deterministic = True  # DeterminismType.ALL
            _set_warp_options(mjw, self.m.opt, cfg)
            self.d = mjw.put_data(
                model, data, nworld=num_envs, nconmax=cfg.nconmax, njmax=cfg.njmax
            )
        self.host_model = model
        self._graphs: dict[object, object] = {}
        self._views: dict[str, torch.Tensor] = {}
        self._per_world: list[str] = []
        """Model fields given per-world values (by `expand` or before `set_const`)."""
        self._reset_mask = torch.zeros(num_envs, dtype=torch.bool, device=device)
        self._forward_mask = torch.zeros(num_envs, dtype=torch.bool, device=device)
        self._key = torch.full((num_envs,), -1, dtype=torch.int32, device=device)
        self._dt = float(model.opt.timestep)
        self._time = torch.zeros(num_envs, dtype=torch.float64, device=device)
        self._wp_time = wp.to_torch(self.d.time)
        self._time.copy_(self._wp_time)

        # Acceleration-stage sensor columns, preserved across step1 (see the module docstring).
        cols = [
            np.arange(adr, adr + dim)
            for adr, dim, stage in zip(
                model.sensor_adr, model.sensor_dim, model.sensor_needstage, strict=True
            )
            if stage == mujoco.mjtStage.mjSTAGE_ACC
        ]
        acc_cols = np.concatenate(cols).astype(np.int32) if cols else np.zeros(0, np.int32)
        with wp.ScopedDevice(self.wp_device):
            self._acc_cols = wp.array(acc_cols, dtype=int)
            self._sensor_saved = wp.zeros_like(self.d.sensordata)

    # -- views ------------------------------------------------------------------------------
    def field(self, name: str) -> torch.Tensor:
        if name == "time":
            return self._time
        view = self._views.get(name)
        if view is None:
            array = getattr(self.d, name, None)
            if array is None or not hasattr(array, "ptr"):
                raise AttributeError(f"'{name}' is not a MuJoCo Warp Data array.")
            view = wp.to_torch(array)
            self._views[name] = view
        return view

    def get_state(self) -> dict[str, torch.Tensor]:
        state = {"time": self._time.clone()}
        extra = ("qacc_warmstart", "eq_active", "userdata", "history", "plugin_state")
        for name in (*STATE_FIELDS[1:], *extra):
            if hasattr(getattr(self.d, name, None), "ptr"):
                state[name] = self.field(name).clone()
        return state

    def check_state(self, state: dict[str, torch.Tensor]) -> None:
        for name, value in state.items():
            target = self._time if name == "time" else self.field(name)
            if target.shape != value.shape:
                raise ValueError(
                    f"Saved physics state '{name}' has shape {tuple(value.shape)}, this "
                    f"simulation {tuple(target.shape)} (another model or num_envs)."
                )

    def set_state(self, state: dict[str, torch.Tensor]) -> None:  # checked by Simulation
        for name, value in state.items():
            (self._time if name == "time" else self.field(name)).copy_(value)
        self._push_time()

    def expand(self, name: str) -> torch.Tensor:
        array = getattr(self.m, name, None)
        if array is None or not hasattr(array, "ptr"):
            raise ValueError(f"Model field '{name}' is not a MuJoCo Warp Model array.")
        if array.shape[0] != self.num_envs:
            if array.shape[0] != 1:
                raise ValueError(f"Model field '{name}' has leading size {array.shape[0]}.")
            tiled = np.repeat(array.numpy(), self.num_envs, axis=0)
            array = wp.array(tiled, dtype=array.dtype, device=self.wp_device)
            setattr(self.m, name, array)
            self._graphs.clear()  # graphs hold the old array's pointer
        if name not in self._per_world:
            self._per_world.append(name)
        return wp.to_torch(array)

    def set_const(self, env_ids) -> None:
        # MuJoCo Warp recomputes the constants of every world at once, each from its own fields
        # once the derived arrays are per-world; the worlds not listed get their values again.
        for name in _DERIVED_FIELDS:
            array = getattr(self.m, name, None)
            if array is not None and array.ndim >= 2 and array.shape[1] > 0:
                self.expand(name)
        with wp.ScopedDevice(self.wp_device):
            self.mjw.set_const(self.m, self.d)

    # -- calls ------------------------------------------------------------------------------
    def _launch(self, key: object, fn) -> None:
        if not self.use_graph:
            with wp.ScopedDevice(self.wp_device):
                fn()
            return
        graph = self._graphs.get(key)
        if graph is None:
            with wp.ScopedDevice(self.wp_device):
                # Compile and warm up outside the capture. The warm-up really runs (a step would
                # advance every world), so the integration state is saved and put back.
                state = self._state_buffer()
                self.mjw.get_state(self.m, self.d, state, self._state_sig)
                fn()
                self.mjw.set_state(self.m, self.d, state, self._state_sig)
                with wp.ScopedCapture() as capture:
                    fn()  # recorded, not run
            graph = self._graphs[key] = capture.graph
        wp.capture_launch(graph)

    def _state_buffer(self):
        """(num_envs, mj_stateSize) buffer of the integration state (mjSTATE_INTEGRATION)."""
        if getattr(self, "_state", None) is None:
            self._state_sig = int(mujoco.mjtState.mjSTATE_INTEGRATION)
            size = mujoco.mj_stateSize(self.host_model, self._state_sig)
            self._state = wp.zeros((self.num_envs, size), dtype=float, device=self.wp_device)
        return self._state

    def _push_time(self) -> None:
        """Write the float64 clock into MuJoCo Warp's float32 one (time-dependent kernels)."""
        self._wp_time.copy_(self._time)

    def step(self, nstep: int) -> None:
        mjw, m, d = self.mjw, self.m, self.d
        ncols = self._acc_cols.shape[0]

        def run() -> None:
            for _ in range(nstep):
                mjw.step(m, d)
            if ncols:
                wp.copy(self._sensor_saved, d.sensordata)
            # Position/velocity stages at the new state, as the C backend's stage=VEL.
            mjw.step1(m, d)
            if ncols:
                wp.launch(
                    _restore_columns,
                    dim=(self.num_envs, ncols),
                    inputs=[self._sensor_saved, self._acc_cols],
                    outputs=[d.sensordata],
                )

        self._push_time()
        self._launch(("step", nstep), run)
        self._time += nstep * self._dt

    def forward(self, env_ids) -> None:
        # MuJoCo Warp runs every world (forward writes no state); the outputs of worlds that were
        # not asked for are put back, so they keep describing their last step.
        keep = None
        if env_ids is not None:
            mask = self._world_mask(env_ids, self._forward_mask)
            keep = [(self.field(n), self.field(n).clone()) for n in _FORWARD_KEEP]
        self._push_time()
        self._launch("forward", lambda: self.mjw.forward(self.m, self.d))
        if keep is not None:
            for view, saved in keep:
                shape = (self.num_envs,) + (1,) * (view.ndim - 1)
                view.copy_(torch.where(mask.view(shape), view, saved))

    def reset(self, env_ids, keyframe: int, forward: bool) -> None:
        mask = self._world_mask(env_ids, self._reset_mask)
        with wp.ScopedDevice(self.wp_device):
            self.mjw.reset_data(self.m, self.d, reset=wp.from_torch(mask))
            if keyframe >= 0:
                self._key.fill_(-1)
                self._key.masked_fill_(mask, keyframe)
                self.mjw.reset_data_keyframe(self.m, self.d, wp.from_torch(self._key))
        # The reset worlds' clock: 0 or the keyframe's time, exact (no host sync: a masked fill).
        start = float(self.host_model.key_time[keyframe]) if keyframe >= 0 else 0.0
        self._time.masked_fill_(mask, start)
        if forward:
            self.forward(env_ids)

    def _world_mask(self, env_ids, out: torch.Tensor) -> torch.Tensor:
        """`out` (num_envs,) bool set to the worlds `env_ids` (None: all), without a host sync."""
        if env_ids is None:
            return out.fill_(True)
        out.zero_()
        out[torch.as_tensor(env_ids, device=self.device, dtype=torch.long)] = True
        return out

    def newly_diverged(self) -> torch.Tensor:
        ok = torch.ones(self.num_envs, dtype=torch.bool, device=self.device)
        for name in ("qpos", "qvel", "qacc"):
            value = self.field(name)
            ok &= (torch.isfinite(value) & (value.abs() <= _MAXVAL)).all(dim=1)
        return ~ok

    def ray(self, pnt, vec, geomgroup, flg_static, bodyexclude):
        mjw = self.mjw
        n, nray = pnt.shape[:2]
        pnt = pnt.to(self.device, torch.float32).contiguous()
        vec = vec.to(self.device, torch.float32).contiguous()
        dist = torch.empty((n, nray), dtype=torch.float32, device=self.device)
        geomid = torch.empty((n, nray), dtype=torch.int32, device=self.device)
        normal = torch.empty((n, nray, 3), dtype=torch.float32, device=self.device)
        exclude = torch.full((nray,), bodyexclude, dtype=torch.int32, device=self.device)
        from mujoco_warp._src.types import vec6

        # MuJoCo Warp: a group is skipped where its flag is 0; all -1 means every group.
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

    def get_data(self, env_id: int, data: mujoco.MjData | None = None) -> mujoco.MjData:
        model = self.get_model(env_id)
        if data is None:
            data = mujoco.MjData(model)
        for name in STATE_FIELDS:
            if name == "time":
                continue
            getattr(data, name)[:] = (
                self.field(name)[env_id].detach().cpu().numpy().reshape(getattr(data, name).shape)
            )
        data.time = float(self._time[env_id])
        mujoco.mj_forward(model, data)
        return data

    def get_model(self, env_id: int, model: mujoco.MjModel | None = None) -> mujoco.MjModel:
        if model is None:
            model = copy.copy(self.host_model)
        for name in self._per_world:
            value = getattr(self.m, name)[env_id].numpy()  # this world's row only
            host = getattr(model, name)
            flat = value.reshape(-1)
            if host.size == 0:
                continue
            if flat.size < host.size:
                raise ValueError(f"Model field '{name}': {flat.size} values for {host.shape}.")
            # MuJoCo Warp pads some rows (eq_data: 12 columns for mjNEQDATA = 11).
            width = host.shape[-1] if host.ndim > 1 else 1
            rows = value.reshape(host.shape[0], -1) if host.ndim > 1 else value.reshape(-1, 1)
            host[...] = rows[:, :width].reshape(host.shape)
        return model

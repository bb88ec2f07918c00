"""`Simulation`: `num_envs` worlds of one compiled MuJoCo model behind torch views."""

from __future__ import annotations

import copy

import mujoco
import numpy as np
import torch

from mjlab.sim.sim_cfg import SimulationCfg
from mjlab.sim.state_fields import MAXVAL, STATE_FIELDS
from mjlab.utils.env_ids import resolve_env_ids
from mjlab.utils.nan_guard import NanGuard

# Fields whose views are reshaped to the natural (num_envs, n, 3, 3) matrix layout.
_MATRIX_FIELDS = {"xmat", "ximat", "geom_xmat", "site_xmat", "cam_xmat"}


class SimData:
    """Torch views of the batched MjData, all shaped (num_envs, ...).

    State fields (`qpos`, `qvel`, `act`, `ctrl`, `qfrc_applied`, `xfrc_applied`, `mocap_pos`,
    `mocap_quat`, `time`) are writable in place: `sim.data.qpos[env_ids] = ...` takes effect on the
    next `step` or `forward`. Every other field (`xpos`, `xquat` wxyz, `xmat` (.., 3, 3), `cvel`
    (rot:lin, about the subtree com), `subtree_com`, `site_xpos`, `sensordata`, `qacc`,
    `actuator_force`, `cfrc_ext`, ...) is an output the simulation overwrites on every call; writes
    to it are lost.

    Which outputs are current after `Simulation.step`: position- and velocity-dependent fields
    (kinematics, `cvel`, `subtree_com`, site/geom poses, position and velocity sensors) describe
    the new state; acceleration-dependent fields (`qacc`, `actuator_force`, `cfrc_ext`,
    acceleration/force/touch/contact sensors) describe the last physics substep.

    dtype: float64 on the C MuJoCo backend, float32 on MuJoCo Warp, except `time`, which is
    float64 on both (a float32 clock drifts by ~5 ms per 1000 steps of 0.005 s at t = 1000 s). Views are
    created on first access and stay valid for the life of the simulation.

    Both backends keep this contract; `tests/test_backend_parity.py` checks it.
    """

    def __init__(self, backend) -> None:
        object.__setattr__(self, "_backend", backend)
        object.__setattr__(self, "_columns", {})

    def __getattr__(self, name: str) -> torch.Tensor:
        # Called on a field's first read only: its view is then an instance attribute.
        if name.startswith("_"):
            raise AttributeError(name)
        view = self._backend.field(name)
        if name in _MATRIX_FIELDS:
            view = view.view(*view.shape[:2], 3, 3)
        object.__setattr__(self, name, view)
        return view

    def columns(self, name: str, sel: slice | torch.Tensor) -> torch.Tensor:
        """`<name>[:, sel]`, some columns of a field, (num_envs, k, ...). For a slice it is a
        view, made once and kept (like the field's own view it stays valid); an index tensor
        gathers a copy on each call."""
        if not isinstance(sel, slice):
            return getattr(self, name)[:, sel]
        key = (name, sel.start, sel.stop, sel.step)
        view = self._columns.get(key)
        if view is None:
            with torch.inference_mode(False):  # a plain view, readable in and out of rollouts
                view = self._columns[key] = getattr(self, name)[:, sel]
        return view

    def __setattr__(self, name: str, value) -> None:
        if name not in STATE_FIELDS:
            raise AttributeError(
                f"sim.data.{name} is an output recomputed by every call; write a state field "
                f"({', '.join(STATE_FIELDS)}) instead."
            )
        view = getattr(self, name)
        view.copy_(torch.as_tensor(value, dtype=view.dtype, device=view.device).expand_as(view))


class Simulation:
    """`num_envs` copies of one MuJoCo model, stepped together.

    Args:
        num_envs: number of worlds, >= 1.
        cfg: simulation config; `cfg.mujoco` is written into the compiled model.
        model: a compiled `mujoco.MjModel` (copied, then configured) or a `mujoco.MjSpec`
            (compiled here).
        device: "cpu" or a CUDA device. Backend "auto" picks C MuJoCo on CPU, MuJoCo Warp on CUDA.

    Raises:
        ValueError: num_envs < 1, or a backend that cannot run on `device`.
    """

    _snapshot_exclude = ("data", "_backend", "state_count", "nan_guard", "pre_substep_hooks")
    """Not in an env's `get_state` walk: the physics state is `get_state` below, and the data
    views are recomputed from it by the next call (`state_count` only keys caches; the NaN
    guard's buffer is a debugging record, not state)."""

    def __init__(
        self,
        num_envs: int,
        cfg: SimulationCfg,
        model: mujoco.MjModel | mujoco.MjSpec,
        device: str | torch.device = "cpu",
    ):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}.")
        self.cfg = cfg
        self.num_envs = num_envs
        self.device = torch.device(device)
        if isinstance(model, mujoco.MjSpec):
            mj_model = model.compile()
        elif isinstance(model, mujoco.MjModel):
            mj_model = copy.copy(model)  # configuring must not touch the caller's model
        else:
            raise TypeError(f"model must be a mujoco.MjModel or mujoco.MjSpec, got {type(model)}.")
        cfg.mujoco.apply(mj_model)
        self.mj_model: mujoco.MjModel = mj_model
        """The compiled host model (shared options; per-world fields live in the backend)."""

        backend = cfg.backend
        if backend == "auto":
            backend = "warp" if self.device.type == "cuda" else "mujoco"
        if backend == "mujoco":
            if self.device.type != "cpu":
                raise ValueError(
                    f"Backend 'mujoco' (C MuJoCo) runs on the CPU but device is '{self.device}'. "
                    "Use device='cpu', or backend='warp' (or 'auto') for CUDA."
                )
            from mjlab.sim.backend_mujoco import MujocoBatchBackend

            self._backend = MujocoBatchBackend(mj_model, num_envs, cfg)
        else:
            from mjlab.sim.backend_warp import WarpBackend

            self._backend = WarpBackend(mj_model, num_envs, cfg, self.device)
        self.backend: str = backend
        """The backend in use: "mujoco" or "warp"."""
        self.data = SimData(self._backend)
        self.state_count = 0
        """Counts the calls that rewrite the outputs (`step`, `forward`, `reset`, `set_state`):
        a cache of quantities derived from `data` is current while this and the `_version` of
        the state views it read (`qpos`, `qvel`: torch bumps it on every in-place write) are
        unchanged (`mjlab.entity.EntityData` caches its derived values this way)."""
        self.diverged = torch.zeros(num_envs, dtype=torch.bool, device=self.device)
        """(num_envs,) bool: worlds that went non-finite or that MuJoCo reset for instability
        since their last `reset`, in any step (the first after a reset included). The env
        resets them and counts them in its logs."""
        self._expanded: dict[str, torch.Tensor] = {}
        self.nan_guard: NanGuard | None = (
            NanGuard(cfg.nan_guard, self, STATE_FIELDS) if cfg.nan_guard.enabled else None
        )
        """The NaN guard (`SimulationCfg.nan_guard`), None when it is off."""
        self.pre_substep_hooks: list = []
        """Callables run before every physics step (entities with explicit or delayed
        actuators); empty: `step` runs the nstep substeps as one backend call."""

    # ------------------------------------------------------------------------------------------
    @property
    def physics_dt(self) -> float:
        """Physics timestep, s."""
        return float(self.mj_model.opt.timestep)

    def step(self, nstep: int = 1) -> None:
        """Advance every world by `nstep` physics steps.

        Worlds that diverge are flagged in `self.diverged`; the others are unaffected (worlds are
        independent). No per-world Python work and no host-device copies.
        """
        guard = self.nan_guard
        if guard is not None:
            guard.record(nstep)
        if not self.pre_substep_hooks:
            self._backend.step(nstep)
        else:  # explicit or delayed actuators: their ctrl is recomputed before every substep
            for _ in range(nstep):
                for hook in self.pre_substep_hooks:
                    hook()
                self._backend.step(1)
        self.state_count += 1
        if self.cfg.check_divergence or guard is not None:
            newly = self._backend.newly_diverged()
            if newly.device != self.diverged.device:
                newly = newly.to(self.diverged.device, non_blocking=True)
            if self.cfg.check_divergence:
                self.diverged |= newly
            if guard is not None:
                guard.check(newly)

    def flag_invalid_state(self, env_ids: torch.Tensor | np.ndarray | None = None) -> None:
        """Flag in `diverged` the worlds `env_ids` (None: all) whose qpos or qvel is NaN/Inf or
        beyond 1e10 (mjMAXVAL, the bound of mj_checkPos/Vel).

        Call it after writing a state and before `forward`: C MuJoCo's forward would reset
        such a world to the model defaults (a reset event that wrote an absurd velocity, a NaN
        state), and `step` would flag it only after the physics ran from those defaults; this
        flags it at once. Tensor operations only: no host sync.
        """
        bad = torch.zeros(self.num_envs, dtype=torch.bool, device=self.device)
        for name in ("qpos", "qvel"):
            value = getattr(self.data, name)
            bad |= ~(torch.isfinite(value) & (value.abs() <= MAXVAL)).all(dim=1)
        if env_ids is None:
            self.diverged |= bad
        else:
            ids = torch.as_tensor(env_ids, device=self.device, dtype=torch.long)
            self.diverged[ids] |= bad[ids]

    def forward(self, env_ids: torch.Tensor | np.ndarray | None = None) -> None:
        """Recompute derived quantities (mj_forward) of the worlds `env_ids` (None: all) from their
        current state; the other worlds' outputs are left as they were."""
        self._backend.forward(self._ids(env_ids))
        self.state_count += 1

    def reset(
        self,
        env_ids: torch.Tensor | np.ndarray | None = None,
        keyframe: int = -1,
        forward: bool = True,
    ) -> None:
        """Reset worlds to the model defaults (`keyframe=-1`) or a keyframe and clear their
        divergence flag. With `forward=False`, derived quantities are left for a later
        `forward()` (reset, write the state, then forward once)."""
        if not -1 <= keyframe < self.mj_model.nkey:
            raise ValueError(f"keyframe {keyframe} out of range: model has {self.mj_model.nkey}.")
        ids = self._ids(env_ids)
        self._backend.reset(ids, keyframe, forward)
        self.state_count += 1
        if ids is None:
            self.diverged.zero_()
        else:
            self.diverged[torch.as_tensor(ids, device=self.device, dtype=torch.long)] = False

    def expand_model_field(self, name: str) -> torch.Tensor:
        """Give a model field per-world values for domain randomization.

        Args:
            name: an MjModel array field, e.g. "geom_friction", "body_mass", "dof_damping",
                "actuator_gainprm", "body_ipos".

        Returns:
            A live, writable (num_envs, ...) view of the per-world values; writes take effect on
            the next call. After writing a field that derived constants depend on (masses,
            inertias, armature, ...), call `set_const()`.
        """
        view = self._expanded.get(name)
        if view is None:
            view = self._expanded[name] = self._backend.expand(name)
        return view

    def set_const(self, env_ids: torch.Tensor | np.ndarray | None = None) -> None:
        """Recompute derived model constants (mj_setConst: `body_subtreemass`,
        `body_invweight0`, `dof_invweight0`, `actuator_acc0`, ...) after per-world field writes.

        Each world in `env_ids` (None: all) gets constants derived from its own fields (masses,
        inertias, centres of mass, armature); the other worlds keep theirs. On MuJoCo Warp every
        world is recomputed (from its own fields, so unchanged worlds get the same values).
        """
        self._backend.set_const(self._ids(env_ids))
        self.state_count += 1  # MuJoCo Warp recomputes outputs here

    def ray(
        self,
        pnt: torch.Tensor,
        vec: torch.Tensor,
        geomgroup: tuple[int, ...] | None = None,
        flg_static: bool = True,
        bodyexclude: int = -1,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Cast rays in every world (mj_ray).

        Args:
            pnt: (num_envs, nray, 3) ray origins, world frame, m.
            vec: (num_envs, nray, 3) ray directions, world frame (the distance is in units of
                |vec|).
            geomgroup: 6 flags of geom groups to include, or None for all.
            flg_static: include static (world body) geoms.
            bodyexclude: a body id whose geoms are ignored, or -1.

        Returns:
            dist (num_envs, nray), -1 for a miss; geomid (num_envs, nray), -1 for a miss.
        """
        dist, geomid = self._backend.ray(pnt, vec, geomgroup, flg_static, bodyexclude)
        return dist.to(self.device), geomid.to(self.device)

    def ray_caster(self, nray: int, geomgroup: tuple[int, ...] | None = None, bodyexclude=None):
        """A reusable caster of `nray` rays per world that also returns hit normals.

        Args:
            nray: rays per world.
            geomgroup: 6 flags of geom groups to include, or None for all.
            bodyexclude: (nray,) int body id whose geoms each ray ignores (-1: none); None: -1
                for every ray.

        Returns:
            A callable ``(pnt, vec) -> (dist, normal)``: pnt and vec (num_envs, nray, 3) world
            origins and directions (m); dist (num_envs, nray) float32, -1 for a miss; normal
            (num_envs, nray, 3) float32 world surface normal at the hit (0 for a miss). C
            MuJoCo casts on the host (a device round trip on CUDA tensors); MuJoCo Warp casts
            into buffers allocated once, without host transfers.
        """
        from mjlab.sim.ray_caster import CMujocoRayCaster, WarpRayCaster

        exclude = np.full(nray, -1, np.int32) if bodyexclude is None else np.asarray(bodyexclude)
        exclude = exclude.astype(np.int32)
        if exclude.shape != (nray,):
            raise ValueError(f"ray_caster: bodyexclude has shape {exclude.shape}; need ({nray},).")
        if self.backend == "warp":
            return WarpRayCaster(self, nray, geomgroup, exclude)
        return CMujocoRayCaster(self, geomgroup, exclude)

    def get_state(self) -> dict[str, torch.Tensor]:
        """A copy of every world's physics state: what the next `step` starts from.

        C MuJoCo: the batch's state rows, mjSTATE_INTEGRATION (time, qpos, qvel, act, history,
        qacc_warmstart, ctrl, applied forces, mocap, eq_active, userdata, plugin state), one
        float64 row per world, key "state". MuJoCo Warp: the same components by field name
        (state fields, `qacc_warmstart`, `eq_active`, `userdata`, `history`, `plugin_state`). The solver's warm start is included, so a restored world
        steps bit for bit as the original did (C MuJoCo).
        """
        return self._backend.get_state()

    def set_state(self, state: dict[str, torch.Tensor]) -> None:
        """Write a `get_state` copy back (same model, same num_envs, same backend). Derived
        quantities are recomputed by the next `step` or `forward`.

        Raises:
            ValueError: the state has another shape (another model or num_envs), or keys of
                the other backend.
        """
        self.check_state(state)
        self._backend.set_state(state)
        self.state_count += 1

    def check_state(self, state: dict[str, torch.Tensor]) -> None:
        """Raise ValueError unless `set_state(state)` fits this simulation (nothing is written)."""
        try:
            self._backend.check_state(state)
        except (KeyError, AttributeError) as err:
            raise ValueError(
                f"Saved physics state does not fit the '{self.backend}' backend ({err})."
            ) from None

    def get_data(self, env_id: int, data: mujoco.MjData | None = None) -> mujoco.MjData:
        """A host MjData of world `env_id` with derived quantities computed (for rendering).

        `data`: an MjData of `mj_model` to write into (C MuJoCo: no allocation, a copy of the
        world's persistent MjData); None for a new one.
        """
        return self._backend.get_data(env_id, data)

    def get_model(self, env_id: int, model: mujoco.MjModel | None = None) -> mujoco.MjModel:
        """A host `MjModel` of world `env_id`: the shared model with that world's randomized
        fields and its derived constants written in (rendering, export, inspection). Writing
        to it does not change the simulation.

        `model`: a copy of `mj_model` to write into (C MuJoCo: the arrays are written, the
        assets shared; cheap enough to call per world and frame); None for a new one.
        """
        return self._backend.get_model(env_id, model)

    @property
    def warp_model_data(self):
        """MuJoCo Warp's device `(Model, Data)`, for code that calls `mujoco_warp` directly (the
        camera renderer). Per-world fields given by `expand_model_field` are in the Model.

        Raises:
            ValueError: the backend is not "warp".
        """
        if self.backend != "warp":
            raise ValueError(f"warp_model_data needs backend 'warp'; this one is '{self.backend}'.")
        return self._backend.m, self._backend.d

    def _ids(self, env_ids) -> np.ndarray | None:
        if env_ids is None:
            return None
        ids = resolve_env_ids(env_ids, self.num_envs, self.device)
        if self.backend == "warp":
            return ids  # stays on device
        return ids.cpu().numpy()

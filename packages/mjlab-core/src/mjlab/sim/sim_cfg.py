"""Configuration of the physics: MuJoCo options and the batched simulation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import mujoco

from mjlab.utils.config import Config, check_int
from mjlab.utils.nan_guard import NanGuardCfg

_INTEGRATORS = {
    "euler": mujoco.mjtIntegrator.mjINT_EULER,
    "rk4": mujoco.mjtIntegrator.mjINT_RK4,
    "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
    "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST,
}
_CONES = {"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL, "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}
_JACOBIANS = {
    "auto": mujoco.mjtJacobian.mjJAC_AUTO,
    "dense": mujoco.mjtJacobian.mjJAC_DENSE,
    "sparse": mujoco.mjtJacobian.mjJAC_SPARSE,
}
_SOLVERS = {
    "pgs": mujoco.mjtSolver.mjSOL_PGS,
    "cg": mujoco.mjtSolver.mjSOL_CG,
    "newton": mujoco.mjtSolver.mjSOL_NEWTON,
}


def _flag_bits(names: tuple[str, ...], enum: type, prefix: str, field_name: str) -> int:
    bits = 0
    valid = {
        key[len(prefix) :].lower(): int(member)
        for key, member in enum.__members__.items()
        if key.startswith(prefix)
    }
    for name in names:
        if name.lower() not in valid:
            raise ValueError(
                f"MujocoCfg.{field_name}: unknown flag '{name}'. Valid flags: {sorted(valid)}."
            )
        bits |= valid[name.lower()]
    return bits


@dataclass(kw_only=True)
class MujocoCfg(Config):
    """MuJoCo physics options, written into the compiled model's `opt` (MuJoCo doc: mjOption)."""

    timestep: float = 0.005
    """Physics step `physics_dt`, s."""
    integrator: Literal["euler", "rk4", "implicit", "implicitfast"] = "implicitfast"
    """Numerical integrator. implicitfast is stable with PD actuators at large timesteps."""
    cone: Literal["pyramidal", "elliptic"] = "pyramidal"
    """Friction cone approximation."""
    jacobian: Literal["auto", "dense", "sparse"] = "auto"
    """Constraint Jacobian and inertia matrix layout: "dense", "sparse", or "auto" (MuJoCo's
    default: sparse when the model has 60 or more degrees of freedom, dense below). A layout
    changes the cost and the floating-point rounding of a step, not the model."""
    solver: Literal["pgs", "cg", "newton"] = "newton"
    """Constraint solver."""
    iterations: int = 10
    """Maximum constraint solver iterations."""
    ls_iterations: int = 20
    """Maximum line-search iterations of the CG/Newton solvers."""
    tolerance: float = 1e-8
    """Solver early-termination tolerance."""
    ls_tolerance: float = 0.01
    """Line-search tolerance."""
    ccd_iterations: int = 35
    """Maximum iterations of the convex collision detection (GJK/EPA of mesh, cylinder, box
    pairs handled by the general convex collider), >= 1; MuJoCo's default is 35."""
    impratio: float = 1.0
    """Ratio of frictional to normal constraint impedance (elliptic cones)."""
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    """Gravitational acceleration in the world frame, m/s^2."""
    disableflags: tuple[str, ...] = ()
    """MuJoCo disable flags by name without prefix, e.g. ("warmstart", "contact")."""
    enableflags: tuple[str, ...] = ()
    """MuJoCo enable flags by name without prefix, e.g. ("energy",)."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid (called at construction
        and by `mjlab.utils.config.validate_config` when an env is built)."""
        if not isinstance(self.timestep, (int, float)) or not self.timestep > 0:
            raise ValueError(f"MujocoCfg.timestep must be a number > 0 s, got {self.timestep!r}.")
        for name, table in (
            ("integrator", _INTEGRATORS),
            ("cone", _CONES),
            ("solver", _SOLVERS),
        ):
            value = getattr(self, name)
            if value not in table:
                raise ValueError(f"MujocoCfg.{name}='{value}' is not one of {sorted(table)}.")
        if self.jacobian not in _JACOBIANS:
            raise ValueError(
                f"MujocoCfg.jacobian='{self.jacobian}' is not one of {sorted(_JACOBIANS)}."
            )
        if self.iterations < 1 or self.ls_iterations < 1:
            raise ValueError("MujocoCfg.iterations and ls_iterations must be >= 1.")
        check_int(self.ccd_iterations, "MujocoCfg.ccd_iterations", 1, "maximum CCD iterations")
        if len(self.gravity) != 3:
            raise ValueError(f"MujocoCfg.gravity must have 3 components, got {self.gravity}.")
        # Fail now, not at compile time, on a misspelled flag.
        _flag_bits(self.disableflags, mujoco.mjtDisableBit, "mjDSBL_", "disableflags")
        _flag_bits(self.enableflags, mujoco.mjtEnableBit, "mjENBL_", "enableflags")

    def apply(self, model: mujoco.MjModel) -> None:
        """Write these options into `model.opt` (in place)."""
        opt = model.opt
        opt.timestep = self.timestep
        opt.integrator = _INTEGRATORS[self.integrator]
        opt.cone = _CONES[self.cone]
        opt.jacobian = _JACOBIANS[self.jacobian]
        opt.solver = _SOLVERS[self.solver]
        opt.iterations = self.iterations
        opt.ls_iterations = self.ls_iterations
        opt.tolerance = self.tolerance
        opt.ls_tolerance = self.ls_tolerance
        opt.ccd_iterations = self.ccd_iterations
        opt.impratio = self.impratio
        opt.gravity[:] = self.gravity
        opt.disableflags = _flag_bits(
            self.disableflags, mujoco.mjtDisableBit, "mjDSBL_", "disableflags"
        )
        opt.enableflags = _flag_bits(
            self.enableflags, mujoco.mjtEnableBit, "mjENBL_", "enableflags"
        )


BROADPHASE_TYPES = ("nxn", "sap_tile", "sap_segmented")
"""`SimulationCfg.broadphase` values: MuJoCo Warp's `BroadphaseType` members, lower case."""
BROADPHASE_FILTERS = ("plane", "sphere", "aabb", "obb")
"""`SimulationCfg.broadphase_filter` names: MuJoCo Warp's `BroadphaseFilter` flags, lower
case."""


@dataclass(kw_only=True)
class SimulationCfg(Config):
    """How `num_envs` copies of one model are simulated."""

    mujoco: MujocoCfg = field(default_factory=MujocoCfg)
    """Physics options applied to the compiled model."""
    backend: Literal["auto", "mujoco", "warp"] = "auto"
    """"mujoco": C MuJoCo batch thread pool (default on CPU); "warp": MuJoCo Warp (default on
    CUDA, also runs on the Warp CPU device, slowly); "auto": choose by device."""
    nthread: int = 0
    """Threads of the C MuJoCo batch; 0 uses every CPU core."""
    nconmax: int | None = None
    """Warp: contacts allocated per world (None: MuJoCo Warp's default)."""
    njmax: int | None = None
    """Warp: constraint rows allocated per world (None: MuJoCo Warp's default)."""
    contact_sensor_maxmatch: int | None = None
    """Warp: most contacts a contact sensor considers per world when it matches contacts to
    its criteria; contacts beyond it are ignored (MuJoCo Warp warns of the overflow). None:
    MuJoCo Warp's value (the model's `<numeric name="contact_sensor_maxmatch">`, else 64).
    C MuJoCo has no such limit: no effect there."""
    broadphase: Literal["nxn", "sap_tile", "sap_segmented"] | None = None
    """Warp: broadphase collision algorithm: "nxn" (every candidate geom pair), "sap_tile" or
    "sap_segmented" (sweep and prune with a tile or a segmented sort). None: MuJoCo Warp's
    choice by the number of candidate pairs (nxn below 250 000). C MuJoCo has its own
    broadphase (sweep and prune): no effect there."""
    broadphase_filter: tuple[Literal["plane", "sphere", "aabb", "obb"], ...] | None = None
    """Warp: bounding-volume tests a candidate geom pair must pass before the narrowphase:
    "plane" (bounding sphere against a plane), "sphere" (bounding spheres), "aabb"
    (axis-aligned boxes), "obb" (oriented boxes); () runs none. None: MuJoCo Warp's default
    ("plane", "sphere", "obb"). Filters only cull pairs that cannot touch, so contacts are
    the same; the cost differs. C MuJoCo: no effect (its midphase is fixed)."""
    ls_parallel: bool | None = None
    """Warp: MuJoCo Warp's parallel line search. MuJoCo Warp removed the option in 3.9.1
    (its line search chooses its own scheme), so with the MuJoCo Warp installed here a
    value other than None has no effect and building a warp simulation warns so. C MuJoCo:
    no effect. None: nothing asked."""
    use_cuda_graph: bool = True
    """Warp on CUDA: capture step/forward in CUDA graphs and replay them."""
    deterministic: bool = False
    """Warp: MuJoCo Warp's deterministic mode (`opt.deterministic = DeterminismType.ALL`:
    stable contact order, canonical constraint rows, order-invariant atomic reductions), for GPU
    runs that repeat; its speed cost on a GPU is not measured here. C MuJoCo is deterministic
    anyway."""
    check_divergence: bool = True
    """After each step, flag worlds whose state is non-finite or that MuJoCo reset for
    instability (BADQPOS/BADQVEL/BADQACC warnings)."""
    nan_guard: NanGuardCfg = field(default_factory=NanGuardCfg)
    """Debugging aid, off by default: keep the last states and write them to disk for the
    first worlds that diverge (the divergence `check_divergence` flags), see
    `mjlab.utils.nan_guard`. Enabled, it costs a copy of the state and a host sync per step."""

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the field when a value is invalid (called at construction
        and by `mjlab.utils.config.validate_config` when an env is built)."""
        if self.backend not in ("auto", "mujoco", "warp"):
            raise ValueError(
                f"SimulationCfg.backend='{self.backend}' is not one of 'auto', 'mujoco', 'warp'."
            )
        if self.nthread < 0:
            raise ValueError(
                f"SimulationCfg.nthread must be >= 0 (0: all cores), got {self.nthread}."
            )
        for name in ("nconmax", "njmax"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"SimulationCfg.{name} must be >= 1 or None, got {value}.")
        if self.contact_sensor_maxmatch is not None:
            check_int(
                self.contact_sensor_maxmatch,
                "SimulationCfg.contact_sensor_maxmatch",
                1,
                "or None for MuJoCo Warp's default",
            )
        if self.broadphase is not None and self.broadphase not in BROADPHASE_TYPES:
            raise ValueError(
                f"SimulationCfg.broadphase='{self.broadphase}' is not one of "
                f"{list(BROADPHASE_TYPES)} or None (MuJoCo Warp's choice)."
            )
        if self.broadphase_filter is not None:
            if isinstance(self.broadphase_filter, str) or not isinstance(
                self.broadphase_filter, (tuple, list)
            ):
                raise ValueError(
                    f"SimulationCfg.broadphase_filter must be a tuple of names from "
                    f"{list(BROADPHASE_FILTERS)} or None, got {self.broadphase_filter!r}."
                )
            unknown = [f for f in self.broadphase_filter if f not in BROADPHASE_FILTERS]
            if unknown:
                raise ValueError(
                    f"SimulationCfg.broadphase_filter: unknown filter(s) {unknown}. Valid "
                    f"filters: {list(BROADPHASE_FILTERS)}."
                )
        if self.ls_parallel is not None and not isinstance(self.ls_parallel, bool):
            raise ValueError(
                f"SimulationCfg.ls_parallel must be True, False or None, got {self.ls_parallel!r}."
            )
        if not isinstance(self.nan_guard, NanGuardCfg):
            raise ValueError(
                f"SimulationCfg.nan_guard must be a NanGuardCfg, got {self.nan_guard!r}."
            )

"""Domain-randomization terms `(env, env_ids, ...) -> None` over MjModel fields.

Every term writes the rows `env_ids` of the per-world field view
(`Simulation.expand_model_field`) and only the selected elements and axes; values are computed
from the compiled-model (default) values, so calling a term again re-draws rather than
compounds. Terms on fields that derived constants depend on (masses, inertias, body frames,
armature, qpos0) call `Simulation.set_const(env_ids)`.

The parameters the terms share (ranges, distribution, operation, axes, shared_random) are
described in the package docstring, `mjlab.envs.mdp.dr`.

Raises (all terms): ValueError for an unknown distribution/operation/axis name, or a
selection the entity does not have.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import mujoco
import numpy as np
import torch

from mjlab.envs.mdp.dr.core import (
    Distribution,
    Operation,
    Range,
    Ranges,
    axis_bounds,
    check_range,
    defaults,
    draw,
    env_index,
    global_ids,
    random_rotation,
    randomize_field,
)
from mjlab.managers.scene_entity_config import SceneEntityCfg

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

_ROBOT = SceneEntityCfg("robot")
__all__ = [
    "body_com_offset",
    "body_ipos",
    "body_mass",
    "body_pos",
    "body_quat",
    "cam_fovy",
    "cam_intrinsic",
    "cam_pos",
    "cam_quat",
    "dof_armature",
    "dof_damping",
    "dof_frictionloss",
    "effort_limits",
    "encoder_bias",
    "geom_friction",
    "geom_matid",
    "geom_pos",
    "geom_quat",
    "geom_rgba",
    "geom_size",
    "jnt_range",
    "jnt_stiffness",
    "joint_armature",
    "joint_damping",
    "joint_default_pos",
    "joint_friction",
    "joint_limits",
    "joint_stiffness",
    "light_ambient",
    "light_attenuation",
    "light_cutoff",
    "light_diffuse",
    "light_dir",
    "light_exponent",
    "light_pos",
    "light_specular",
    "mat_emission",
    "mat_rgba",
    "mat_shininess",
    "mat_specular",
    "mat_texid",
    "mat_texrepeat",
    "pair_friction",
    "pd_gains",
    "pseudo_inertia",
    "qpos0",
    "site_pos",
    "site_quat",
    "tendon_armature",
    "tendon_damping",
    "tendon_friction",
    "tendon_frictionloss",
    "tendon_stiffness",
]
Dist = Distribution | str
Op = Operation | str
Axes = Sequence[int | str] | None


def _ids(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg, kind: str, field: str):
    entity = env.scene[asset_cfg.name]
    return global_ids(
        getattr(entity, f"{kind}_ids_global"), getattr(asset_cfg, f"{kind}_ids"), kind, field
    )


def _joint_ids(env, asset_cfg, field) -> tuple[torch.Tensor, torch.Tensor]:
    """(entity-local joint indices, global joint ids) of the selected joints."""
    entity = env.scene[asset_cfg.name]
    local = torch.arange(len(entity.joint_ids_global))[asset_cfg.joint_ids].reshape(-1)
    return local, global_ids(entity.joint_ids_global, asset_cfg.joint_ids, "joint", field)


def _dof_ids(env, asset_cfg, field) -> torch.Tensor:
    _, jnt = _joint_ids(env, asset_cfg, field)
    return torch.as_tensor(env.sim.mj_model.jnt_dofadr[jnt.numpy()], dtype=torch.long)


_NAMES = {"dof": "joint", "joint": "joint"}


def by_pattern(env, env_ids, ranges, asset_cfg: SceneEntityCfg, kind: str, run) -> None:
    """`run(asset_cfg, ranges)`, or, for a {name regex: range} dict, once per regex with the
    selection narrowed to the matched elements."""
    if not (isinstance(ranges, Mapping) and ranges and isinstance(next(iter(ranges)), str)):
        run(asset_cfg, ranges)
        return
    names = f"{_NAMES.get(kind, kind)}_names"
    for pattern, r in ranges.items():
        sub = dataclasses.replace(asset_cfg, **{names: (pattern,)})
        sub.resolve(env.scene)
        run(sub, r)


def _field(
    field: str,
    kind: str,
    *,
    set_const: bool = False,
    default_axes: Sequence[int] | None = None,
    after=None,
):
    """The body shared by the plain field terms."""

    def one(env, env_ids, cfg, ranges, distribution, operation, axes, shared_random):
        if kind == "dof":
            ids = _dof_ids(env, cfg, field)
        elif kind == "joint":
            ids = _joint_ids(env, cfg, field)[1]
        else:
            ids = _ids(env, cfg, kind, field)
        randomize_field(
            env,
            env_ids,
            field,
            ids,
            ranges,
            distribution,
            operation,
            axes,
            shared_random,
            default_axes=default_axes,
            set_const=set_const,
        )
        if after is not None:
            after(env, env_ids, cfg)

    def run(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random):
        by_pattern(
            env,
            env_ids,
            ranges,
            asset_cfg,
            kind,
            lambda cfg, r: one(env, env_ids, cfg, r, distribution, operation, axes, shared_random),
        )

    return run


# -- geoms ----------------------------------------------------------------------------------
_geom_friction = _field("geom_friction", "geom", default_axes=(0,))
_geom_pos = _field("geom_pos", "geom")
_geom_size = _field("geom_size", "geom", after=lambda env, ids, cfg: _geom_bounds(env, ids, cfg))
_geom_rgba = _field("geom_rgba", "geom")


def geom_friction(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Friction coefficients of the selected geoms (`geom_friction`, (ngeom, 3): sliding,
    torsional, rolling). Default axes: sliding only. Explicit contact pairs use
    `pair_friction` instead (see `pair_friction`)."""
    _geom_friction(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def geom_pos(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Position of the selected geoms in their body frame (`geom_pos`, m)."""
    _geom_pos(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def geom_quat(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    roll_range: Range = (0.0, 0.0),
    pitch_range: Range = (0.0, 0.0),
    yaw_range: Range = (0.0, 0.0),
    distribution: Dist = "uniform",
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Orientation of the selected geoms in their body frame (`geom_quat`): the default times
    a random roll-pitch-yaw rotation (rad, body frame): q = q_rpy * q_default."""
    ids = _ids(env, asset_cfg, "geom", "geom_quat")
    random_rotation(
        env, env_ids, "geom_quat", ids, roll_range, pitch_range, yaw_range, distribution
    )


def geom_size(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "scale",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Size parameters of the selected geoms (`geom_size`, (ngeom, 3), m; meaning per geom
    type). The broad-phase bounds (`geom_rbound`, the half sizes of `geom_aabb`) are recomputed
    from the new sizes.

    Raises:
        ValueError: a selected geom is not a primitive (sphere, capsule, ellipsoid, cylinder,
            box): meshes, planes and height fields have no size to scale.
    """
    _geom_size(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def _geom_bounds(env, env_ids, cfg) -> None:
    """Bounding-sphere radius and local box half sizes of primitive geoms from `geom_size`
    (MuJoCo's user_mesh/user_objects.cc conventions)."""
    G = mujoco.mjtGeom
    ids = _ids(env, cfg, "geom", "geom_size")
    gtype = torch.as_tensor(env.sim.mj_model.geom_type[ids.numpy()])
    prim = torch.tensor(
        [
            int(t)
            for t in (
                G.mjGEOM_SPHERE,
                G.mjGEOM_CAPSULE,
                G.mjGEOM_ELLIPSOID,
                G.mjGEOM_CYLINDER,
                G.mjGEOM_BOX,
            )
        ]
    )
    bad = ~torch.isin(gtype, prim)
    if bad.any():
        names = [env.scene[cfg.name].geom_names[i] for i in torch.arange(len(ids))[bad].tolist()]
        raise ValueError(
            f"geom_size: geoms {names} are not primitives (sphere, capsule, ellipsoid, "
            "cylinder, box); narrow asset_cfg.geom_names to primitive geoms."
        )
    size = env.sim.expand_model_field("geom_size")
    rows = env_index(env, env_ids, size.device)
    r, c = rows[:, None], ids.to(size.device)[None, :]
    s = size[r, c].double()
    t = gtype.to(size.device)[None, :]
    x, y = s[..., 0], s[..., 1]
    is_ = {k: t == int(getattr(G, f"mjGEOM_{k}")) for k in ("SPHERE", "CAPSULE", "CYLINDER")}
    rbound = torch.where(
        is_["SPHERE"],
        x,
        torch.where(
            is_["CAPSULE"],
            x + y,
            torch.where(is_["CYLINDER"], torch.sqrt(x * x + y * y), s.norm(dim=-1)),
        ),
    )
    ellipsoid = t == int(G.mjGEOM_ELLIPSOID)
    rbound = torch.where(ellipsoid, s.amax(-1), rbound)
    half = torch.where(
        is_["SPHERE"][..., None],
        x[..., None].expand_as(s),
        torch.where(
            is_["CAPSULE"][..., None],
            torch.stack([x, x, x + y], -1),
            torch.where(is_["CYLINDER"][..., None], torch.stack([x, x, y], -1), s),
        ),
    )
    rb = env.sim.expand_model_field("geom_rbound")
    rb[r.to(rb.device), c.to(rb.device)] = rbound.to(rb.device, rb.dtype)
    aabb = env.sim.expand_model_field("geom_aabb")
    rr, cc = r.to(aabb.device), c.to(aabb.device)
    if aabb.dim() == 3:  # C MuJoCo: (ngeom, 6), centre then half sizes
        aabb[rr, cc, 3:6] = half.to(aabb.device, aabb.dtype)
    else:  # MuJoCo Warp: (ngeom, 2, 3)
        aabb[rr, cc, 1] = half.to(aabb.device, aabb.dtype)


def geom_rgba(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Colour of the selected geoms (`geom_rgba`, 4 components in [0, 1]; clamped)."""
    _geom_rgba(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)
    # Clamp the rows just written (colours outside [0, 1] are meaningless to the renderer).
    view = env.sim.expand_model_field("geom_rgba")
    rows = env_index(env, env_ids, view.device)
    ids = _ids(env, asset_cfg, "geom", "geom_rgba").to(view.device)
    view[rows[:, None], ids[None, :]] = view[rows[:, None], ids[None, :]].clamp(0.0, 1.0)


def geom_matid(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    asset_cfg: SceneEntityCfg = _ROBOT,
    shared_random: bool = False,
) -> None:
    """Material of the selected geoms (`geom_matid`): drawn uniformly from the entity's
    selected materials (`asset_cfg.material_ids`)."""
    geoms = _ids(env, asset_cfg, "geom", "geom_matid")
    mats = _ids(env, asset_cfg, "material", "geom_matid")
    _pick(env, env_ids, "geom_matid", geoms, mats, None, shared_random)


def _pick(env, env_ids, field, ids, choices, column, shared_random) -> None:
    """Write a uniformly chosen entry of `choices` into `field[env_ids, ids(, column)]`."""
    view = env.sim.expand_model_field(field)
    rows = env_index(env, env_ids, view.device)
    ids = ids.to(view.device)
    n = len(rows)
    u = draw(env, "uniform", 0.0, 1.0, (n, 1 if shared_random else len(ids)), view.device)
    k = (u * len(choices)).long().clamp(max=len(choices) - 1).expand(n, len(ids))
    value = choices.to(view.device)[k].to(view.dtype)
    if column is None:
        view[rows[:, None], ids[None, :]] = value
    else:
        view[rows[:, None], ids[None, :], column] = value


# -- bodies ---------------------------------------------------------------------------------
_body_mass = _field("body_mass", "body", set_const=True)
_body_ipos = _field("body_ipos", "body", set_const=True)
_body_pos = _field("body_pos", "body", set_const=True)


def body_mass(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "scale",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Mass of the selected bodies (`body_mass`, kg); the inertia tensors are kept (use
    `pseudo_inertia` for a consistent change). Derived constants (`body_subtreemass`, ...) are
    recomputed."""
    _body_mass(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def body_com_offset(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "add",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Centre of mass of the selected bodies in the body frame (`body_ipos`, m); derived
    constants are recomputed."""
    _body_ipos(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


body_ipos = body_com_offset


def body_pos(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "add",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Position of the selected bodies in their parent's frame (`body_pos`, m); derived
    constants are recomputed. A free-floating root's `body_pos` has no effect."""
    _body_pos(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def body_quat(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    roll_range: Range = (0.0, 0.0),
    pitch_range: Range = (0.0, 0.0),
    yaw_range: Range = (0.0, 0.0),
    distribution: Dist = "uniform",
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Orientation of the selected bodies in their parent's frame (`body_quat`): a random
    roll-pitch-yaw rotation (rad, parent frame) times the default, q = q_rpy * q_default;
    derived constants are recomputed."""
    ids = _ids(env, asset_cfg, "body", "body_quat")
    random_rotation(
        env,
        env_ids,
        "body_quat",
        ids,
        roll_range,
        pitch_range,
        yaw_range,
        distribution,
        set_const=True,
    )


def pseudo_inertia(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    alpha_range: Range = (0.0, 0.0),
    d_range: Range | None = None,
    d1_range: Range | None = None,
    d2_range: Range | None = None,
    d3_range: Range | None = None,
    s12_range: Range = (0.0, 0.0),
    s13_range: Range = (0.0, 0.0),
    s23_range: Range = (0.0, 0.0),
    t_range: Range | None = None,
    t1_range: Range | None = None,
    t2_range: Range | None = None,
    t3_range: Range | None = None,
    distribution: Dist = "uniform",
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Physically consistent random change of the selected bodies' mass, centre of mass and
    rotational inertia, through the 4x4 pseudo-inertia matrix J (Wensing, Kim & Slotine,
    "Linear matrix inequalities for physically consistent inertial parameter identification",
    RA-L 2018) and the log-Cholesky parameters of Rucker & Wensing, "Smooth parameterizations
    in multivariate rigid-body dynamics", RA-L 2022:

        U = e^alpha [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]]
        J' = U J U^T   (J = L L^T, J' = (U L)(U L)^T)

    J' stays positive definite, so the result is a valid body for any draw (all zeros leave the
    body unchanged; mass and inertia scale by e^(2 alpha); t1..t3 shift the centre of mass, m). `d_range` / `t_range` apply to d1..d3 / t1..t3
    unless the per-index range is given. Writes `body_mass`, `body_ipos`, `body_inertia`,
    `body_iquat` and recomputes derived constants.
    """
    from mjlab.utils.math import matrix_from_quat, quat_from_matrix

    ids = _ids(env, asset_cfg, "body", "pseudo_inertia")
    d = d_range or (0.0, 0.0)
    t = t_range or (0.0, 0.0)
    names = [
        ("alpha_range", alpha_range),
        ("d1_range", d1_range or d),
        ("d2_range", d2_range or d),
        ("d3_range", d3_range or d),
        ("s12_range", s12_range),
        ("s13_range", s13_range),
        ("s23_range", s23_range),
        ("t1_range", t1_range or t),
        ("t2_range", t2_range or t),
        ("t3_range", t3_range or t),
    ]
    for name, r in names:
        check_range(f"pseudo_inertia: {name}", r)
    views = {f: env.sim.expand_model_field(f) for f in _INERTIAL}
    dev = views["body_mass"].device
    rows = env_index(env, env_ids, dev)
    ids = ids.to(dev)
    n, m = len(rows), len(ids)
    lo = torch.tensor([r[0] for _, r in names])
    hi = torch.tensor([r[1] for _, r in names])
    p = draw(env, distribution, lo, hi, (n, m, 10), dev).double()
    a, d1, d2, d3, s12, s13, s23, t1, t2, t3 = p.unbind(-1)
    zero = torch.zeros_like(a)
    U = (
        torch.stack(
            [
                torch.stack([d1.exp(), s12, s13, t1], -1),
                torch.stack([zero, d2.exp(), s23, t2], -1),
                torch.stack([zero, zero, d3.exp(), t3], -1),
                torch.stack([zero, zero, zero, zero + 1], -1),
            ],
            -2,
        )
        * a.exp()[..., None, None]
    )
    mass0 = defaults(env, "body_mass")[ids.cpu()].to(dev).double()
    com0 = defaults(env, "body_ipos")[ids.cpu()].to(dev).double()
    diag0 = defaults(env, "body_inertia")[ids.cpu()].to(dev).double()
    quat0 = defaults(env, "body_iquat")[ids.cpu()].to(dev).double()
    R0 = matrix_from_quat(quat0)
    inertia = R0 @ torch.diag_embed(diag0) @ R0.transpose(-1, -2)  # body frame, about the com
    eye = torch.eye(3, dtype=torch.float64, device=dev)
    sigma = 0.5 * inertia.diagonal(dim1=-2, dim2=-1).sum(-1)[..., None, None] * eye - inertia
    J = torch.zeros(m, 4, 4, dtype=torch.float64, device=dev)
    mc = mass0[:, None] * com0
    J[:, :3, :3] = sigma + mass0[:, None, None] * com0[:, :, None] * com0[:, None, :]
    J[:, :3, 3] = mc
    J[:, 3, :3] = mc
    J[:, 3, 3] = mass0
    Jn = U @ J @ U.transpose(-1, -2)
    mass = Jn[..., 3, 3]
    com = Jn[..., :3, 3] / mass[..., None]
    sig = Jn[..., :3, :3] - mass[..., None, None] * com[..., :, None] * com[..., None, :]
    inert = sig.diagonal(dim1=-2, dim2=-1).sum(-1)[..., None, None] * eye - sig
    evals, evecs = torch.linalg.eigh(inert)
    # A proper rotation: flip one axis where eigh returned a reflection.
    evecs[..., :, 2] *= torch.sign(torch.linalg.det(evecs))[..., None]
    iquat = quat_from_matrix(evecs)
    r, c = rows[:, None], ids[None, :]
    views["body_mass"][r, c] = mass.to(views["body_mass"].dtype)
    views["body_ipos"][r, c] = com.to(views["body_ipos"].dtype)
    views["body_inertia"][r, c] = evals.to(views["body_inertia"].dtype)
    views["body_iquat"][r, c] = iquat.to(views["body_iquat"].dtype)
    if n:
        env.sim.set_const(rows)


_INERTIAL = ("body_mass", "body_ipos", "body_inertia", "body_iquat")


# -- sites and cameras ----------------------------------------------------------------------
_site_pos = _field("site_pos", "site")
_cam_fovy = _field("cam_fovy", "camera")
_cam_intrinsic = _field("cam_intrinsic", "camera")
_cam_pos = _field("cam_pos", "camera")


def site_pos(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Position of the selected sites in their body frame (`site_pos`, m)."""
    _site_pos(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def site_quat(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    roll_range: Range = (0.0, 0.0),
    pitch_range: Range = (0.0, 0.0),
    yaw_range: Range = (0.0, 0.0),
    distribution: Dist = "uniform",
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Orientation of the selected sites in their body frame (`site_quat`): the default times a
    random roll-pitch-yaw rotation (rad, body frame): q = q_rpy * q_default."""
    ids = _ids(env, asset_cfg, "site", "site_quat")
    random_rotation(
        env, env_ids, "site_quat", ids, roll_range, pitch_range, yaw_range, distribution
    )


def cam_fovy(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Vertical field of view of the selected cameras (`cam_fovy`, degrees)."""
    _cam_fovy(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def cam_intrinsic(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Intrinsics of the selected cameras (`cam_intrinsic`, (ncam, 4): focal lengths x, y and
    principal point x, y, m on the sensor)."""
    _cam_intrinsic(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def cam_pos(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Position of the selected cameras in their body frame (`cam_pos`, m)."""
    _cam_pos(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def cam_quat(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    roll_range: Range = (0.0, 0.0),
    pitch_range: Range = (0.0, 0.0),
    yaw_range: Range = (0.0, 0.0),
    distribution: Dist = "uniform",
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Orientation of the selected cameras in their body frame (`cam_quat`): the default times
    a random roll-pitch-yaw rotation (rad, body frame): q = q_rpy * q_default."""
    ids = _ids(env, asset_cfg, "camera", "cam_quat")
    random_rotation(env, env_ids, "cam_quat", ids, roll_range, pitch_range, yaw_range, distribution)


# -- joints ---------------------------------------------------------------------------------
_dof_armature = _field("dof_armature", "dof", set_const=True)
_dof_damping = _field("dof_damping", "dof")
_dof_frictionloss = _field("dof_frictionloss", "dof")
_jnt_stiffness = _field("jnt_stiffness", "joint")


def _sync(env, asset_cfg, attr, field, env_ids) -> None:
    """Copy the new per-joint field values into `EntityData.<attr>` for those envs."""
    entity = env.scene[asset_cfg.name]
    local, _ = _joint_ids(env, asset_cfg, field)
    dofs = _dof_ids(env, asset_cfg, field)
    view = env.sim.expand_model_field(field)
    rows = env_index(env, env_ids, view.device)
    values = view[rows[:, None], dofs.to(view.device)[None, :]]
    target = getattr(entity.data, attr)
    dev = target.device
    target[rows.to(dev)[:, None], local.to(dev)[None, :]] = values.to(dev, target.dtype)


def joint_armature(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Armature (reflected rotor inertia) of the selected joints (`dof_armature`, kg m^2);
    `EntityData.joint_armature` follows; derived constants are recomputed."""
    _dof_armature(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)
    _sync(env, asset_cfg, "joint_armature", "dof_armature", env_ids)


dof_armature = joint_armature


def joint_damping(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Passive viscous damping of the selected joints (`dof_damping`, N m s/rad)."""
    _dof_damping(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


dof_damping = joint_damping


def joint_friction(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Dry friction loss of the selected joints (`dof_frictionloss`, N m)."""
    _dof_frictionloss(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


dof_frictionloss = joint_friction


def joint_stiffness(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Passive spring stiffness of the selected joints (`jnt_stiffness`, N m/rad)."""
    _jnt_stiffness(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


jnt_stiffness = joint_stiffness


def joint_limits(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Range of the selected joints (`jnt_range`, (njnt, 2): lower, upper; rad or m). Each
    bound is drawn on its own and the pair is then sorted, so lower <= upper always.
    `EntityData.joint_pos_limits` and `soft_joint_pos_limits` follow (soft limits keep the
    entity's `soft_joint_pos_limit_factor`). Only limited joints are affected in the physics."""

    def one(cfg: SceneEntityCfg, r) -> None:
        local, jnt = _joint_ids(env, cfg, "jnt_range")
        rows, _ = randomize_field(
            env,
            env_ids,
            "jnt_range",
            jnt,
            r,
            distribution,
            operation,
            axes,
            shared_random,
        )
        view = env.sim.expand_model_field("jnt_range")
        r, c = rows[:, None], jnt.to(view.device)[None, :]
        bounds = view[r, c].sort(dim=-1).values
        view[r, c] = bounds
        entity = env.scene[cfg.name]
        data = entity.data
        dev = data.joint_pos_limits.device
        limited = torch.as_tensor(
            env.sim.mj_model.jnt_limited[jnt.numpy()].astype(bool), device=dev
        )
        b = bounds.to(dev, torch.float32)
        inf = torch.tensor([-torch.inf, torch.inf], device=dev)
        b = torch.where(limited[None, :, None], b, inf)
        rr, cc = rows.to(dev)[:, None], local.to(dev)[None, :]
        data.joint_pos_limits[rr, cc] = b
        art = entity.cfg.articulation
        factor = art.soft_joint_pos_limit_factor if art else 1.0
        mid = b.mean(-1)
        half = (b[..., 1] - b[..., 0]) / 2 * factor
        soft = torch.stack([mid - half, mid + half], -1)
        data.soft_joint_pos_limits[rr, cc] = torch.where(limited[None, :, None], soft, inf)

    by_pattern(env, env_ids, ranges, asset_cfg, "joint", one)


jnt_range = joint_limits


def joint_default_pos(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "add",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Default (reference) position of the selected hinge/slide joints (`qpos0`, rad or m):
    the model's reference configuration and `EntityData.default_joint_pos` (what resets start
    from) for those envs. Derived constants are recomputed.

    Raises:
        ValueError: a selected joint is a ball joint (4 qpos values).
    """

    def one(cfg: SceneEntityCfg, r) -> None:
        local, jnt = _joint_ids(env, cfg, "qpos0")
        model = env.sim.mj_model
        if (model.jnt_type[jnt.numpy()] == mujoco.mjtJoint.mjJNT_BALL).any():
            raise ValueError(
                "joint_default_pos: ball joints are not supported; select hinge/slide."
            )
        adr = torch.as_tensor(model.jnt_qposadr[jnt.numpy()], dtype=torch.long)
        rows, value = randomize_field(
            env,
            env_ids,
            "qpos0",
            adr,
            r,
            distribution,
            operation,
            axes,
            shared_random,
            set_const=True,
        )
        data = env.scene[cfg.name].data
        dev = data.default_joint_pos.device
        data.default_joint_pos[rows.to(dev)[:, None], local.to(dev)[None, :]] = value[..., 0].to(
            dev, torch.float32
        )

    by_pattern(env, env_ids, ranges, asset_cfg, "joint", one)


qpos0 = joint_default_pos


# -- tendons --------------------------------------------------------------------------------
_tendon_armature = _field("tendon_armature", "tendon", set_const=True)
_tendon_damping = _field("tendon_damping", "tendon")
_tendon_frictionloss = _field("tendon_frictionloss", "tendon")
_tendon_stiffness = _field("tendon_stiffness", "tendon")


def tendon_armature(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Armature of the selected tendons (`tendon_armature`, kg); derived constants follow."""
    _tendon_armature(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def tendon_damping(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Damping of the selected tendons (`tendon_damping`, N s/m)."""
    _tendon_damping(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def tendon_friction(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Friction loss of the selected tendons (`tendon_frictionloss`, N)."""
    _tendon_frictionloss(
        env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random
    )


tendon_frictionloss = tendon_friction


def tendon_stiffness(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Stiffness of the selected tendons (`tendon_stiffness`, N/m)."""
    _tendon_stiffness(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


# -- lights and materials -------------------------------------------------------------------
_light_ambient = _field("light_ambient", "light")
_light_attenuation = _field("light_attenuation", "light")
_light_cutoff = _field("light_cutoff", "light")
_light_diffuse = _field("light_diffuse", "light")
_light_dir = _field("light_dir", "light")
_light_exponent = _field("light_exponent", "light")
_light_pos = _field("light_pos", "light")
_light_specular = _field("light_specular", "light")
_mat_emission = _field("mat_emission", "material")
_mat_rgba = _field("mat_rgba", "material")
_mat_shininess = _field("mat_shininess", "material")
_mat_specular = _field("mat_specular", "material")
_mat_texrepeat = _field("mat_texrepeat", "material")


def light_ambient(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Ambient colour of the selected lights (`light_ambient`, RGB)."""
    _light_ambient(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def light_attenuation(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Attenuation of the selected lights (`light_attenuation`: constant, linear, quadratic)."""
    _light_attenuation(
        env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random
    )


def light_cutoff(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Spot cutoff angle of the selected lights (`light_cutoff`, degrees)."""
    _light_cutoff(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def light_diffuse(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Diffuse colour of the selected lights (`light_diffuse`, RGB)."""
    _light_diffuse(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def light_dir(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Direction of the selected lights in their body frame (`light_dir`); the renderer normalizes it."""
    _light_dir(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def light_exponent(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Spot exponent of the selected lights (`light_exponent`)."""
    _light_exponent(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def light_pos(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Position of the selected lights in their body frame (`light_pos`, m)."""
    _light_pos(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def light_specular(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Specular colour of the selected lights (`light_specular`, RGB)."""
    _light_specular(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def mat_emission(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Emission of the selected materials (`mat_emission`)."""
    _mat_emission(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def mat_rgba(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Colour of the selected materials (`mat_rgba`, 4 components in [0, 1])."""
    _mat_rgba(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def mat_shininess(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Shininess of the selected materials (`mat_shininess`, [0, 1])."""
    _mat_shininess(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def mat_specular(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Specularity of the selected materials (`mat_specular`, [0, 1])."""
    _mat_specular(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def mat_texrepeat(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
) -> None:
    """Texture repetition of the selected materials (`mat_texrepeat`, (nmat, 2))."""
    _mat_texrepeat(env, env_ids, ranges, asset_cfg, distribution, operation, axes, shared_random)


def mat_texid(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    asset_cfg: SceneEntityCfg = _ROBOT,
    role: int | str = "rgb",
    shared_random: bool = False,
) -> None:
    """Texture of the selected materials for one texture role (`mat_texid[:, role]`, the
    mjNTEXROLE axis): drawn uniformly from the entity's selected textures
    (`asset_cfg.texture_ids`).

    Args:
        role: a `mujoco.mjtTextureRole` index or its name without the prefix ("rgb",
            "normal", "roughness", ...).

    Raises:
        ValueError: unknown role.
    """
    col = _texture_role(role)
    mats = _ids(env, asset_cfg, "material", "mat_texid")
    texs = _ids(env, asset_cfg, "texture", "mat_texid")
    _pick(env, env_ids, "mat_texid", mats, texs, col, shared_random)


def _texture_role(role: int | str) -> int:
    members = mujoco.mjtTextureRole.__members__
    limit = int(members["mjNTEXROLE"])
    if isinstance(role, str):
        roles = {
            k.removeprefix("mjTEXROLE_").lower(): int(v)
            for k, v in members.items()
            if k.startswith("mjTEXROLE_")
        }
        if role.lower() not in roles:
            raise ValueError(f"mat_texid: unknown texture role '{role}'; valid: {sorted(roles)}.")
        return roles[role.lower()]
    if not 0 <= int(role) < limit:
        raise ValueError(f"mat_texid: texture role {role} out of range [0, {limit}).")
    return int(role)


# -- contact pairs --------------------------------------------------------------------------
def pair_friction(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    ranges: Ranges,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "abs",
    axes: Axes = None,
    shared_random: bool = False,
    isotropic: bool = True,
) -> None:
    """Friction of the selected explicit contact pairs (`pair_friction`, (npair, 5): tangent 1,
    tangent 2, torsional, rolling 1, rolling 2). Default axes: tangent 1. Pair contacts ignore
    geom friction, so robots that touch the ground through `<pair>`s need this term.

    Args:
        isotropic: tangent 2 takes tangent 1's new value (and rolling 2 rolling 1's) wherever
            that axis was randomized, so the friction cone stays isotropic.
    """

    def one(cfg: SceneEntityCfg, r) -> None:
        ids = _ids(env, cfg, "pair", "pair_friction")
        rows, _ = randomize_field(
            env,
            env_ids,
            "pair_friction",
            ids,
            r,
            distribution,
            operation,
            axes,
            shared_random,
            default_axes=(0,),
        )
        if not isotropic:
            return
        view = env.sim.expand_model_field("pair_friction")
        sel, _, _ = axis_bounds("pair_friction", r, axes, 5, (0,))
        rr, cc = rows[:, None], ids.to(view.device)[None, :]
        for a, b in ((0, 1), (3, 4)):
            if a in sel:
                view[rr, cc, b] = view[rr, cc, a]

    by_pattern(env, env_ids, ranges, asset_cfg, "pair", one)


# -- actuators and encoders -----------------------------------------------------------------
def _position_actuators(env, asset_cfg, term: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(entity-local joint indices, actuator ids) of the selected actuated joints.

    Raises:
        ValueError: a selected joint's actuator is not a position (PD) servo.
    """
    entity = env.scene[asset_cfg.name]
    local, _ = _joint_ids(env, asset_cfg, term)
    acts = torch.as_tensor(entity.joint_actuator_ids)[local]
    keep = acts >= 0
    local, acts = local[keep], acts[keep]
    if len(acts) == 0:
        raise ValueError(f"{term}: none of the selected joints of '{asset_cfg.name}' is actuated.")
    model = env.sim.mj_model
    a = acts.numpy()
    gain, bias = model.actuator_gainprm[a], model.actuator_biasprm[a]
    ok = (model.actuator_biastype[a] == mujoco.mjtBias.mjBIAS_AFFINE) & (
        np.abs(bias[:, 1] + gain[:, 0]) < 1e-9
    )
    if not ok.all():
        bad = [entity.joint_names[int(j)] for j in local[torch.as_tensor(~ok)]]
        raise ValueError(
            f"{term}: joints {bad} are not driven by position (PD) actuators "
            "(gainprm[0] = -biasprm[1], affine bias); select position-actuated joints."
        )
    return local, acts


def _explicit_split(env, asset_cfg, params: tuple[str, ...]):
    """Split the selected joints between explicit actuators (torques computed in torch, e.g.
    `IdealPdActuator`, whose gains are (num_envs, n) tensors on the actuator) and the rest.

    Returns:
        ([(actuator, its columns, entity-local joints)], the other selected joints), or
        ([], None) when no explicit actuator drives a selected joint (selection unchanged).
    """
    entity = env.scene[asset_cfg.name]
    local = torch.arange(len(entity.joint_ids_global))[asset_cfg.joint_ids].reshape(-1).tolist()
    chosen, taken, parts = set(local), set(), []
    for act in getattr(entity, "actuators", ()):
        if not act.cfg._explicit or not all(p in act.param_names for p in params):
            continue
        cols = [i for i, j in enumerate(act.joint_ids) if j in chosen]
        if cols:
            joints = [act.joint_ids[i] for i in cols]
            parts.append((act, cols, joints))
            taken.update(joints)
    if not parts:
        return [], None
    return parts, [j for j in local if j not in taken]


def _explicit_nominal(act, name: str) -> torch.Tensor:
    """The actuator's configured (num_envs, n) values of `name`, kept at the first draw (the
    base of `scale` and `add`)."""
    kept = act.__dict__.setdefault("_dr_nominal", {})
    if name not in kept:
        kept[name] = getattr(act, name).clone()
    return kept[name]


def _narrowed(asset_cfg, joints: list[int]):
    sub = dataclasses.replace(asset_cfg)
    sub.joint_ids = list(joints)
    return sub


def pd_gains(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    kp_range: Range,
    kd_range: Range,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "scale",
) -> None:
    """Gains of the selected joints' position actuators: kp (`actuator_gainprm[:, 0]` and
    `-actuator_biasprm[:, 1]`, N m/rad) and kd (`-actuator_biasprm[:, 2]`, N m s/rad), each
    drawn per env and joint. `EntityData.joint_stiffness` / `joint_damping` follow.

    Raises:
        ValueError: a selected actuated joint has no position actuator.
    """
    from mjlab.envs.mdp.dr.core import resolve_operation

    check_range("pd_gains: kp_range", kp_range)
    check_range("pd_gains: kd_range", kd_range)
    op = resolve_operation(operation)
    parts, rest = _explicit_split(env, asset_cfg, ("stiffness", "damping"))
    data = env.scene[asset_cfg.name].data
    for act, cols, joints in parts:
        rows = env_index(env, env_ids, act.stiffness.device)
        lo, hi = torch.tensor([kp_range[0], kd_range[0]]), torch.tensor([kp_range[1], kd_range[1]])
        x = draw(env, distribution, lo, hi, (len(rows), len(cols), 2), act.stiffness.device)
        r, c = rows[:, None], torch.as_tensor(cols, device=rows.device)[None, :]
        kp0 = _explicit_nominal(act, "stiffness")[0, cols]
        kd0 = _explicit_nominal(act, "damping")[0, cols]
        kp = op.combine(op.initialize(kp0).expand(len(rows), -1), x[..., 0])
        kd = op.combine(op.initialize(kd0).expand(len(rows), -1), x[..., 1])
        act.stiffness[r, c], act.damping[r, c] = kp, kd
        dd = data.joint_stiffness.device
        rr, jj = rows.to(dd)[:, None], torch.as_tensor(joints, device=dd)[None, :]
        data.joint_stiffness[rr, jj] = kp.to(dd)
        data.joint_damping[rr, jj] = kd.to(dd)
    if rest is not None:
        if not rest:
            return
        asset_cfg = _narrowed(asset_cfg, rest)
    local, acts = _position_actuators(env, asset_cfg, "pd_gains")
    gain = env.sim.expand_model_field("actuator_gainprm")
    bias = env.sim.expand_model_field("actuator_biasprm")
    dev = gain.device
    rows = env_index(env, env_ids, dev)
    n, m = len(rows), len(acts)
    x = draw(
        env,
        distribution,
        torch.tensor([kp_range[0], kd_range[0]]),
        torch.tensor([kp_range[1], kd_range[1]]),
        (n, m, 2),
        dev,
    )
    kp0 = defaults(env, "actuator_gainprm")[acts, 0].to(dev, torch.float32)
    kd0 = -defaults(env, "actuator_biasprm")[acts, 2].to(dev, torch.float32)
    kp = op.combine(op.initialize(kp0).expand(n, -1), x[..., 0])
    kd = op.combine(op.initialize(kd0).expand(n, -1), x[..., 1])
    r, c = rows[:, None], acts.to(dev)[None, :]
    gain[r, c, 0] = kp.to(gain.dtype)
    bias[r, c, 1] = -kp.to(bias.dtype)
    bias[r, c, 2] = -kd.to(bias.dtype)
    data = env.scene[asset_cfg.name].data
    dd = data.joint_stiffness.device
    rr, cc = rows.to(dd)[:, None], local.to(dd)[None, :]
    data.joint_stiffness[rr, cc] = kp.to(dd, torch.float32)
    data.joint_damping[rr, cc] = kd.to(dd, torch.float32)


def effort_limits(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    effort_limit_range: Range,
    asset_cfg: SceneEntityCfg = _ROBOT,
    distribution: Dist = "uniform",
    operation: Op = "scale",
) -> None:
    """Force limits of the selected joints' position actuators (`actuator_forcerange`, N m):
    `scale` multiplies both compiled bounds by one draw, `add` widens them by it, `abs` sets
    [-draw, draw]. `EntityData.joint_effort_limits` follows (the larger bound magnitude).

    Raises:
        ValueError: a selected actuated joint has no position actuator, or its actuator is not
            force-limited (`forcelimited`/`forcerange` in the MJCF).
    """
    from mjlab.envs.mdp.dr.core import resolve_operation

    check_range("effort_limits: effort_limit_range", effort_limit_range)
    parts, rest = _explicit_split(env, asset_cfg, ("effort_limit",))
    op0 = resolve_operation(operation)
    data = env.scene[asset_cfg.name].data
    for act, cols, joints in parts:
        base = _explicit_nominal(act, "effort_limit")[0, cols]
        if not torch.isfinite(base).all() and op0.name != "abs":
            raise ValueError(
                f"effort_limits: explicit actuator joints {joints} have no effort limit to "
                f"'{op0.name}'; set effort_limit on their actuator config or use operation='abs'."
            )
        rows = env_index(env, env_ids, act.effort_limit.device)
        lo, hi = torch.tensor(effort_limit_range[0]), torch.tensor(effort_limit_range[1])
        x = draw(env, distribution, lo, hi, (len(rows), len(cols)), act.effort_limit.device)
        lim = op0.combine(op0.initialize(base).expand(len(rows), -1), x).abs()
        r, c = rows[:, None], torch.as_tensor(cols, device=rows.device)[None, :]
        act.effort_limit[r, c] = lim
        dd = data.joint_effort_limits.device
        rr, jj = rows.to(dd)[:, None], torch.as_tensor(joints, device=dd)[None, :]
        data.joint_effort_limits[rr, jj] = lim.to(dd)
    if rest is not None:
        if not rest:
            return
        asset_cfg = _narrowed(asset_cfg, rest)
    local, acts = _position_actuators(env, asset_cfg, "effort_limits")
    model = env.sim.mj_model
    limited = model.actuator_forcelimited[acts.numpy()].astype(bool)
    if not limited.all():
        raise ValueError(
            "effort_limits: the actuators of the selected joints must be force-limited; set "
            "`forcerange` (and forcelimited) on them."
        )
    op = resolve_operation(operation)
    view = env.sim.expand_model_field("actuator_forcerange")
    dev = view.device
    rows = env_index(env, env_ids, dev)
    n = len(rows)
    x = draw(
        env,
        distribution,
        torch.tensor(effort_limit_range[0]),
        torch.tensor(effort_limit_range[1]),
        (n, len(acts)),
        dev,
    )
    base = defaults(env, "actuator_forcerange")[acts].to(dev, torch.float32).expand(n, -1, -1)
    if op.name == "scale":
        rng = base * x[..., None]
    elif op.name == "add":
        rng = base + torch.stack([-x, x], -1)
    else:
        rng = torch.stack([-x, x], -1)
    rng = rng.sort(dim=-1).values
    lim = rng.abs().amax(-1)
    r, c = rows[:, None], acts.to(dev)[None, :]
    view[r, c] = rng.to(view.dtype)
    data = env.scene[asset_cfg.name].data
    dd = data.joint_effort_limits.device
    data.joint_effort_limits[rows.to(dd)[:, None], local.to(dd)[None, :]] = lim.to(dd)


def encoder_bias(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    bias_range: Range,
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Per-env, per-joint encoder offset U(bias_range) (rad or m) of the selected joints,
    stored in `EntityData.encoder_bias`: it shifts the reported `joint_pos_biased` (what
    biased observations read), never the physics."""
    check_range("encoder_bias: bias_range", bias_range)
    data = env.scene[asset_cfg.name].data
    local, _ = _joint_ids(env, asset_cfg, "encoder_bias")
    dev = data.encoder_bias.device
    rows = env_index(env, env_ids, dev)
    x = draw(
        env,
        "uniform",
        torch.tensor(bias_range[0]),
        torch.tensor(bias_range[1]),
        (len(rows), len(local)),
        dev,
    )
    data.encoder_bias[rows[:, None], local.to(dev)[None, :]] = x

"""Event terms: `(env, env_ids, **params) -> None`; reset-time state sampling, pushes, and
per-env domain randomization of model fields."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from mjlab.managers.manager_base import ManagerTermBase
from mjlab.managers.scene_entity_config import SceneEntityCfg
from mjlab.utils.env_ids import resolve_env_ids as _resolve_ids
from mjlab.utils.math import quat_apply, quat_from_euler_xyz, quat_mul, sample_uniform

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

_ROBOT = SceneEntityCfg("robot")
_POSE_KEYS = ("x", "y", "z", "roll", "pitch", "yaw")


def _uniform(
    env: ManagerBasedRlEnv, ranges: dict[str, tuple[float, float]], keys, n: int
) -> torch.Tensor:
    unknown = set(ranges) - set(keys)
    if unknown:
        raise ValueError(f"Unknown range keys {sorted(unknown)}; valid keys: {list(keys)}.")
    lo = torch.tensor([ranges.get(k, (0.0, 0.0))[0] for k in keys], device=env.device)
    hi = torch.tensor([ranges.get(k, (0.0, 0.0))[1] for k in keys], device=env.device)
    return sample_uniform(lo, hi, (n, len(keys)), env.device, env.rng)


def reset_root_state_uniform(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    pose_range: dict[str, tuple[float, float]],
    velocity_range: dict[str, tuple[float, float]] | None = None,
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Default root state (at the env origin) plus uniform offsets: pose_range keys x, y, z (m)
    and roll, pitch, yaw (rad, composed on the default orientation); velocity_range keys x, y, z
    (m/s) and roll, pitch, yaw (rad/s), world frame."""
    entity = env.scene[asset_cfg.name]
    _place_root(env, entity, env_ids, env.scene.env_origins[env_ids], pose_range, velocity_range)


def _place_root(env, entity, env_ids, shift, pose_range, velocity_range) -> None:
    """Write the entity's default root state moved by `shift` ((K, 3) world, m) plus uniform
    pose and velocity offsets (keys and frames as `reset_root_state_uniform`) in `env_ids`."""
    n = len(env_ids)
    state = entity.data.default_root_state[env_ids].clone()
    pose = _uniform(env, pose_range, _POSE_KEYS, n)
    state[:, :3] += shift + pose[:, :3]
    delta = quat_from_euler_xyz(pose[:, 3], pose[:, 4], pose[:, 5])
    state[:, 3:7] = quat_mul(delta, state[:, 3:7])
    if velocity_range:
        state[:, 7:13] += _uniform(env, velocity_range, _POSE_KEYS, n)
    entity.write_root_state_to_sim(state, env_ids)


def reset_joints_by_scale(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    position_range: tuple[float, float],
    velocity_range: tuple[float, float] = (0.0, 0.0),
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Default joint positions/velocities times U(range), clamped to the soft limits."""
    _reset_joints(env, env_ids, asset_cfg, position_range, velocity_range, scale=True)


def reset_joints_by_offset(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    position_range: tuple[float, float],
    velocity_range: tuple[float, float] = (0.0, 0.0),
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Default joint positions/velocities plus U(range), clamped to the soft limits."""
    _reset_joints(env, env_ids, asset_cfg, position_range, velocity_range, scale=False)


def _reset_joints(
    env: ManagerBasedRlEnv, env_ids, asset_cfg, position_range, velocity_range, scale: bool
) -> None:
    entity = env.scene[asset_cfg.name]
    data = entity.data
    ids = asset_cfg.joint_ids
    pos = data.default_joint_pos[env_ids][:, ids]
    vel = data.default_joint_vel[env_ids][:, ids]
    if scale:
        pos = pos * _scale(env, position_range, pos.shape)
        vel = vel * _scale(env, velocity_range, vel.shape) if velocity_range != (0.0, 0.0) else vel
    else:
        pos = pos + _scale(env, position_range, pos.shape)
        vel = vel + _scale(env, velocity_range, vel.shape)
    lim = data.soft_joint_pos_limits[env_ids][:, ids]
    pos = pos.clamp(lim[..., 0], lim[..., 1])
    entity.write_joint_state_to_sim(
        pos, vel, joint_ids=None if isinstance(ids, slice) else ids, env_ids=env_ids
    )


def _scale(env: ManagerBasedRlEnv, rng: tuple[float, float], shape) -> torch.Tensor:
    return sample_uniform(rng[0], rng[1], shape, env.device, env.rng)


def push_by_setting_velocity(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    velocity_range: dict[str, tuple[float, float]],
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Add a random root velocity (keys x, y, z m/s; roll, pitch, yaw rad/s; world frame)."""
    entity = env.scene[asset_cfg.name]
    data = entity.data
    state = torch.cat(
        [
            data.root_link_pos_w[env_ids],
            data.root_link_quat_w[env_ids],
            data.root_link_lin_vel_w[env_ids],
            data.root_link_ang_vel_w[env_ids],
        ],
        dim=-1,
    )
    state[:, 7:13] += _uniform(env, velocity_range, _POSE_KEYS, len(env_ids))
    entity.write_root_state_to_sim(state, env_ids)


# -- domain randomization ------------------------------------------------------------------------
def _nominal(env: ManagerBasedRlEnv, field: str) -> torch.Tensor:
    """Host-model values of a field (the baseline randomization scales), cached on the env."""
    cache = env.__dict__.setdefault("_nominal_model_fields", {})
    if field not in cache:
        cache[field] = torch.as_tensor(getattr(env.sim.mj_model, field), device=env.device)
    return cache[field]


def _write_field(
    env: ManagerBasedRlEnv,
    field: str,
    env_ids: torch.Tensor,
    cols: torch.Tensor,
    value: torch.Tensor,
) -> None:
    view = env.sim.expand_model_field(field)
    view[env_ids[:, None], cols] = value.to(view.dtype).to(view.device)


def randomize_geom_friction(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    friction_range: tuple[float, float],
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Sliding friction of the selected geoms drawn from U(friction_range) per env (torsional
    and rolling friction keep their nominal values).

    Explicit contact pairs (`<pair>`, `EntityCfg.ground_geoms`, `ContactPairCfg`) ignore geom
    friction, so every pair with a selected geom gets its own draw of both tangential
    coefficients (`pair_friction[:, 0:2]`) from the same range.
    """
    entity = env.scene[asset_cfg.name]
    geoms = torch.as_tensor(entity.geom_ids_global, device=env.device)[asset_cfg.geom_ids]
    nominal = _nominal(env, "geom_friction")[geoms]
    value = nominal.expand(len(env_ids), -1, -1).clone()
    value[..., 0] = _scale(env, friction_range, (len(env_ids), len(geoms)))
    _write_field(env, "geom_friction", env_ids, geoms, value)
    if env.sim.mj_model.npair:
        pair_geoms = torch.stack(
            [_nominal(env, "pair_geom1"), _nominal(env, "pair_geom2")], dim=-1
        ).to(geoms.device)
        pairs = torch.isin(pair_geoms, geoms).any(dim=-1).nonzero().flatten()
        if len(pairs):
            value = _nominal(env, "pair_friction")[pairs].expand(len(env_ids), -1, -1).clone()
            draw = _scale(env, friction_range, (len(env_ids), len(pairs)))
            value[..., 0] = draw
            value[..., 1] = draw
            _write_field(env, "pair_friction", env_ids, pairs, value)


def randomize_body_mass(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    mass_range: tuple[float, float],
    operation: str = "scale",
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Body masses of the selected bodies: nominal * U(range) ("scale") or nominal + U(range)
    kg ("add"); inertias scale with the mass; derived constants are recomputed."""
    if operation not in ("scale", "add"):
        raise ValueError(
            f"randomize_body_mass: operation must be 'scale' or 'add', got '{operation}'."
        )
    entity = env.scene[asset_cfg.name]
    bodies = torch.as_tensor(entity.body_ids_global, device=env.device)[asset_cfg.body_ids]
    nominal = _nominal(env, "body_mass")[bodies]
    draw = _scale(env, mass_range, (len(env_ids), len(bodies)))
    mass = nominal * draw if operation == "scale" else (nominal + draw).clamp(min=1e-6)
    ratio = (mass / nominal.clamp(min=1e-9)).unsqueeze(-1)
    _write_field(env, "body_mass", env_ids, bodies, mass)
    _write_field(
        env, "body_inertia", env_ids, bodies, _nominal(env, "body_inertia")[bodies] * ratio
    )
    env.sim.set_const(env_ids)


def randomize_body_com(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    com_range: dict[str, tuple[float, float]],
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Shift the selected bodies' centre of mass by U(range) per axis (keys x, y, z; m, body
    frame)."""
    entity = env.scene[asset_cfg.name]
    bodies = torch.as_tensor(entity.body_ids_global, device=env.device)[asset_cfg.body_ids]
    offset = _uniform(env, com_range, ("x", "y", "z"), len(env_ids) * len(bodies)).reshape(
        len(env_ids), len(bodies), 3
    )
    _write_field(env, "body_ipos", env_ids, bodies, _nominal(env, "body_ipos")[bodies] + offset)
    env.sim.set_const(env_ids)


def randomize_actuator_gains(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    stiffness_range: tuple[float, float] = (1.0, 1.0),
    damping_range: tuple[float, float] = (1.0, 1.0),
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Scale the PD gains of the selected joints' position actuators by U(range) per env:
    gainprm[0] = biasprm[1] * -1 = kp, biasprm[2] = -kd."""
    entity = env.scene[asset_cfg.name]
    joints = torch.arange(len(entity.joint_names), device=env.device)[asset_cfg.joint_ids]
    acts_all = torch.as_tensor(entity.joint_actuator_ids, device=env.device)[joints]
    acts = acts_all[acts_all >= 0]
    n = len(env_ids)
    kp = _nominal(env, "actuator_gainprm")[acts, 0] * _scale(env, stiffness_range, (n, len(acts)))
    bias = _nominal(env, "actuator_biasprm")[acts].expand(n, -1, -1).clone()
    bias[..., 1] = -kp
    bias[..., 2] = bias[..., 2] * _scale(env, damping_range, (n, len(acts)))
    gain = _nominal(env, "actuator_gainprm")[acts].expand(n, -1, -1).clone()
    gain[..., 0] = kp
    _write_field(env, "actuator_gainprm", env_ids, acts, gain)
    _write_field(env, "actuator_biasprm", env_ids, acts, bias)
    data = entity.data
    cols = joints[acts_all >= 0]
    data.joint_stiffness[env_ids[:, None], cols] = kp.float()
    data.joint_damping[env_ids[:, None], cols] = -bias[..., 2].float()


def resolve_env_ids(env: ManagerBasedRlEnv, env_ids) -> torch.Tensor:
    """`env_ids` as a (K,) int64 tensor on the env's device: None gives every env (mjlab's
    helper for event terms that accept None).

    Raises:
        ValueError: ids outside [0, num_envs), a float tensor, or a mask of the wrong shape.
    """
    return _resolve_ids(env_ids, env.num_envs, env.device)


def reset_scene_to_default(env: ManagerBasedRlEnv, env_ids: torch.Tensor | None) -> None:
    """Put every entity of the scene back in its default state in `env_ids` (None: all): a
    floating base at its default root pose moved to the env's origin, with its default
    velocity; joints at their default positions and velocities. Fixed-base entities keep their
    place; entities without joints keep their (absent) joint state. It writes qpos and qvel
    only: actuator targets, ctrl and sensors are left as they are, and derived quantities
    (body poses) follow at the next physics step or `env.sim.forward()`."""
    ids = resolve_env_ids(env, env_ids)
    for entity in env.scene.entities.values():
        if not entity.is_fixed_base:
            state = entity.data.default_root_state[ids].clone()
            state[:, :3] += env.scene.env_origins[ids]
            entity.write_root_state_to_sim(state, ids)
        if entity.joint_names:
            entity.write_joint_state_to_sim(
                entity.data.default_joint_pos[ids], entity.data.default_joint_vel[ids], env_ids=ids
            )


def apply_external_force_torque(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    force_range: tuple[float, float],
    torque_range: tuple[float, float],
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Draw an external force (N) and torque (N m), each component from U(lo, hi), for every
    selected body in `env_ids` and keep applying them at the body's centre of mass, world
    frame (MuJoCo's `xfrc_applied`), until the next draw or the env's reset (which clears
    applied forces); (0, 0) ranges remove them. Use as an interval event for random
    disturbances.

    Args:
        force_range: (lo, hi) per force component, N.
        torque_range: (lo, hi) per torque component, N m.
        asset_cfg: the entity and its `body_names` (default: every body of "robot").
    """
    ids = resolve_env_ids(env, env_ids)
    entity = env.scene[asset_cfg.name]
    bodies = torch.as_tensor(entity.body_ids_global, device=env.device)[asset_cfg.body_ids]
    bodies = bodies.reshape(-1)
    shape = (len(ids), len(bodies), 3)
    force = sample_uniform(force_range[0], force_range[1], shape, env.device, env.rng)
    torque = sample_uniform(torque_range[0], torque_range[1], shape, env.device, env.rng)
    xfrc = env.sim.data.xfrc_applied
    xfrc[ids[:, None], bodies] = torch.cat([force, torque], dim=-1).to(xfrc.dtype)


def randomize_terrain(env: ManagerBasedRlEnv, env_ids: torch.Tensor | None) -> None:
    """Move `env_ids` (None: all) to a random sub-terrain: a uniform level (row) and type
    (column) each (mjlab 1.6's event, for evaluating a policy across the whole grid; use it
    as a reset event before the root reset). A plane or no terrain leaves the origins as they
    are."""
    terrain = env.scene.terrain
    if terrain is not None:
        terrain.randomize_env_origins(resolve_env_ids(env, env_ids))


def reset_root_state_from_flat_patches(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor | None,
    patch_name: str = "spawn",
    pose_range: dict[str, tuple[float, float]] | None = None,
    velocity_range: dict[str, tuple[float, float]] | None = None,
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> None:
    """Put the root on a random flat patch of the env's sub-terrain (mjlab 1.6's event).

    The patch is drawn uniformly among the sub-terrain's `flat_patches[patch_name]`
    (`FlatPatchSamplingCfg`); the root goes to the patch's x, y plus the pose_range offsets
    and to the patch's height plus the default root height plus the z offset; orientation is
    the default one composed with the roll, pitch, yaw offsets; velocity is the default one
    plus the velocity_range draws (keys and frames as `reset_root_state_uniform`). On a
    terrain without flat patches (a plane, or a grid built without any search) it is
    `reset_root_state_uniform` with the same ranges.

    Raises:
        ValueError: an unknown key in pose_range or velocity_range, or a patch_name the
            terrain's flat patches do not have.
    """
    ids = resolve_env_ids(env, env_ids)
    terrain = env.scene.terrain
    found = terrain.flat_patches if terrain is not None else {}
    if found and patch_name not in found:
        raise ValueError(
            f"reset_root_state_from_flat_patches: the terrain has no flat patches named "
            f"'{patch_name}'; it has {sorted(found)} (SubTerrainCfg.flat_patch_sampling)."
        )
    patches = found.get(patch_name)
    if patches is None or terrain.terrain_levels is None:
        reset_root_state_uniform(env, ids, pose_range or {}, velocity_range, asset_cfg)
        return
    entity = env.scene[asset_cfg.name]
    n = len(ids)
    pick = torch.randint(0, patches.shape[2], (n,), device=env.rng.device, generator=env.rng)
    pick = pick.to(patches.device)
    spot = patches[terrain.terrain_levels[ids], terrain.terrain_types[ids], pick].to(env.device)
    # The patch's x, y replace the default's; its height adds to the default height.
    shift = spot.clone()
    shift[:, :2] -= entity.data.default_root_state[ids, :2]
    _place_root(env, entity, ids, shift, pose_range or {}, velocity_range)


class apply_body_impulse(ManagerTermBase):
    """Random transient pushes: each env alternates a quiet cooldown and an impulse, a constant
    force and torque on the selected bodies held for a random duration (mjlab 1.6's event).
    Use with ``mode="step"``.

    Per env, independently: a cooldown drawn from U(cooldown_s) (the first one too, so nothing
    fires at t = 0); then a force and a torque, each component from U(force_range) /
    U(torque_range), world frame, written to MuJoCo's ``xfrc_applied`` of every selected
    body (it acts at the body's centre of mass); held for U(duration_s); then zeroed, and a
    new cooldown starts. With `body_point_offset` (x, y, z in the body frame, m) the force
    acts at that point from the centre of mass instead, which adds ``offset_w x force`` to
    the torque. Timers count env steps of ``env.step_dt``. A reset zeroes the envs' wrench
    and restarts their cooldown. Batched, no host reads: every step draws a candidate
    impulse for every env and keeps it where one starts.

    Term params:
        force_range: (lo, hi) per force component, N.
        torque_range: (lo, hi) per torque component, N m.
        duration_s: (lo, hi) impulse duration, s.
        cooldown_s: (lo, hi) quiet time between impulses, s (read once, when the term is
            built).
        asset_cfg: the entity and its `body_names` (default: every body of "robot").
        body_point_offset: optional (x, y, z) application point from the centre of mass,
            body frame, m.

    Attributes:
        active: (num_envs,) bool, an impulse is being applied.
    """

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        asset_cfg = cfg.params.get("asset_cfg", _ROBOT)
        entity = env.scene[asset_cfg.name]
        bodies = torch.as_tensor(entity.body_ids_global, device=env.device)[asset_cfg.body_ids]
        self._bodies = bodies.reshape(-1)
        self._local = torch.arange(len(entity.body_ids_global), device=env.device)[
            asset_cfg.body_ids
        ].reshape(-1)
        self._cooldown_s = tuple(cfg.params["cooldown_s"])
        n = env.num_envs
        self.active = torch.zeros(n, dtype=torch.bool, device=env.device)
        self._time_left = torch.zeros(n, device=env.device)
        self._cooldown_left = self._draw(self._cooldown_s, n)

    def _draw(self, value_range, shape) -> torch.Tensor:
        return sample_uniform(value_range[0], value_range[1], shape, self.env.device, self.env.rng)

    def __call__(
        self,
        env: ManagerBasedRlEnv,
        env_ids: torch.Tensor | None,
        force_range: tuple[float, float],
        torque_range: tuple[float, float],
        duration_s: tuple[float, float],
        cooldown_s: tuple[float, float],
        asset_cfg: SceneEntityCfg = _ROBOT,
        body_point_offset: tuple[float, float, float] | None = None,
    ) -> None:
        dt, n, nb = env.step_dt, env.num_envs, len(self._bodies)
        self._time_left = torch.where(self.active, self._time_left - dt, self._time_left)
        expired = self.active & (self._time_left <= 0)
        self.active &= ~expired
        self._cooldown_left = torch.where(
            expired, self._draw(self._cooldown_s, n), self._cooldown_left
        )
        self._cooldown_left -= dt
        start = ~self.active & (self._cooldown_left <= 0)
        force = self._draw(force_range, (n, nb, 3))
        torque = self._draw(torque_range, (n, nb, 3))
        if body_point_offset is not None:
            quat = env.scene[asset_cfg.name].data.body_link_quat_w[:, self._local]
            offset = torch.tensor(body_point_offset, device=env.device).expand(n, nb, 3)
            offset_w = quat_apply(quat.reshape(-1, 4), offset.reshape(-1, 3)).reshape(n, nb, 3)
            torque = torque + torch.cross(offset_w, force, dim=-1)
        xfrc = env.sim.data.xfrc_applied
        current = xfrc[:, self._bodies]
        wrench = torch.where(
            start[:, None, None],
            torch.cat([force, torque], dim=-1).to(xfrc.dtype),
            torch.where(expired[:, None, None], 0.0, current),
        )
        xfrc[:, self._bodies] = wrench
        self._time_left = torch.where(start, self._draw(duration_s, n), self._time_left)
        self.active |= start
        self._cooldown_left = torch.where(
            start, self._draw(self._cooldown_s, n), self._cooldown_left
        )

    def reset(self, env_ids: torch.Tensor | None = None) -> None:
        ids = resolve_env_ids(self.env, env_ids)
        xfrc = self.env.sim.data.xfrc_applied
        xfrc[ids[:, None], self._bodies] = 0.0
        self.active[ids] = False
        self._time_left[ids] = 0.0
        self._cooldown_left[ids] = self._draw(self._cooldown_s, len(ids))

"""Left/right mirror of the velocity tasks' observations and actions, for rsl-rl's symmetry
augmentation and mirror loss (Mittal et al., "Symmetry Considerations for Learning Task
Symmetric Robot Policies", ICRA 2024).

The mirror is the reflection across the robot base's x-z plane (y -> -y in the base frame).
Nothing is a hand-written index table: the joint mirror comes from the compiled model (partner
by name, sign from the partner's joint axis) and each observation group's layout from the
env's observation manager, so one function serves the actor and critic groups, flat and rough
terrain, the G1 and the Go1.

Turn it on for PPO with
`RslRlSymmetryCfg(use_data_augmentation=True, data_augmentation_func=MIRROR_FUNC)`, on the
command line `--agent.algorithm.symmetry-cfg.use-data-augmentation
--agent.algorithm.symmetry-cfg.data-augmentation-func
mjlab.tasks.velocity.symmetry:mirror_observations_and_actions`.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import mujoco
import numpy as np
import torch

from mjlab.envs import mdp
from mjlab.managers import SceneEntityCfg

MIRROR_FUNC = "mjlab.tasks.velocity.symmetry:mirror_observations_and_actions"
"""`mirror_observations_and_actions` as rsl-rl's `data_augmentation_func` string."""

_HINGE = int(mujoco.mjtJoint.mjJNT_HINGE)
_SLIDE = int(mujoco.mjtJoint.mjJNT_SLIDE)
_REFLECT = np.array([1.0, -1.0, 1.0])
"""The mirror in the base frame: y -> -y."""
_AXIS_TOL = 1e-3
"""A partner's joint axis must match the mirrored axis to this (unit vectors)."""
_POS_TOL = 1e-3
"""A partner's joint anchor must match the mirrored anchor to this, m."""

_SIDE_WORDS = {"left": "right", "right": "left", "Left": "Right", "Right": "Left"}
_SIDE_WORDS.update({k.upper(): v.upper() for k, v in list(_SIDE_WORDS.items())[:2]})
_NAME_PATTERN = re.compile(
    r"left|right|Left|Right|LEFT|RIGHT"
    # Quadruped leg codes: F/R/H (front, rear, hind) then L/R, as a whole token (Go1 "RL_hip").
    r"|(?<![A-Za-z0-9])[FRH][LR](?![A-Za-z0-9])"
)


def mirror_name(name: str) -> str:
    """The name of `name`'s mirror partner: left <-> right (any case) and the side letter of a
    quadruped leg code (FL <-> FR, RL <-> RR, HL <-> HR); a name without a side is its own
    partner (a waist joint, the base).

    >>> mirror_name("left_hip_pitch_joint"), mirror_name("RL_calf_joint")
    ('right_hip_pitch_joint', 'RR_calf_joint')
    """

    def swap(m: re.Match) -> str:
        word = m.group(0)
        if word in _SIDE_WORDS:
            return _SIDE_WORDS[word]
        return word[0] + ("R" if word[1] == "L" else "L")

    return _NAME_PATTERN.sub(swap, name)


@dataclass(frozen=True)
class JointMirror:
    """The mirror of an entity's joints: mirrored `q[j] = sign[j] * q[partner[j]]` (positions,
    velocities and, for position actions, the targets around a symmetric default pose)."""

    names: tuple[str, ...]
    """The entity's joints, entity order."""
    partner: tuple[int, ...]
    """Entity index of each joint's mirror partner (itself for a centre joint)."""
    sign: tuple[float, ...]
    """+1 where the mirrored motion turns the partner the same way (a hinge about the lateral
    axis, a pitch joint), -1 where it turns it the other way (roll and yaw hinges)."""


def joint_mirror(env: Any, entity_name: str = "robot") -> JointMirror:
    """The mirror of `entity_name`'s joints, from the compiled model at its reference pose
    (`qpos0`): the partner by `mirror_name`, the sign by comparing the partner's joint axis with
    the joint's axis mirrored across the base's x-z plane. A hinge's axis is a pseudovector:
    mirrored it is `-R a` (R: y -> -y), so a partner with axis `-R a` turns by the same angle
    (+1) and one with `R a` by the opposite (-1); a slide's axis mirrors to `R a`.

    Args:
        env: a `ManagerBasedRlEnv`.
        entity_name: the floating-base entity.

    Raises:
        ValueError: a joint whose partner name is not a joint of the entity, a joint that is
            neither a hinge nor a slide, or a partner whose axis or anchor is not the mirror of
            the joint's (the model is not left/right symmetric); the message names the joints.
    """
    entity = env.scene[entity_name]
    model: mujoco.MjModel = env.sim.mj_model
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    root = entity.body_ids_global[0]
    rot = data.xmat[root].reshape(3, 3)  # base -> world
    origin = data.xpos[root]
    names = list(entity.joint_names)
    index = {n: i for i, n in enumerate(names)}
    partner: list[int] = []
    sign: list[float] = []
    for i, name in enumerate(names):
        other = mirror_name(name)
        if other not in index:
            raise ValueError(
                f"Joint '{name}' of entity '{entity_name}' has no mirror partner: "
                f"'{other}' is not one of its joints."
            )
        j = index[other]
        gi, gj = entity.joint_ids_global[i], entity.joint_ids_global[j]
        kind = int(model.jnt_type[gi])
        if kind not in (_HINGE, _SLIDE):
            raise ValueError(f"Joint '{name}': only hinge and slide joints can be mirrored.")
        axis_i = rot.T @ data.xaxis[gi]
        axis_j = rot.T @ data.xaxis[gj]
        mirrored = _REFLECT * axis_i
        if kind == _HINGE:
            mirrored = -mirrored
        s = float(np.dot(axis_j, mirrored))
        anchor_i = _REFLECT * (rot.T @ (data.xanchor[gi] - origin))
        anchor_j = rot.T @ (data.xanchor[gj] - origin)
        if abs(abs(s) - 1.0) > _AXIS_TOL or np.abs(anchor_i - anchor_j).max() > _POS_TOL:
            raise ValueError(
                f"Joints '{name}' and '{other}' of entity '{entity_name}' are not mirror images "
                f"across the base's x-z plane (axes {np.round(axis_i, 4).tolist()} and "
                f"{np.round(axis_j, 4).tolist()}, anchors {np.round(anchor_i, 4).tolist()} "
                f"mirrored and {np.round(anchor_j, 4).tolist()}, in the base frame at the "
                "model's reference pose)."
            )
        partner.append(j)
        sign.append(1.0 if s > 0 else -1.0)
    return JointMirror(names=tuple(names), partner=tuple(partner), sign=tuple(sign))


@dataclass(frozen=True)
class _Mirror:
    """Mirrored `x` = `x[..., index] * sign`."""

    index: torch.Tensor
    sign: torch.Tensor

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return x[..., self.index] * self.sign


def _subset(mirror: JointMirror, ids: Sequence[int], what: str) -> tuple[list[int], list[float]]:
    """(index into `ids`, sign) of the mirror restricted to the joints `ids` (entity order)."""
    where = {j: k for k, j in enumerate(ids)}
    index, sign = [], []
    for j in ids:
        p = mirror.partner[j]
        if p not in where:
            raise ValueError(
                f"{what} has joint '{mirror.names[j]}' but not its mirror partner "
                f"'{mirror.names[p]}': it cannot be mirrored."
            )
        index.append(where[p])
        sign.append(mirror.sign[j])
    return index, sign


def _joint_ids(cfg: SceneEntityCfg, n: int) -> list[int]:
    ids = cfg.joint_ids
    return list(range(n))[ids] if isinstance(ids, slice) else [int(i) for i in ids]


class VelocityMirror:
    """The mirror of one velocity env's observation groups and actions, built once per env.

    Observation terms it knows (by term function): base_lin_vel (x, -y, z), base_ang_vel
    (-x, y, -z), projected_gravity (x, -y, z), generated_commands of a velocity command
    (vx, -vy, -wz), joint_pos_rel / joint_vel_rel / joint_pos / joint_vel (partner, sign),
    last_action (as the actions), foot_contact (partner slot), height_scan (the ray at
    (x, -y)). History frames are mirrored frame by frame.

    Args:
        env: a `ManagerBasedRlEnv` (or a wrapper with `.unwrapped`).

    Raises:
        ValueError: a term it does not know (named `group/term`), a group that is not one flat
            vector, a joint selection without its partners, a default pose or action scale that
            is not mirror symmetric, a clip that is not symmetric about 0 on a value whose
            sign flips, or a height-scan grid that is not symmetric about the base's x axis.
    """

    def __init__(self, env: Any):
        env = getattr(env, "unwrapped", env)
        self.device = env.device
        # No reference to env is kept: `velocity_mirror` caches this per env in a weak map.
        self._joints: dict[str, JointMirror] = {}
        self.actions = self._action_mirror(env)
        """Mirror of a (batch, total_action_dim) action tensor."""
        self.groups: dict[str, _Mirror] = {
            g: self._group_mirror(env, g) for g in env.observation_manager.group_terms
        }
        """Mirror of each observation group's (batch, dim) vector."""

    # -- building -------------------------------------------------------------------------------
    def _entity_mirror(self, env: Any, name: str) -> JointMirror:
        if name not in self._joints:
            mirror = joint_mirror(env, name)
            default = env.scene[name].data.default_joint_pos[0].cpu().numpy()
            mirrored = default[list(mirror.partner)] * np.array(mirror.sign)
            bad = [mirror.names[i] for i in np.nonzero(np.abs(mirrored - default) > 1e-5)[0]]
            if bad:
                raise ValueError(
                    f"The default joint pose of '{name}' is not mirror symmetric at {bad}: "
                    "relative joint positions and position actions cannot be mirrored."
                )
            self._joints[name] = mirror
        return self._joints[name]

    def _action_mirror(self, env: Any) -> _Mirror:
        index: list[int] = []
        sign: list[float] = []
        start = 0
        for term_name, term in env.action_manager.terms.items():
            asset = getattr(term.cfg, "asset_name", None)
            ids = getattr(term, "joint_ids", None)
            if asset is None or ids is None:
                raise ValueError(
                    f"Action term '{term_name}' is not a joint action: the velocity mirror "
                    "cannot mirror it."
                )
            mirror = self._entity_mirror(env, asset)
            sub, s = _subset(mirror, list(ids), f"Action term '{term_name}'")
            scale = term.scale.detach().cpu().numpy()
            if scale.ndim and not np.allclose(scale[sub], scale):
                raise ValueError(
                    f"Action term '{term_name}' has a scale that is not mirror symmetric: "
                    "its actions cannot be mirrored."
                )
            index += [start + k for k in sub]
            sign += s
            start += term.action_dim
        return self._make(index, sign)

    def _make(self, index: Sequence[int], sign: Sequence[float]) -> _Mirror:
        return _Mirror(
            torch.as_tensor(list(index), dtype=torch.long, device=self.device),
            torch.as_tensor(list(sign), dtype=torch.float32, device=self.device),
        )

    def _group_mirror(self, env: Any, group: str) -> _Mirror:
        om = env.observation_manager
        if group not in om.group_dims or len(om.group_dims[group]) != 1:
            raise ValueError(
                f"Observation group '{group}' is not one flat vector (concatenated 1-D terms): "
                "the velocity mirror cannot mirror it."
            )
        index: list[int] = []
        sign: list[float] = []
        start = 0
        description = {t["name"]: t for t in om.describe(group)["terms"]}
        for name, term in om.group_terms[group].items():
            shape = description[name]["shape"]
            if len(shape) != 1:
                raise ValueError(f"Observation term '{group}/{name}' is not 1-D: cannot mirror.")
            sub, s = self._term_mirror(env, f"{group}/{name}", term)
            if len(sub) != shape[0]:
                raise ValueError(
                    f"Observation term '{group}/{name}' has {shape[0]} values but its mirror "
                    f"{len(sub)}."
                )
            if term.scale is not None and not isinstance(term.scale, (int, float)):
                scale = np.asarray(term.scale, dtype=float)
                if not np.allclose(scale[sub], scale):
                    raise ValueError(
                        f"Observation term '{group}/{name}' has a per-value scale that is not "
                        "mirror symmetric: cannot mirror."
                    )
            if term.clip is not None and -1.0 in s and term.clip[0] != -term.clip[1]:
                # clamp(-x, lo, hi) is -clamp(x, lo, hi) only for lo = -hi.
                raise ValueError(
                    f"Observation term '{group}/{name}' has a clip {tuple(term.clip)} that is not "
                    "symmetric about 0 but values whose sign the mirror flips: cannot mirror."
                )
            frames = max(int(term.history_length), 1)
            for f in range(frames):
                offset = start + f * len(sub)
                index += [offset + k for k in sub]
                sign += s
            start += frames * len(sub)
        if start != om.group_dims[group][0]:
            raise ValueError(
                f"Observation group '{group}': the terms' mirrors cover {start} values of "
                f"{om.group_dims[group][0]}."
            )
        return self._make(index, sign)

    def _term_mirror(self, env: Any, where: str, term: Any) -> tuple[list[int], list[float]]:
        func, params = term.func, term.params
        if func is mdp.base_lin_vel or func is mdp.projected_gravity:
            return [0, 1, 2], [1.0, -1.0, 1.0]
        if func is mdp.base_ang_vel:
            return [0, 1, 2], [-1.0, 1.0, -1.0]
        if func is mdp.generated_commands:
            command = env.command_manager.get_term(params["command_name"])
            if not isinstance(command, mdp.UniformVelocityCommand):
                raise ValueError(
                    f"Observation term '{where}' reads command '{params['command_name']}', "
                    "which is not a velocity command (vx, vy, wz): cannot mirror it."
                )
            return [0, 1, 2], [1.0, -1.0, -1.0]
        if func in (mdp.joint_pos_rel, mdp.joint_vel_rel, mdp.joint_pos, mdp.joint_vel):
            asset: SceneEntityCfg = params.get("asset_cfg", SceneEntityCfg("robot"))
            mirror = self._entity_mirror(env, asset.name)
            ids = _joint_ids(asset, len(mirror.names))
            return _subset(mirror, ids, f"Observation term '{where}'")
        if func is mdp.last_action:
            return self._last_action(env, where, params.get("action_name"))
        if func is mdp.foot_contact:
            return self._slot_mirror(env, where, params["sensor_name"])
        if func is mdp.height_scan:
            return self._ray_mirror(env, where, params["sensor_name"])
        raise ValueError(
            f"Observation term '{where}' (function {getattr(func, '__name__', func)!r}) is unknown "
            "to the velocity mirror: it cannot be mirrored. Remove the term or extend "
            "mjlab.tasks.velocity.symmetry."
        )

    def _last_action(
        self, env: Any, where: str, action_name: str | None
    ) -> tuple[list[int], list[float]]:
        index = self.actions.index.tolist()
        sign = self.actions.sign.tolist()
        if action_name is None:
            return index, sign
        start = 0
        for name, term in env.action_manager.terms.items():
            if name == action_name:
                n = term.action_dim
                return [i - start for i in index[start : start + n]], sign[start : start + n]
            start += term.action_dim
        raise ValueError(f"Observation term '{where}' reads unknown action term '{action_name}'.")

    def _slot_mirror(self, env: Any, where: str, sensor: str) -> tuple[list[int], list[float]]:
        slots = list(env.scene[sensor].slot_names)
        index = []
        for slot in slots:
            owner, _, name = slot.rpartition("/")
            other = f"{owner}/{mirror_name(name)}" if owner else mirror_name(name)
            if other not in slots:
                raise ValueError(
                    f"Observation term '{where}': contact slot '{slot}' of sensor '{sensor}' has "
                    f"no mirror partner ('{other}' is not a slot): cannot mirror."
                )
            index.append(slots.index(other))
        return index, [1.0] * len(slots)

    def _ray_mirror(self, env: Any, where: str, sensor: str) -> tuple[list[int], list[float]]:
        scan = env.scene[sensor]
        pattern = scan.pattern_b[:, :2].detach().cpu().double()
        mirrored = pattern * torch.tensor([1.0, -1.0], dtype=torch.float64)
        distance = torch.cdist(mirrored, pattern)
        best = distance.argmin(dim=1)
        if distance.gather(1, best[:, None]).max() > 1e-4:
            raise ValueError(
                f"Observation term '{where}': the ray grid of sensor '{sensor}' is not symmetric "
                "about the base's x axis (choose HeightScanCfg.size a multiple of 2 x "
                "resolution): cannot mirror."
            )
        return best.tolist(), [1.0] * len(best)

    # -- use ------------------------------------------------------------------------------------
    def mirror_group(self, group: str, x: torch.Tensor) -> torch.Tensor:
        """The mirror of observation group `group`'s (batch, dim) values.

        Raises:
            ValueError: an unknown group (named).
        """
        if group not in self.groups:
            raise ValueError(
                f"Observation group '{group}' is not one of the env's groups {list(self.groups)}."
            )
        return self.groups[group](x)


_MIRRORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def velocity_mirror(env: Any) -> VelocityMirror:
    """The `VelocityMirror` of `env` (a `ManagerBasedRlEnv` or a wrapper with `.unwrapped`),
    built on first use and kept for the env's life."""
    base = getattr(env, "unwrapped", env)
    mirror = _MIRRORS.get(base)
    if mirror is None:
        mirror = _MIRRORS[base] = VelocityMirror(base)
    return mirror


def mirror_observations_and_actions(
    env: Any, obs: Any = None, actions: torch.Tensor | None = None
) -> tuple[Any, torch.Tensor | None]:
    """rsl-rl's `data_augmentation_func` for the velocity tasks: the batch followed by its
    left/right mirror.

    Args:
        env: the env rsl-rl trains on (`RslRlVecEnvWrapper`) or a `ManagerBasedRlEnv`.
        obs: a TensorDict of observation groups, each (batch, dim), or None.
        actions: (batch, num_actions) actions, or None.

    Returns:
        (obs, actions) with batch 2 * batch: the originals, then their mirrors (None stays
        None). Mirroring twice gives back the input.

    Raises:
        ValueError: on first use for an env, an observation term, group or action it cannot
            mirror (named); later, an observation group the env does not have.
    """
    mirror = velocity_mirror(env)
    out_obs = None
    if obs is not None:
        mirrored = {key: mirror.mirror_group(key, value) for key, value in obs.items()}
        out_obs = _cat_like(obs, mirrored)
    out_actions = None
    if actions is not None:
        out_actions = torch.cat([actions, mirror.actions(actions)], dim=0)
    return out_obs, out_actions


def _cat_like(obs: Any, mirrored: dict[str, torch.Tensor]) -> Any:
    """`obs` with `mirrored` appended along the batch, as the same mapping type."""
    doubled = {key: torch.cat([value, mirrored[key]], dim=0) for key, value in obs.items()}
    batch_size = getattr(obs, "batch_size", None)
    if batch_size is None:
        return doubled
    from tensordict import TensorDict

    return TensorDict(doubled, batch_size=[2 * batch_size[0]], device=obs.device)

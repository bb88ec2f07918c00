"""Differential inverse kinematics as an action term (mjlab 1.6's `DifferentialIKAction`):
the policy commands the pose of a frame of the entity (a body, site or geom), and a damped
least-squares step turns the pose error into joint position targets.

Frames and units: positions in m and orientations as quaternions (w, x, y, z) in the world
frame of the simulation (MuJoCo's world frame, the same for every env: env origins are not
added), rotation vectors (axis * angle) in rad, world frame; joint values in rad (m for
slides).

The frame Jacobian is computed in torch from MuJoCo's `cdof` (each dof's motion axis about
the subtree centre of mass) and `subtree_com`, the formula of `mj_jac`, for every world at
once and on either backend (C MuJoCo on the CPU, MuJoCo Warp on CUDA): no per-world host call.
Both fields are position-stage outputs, current after every `Simulation.step` / `forward`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import mujoco
import torch

from mjlab.managers.action_manager import ActionTerm
from mjlab.managers.manager_term_config import ActionTermCfg
from mjlab.utils.config import copy_config
from mjlab.utils.math import (
    axis_angle_from_quat,
    quat_conjugate,
    quat_from_angle_axis,
    quat_from_matrix,
    quat_mul,
)
from mjlab.utils.string import resolve_matching_names

FRAME_TYPES = ("body", "site", "geom")
"""What `DifferentialIKActionCfg.frame_type` may name."""
_ONE_DOF_JOINTS = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)


class FrameJacobian:
    """Pose and Jacobian of one frame of the model, for every world of a simulation.

    Args:
        sim: the `mjlab.sim.Simulation`.
        frame_type: "body" (the body frame, not its centre of mass), "site" or "geom".
        frame_id: the frame's id in the compiled model.
        dof_ids: the dofs (model `qvel` indices) whose Jacobian columns are wanted, in order.
    """

    # The simulation is the env's (captured there); the index tensors never change.
    _snapshot_exclude = ("sim", "_dofs", "_moves")

    def __init__(self, sim, frame_type: str, frame_id: int, dof_ids: list[int]):
        m = sim.mj_model
        self.sim = sim
        self.frame_type = frame_type
        self.frame_id = int(frame_id)
        if frame_type == "body":
            body = self.frame_id
        elif frame_type == "site":
            body = int(m.site_bodyid[self.frame_id])
        else:
            body = int(m.geom_bodyid[self.frame_id])
        self.body_id = body
        """The body carrying the frame."""
        self._root = int(m.body_rootid[body])
        # The dofs that move the body: from the nearest body with dofs up to the world.
        chain: set[int] = set()
        b = body
        while b > 0 and int(m.body_dofnum[b]) == 0:
            b = int(m.body_parentid[b])
        if b > 0:
            d = int(m.body_dofadr[b]) + int(m.body_dofnum[b]) - 1
            while d >= 0:
                chain.add(d)
                d = int(m.dof_parentid[d])
        dev = sim.device
        self._dofs = torch.tensor(dof_ids, dtype=torch.long, device=dev)
        self._moves = torch.tensor(
            [[1.0] if d in chain else [0.0] for d in dof_ids], device=dev
        )  # (k, 1): 0 for a dof off the frame's chain (its column is zero)

    def pose(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(num_envs, 3) position, m, and (num_envs, 4) orientation wxyz of the frame, world,
        float32."""
        data, i = self.sim.data, self.frame_id
        if self.frame_type == "body":
            return data.xpos[:, i].float(), data.xquat[:, i].float()
        if self.frame_type == "site":
            return data.site_xpos[:, i].float(), quat_from_matrix(data.site_xmat[:, i].float())
        return data.geom_xpos[:, i].float(), quat_from_matrix(data.geom_xmat[:, i].float())

    def jacobian(self, point: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Translational and rotational Jacobians of a world point moving with the frame's body.

        Args:
            point: (num_envs, 3) the point, world, m (usually the frame's position).

        Returns:
            jacp (num_envs, 3, k), m per rad (or m/m), and jacr (num_envs, 3, k), rad per rad,
            world frame, over the `dof_ids` given at construction: the point's linear and the
            body's angular velocity per unit velocity of each dof.
        """
        data = self.sim.data
        cdof = data.cdof[:, self._dofs].float()  # (n, k, 6): angular, linear about the com
        com = data.subtree_com[:, self._root].float()  # (n, 3)
        ang = cdof[..., :3] * self._moves
        lin = cdof[..., 3:] * self._moves
        # The point moves at lin + ang x (point - com).
        lever = (point - com).unsqueeze(1).expand_as(ang)
        jacp = lin + torch.linalg.cross(ang, lever, dim=-1)
        return jacp.transpose(1, 2), ang.transpose(1, 2)


class DifferentialIKAction(ActionTerm):
    """Task-space commands to joint position targets by damped least squares.

    Per env step, `process_actions(raw)` turns the action into a desired frame pose
    (`desired_pos` (num_envs, 3), `desired_quat` (num_envs, 4)):

    - 3-D (`orientation_weight == 0`): relative mode, desired = current position +
      `delta_pos_scale` * raw; absolute mode, desired = raw (world, m). The orientation is
      not tracked.
    - 6-D (orientation tracked, relative mode): (dx, dy, dz, rx, ry, rz): the position moves
      by `delta_pos_scale` * (dx, dy, dz) and the orientation turns by the world-frame
      rotation vector `delta_ori_scale` * (rx, ry, rz) (rad).
    - 7-D (orientation tracked, absolute mode): (x, y, z, qw, qx, qy, qz): the position (world,
      m) and orientation (normalized here; a zero quaternion keeps the current orientation).

    `apply_actions()` then runs one IK step from the current state: with the frame's pose
    error e = (e_pos, e_rot) (e_rot the rotation vector taking the current orientation to the
    desired one) and Jacobians Jp, Jr over the controlled joints, it solves

        (wp^2 Jp'Jp + wo^2 Jr'Jr + wl^2 L + (wq^2 + damping^2) I) dq
            = wp^2 Jp'e_pos + wo^2 Jr'e_rot + wl^2 L r_lim + wq^2 (q_posture - q)

    (wp, wo, wl, wq: `position_weight`, `orientation_weight`, `joint_limit_weight`,
    `posture_weight`; L: diagonal, 1 for joints outside their soft range
    (`EntityData.soft_joint_pos_limits`), r_lim: the step that brings them back), i.e. the
    least-squares step over the stacked weighted residuals, clamps each dq to +-`max_dq` and
    sets the position targets q + dq (rad). Needs position actuators on the joints.

    The IK step runs once per env step and its targets are held over the decimation, as every
    action term's here (mjlab re-solves before each physics substep): the servos have the
    decimation's time to reach q + dq, so a larger `max_dq` or more steps converge the same.

    Each step starts from the measured joints, so a servo's steady-state error (position
    servos sag under gravity) becomes a pose error the IK cannot remove: give the links
    gravity compensation (MuJoCo's body `gravcomp`, as a real arm's controller does) or stiff
    servos where the frame must settle on the target.
    """

    cfg: DifferentialIKActionCfg

    def __init__(self, cfg: DifferentialIKActionCfg, env):
        super().__init__(cfg, env)
        e = self.entity
        name = type(cfg).__name__
        if len(e.actuated_joint_ids) == 0:
            raise ValueError(f"Entity '{e.name}' has no actuated joints.")
        ids, names = e.find_actuators(cfg.actuator_names)
        self.joint_names: list[str] = names
        """Controlled joints, in joint order."""
        self._joint_ids = [int(e.actuated_joint_ids[i]) for i in ids]
        model = env.sim.mj_model
        dofs = []
        for j, joint in zip(self._joint_ids, names, strict=True):
            g = e.joint_ids_global[j]
            if int(model.jnt_type[g]) not in _ONE_DOF_JOINTS:
                raise ValueError(
                    f"{name}.actuator_names selects joint '{joint}', which is not a hinge or "
                    "slide: differential IK drives one-dof joints."
                )
            dofs.append(int(model.jnt_dofadr[g]))
        dev, n = env.device, env.num_envs
        self._joint_index = torch.tensor(self._joint_ids, dtype=torch.long, device=dev)

        find, ids_global = {
            "body": (e.find_bodies, e.body_ids_global),
            "site": (e.find_sites, e.site_ids_global),
            "geom": (e.find_geoms, e.geom_ids_global),
        }[cfg.frame_type]
        try:
            frame_ids, frame_names = find(cfg.frame_name)
        except ValueError as err:
            raise ValueError(f"{name}.frame_name: {err}") from None
        if len(frame_ids) != 1:
            raise ValueError(
                f"{name}.frame_name '{cfg.frame_name}' matches {len(frame_ids)} "
                f"{cfg.frame_type}s ({frame_names}); it must name exactly one."
            )
        self.frame = FrameJacobian(env.sim, cfg.frame_type, ids_global[frame_ids[0]], dofs)
        """The controlled frame's pose and Jacobian over the controlled joints."""

        if cfg.orientation_weight > 0:
            self._dim = 6 if cfg.use_relative_mode else 7
        else:
            self._dim = 3
        self.raw_actions = torch.zeros(n, self._dim, device=dev)
        self.processed_actions = torch.zeros_like(self.raw_actions)
        """(num_envs, action_dim) the action after the delta scales and clip."""
        self.desired_pos = torch.zeros(n, 3, device=dev)
        """(num_envs, 3) desired frame position, world, m."""
        self.desired_quat = torch.zeros(n, 4, device=dev)
        """(num_envs, 4) desired frame orientation, wxyz, world."""
        self.desired_quat[:, 0] = 1.0

        posture = e.data.default_joint_pos[:, self._joint_ids].clone()
        for pattern, value in (cfg.posture_target or {}).items():
            hit, _ = resolve_matching_names(
                pattern, names, what="controlled joint", owner=f"{name}.posture_target"
            )
            posture[:, hit] = float(value)
        self.posture_target = posture
        """(num_envs, num_joints) posture the regularization pulls toward, rad: the entity's
        default joint positions, with `posture_target`'s values where it names a joint."""

    # -- properties ------------------------------------------------------------------------------
    @property
    def action_dim(self) -> int:
        return self._dim

    @property
    def raw_action(self) -> torch.Tensor:
        """(num_envs, action_dim) the last raw action."""
        return self.raw_actions

    @property
    def joint_ids(self) -> list[int]:
        """Entity joint indices of the controlled joints, in joint order."""
        return self._joint_ids

    @property
    def num_envs(self) -> int:
        return self.env.num_envs

    @property
    def device(self):
        return self.env.device

    # -- per step ----------------------------------------------------------------------------------
    def process_actions(self, actions: torch.Tensor) -> None:
        cfg = self.cfg
        self.raw_actions[:] = actions
        p = self.processed_actions
        p.copy_(actions)
        if cfg.use_relative_mode:
            p[:, :3] *= cfg.delta_pos_scale
            if self._dim == 6:
                p[:, 3:] *= cfg.delta_ori_scale
        if cfg.clip is not None:
            p.clamp_(*cfg.clip)
        pos, quat = self.frame.pose()
        if self._dim == 7:
            self.desired_pos.copy_(p[:, :3])
            q = p[:, 3:7]
            norm = q.norm(dim=-1, keepdim=True)
            self.desired_quat.copy_(torch.where(norm > 1e-6, q / norm.clamp_min(1e-6), quat))
            return
        if cfg.use_relative_mode:
            torch.add(pos, p[:, :3], out=self.desired_pos)
        else:
            self.desired_pos.copy_(p[:, :3])
        if self._dim == 6:
            rotvec = p[:, 3:6]
            turn = quat_from_angle_axis(rotvec.norm(dim=-1), rotvec)
            self.desired_quat.copy_(quat_mul(turn, quat))
        else:
            self.desired_quat.copy_(quat)

    def frame_pose(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(num_envs, 3) position, m, and (num_envs, 4) orientation wxyz of the frame, world."""
        return self.frame.pose()

    def pose_error(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(num_envs, 3) position error desired - current, m, and (num_envs, 3) rotation vector
        taking the current orientation to the desired one, world, rad."""
        pos, quat = self.frame.pose()
        turn = quat_mul(self.desired_quat, quat_conjugate(quat))
        return self.desired_pos - pos, axis_angle_from_quat(turn)

    def compute_dq(self) -> torch.Tensor:
        """One damped least-squares step from the current state (see the class docstring).

        Returns:
            (num_envs, num_joints) joint displacement, rad, each within +-`max_dq`.
        """
        cfg = self.cfg
        pos, quat = self.frame.pose()
        jacp, jacr = self.frame.jacobian(pos)  # (n, 3, k) each
        err_pos = self.desired_pos - pos
        wp2 = cfg.position_weight**2
        wo2 = cfg.orientation_weight**2
        jacp_t = jacp.transpose(1, 2)
        hess = wp2 * torch.bmm(jacp_t, jacp)
        grad = wp2 * torch.bmm(jacp_t, err_pos.unsqueeze(-1)).squeeze(-1)
        if wo2 > 0:
            err_rot = axis_angle_from_quat(quat_mul(self.desired_quat, quat_conjugate(quat)))
            jacr_t = jacr.transpose(1, 2)
            hess += wo2 * torch.bmm(jacr_t, jacr)
            grad += wo2 * torch.bmm(jacr_t, err_rot.unsqueeze(-1)).squeeze(-1)
        data = self.entity.data
        q = data.joint_pos[:, self._joint_index]
        diag = torch.full_like(q, max(cfg.damping, 1e-6) ** 2 + cfg.posture_weight**2)
        if cfg.joint_limit_weight > 0:
            limits = data.soft_joint_pos_limits[:, self._joint_index]  # (n, k, 2)
            # The step back into the range: > 0 below the lower limit, < 0 above the upper.
            back = (limits[..., 0] - q).clamp_min(0.0) + (limits[..., 1] - q).clamp_max(0.0)
            wl2 = cfg.joint_limit_weight**2
            diag += wl2 * (back != 0)
            grad += wl2 * back
        if cfg.posture_weight > 0:
            grad += cfg.posture_weight**2 * (self.posture_target - q)
        hess.diagonal(dim1=-2, dim2=-1).add_(diag)
        dq = torch.linalg.solve(hess, grad)
        return dq.clamp_(-cfg.max_dq, cfg.max_dq)

    def apply_actions(self) -> None:
        dq = self.compute_dq()
        q = self.entity.data.joint_pos[:, self._joint_index]
        self.entity.set_joint_position_target(q + dq, joint_ids=self._joint_ids)

    def reset(self, env_ids: torch.Tensor | slice | None = None) -> None:
        ids = slice(None) if env_ids is None else env_ids
        self.raw_actions[ids] = 0.0
        self.processed_actions[ids] = 0.0
        self.desired_pos[ids] = 0.0
        self.desired_quat[ids] = 0.0
        self.desired_quat[ids, 0] = 1.0


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


@dataclass(kw_only=True)
class DifferentialIKActionCfg(ActionTermCfg):
    """Task-space control of one frame by damped least-squares IK (`DifferentialIKAction`).

    The action dimension follows the objectives: 3 (position only, `orientation_weight` 0),
    6 (pose, relative mode: position delta and rotation vector), 7 (pose, absolute mode:
    position and quaternion wxyz). `clip` clamps the action after the delta scales.
    """

    class_type: type = DifferentialIKAction
    """Term class."""
    actuator_names: tuple[str, ...] | list[str]
    """Regexes over the entity's actuated joint names: the joints the IK moves (hinges or
    slides with position actuators)."""
    frame_type: Literal["body", "site", "geom"] = "body"
    """What `frame_name` names."""
    frame_name: str
    """The controlled frame (a regex matching exactly one body, site or geom of the entity)."""
    use_relative_mode: bool = True
    """True: actions are deltas from the current frame pose; False: absolute world targets."""
    delta_pos_scale: float = 1.0
    """m of position delta per unit of action (relative mode only)."""
    delta_ori_scale: float = 1.0
    """rad of rotation per unit of action (relative mode only)."""
    damping: float = 0.05
    """Damping lambda of the least-squares step (its square is added to the diagonal); >= 0."""
    max_dq: float = 0.5
    """Largest joint displacement one IK step may ask for, rad (m for slides); > 0."""
    position_weight: float = 1.0
    """Weight of the position residual; >= 0."""
    orientation_weight: float = 1.0
    """Weight of the orientation residual; 0: position only (3-D action)."""
    joint_limit_weight: float = 0.0
    """Weight of the residual that pushes joints outside their soft range back in; 0: off."""
    posture_weight: float = 0.0
    """Weight of the residual toward `posture_target` (the null-space bias of a redundant arm);
    0: off."""
    posture_target: dict[str, float] | None = None
    """{joint regex: rad} posture for the posture residual; joints not named keep the
    entity's default joint position. None: the default posture."""

    def build(self, env) -> DifferentialIKAction:
        """The term for `env` (mjlab 1.6's way of constructing a term), built on a copy of
        this config (which stays as it is)."""
        return self.class_type(copy_config(self), env)

    def validate(self) -> None:
        super().validate()
        name = type(self).__name__
        names = self.actuator_names
        if not isinstance(names, str) and not (
            isinstance(names, (tuple, list))
            and len(names) > 0
            and all(isinstance(n, str) for n in names)
        ):
            raise ValueError(
                f"{name}.actuator_names must be a regex or a non-empty tuple of regexes over "
                f"the entity's actuated joints, got {names!r}."
            )
        if self.frame_type not in FRAME_TYPES:
            raise ValueError(
                f"{name}.frame_type must be one of {list(FRAME_TYPES)}, got {self.frame_type!r}."
            )
        if not isinstance(self.frame_name, str) or not self.frame_name:
            raise ValueError(
                f"{name}.frame_name must name a {self.frame_type} of the entity, got "
                f"{self.frame_name!r}."
            )
        if not isinstance(self.use_relative_mode, bool):
            raise ValueError(
                f"{name}.use_relative_mode must be a bool, got {self.use_relative_mode!r}."
            )
        for field_name, lowest, strict in (
            ("delta_pos_scale", -math.inf, False),
            ("delta_ori_scale", -math.inf, False),
            ("damping", 0.0, False),
            ("position_weight", 0.0, False),
            ("orientation_weight", 0.0, False),
            ("joint_limit_weight", 0.0, False),
            ("posture_weight", 0.0, False),
            ("max_dq", 0.0, True),
        ):
            value = getattr(self, field_name)
            bounded = field_name == "max_dq"  # +inf: no clamp
            ok = (
                _is_number(value)
                and (math.isfinite(value) or (bounded and value == math.inf))
                and (value > lowest if strict else value >= lowest)
            )
            if not ok:
                need = "> 0" if strict else (">= 0" if lowest == 0 else "finite")
                raise ValueError(f"{name}.{field_name} must be a number {need}, got {value!r}.")
        if self.position_weight == 0 and self.orientation_weight == 0:
            raise ValueError(
                f"{name}.position_weight and orientation_weight are both 0: the IK would track "
                "nothing; give one of them a positive weight."
            )
        target = self.posture_target
        if target is not None and not (
            isinstance(target, Mapping)
            and all(isinstance(k, str) and _is_number(v) for k, v in target.items())
        ):
            raise ValueError(
                f"{name}.posture_target must be None or a {{joint regex: rad}} dict, got "
                f"{target!r}."
            )


__all__ = ["DifferentialIKAction", "DifferentialIKActionCfg", "FrameJacobian"]

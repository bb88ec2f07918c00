"""sim2sim: run an exported policy in plain MuJoCo using only its metadata (numpy + mujoco;
no torch, no mjlab-core). The policy sees observations computed here from `mujoco.MjData`,
exactly as a robot's state estimator would provide them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import mujoco
import numpy as np

from mjlab.deploy.metadata import DeploymentMetadata
from mjlab.deploy.policy import OnnxPolicy

_INTEGRATORS = {"euler": 0, "rk4": 1, "implicit": 2, "implicitfast": 3}
_CONES = {"pyramidal": 0, "elliptic": 1}
_SOLVERS = {"pgs": 0, "cg": 1, "newton": 2}


def _quat_rotate_inverse(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate v by the inverse of unit quaternion q (wxyz)."""
    w, u = q[0], -q[1:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


@dataclass
class Sim2SimReport:
    """What a sim2sim run measured."""

    seconds: float
    """Simulated time, s."""
    command: tuple[float, float, float]
    """(vx m/s, vy m/s, wz rad/s), base frame."""
    lin_vel_error: float
    """Mean |v_xy command - v_xy| over the run, m/s (base frame)."""
    ang_vel_error: float
    """Mean |wz command - wz|, rad/s."""
    mean_lin_vel: tuple[float, float]
    """Mean base-frame (vx, vy), m/s."""
    falls: int
    """Times the robot fell (base tilted > 60 deg or base below `fall_height`); it is reset after each."""
    distance: float
    """Horizontal distance from the start to the end (of the last attempt), m."""
    frames: list = field(default_factory=list, repr=False)

    def summary(self) -> str:
        return (
            f"sim2sim {self.seconds:.1f} s, command vx={self.command[0]:+.2f} vy={self.command[1]:+.2f} "
            f"wz={self.command[2]:+.2f}: mean v=({self.mean_lin_vel[0]:+.3f}, {self.mean_lin_vel[1]:+.3f}) m/s, "
            f"tracking error {self.lin_vel_error:.3f} m/s / {self.ang_vel_error:.3f} rad/s, "
            f"falls {self.falls}, distance {self.distance:.2f} m"
        )


class Sim2Sim:
    """The robot of `policy.metadata` in plain MuJoCo, driven by the policy.

    The robot is loaded from mujoco-menagerie by (robot, entry); a ground plane is added; the
    training physics options, joint armature, geom contact parameters and the PD gains from the
    metadata are applied (each joint's position actuator is found by its transmission, not by
    declaration order); the policy runs every `decimation` physics steps with the position
    targets held in between.

    Raises:
        ValueError: the metadata has no menagerie model, a joint is missing from the model, or
            an observation term is not one sim2sim can compute.
    """

    SUPPORTED_TERMS: ClassVar[dict[str, str]] = {
        "base_lin_vel": "root linear velocity, base frame",
        "base_ang_vel": "root angular velocity, base frame",
        "projected_gravity": "gravity direction, base frame",
        "joint_pos_rel": "joint position minus default",
        "joint_vel_rel": "joint velocity",
        "last_action": "previous policy action",
        "generated_commands": "the command vector",
    }

    def __init__(
        self, policy: OnnxPolicy, model: mujoco.MjModel | None = None, fall_height: float = 0.0
    ):
        meta = policy._require_metadata()
        self.policy, self.meta = policy, meta
        for term in meta.observations:
            if term.func not in self.SUPPORTED_TERMS:
                raise ValueError(
                    f"sim2sim cannot compute observation term '{term.name}' (func '{term.func}'); "
                    f"supported: {sorted(self.SUPPORTED_TERMS)}."
                )
        self.model = model if model is not None else self._load_model(meta)
        self.data = mujoco.MjData(self.model)
        self._configure(meta)
        self.fall_height = fall_height
        dims = [c.dim for c in meta.commands] + [
            t.dim for t in meta.observations if t.func == "generated_commands"
        ]
        self.command = np.zeros(max(dims, default=0))
        self.last_action = np.zeros(len(meta.joint_names))
        self.reset()

    @staticmethod
    def _load_model(meta: DeploymentMetadata) -> mujoco.MjModel:
        if not meta.robot.menagerie_name or not meta.robot.entry:
            raise ValueError(
                "The policy metadata names no mujoco-menagerie model (robot.menagerie_name/entry)."
            )
        import mujoco_menagerie

        spec = mujoco_menagerie.get(meta.robot.menagerie_name).spec(meta.robot.entry)
        if not any(g.type == mujoco.mjtGeom.mjGEOM_PLANE for g in spec.geoms):
            floor = spec.worldbody.add_geom(
                name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05]
            )
            floor.friction = [1.0, 0.005, 0.0001]
            spec.worldbody.add_light(pos=[0, 0, 4], dir=[0, 0, -1])
        return spec.compile()

    def _configure(self, meta: DeploymentMetadata) -> None:
        m = self.model
        opts = meta.mujoco_options
        m.opt.timestep = meta.physics_dt
        if "integrator" in opts:
            m.opt.integrator = _INTEGRATORS[opts["integrator"]]
        if "cone" in opts:
            m.opt.cone = _CONES[opts["cone"]]
        if "solver" in opts:
            m.opt.solver = _SOLVERS[opts["solver"]]
        for key in ("iterations", "ls_iterations", "impratio", "tolerance", "ls_tolerance"):
            if key in opts:
                setattr(m.opt, key, opts[key])
        if "gravity" in opts:
            m.opt.gravity[:] = opts["gravity"]
        names = meta.joint_names
        self.joint_ids = []
        self.actuator_ids = []
        for i, name in enumerate(names):
            jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)
            if jid < 0:
                raise ValueError(f"Joint '{name}' of the policy is not in the model.")
            acts = [
                a
                for a in range(m.nu)
                if m.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT
                and m.actuator_trnid[a, 0] == jid
            ]
            if not acts:
                raise ValueError(f"Joint '{name}' has no actuator in the model.")
            a = acts[0]
            kp, kd, limit = meta.stiffness[i], meta.damping[i], meta.effort_limit[i]
            m.actuator_gaintype[a] = mujoco.mjtGain.mjGAIN_FIXED
            m.actuator_biastype[a] = mujoco.mjtBias.mjBIAS_AFFINE
            m.actuator_gainprm[a, :] = 0.0
            m.actuator_biasprm[a, :] = 0.0
            m.actuator_gainprm[a, 0] = kp
            m.actuator_biasprm[a, 1] = -kp
            m.actuator_biasprm[a, 2] = -kd
            m.actuator_ctrllimited[a] = 0
            m.actuator_forcelimited[a] = int(np.isfinite(limit))
            if np.isfinite(limit):
                m.actuator_forcerange[a] = [-limit, limit]
            m.dof_armature[m.jnt_dofadr[jid]] = meta.armature[i]
            self.joint_ids.append(jid)
            self.actuator_ids.append(a)
        geo = meta.robot.geom_params
        robot_geoms = [g for g in range(m.ngeom) if m.geom_bodyid[g] != 0]
        if geo and len(geo.get("condim", [])) == len(robot_geoms):
            for key, field_name in (
                ("condim", "geom_condim"),
                ("friction", "geom_friction"),
                ("priority", "geom_priority"),
                ("solref", "geom_solref"),
                ("contype", "geom_contype"),
                ("conaffinity", "geom_conaffinity"),
            ):
                if key in geo:
                    getattr(m, field_name)[robot_geoms] = np.asarray(geo[key])
        mujoco.mj_setConst(m, self.data)
        self.qpos_adr = m.jnt_qposadr[self.joint_ids]
        self.dof_adr = m.jnt_dofadr[self.joint_ids]
        free = [j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
        if not free:
            raise ValueError("sim2sim drives floating-base robots; the model has no free joint.")
        self.root_q = int(m.jnt_qposadr[free[0]])
        self.root_v = int(m.jnt_dofadr[free[0]])

    # -- state -------------------------------------------------------------------------------------
    def reset(self, qpos: np.ndarray | None = None, qvel: np.ndarray | None = None) -> None:
        """Default pose at the metadata's spawn pose (or the given state); history cleared."""
        d = self.data
        mujoco.mj_resetData(self.model, d)
        if qpos is None:
            d.qpos[self.root_q : self.root_q + 3] = self.meta.robot.init_pos
            d.qpos[self.root_q + 3 : self.root_q + 7] = self.meta.robot.init_rot
            d.qpos[self.qpos_adr] = self.meta.default_joint_pos
        else:
            d.qpos[:] = qpos
        if qvel is not None:
            d.qvel[:] = qvel
        d.ctrl[self.actuator_ids] = d.qpos[self.qpos_adr]
        mujoco.mj_forward(self.model, d)
        self.last_action[:] = 0.0
        self.policy.reset()
        self.start_xy = d.qpos[self.root_q : self.root_q + 2].copy()

    def base_velocity(self) -> tuple[np.ndarray, np.ndarray]:
        """(linear velocity m/s, angular velocity rad/s), both in the base frame."""
        d = self.data
        quat = d.qpos[self.root_q + 3 : self.root_q + 7]
        lin = _quat_rotate_inverse(quat, d.qvel[self.root_v : self.root_v + 3])
        return lin, d.qvel[self.root_v + 3 : self.root_v + 6].copy()

    def observe(self) -> dict[str, np.ndarray]:
        """Every actor observation term, raw (before clip/scale), by term name."""
        d = self.data
        quat = d.qpos[self.root_q + 3 : self.root_q + 7]
        lin, ang = self.base_velocity()
        values = {
            "base_lin_vel": lin,
            "base_ang_vel": ang,
            "projected_gravity": _quat_rotate_inverse(quat, np.array([0.0, 0.0, -1.0])),
            "joint_pos_rel": d.qpos[self.qpos_adr] - np.asarray(self.meta.default_joint_pos),
            "joint_vel_rel": d.qvel[self.dof_adr].copy(),
            "last_action": self.last_action.copy(),
            "generated_commands": self.command.copy(),
        }
        return {t.name: values[t.func] for t in self.meta.observations}

    def step(self, command: np.ndarray | None = None) -> np.ndarray:
        """One control step: observe, act, hold the targets for `decimation` physics steps.
        Returns the observation vector the policy saw."""
        if command is not None:
            self.command[: len(command)] = command
        obs = self.policy.build_observation(self.observe())
        action = self.policy(obs)
        q_target, _, _ = self.policy.joint_targets(action)
        self.data.ctrl[self.actuator_ids] = q_target
        mujoco.mj_step(self.model, self.data, nstep=self.meta.decimation)
        self.last_action[:] = action
        return obs

    def fallen(self) -> bool:
        d = self.data
        quat = d.qpos[self.root_q + 3 : self.root_q + 7]
        up = -_quat_rotate_inverse(quat, np.array([0.0, 0.0, -1.0]))[2]
        return bool(up < np.cos(np.radians(60)) or d.qpos[self.root_q + 2] < self.fall_height)

    def run(
        self,
        seconds: float = 10.0,
        command: tuple[float, float, float] = (0.5, 0.0, 0.0),
        render: Callable[[mujoco.MjModel, mujoco.MjData], np.ndarray] | None = None,
        render_every: int = 1,
    ) -> Sim2SimReport:
        """Run for `seconds` at a fixed command; reset after a fall (and count it)."""
        cmd = np.asarray(command, dtype=np.float64)
        steps = round(seconds / self.meta.step_dt)
        lin_err, ang_err, vels, frames, falls = [], [], [], [], 0
        self.reset()
        for i in range(steps):
            self.step(cmd)
            lin, ang = self.base_velocity()
            lin_err.append(float(np.linalg.norm(cmd[:2] - lin[:2])))
            ang_err.append(float(abs(cmd[2] - ang[2])) if len(cmd) > 2 else 0.0)
            vels.append(lin[:2])
            if render is not None and i % render_every == 0:
                frames.append(render(self.model, self.data))
            if self.fallen():
                falls += 1
                self.reset()
        end = self.data.qpos[self.root_q : self.root_q + 2]
        mean_v = np.mean(vels, axis=0) if vels else np.zeros(2)
        return Sim2SimReport(
            seconds=steps * self.meta.step_dt,
            command=tuple(float(c) for c in cmd),
            lin_vel_error=float(np.mean(lin_err)) if lin_err else 0.0,
            ang_vel_error=float(np.mean(ang_err)) if ang_err else 0.0,
            mean_lin_vel=(float(mean_v[0]), float(mean_v[1])),
            falls=falls,
            distance=float(np.linalg.norm(end - self.start_xy)),
            frames=frames,
        )

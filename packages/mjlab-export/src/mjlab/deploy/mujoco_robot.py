"""`MujocoRobot`: the robot of a policy file in plain MuJoCo, behind the `Robot` protocol of
`mjlab.deploy.control` (numpy + mujoco; no torch, no mjlab-core; needs mjlab-export[sim]).

The robot is loaded from mujoco-menagerie by (robot, entry); a ground plane and a light are added
when the entry has none; the training physics options, joint armature, geom contact parameters
and the PD gains of the file are applied. Observation terms are computed from `mujoco.MjData`
exactly as a robot's state estimator would provide them. `send()` applies a `JointCommand` and
advances the physics by one control period (`decimation` steps), so a `ControlLoop` over it is
a lockstep simulation.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import mujoco
import numpy as np

from mjlab.deploy.control import LOOP_TERMS, JointCommand, RobotState
from mjlab.deploy.frames import (
    heading,
    projected_gravity,
    quat_conjugate,
    quat_mul,
    quat_rotate,
    quat_rotate_inverse,
    yaw_quat,
)
from mjlab.deploy.gains import actuator_for_joint, find_joint
from mjlab.deploy.menagerie import menagerie_spec
from mjlab.deploy.metadata import DeploymentMetadata
from mjlab.deploy.motion import MotionPlayer
from mjlab.deploy.policy import OnnxPolicy

_ENUM_OPTIONS = {
    "integrator": (mujoco.mjtIntegrator, "mjINT_"),
    "cone": (mujoco.mjtCone, "mjCONE_"),
    "solver": (mujoco.mjtSolver, "mjSOL_"),
}
_SCALAR_OPTIONS = ("iterations", "ls_iterations", "impratio", "tolerance", "ls_tolerance")


class MujocoRobot:
    """The robot of a policy file in plain MuJoCo (a `mjlab.deploy.control.Robot`).

    Each joint's position actuator is found by its transmission, not by declaration order, and
    set to the file's PD law: gainprm[0] = kp, biasprm[1] = -kp, biasprm[2] = -kd, forcerange =
    +-effort_limit, no ctrl range. `send()` sets kp/kd/targets from the command (the damping mode
    sends kp = 0) and steps `decimation` physics steps with the targets held.

    Args:
        policy: the policy file (an `OnnxPolicy`, a path) or its `DeploymentMetadata`.
        model: a compiled model to use instead of the Menagerie one (it is modified).
        fall_height: base height below which `fallen()` is true, m; None: half the spawn
            height `robot.init_pos[2]`.
        motion: a tracking policy's motion file (or a `MotionPlayer`): the robot then starts
            every `reset` on the motion's first frame and computes the motion terms from its
            anchor body; `after_cycle(loop)` advances the motion after each policy cycle.

    Raises:
        ValueError: the metadata has no menagerie model, a joint is missing from the model or
            has no single actuator, the actions are not joint positions, an observation term
            is not one this robot can compute (the supported ones are listed), or a tracking
            policy comes without its motion file.
    """

    SUPPORTED_TERMS: ClassVar[dict[str, str]] = {
        "base_lin_vel": "root linear velocity, base frame (R^T qvel[0:3])",
        "base_ang_vel": "root angular velocity, base frame (MuJoCo's free-joint qvel[3:6])",
        "projected_gravity": "gravity direction, base frame (R^T (0, 0, -1))",
        "joint_pos_rel": "joint position minus default",
        "joint_vel_rel": "joint velocity",
        "last_action": "previous raw policy action (computed by the control loop)",
        "generated_commands": "the command vector (`command`), or a tracking policy's motion",
        "motion_anchor_pos_b": "reference anchor position in the anchor body frame (motion)",
        "motion_anchor_ori_b": "reference anchor orientation in the anchor body frame (motion)",
    }

    def __init__(
        self,
        policy: OnnxPolicy | DeploymentMetadata | str | os.PathLike,
        model: mujoco.MjModel | None = None,
        fall_height: float | None = None,
        motion: str | os.PathLike | MotionPlayer | None = None,
    ):
        if isinstance(policy, DeploymentMetadata):
            meta = policy
        else:
            if not isinstance(policy, OnnxPolicy):
                policy = OnnxPolicy(policy)
            meta = policy._require_metadata()
        self.meta = meta
        if meta.action_type != "joint_position":
            raise ValueError(
                f"MujocoRobot drives joint position targets; this policy's actions are "
                f"'{meta.action_type}'."
            )
        for term in meta.observations:
            if term.func not in self.SUPPORTED_TERMS:
                raise ValueError(
                    f"The MuJoCo robot cannot compute observation term '{term.name}' (func '{term.func}'); "
                    f"supported: {sorted(self.SUPPORTED_TERMS)}."
                )
        self.motion: MotionPlayer | None = None
        """The tracking policy's reference motion, or None."""
        if meta.motion is not None:
            if motion is None:
                raise ValueError(
                    f"The policy tracks a reference motion ({meta.motion.source or 'a motion file'}, "
                    f"{meta.motion.num_frames} frames); give its motion file (--motion FILE.npz)."
                )
            self.motion = motion if isinstance(motion, MotionPlayer) else MotionPlayer(motion, meta)
        elif motion is not None:
            raise ValueError(
                f"The policy of task '{meta.task_id}' tracks no motion; leave out --motion."
            )
        self.model = model if model is not None else self._load_model(meta)
        self.data = mujoco.MjData(self.model)
        self._configure(meta)
        self.fall_height = 0.5 * meta.robot.init_pos[2] if fall_height is None else fall_height
        dims = [c.dim for c in meta.commands] + [
            t.dim for t in meta.observations if t.func == "generated_commands"
        ]
        self.command = np.zeros(max(dims, default=0))
        """The command vector the `generated_commands` terms read (e.g. vx, vy, wz)."""
        self.reset()

    @staticmethod
    def load_spec(meta: DeploymentMetadata) -> mujoco.MjSpec:
        """The Menagerie model of `meta.robot` with a ground plane and a light added when the
        entry has none.

        Raises:
            ValueError: the metadata names no Menagerie model.
            mjlab.deploy.menagerie.RobotModelError (a FileNotFoundError): the model could not
                be downloaded or found (`MENAGERIE_ROOT`).
        """
        if not meta.robot.menagerie_name or not meta.robot.entry:
            raise ValueError(
                "The policy metadata names no mujoco-menagerie model (robot.menagerie_name/entry); "
                "pass a compiled model: MujocoRobot(policy, model=...) or Sim2Sim(policy, model=...)."
            )
        spec = menagerie_spec(meta.robot.menagerie_name, meta.robot.entry)
        if not any(g.type == mujoco.mjtGeom.mjGEOM_PLANE for g in spec.geoms):
            floor = spec.worldbody.add_geom(
                name="sim2sim_floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05]
            )
            floor.material = _add_checker_material(spec)
        _light_the_scene(spec)
        return spec

    @classmethod
    def _load_model(cls, meta: DeploymentMetadata) -> mujoco.MjModel:
        return cls.load_spec(meta).compile()

    def _configure(self, meta: DeploymentMetadata) -> None:
        m = self.model
        opts = meta.mujoco_options
        m.opt.timestep = meta.physics_dt
        for key, (enum, prefix) in _ENUM_OPTIONS.items():
            if key in opts:
                setattr(m.opt, key, getattr(enum, prefix + str(opts[key]).upper()))
        for key in _SCALAR_OPTIONS:
            if key in opts:
                setattr(m.opt, key, opts[key])
        if "gravity" in opts:
            m.opt.gravity[:] = opts["gravity"]
        for key, enum, prefix in (
            ("disableflags", mujoco.mjtDisableBit, "mjDSBL_"),
            ("enableflags", mujoco.mjtEnableBit, "mjENBL_"),
        ):
            for flag in opts.get(key) or ():
                setattr(m.opt, key, getattr(m.opt, key) | getattr(enum, prefix + flag.upper()))
        self.joint_ids, self.actuator_ids = [], []
        for i, name in enumerate(meta.joint_names):
            jid = find_joint(m, name)
            a = actuator_for_joint(m, jid)
            kp, kd, limit = meta.stiffness[i], meta.damping[i], meta.effort_limit[i]
            m.actuator_gaintype[a] = mujoco.mjtGain.mjGAIN_FIXED
            m.actuator_biastype[a] = mujoco.mjtBias.mjBIAS_AFFINE
            m.actuator_gainprm[a, :] = 0.0
            m.actuator_biasprm[a, :] = 0.0
            m.actuator_gainprm[a, 0] = kp
            m.actuator_biasprm[a, 1] = -kp
            m.actuator_biasprm[a, 2] = -kd
            m.actuator_gear[a, :] = [1.0, 0, 0, 0, 0, 0]
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
                ("solimp", "geom_solimp"),
                ("margin", "geom_margin"),
                ("gap", "geom_gap"),
                ("contype", "geom_contype"),
                ("conaffinity", "geom_conaffinity"),
            ):
                if key in geo:
                    getattr(m, field_name)[robot_geoms] = np.asarray(geo[key])
        _check_ground_contact(m, robot_geoms, meta)
        # Armature changed: recompute the constant inertia-dependent quantities.
        mujoco.mj_setConst(m, self.data)
        self.qpos_adr = m.jnt_qposadr[self.joint_ids]
        self.dof_adr = m.jnt_dofadr[self.joint_ids]
        free = [j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]
        if not free:
            raise ValueError(
                "MujocoRobot drives floating-base robots; the model has no free joint."
            )
        self.root_body = int(m.jnt_bodyid[free[0]])
        self.root_q = int(m.jnt_qposadr[free[0]])
        self.root_v = int(m.jnt_dofadr[free[0]])
        self.default_joint_pos = np.asarray(self.meta.default_joint_pos)
        if self.motion is not None:
            spec = self.meta.motion
            assert spec is not None
            self.anchor_body = m.body(spec.anchor_body).id
            self.tracked_bodies = [m.body(name).id for name in spec.body_names]
            # The motion's joints (its own order) in this model.
            motion_joints = [find_joint(m, name) for name in self.motion.joint_names]
            self.motion_qpos_adr = m.jnt_qposadr[motion_joints]
            self.motion_dof_adr = m.jnt_dofadr[motion_joints]
            self._policy_cycles_seen = 0

    # -- state -------------------------------------------------------------------------------------
    def reset(self, qpos: np.ndarray | None = None, qvel: np.ndarray | None = None) -> None:
        """Default pose at the metadata's spawn pose (or the given state, (nq,) and (nv,));
        the file's gains, and targets at the current joint positions."""
        d = self.data
        mujoco.mj_resetData(self.model, d)
        if qpos is None and self.motion is not None:
            self.motion.reset(0)
            pos, quat, lin, ang = self.motion.root_state()
            d.qpos[self.root_q : self.root_q + 3] = pos
            d.qpos[self.root_q + 3 : self.root_q + 7] = quat
            d.qpos[self.motion_qpos_adr] = self.motion.joint_pos[0]
            d.qvel[self.root_v : self.root_v + 3] = lin
            # MuJoCo's free joint takes the angular velocity in the body frame.
            d.qvel[self.root_v + 3 : self.root_v + 6] = quat_rotate_inverse(quat, ang)
            d.qvel[self.motion_dof_adr] = self.motion.joint_vel[0]
            self._policy_cycles_seen = 0
        elif qpos is None:
            d.qpos[self.root_q : self.root_q + 3] = self.meta.robot.init_pos
            rot = np.asarray(self.meta.robot.init_rot)
            d.qpos[self.root_q + 3 : self.root_q + 7] = rot / np.linalg.norm(rot)
            d.qpos[self.qpos_adr] = self.default_joint_pos
        else:
            d.qpos[:] = qpos
        if qvel is not None:
            d.qvel[:] = qvel
        d.ctrl[self.actuator_ids] = d.qpos[self.qpos_adr]
        m, a = self.model, self.actuator_ids
        m.actuator_gainprm[a, 0] = self.meta.stiffness
        m.actuator_biasprm[a, 1] = -np.asarray(self.meta.stiffness)
        m.actuator_biasprm[a, 2] = -np.asarray(self.meta.damping)
        mujoco.mj_forward(self.model, d)
        self.start_xy = d.qpos[self.root_q : self.root_q + 2].copy()

    def base_velocity(self) -> tuple[np.ndarray, np.ndarray]:
        """(linear velocity (3,) m/s, angular velocity (3,) rad/s), both in the base frame."""
        d = self.data
        quat = d.qpos[self.root_q + 3 : self.root_q + 7]
        # MuJoCo free joint: qvel[0:3] is the world-frame linear velocity, qvel[3:6] the
        # angular velocity in the body frame (MuJoCo doc, "Floating objects").
        lin = quat_rotate_inverse(quat, d.qvel[self.root_v : self.root_v + 3])
        return lin, d.qvel[self.root_v + 3 : self.root_v + 6].copy()

    def projected_gravity(self) -> np.ndarray:
        """(3,) unit gravity direction in the base frame; (0, 0, -1) when upright."""
        quat = self.data.qpos[self.root_q + 3 : self.root_q + 7]
        return projected_gravity(quat)

    def set_command(self, command: Sequence[float] | np.ndarray) -> None:
        """Set the first values of `command` (e.g. vx m/s, vy m/s, wz rad/s for velocity tasks).

        Raises:
            ValueError: more values than the policy's command has, or a value that is not
                finite (the command is kept then).
        """
        values = np.asarray(command, dtype=np.float64).reshape(-1)
        if not np.isfinite(values).all():
            raise ValueError(f"The command must be finite numbers, got {values.tolist()}.")
        if values.shape[0] > self.command.shape[0]:
            raise ValueError(
                f"The command has {values.shape[0]} values; the policy reads {self.command.shape[0]}."
            )
        self.command[: values.shape[0]] = values

    # -- the Robot protocol ---------------------------------------------------------------------
    def observe_terms(self) -> dict[str, np.ndarray]:
        """Every observation term the robot provides (all but `LOOP_TERMS`), raw (before
        clip/scale), by term name."""
        d = self.data
        lin, ang = self.base_velocity()
        values: dict[str, Callable[[], np.ndarray]] = {
            "base_lin_vel": lambda: lin,
            "base_ang_vel": lambda: ang,
            "projected_gravity": self.projected_gravity,
            "joint_pos_rel": lambda: d.qpos[self.qpos_adr] - self.default_joint_pos,
            "joint_vel_rel": lambda: d.qvel[self.dof_adr].copy(),
            "generated_commands": lambda: self.command.copy(),
        }
        if self.motion is not None:
            self._kinematics()
            motion_terms = self.motion.terms(d.xpos[self.anchor_body], d.xquat[self.anchor_body])
            for func, value in motion_terms.items():
                values[func] = value.copy
        return {
            t.name: values[t.func]() for t in self.meta.observations if t.func not in LOOP_TERMS
        }

    def read(self) -> RobotState:
        """The current state; `stamp` is the simulation time."""
        d = self.data
        return RobotState(
            joint_pos=d.qpos[self.qpos_adr].copy(),
            joint_vel=d.qvel[self.dof_adr].copy(),
            terms=self.observe_terms(),
            stamp=float(d.time),
        )

    def send(self, command: JointCommand) -> None:
        """Apply the PD command (gains and targets, joint order) and step one control period."""
        m, a = self.model, self.actuator_ids
        m.actuator_gainprm[a, 0] = command.kp
        m.actuator_biasprm[a, 1] = -np.asarray(command.kp)
        m.actuator_biasprm[a, 2] = -np.asarray(command.kd)
        self.data.ctrl[a] = command.q_target
        mujoco.mj_step(m, self.data, nstep=self.meta.decimation)

    def after_cycle(self, loop: Any) -> None:
        """Advance the motion one frame if the loop's last cycle ran the policy (soft-start,
        held-fault and damping cycles do not: the motion starts when the policy takes over).
        Call after every `ControlLoop.step`; a no-op without a motion."""
        if self.motion is None:
            return
        if loop.stats.policy_cycles > self._policy_cycles_seen:
            self.motion.advance()
        self._policy_cycles_seen = loop.stats.policy_cycles

    def _kinematics(self) -> None:
        # mj_step leaves xpos/xquat at the state before its last integration; body poses of the
        # current qpos need the position stage again (a robot's FK of its measured joints).
        mujoco.mj_kinematics(self.model, self.data)

    def tracking_errors(self) -> tuple[float, float]:
        """Against the motion's current frame: (mean body position error m, as in training:
        the reference bodies moved to the robot anchor's x, y and yaw; mean joint position
        error rad).

        Raises:
            ValueError: the robot plays no motion.
        """
        if self.motion is None:
            raise ValueError("tracking_errors needs a tracking policy's motion.")
        d = self.data
        self._kinematics()
        ref_anchor_pos, ref_anchor_quat = self.motion.anchor_pose_w()
        ref_pos, _ = self.motion.body_pose_w()
        anchor_pos, anchor_quat = d.xpos[self.anchor_body], d.xquat[self.anchor_body]
        # The task's relative reference: the heading of q_robot q_ref^-1.
        turn = yaw_quat(heading(quat_mul(anchor_quat, quat_conjugate(ref_anchor_quat))))
        base = np.array([anchor_pos[0], anchor_pos[1], ref_anchor_pos[2]])
        relative = np.stack([base + quat_rotate(turn, p - ref_anchor_pos) for p in ref_pos])
        body_err = float(np.linalg.norm(relative - d.xpos[self.tracked_bodies], axis=1).mean())
        joint_err = float(
            np.abs(d.qpos[self.motion_qpos_adr] - self.motion.joint_pos[self.motion.frame]).mean()
        )
        return body_err, joint_err

    def left_motion(self) -> bool:
        """The tracking task's failure terminations against the current frame: the anchor
        more than 0.25 m above or below the reference's, or the z components of gravity in the
        two anchor frames more than 0.8 apart (a motion may squat or sit lower than
        `fallen()`'s base height allows)."""
        if self.motion is None:
            raise ValueError("left_motion needs a tracking policy's motion.")
        self._kinematics()
        d = self.data
        ref_pos, ref_quat = self.motion.anchor_pose_w()
        quat = d.xquat[self.anchor_body]
        tilt = abs(projected_gravity(ref_quat)[2] - projected_gravity(quat)[2])
        return bool(abs(ref_pos[2] - d.xpos[self.anchor_body][2]) > 0.25 or tilt > 0.8)

    def fallen(self) -> bool:
        """Whether the base is tilted more than 60 deg (projected gravity z > -0.5) or lower
        than `fall_height`."""
        height = self.data.qpos[self.root_q + 2]
        return bool(self.projected_gravity()[2] > -0.5 or height < self.fall_height)

    def make_renderer(
        self, height: int = 480, width: int = 640
    ) -> Callable[[mujoco.MjModel, mujoco.MjData], np.ndarray]:
        """A render callback for `run` with a camera that follows the base.

        Raises:
            mjlab.deploy.headless.HeadlessGLError: MuJoCo has no OpenGL context (headless, and
                mujoco was imported without MUJOCO_GL; `deploy sim2sim --video` chooses it).
        """
        from mjlab.deploy.headless import renderer_error

        try:
            renderer = mujoco.Renderer(self.model, height=height, width=width)
        except Exception as error:
            raise renderer_error(error) from error
        camera = mujoco.MjvCamera()
        camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
        camera.trackbodyid = self.root_body
        camera.distance, camera.elevation, camera.azimuth = 2.0, -15.0, 120.0

        def render(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
            renderer.update_scene(data, camera=camera)
            return renderer.render()

        return render

    def walked(self) -> float:
        """Horizontal distance from the last reset to now, m."""
        end = self.data.qpos[self.root_q : self.root_q + 2]
        return float(np.linalg.norm(end - self.start_xy))


def _check_ground_contact(m: mujoco.MjModel, robot_geoms: list[int], meta: Any) -> None:
    """Warn when no robot geom can touch a world geom (through contype/conaffinity or an
    explicit pair): the robot would fall through the floor, e.g. a G1 policy exported with the
    Menagerie entry `g1_mjx`, whose contacts are pairs declared in `scene_mjx`."""
    import warnings

    world = np.nonzero(m.geom_bodyid == 0)[0]
    robot = np.asarray(robot_geoms, dtype=np.int64)
    if robot.size == 0 or world.size == 0:
        return
    bits = (m.geom_contype[robot][:, None] & m.geom_conaffinity[world][None, :]) | (
        m.geom_conaffinity[robot][:, None] & m.geom_contype[world][None, :]
    )
    on_world = m.geom_bodyid[m.pair_geom1] == 0, m.geom_bodyid[m.pair_geom2] == 0
    if bits.any() or bool(np.any(on_world[0] != on_world[1])):
        return
    warnings.warn(
        f"MuJoCo robot: no geom of the robot can touch the floor in Menagerie entry "
        f"'{meta.robot.entry}' (all contype/conaffinity 0 and no contact pair with a world geom); "
        "the robot will fall through it. Load an entry that declares its contacts (for the "
        "Unitree G1: 'scene_mjx'), or pass a compiled model (MujocoRobot(policy, model=...)).",
        stacklevel=3,
    )


def _add_checker_material(spec: mujoco.MjSpec) -> str:
    """A 1 m grey checker material for the floor sim2sim adds (motion is easy to judge on it);
    returns its name."""
    spec.add_texture(
        name="sim2sim_checker",
        type=mujoco.mjtTexture.mjTEXTURE_2D,
        builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER,
        rgb1=[0.42, 0.47, 0.53],
        rgb2=[0.3, 0.34, 0.39],
        width=256,
        height=256,
    )
    material = spec.add_material(name="sim2sim_floor", texrepeat=[1, 1], texuniform=True)
    material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "sim2sim_checker"
    return "sim2sim_floor"


def _light_the_scene(spec: mujoco.MjSpec) -> None:
    """Enough light to see the robot in a video or the native viewer: a brighter headlight (a
    robot entry alone is lit by a spotlight at most), a directional sun and a sky when the
    model has none. Visual only: no effect on the physics."""
    headlight = spec.visual.headlight
    headlight.ambient = np.maximum(headlight.ambient, 0.35)
    headlight.diffuse = np.maximum(headlight.diffuse, 0.55)
    if not any(light.type == mujoco.mjtLightType.mjLIGHT_DIRECTIONAL for light in spec.lights):
        spec.worldbody.add_light(
            name="sim2sim_sun",
            pos=[0, 0, 4],
            dir=[0, -0.3, -1],
            type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL,
            castshadow=False,
        )
    if not any(t.type == mujoco.mjtTexture.mjTEXTURE_SKYBOX for t in spec.textures):
        spec.add_texture(
            name="sim2sim_sky",
            type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
            builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT,
            rgb1=[0.45, 0.62, 0.8],
            rgb2=[0.08, 0.1, 0.14],
            width=64,
            height=384,
        )

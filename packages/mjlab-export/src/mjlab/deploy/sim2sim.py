"""sim2sim: run an exported policy in plain MuJoCo using only its metadata (numpy + mujoco;
no torch, no mjlab-core). The policy sees observations computed here from `mujoco.MjData`,
exactly as a robot's state estimator would provide them."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import mujoco
import numpy as np

from mjlab.deploy.gains import actuator_for_joint, find_joint
from mjlab.deploy.metadata import DeploymentMetadata
from mjlab.deploy.policy import OnnxPolicy

_ENUM_OPTIONS = {
    "integrator": (mujoco.mjtIntegrator, "mjINT_"),
    "cone": (mujoco.mjtCone, "mjCONE_"),
    "solver": (mujoco.mjtSolver, "mjSOL_"),
}
_SCALAR_OPTIONS = ("iterations", "ls_iterations", "impratio", "tolerance", "ls_tolerance")
_GRAVITY_B = np.array([0.0, 0.0, -1.0])


def _quat_rotate_inverse(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate v by the inverse of unit quaternion q (wxyz): R(q)^T v."""
    w, u = q[0], -q[1:]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


@dataclass
class Sim2SimReport:
    """What a sim2sim run measured."""

    seconds: float
    """Simulated time, s."""
    command: tuple[float, ...]
    """The command held during the run; for velocity tasks (vx m/s, vy m/s, wz rad/s), base frame."""
    lin_vel_error: float
    """Mean |v_xy command - v_xy| over the run, m/s (base frame)."""
    ang_vel_error: float
    """Mean |wz command - wz|, rad/s (0 when the command has fewer than 3 values)."""
    mean_lin_vel: tuple[float, float]
    """Mean base-frame (vx, vy), m/s."""
    falls: int
    """Times the robot fell (projected gravity z > -0.5, i.e. tilted more than 60 deg, or base
    below `fall_height`); it is reset after each."""
    distance: float
    """Horizontal distance walked: summed over attempts, start to end of each, m."""
    frames: list = field(default_factory=list, repr=False)
    """Rendered RGB frames (height, width, 3) uint8, when rendering was asked for."""

    def summary(self) -> str:
        """One line for a terminal."""
        command = ", ".join(f"{c:+.2f}" for c in self.command)
        return (
            f"sim2sim {self.seconds:.1f} s, command ({command}): mean v=({self.mean_lin_vel[0]:+.3f}, "
            f"{self.mean_lin_vel[1]:+.3f}) m/s, tracking error {self.lin_vel_error:.3f} m/s / "
            f"{self.ang_vel_error:.3f} rad/s, falls {self.falls}, distance {self.distance:.2f} m"
        )


class Sim2Sim:
    """The robot of `policy.metadata` in plain MuJoCo, driven by the policy.

    The robot is loaded from mujoco-menagerie by (robot, entry); a ground plane and a light are
    added when the entry has none; the training physics options, joint armature, geom contact
    parameters and the PD gains from the metadata are applied (each joint's position actuator
    is found by its transmission, not by declaration order: gainprm[0] = kp, biasprm[1] = -kp,
    biasprm[2] = -kd, forcerange = +-effort_limit, no ctrl range); the policy runs every
    `decimation` physics steps with the position targets held in between.

    Args:
        policy: the exported policy (an `OnnxPolicy` or a path to the .onnx file).
        model: a compiled model to use instead of the Menagerie one (it is modified).
        fall_height: base height below which the robot counts as fallen, m; None: half the
            spawn height `robot.init_pos[2]`.

    Raises:
        ValueError: the metadata has no menagerie model, a joint is missing from the model or
            has no single actuator, the actions are not joint positions, or an observation term
            is not one sim2sim can compute (the supported ones are listed).
    """

    SUPPORTED_TERMS: ClassVar[dict[str, str]] = {
        "base_lin_vel": "root linear velocity, base frame (R^T qvel[0:3])",
        "base_ang_vel": "root angular velocity, base frame (MuJoCo's free-joint qvel[3:6])",
        "projected_gravity": "gravity direction, base frame (R^T (0, 0, -1))",
        "joint_pos_rel": "joint position minus default",
        "joint_vel_rel": "joint velocity",
        "last_action": "previous raw policy action (zeros after reset)",
        "generated_commands": "the command vector",
    }

    def __init__(
        self,
        policy: OnnxPolicy | str | os.PathLike,
        model: mujoco.MjModel | None = None,
        fall_height: float | None = None,
    ):
        if not isinstance(policy, OnnxPolicy):
            policy = OnnxPolicy(policy)
        meta = policy._require_metadata()
        self.policy, self.meta = policy, meta
        if meta.action_type != "joint_position":
            raise ValueError(
                f"sim2sim drives joint position targets; this policy's actions are '{meta.action_type}'."
            )
        for term in meta.observations:
            if term.func not in self.SUPPORTED_TERMS:
                raise ValueError(
                    f"sim2sim cannot compute observation term '{term.name}' (func '{term.func}'); "
                    f"supported: {sorted(self.SUPPORTED_TERMS)}."
                )
        self.model = model if model is not None else self._load_model(meta)
        self.data = mujoco.MjData(self.model)
        self._configure(meta)
        self.fall_height = 0.5 * meta.robot.init_pos[2] if fall_height is None else fall_height
        dims = [c.dim for c in meta.commands] + [
            t.dim for t in meta.observations if t.func == "generated_commands"
        ]
        self.command = np.zeros(max(dims, default=0))
        self.last_action = np.zeros(meta.num_joints)
        self.reset()

    @staticmethod
    def load_spec(meta: DeploymentMetadata) -> mujoco.MjSpec:
        """The Menagerie model of `meta.robot` with a ground plane and a light added when the
        entry has none.

        Raises:
            ValueError: the metadata names no Menagerie model.
        """
        if not meta.robot.menagerie_name or not meta.robot.entry:
            raise ValueError(
                "The policy metadata names no mujoco-menagerie model (robot.menagerie_name/entry); "
                "pass a compiled model to Sim2Sim(policy, model=...)."
            )
        import mujoco_menagerie

        spec = mujoco_menagerie.get(meta.robot.menagerie_name).spec(meta.robot.entry)
        if not any(g.type == mujoco.mjtGeom.mjGEOM_PLANE for g in spec.geoms):
            floor = spec.worldbody.add_geom(
                name="sim2sim_floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05]
            )
            floor.rgba = [0.3, 0.35, 0.4, 1.0]
        if not spec.lights:
            spec.worldbody.add_light(pos=[0, 0, 4], dir=[0, 0, -1], directional=True)
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
            raise ValueError("sim2sim drives floating-base robots; the model has no free joint.")
        self.root_body = int(m.jnt_bodyid[free[0]])
        self.root_q = int(m.jnt_qposadr[free[0]])
        self.root_v = int(m.jnt_dofadr[free[0]])
        self.default_joint_pos = np.asarray(self.meta.default_joint_pos)

    # -- state -------------------------------------------------------------------------------------
    def reset(self, qpos: np.ndarray | None = None, qvel: np.ndarray | None = None) -> None:
        """Default pose at the metadata's spawn pose (or the given state, (nq,) and (nv,));
        last action and observation history cleared; targets set to the current joint positions."""
        d = self.data
        mujoco.mj_resetData(self.model, d)
        if qpos is None:
            d.qpos[self.root_q : self.root_q + 3] = self.meta.robot.init_pos
            rot = np.asarray(self.meta.robot.init_rot)
            d.qpos[self.root_q + 3 : self.root_q + 7] = rot / np.linalg.norm(rot)
            d.qpos[self.qpos_adr] = self.default_joint_pos
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
        """(linear velocity (3,) m/s, angular velocity (3,) rad/s), both in the base frame."""
        d = self.data
        quat = d.qpos[self.root_q + 3 : self.root_q + 7]
        # MuJoCo free joint: qvel[0:3] is the world-frame linear velocity, qvel[3:6] the
        # angular velocity in the body frame (MuJoCo doc, "Floating objects").
        lin = _quat_rotate_inverse(quat, d.qvel[self.root_v : self.root_v + 3])
        return lin, d.qvel[self.root_v + 3 : self.root_v + 6].copy()

    def projected_gravity(self) -> np.ndarray:
        """(3,) unit gravity direction in the base frame; (0, 0, -1) when upright."""
        quat = self.data.qpos[self.root_q + 3 : self.root_q + 7]
        return _quat_rotate_inverse(quat, _GRAVITY_B)

    def observe(self) -> dict[str, np.ndarray]:
        """Every actor observation term, raw (before clip/scale), by term name."""
        d = self.data
        lin, ang = self.base_velocity()
        values = {
            "base_lin_vel": lambda: lin,
            "base_ang_vel": lambda: ang,
            "projected_gravity": self.projected_gravity,
            "joint_pos_rel": lambda: d.qpos[self.qpos_adr] - self.default_joint_pos,
            "joint_vel_rel": lambda: d.qvel[self.dof_adr].copy(),
            "last_action": lambda: self.last_action.copy(),
            "generated_commands": lambda: self.command.copy(),
        }
        return {t.name: values[t.func]() for t in self.meta.observations}

    def step(self, command: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
        """One control step: observe, act, hold the targets for `decimation` physics steps.

        Args:
            command: the command vector (e.g. (vx, vy, wz)); None keeps the previous one.

        Returns:
            (obs_dim,) float32, the observation vector the policy acted on.

        Raises:
            ValueError: the command has more values than the policy's command.
        """
        if command is not None:
            command = np.asarray(command, dtype=np.float64).reshape(-1)
            if command.shape[0] > self.command.shape[0]:
                raise ValueError(
                    f"Command has {command.shape[0]} values; the policy reads {self.command.shape[0]}."
                )
            self.command[: command.shape[0]] = command
        obs = self.policy.build_observation(self.observe())
        action = self.policy(obs)
        q_target, _, _ = self.policy.joint_targets(action)
        self.data.ctrl[self.actuator_ids] = q_target
        mujoco.mj_step(self.model, self.data, nstep=self.meta.decimation)
        self.last_action[:] = action
        return obs

    def fallen(self) -> bool:
        """Whether the base is tilted more than 60 deg (projected gravity z > -0.5) or lower
        than `fall_height`."""
        height = self.data.qpos[self.root_q + 2]
        return bool(self.projected_gravity()[2] > -0.5 or height < self.fall_height)

    def make_renderer(
        self, height: int = 360, width: int = 480
    ) -> Callable[[mujoco.MjModel, mujoco.MjData], np.ndarray]:
        """A render callback for `run` with a camera that follows the base (needs an OpenGL
        context: set MUJOCO_GL=egl on a headless machine)."""
        renderer = mujoco.Renderer(self.model, height=height, width=width)
        camera = mujoco.MjvCamera()
        camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
        camera.trackbodyid = self.root_body
        camera.distance, camera.elevation, camera.azimuth = 2.0, -15.0, 120.0

        def render(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
            renderer.update_scene(data, camera=camera)
            return renderer.render()

        return render

    def run(
        self,
        seconds: float = 10.0,
        command: Sequence[float] = (0.5, 0.0, 0.0),
        render: Callable[[mujoco.MjModel, mujoco.MjData], np.ndarray] | None = None,
        render_every: int = 1,
        video: str | os.PathLike | None = None,
    ) -> Sim2SimReport:
        """Run for `seconds` at a fixed command from the spawn pose; reset after a fall (and
        count it).

        Args:
            seconds: simulated time, s.
            command: the command vector; the tracking errors read it as (vx m/s, vy m/s, wz rad/s).
            render: called every `render_every` control steps; its frames go into the report.
            render_every: control steps between frames.
            video: write the frames to this .mp4 (a tracking-camera renderer is made when
                `render` is None; needs imageio[ffmpeg], i.e. mjlab-export[sim]).

        Returns:
            A `Sim2SimReport`.
        """
        cmd = np.asarray(command, dtype=np.float64).reshape(-1)
        if video is not None and render is None:
            render = self.make_renderer()
        steps = round(seconds / self.meta.step_dt)
        lin_err, ang_err, vels, frames, falls, distance = [], [], [], [], 0, 0.0
        self.reset()
        for i in range(steps):
            self.step(cmd)
            lin, ang = self.base_velocity()
            target = np.zeros(3)
            target[: min(3, cmd.shape[0])] = cmd[:3]
            lin_err.append(float(np.linalg.norm(target[:2] - lin[:2])))
            ang_err.append(float(abs(target[2] - ang[2])) if cmd.shape[0] > 2 else 0.0)
            vels.append(lin[:2])
            if render is not None and i % render_every == 0:
                frames.append(render(self.model, self.data))
            if self.fallen():
                falls += 1
                distance += self._walked()
                self.reset()
        distance += self._walked()
        mean_v = np.mean(vels, axis=0) if vels else np.zeros(2)
        report = Sim2SimReport(
            seconds=steps * self.meta.step_dt,
            command=tuple(float(c) for c in cmd),
            lin_vel_error=float(np.mean(lin_err)) if lin_err else 0.0,
            ang_vel_error=float(np.mean(ang_err)) if ang_err else 0.0,
            mean_lin_vel=(float(mean_v[0]), float(mean_v[1])),
            falls=falls,
            distance=distance,
            frames=frames,
        )
        if video is not None:
            write_video(video, frames, fps=1.0 / (self.meta.step_dt * render_every))
        return report

    def _walked(self) -> float:
        end = self.data.qpos[self.root_q : self.root_q + 2]
        return float(np.linalg.norm(end - self.start_xy))


def write_video(path: str | os.PathLike, frames: list[np.ndarray], fps: float) -> Path:
    """Write RGB frames (height, width, 3) uint8 to an mp4 at `fps` frames per second.

    Raises:
        ValueError: no frames.
        ImportError: imageio is not installed (pip install 'mjlab-export[sim]').
    """
    import imageio.v2 as imageio

    if not frames:
        raise ValueError("No frames to write; run at least one control step.")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    images: list[Any] = list(frames)
    imageio.mimwrite(path, images, fps=fps, macro_block_size=1)
    return path


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
        f"sim2sim: no geom of the robot can touch the floor in Menagerie entry "
        f"'{meta.robot.entry}' (all contype/conaffinity 0 and no contact pair with a world geom); "
        "the robot will fall through it. Load an entry that declares its contacts (for the "
        "Unitree G1: 'scene_mjx'), or pass Sim2Sim(policy, model=...).",
        stacklevel=3,
    )

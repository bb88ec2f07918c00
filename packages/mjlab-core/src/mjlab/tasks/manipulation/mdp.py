"""Terms of the lift task: the cube and table models, the lift target command, observations,
rewards, terminations and the cube's randomization.

Frames: `_b` is the robot's base frame (the Panda's `link0`), `_w` the world. Units SI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import mujoco
import torch

from mjlab.managers.command_manager import CommandTerm
from mjlab.managers.manager_term_config import CommandTermCfg
from mjlab.managers.scene_entity_config import SceneEntityCfg
from mjlab.utils.math import (
    quat_apply_inverse,
    quat_conjugate,
    quat_from_euler_xyz,
    quat_mul,
    rand,
    sample_uniform,
)

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

CUBE_HALF_SIZE = 0.02
"""Nominal half edge of the cube, m (a 4 cm cube)."""
CUBE_MASS = 0.1
"""Nominal cube mass, kg."""
TABLE_TOP = (0.55, 0.6, 0.02)
"""Half sizes of the table top box, m; its top face is at z = 0 (the robot's base height)."""
TABLE_CENTER = (0.35, 0.0, -0.02)
"""Centre of the table top box, base frame, m: it spans x -0.2..0.9 m, y -0.6..0.6 m."""

_ROBOT = SceneEntityCfg("robot")
_CUBE = SceneEntityCfg("cube")


def cube_spec(half_size: float = CUBE_HALF_SIZE, mass: float = CUBE_MASS) -> mujoco.MjSpec:
    """A cube on a free joint: body "cube", box geom "cube" (red). Its contact bits follow
    Menagerie's MJX Panda scene (contype 2, conaffinity 1): it touches the table and the
    fingertip pads, not the hand capsule."""
    spec = mujoco.MjSpec()
    body = spec.worldbody.add_body(name="cube")
    body.add_freejoint(name="cube")
    body.add_geom(
        name="cube",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=[half_size] * 3,
        mass=mass,
        rgba=[0.85, 0.15, 0.1, 1.0],
        contype=2,
        conaffinity=1,
        condim=4,
        friction=[1.0, 0.01, 0.0001],
        solref=[0.01, 1.0],
    )
    return spec


def table_spec() -> mujoco.MjSpec:
    """A table top (body "table", box geom "top", contype = conaffinity = 1) whose top face is
    the plane z = 0 of the robot's base; the cube falls off its edges."""
    spec = mujoco.MjSpec()
    body = spec.worldbody.add_body(name="table", pos=list(TABLE_CENTER))
    body.add_geom(
        name="top",
        type=mujoco.mjtGeom.mjGEOM_BOX,
        size=list(TABLE_TOP),
        rgba=[0.55, 0.45, 0.35, 1.0],
        contype=1,
        conaffinity=1,
        condim=3,
        friction=[1.0, 0.005, 0.0001],
    )
    return spec


# -- frames ------------------------------------------------------------------------------------
def _to_base(env: ManagerBasedRlEnv, pos_w: torch.Tensor) -> torch.Tensor:
    robot = env.scene[_ROBOT.name].data
    return quat_apply_inverse(robot.root_link_quat_w, pos_w - robot.root_link_pos_w)


def _site_pos_w(env: ManagerBasedRlEnv, site: str) -> torch.Tensor:
    robot = env.scene[_ROBOT.name]
    cache = env.__dict__.setdefault("_lift_site_ids", {})
    sid = cache.get(site)
    if sid is None:
        sid = cache[site] = robot.site_ids_global[robot.site_names.index(site)]
    return env.sim.data.site_xpos[:, sid].float()


def ee_pos_w(env: ManagerBasedRlEnv, site: str = "gripper") -> torch.Tensor:
    """(num_envs, 3) world position of the gripper site (between the fingertips), m."""
    return _site_pos_w(env, site)


def cube_pos_w(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _CUBE) -> torch.Tensor:
    """(num_envs, 3) world position of the cube's centre, m."""
    return env.scene[asset_cfg.name].data.root_link_pos_w


# -- command -----------------------------------------------------------------------------------
class LiftTargetCommand(CommandTerm):
    """`command`: (num_envs, 3) where the cube should be held, base frame, m: over the cube's
    position at the start of the episode, `height` above the table (drawn from
    `cfg.height_range` at every reset).

    Metrics (logged when an episode ends): `error_pos` (m, the episode mean of the cube's
    distance to the target), `lifted` and `success` (1 when, at the episode's last measured
    step (the one before the step that ended it), the cube's bottom is 3 cm above the table,
    resp. its centre is within `success_threshold` of the target).
    """

    cfg: LiftTargetCommandCfg
    components = ("x", "y", "z")

    def __init__(self, cfg: LiftTargetCommandCfg, env):
        super().__init__(cfg, env)
        n, dev = self.num_envs, self.device
        self.target_b = torch.zeros(n, 3, device=dev)
        self.metrics["error_pos"] = torch.zeros(n, device=dev)
        self.metrics["lifted"] = torch.zeros(n, device=dev)
        self.metrics["success"] = torch.zeros(n, device=dev)

    @property
    def command(self) -> torch.Tensor:
        return self.target_b

    def _resample(self, env_ids: torch.Tensor) -> None:
        cube_b = _to_base(self.env, cube_pos_w(self.env))[env_ids]
        self.target_b[env_ids, :2] = cube_b[:, :2]
        lo, hi = self.cfg.height_range
        self.target_b[env_ids, 2] = sample_uniform(lo, hi, len(env_ids), self.device, self.env.rng)

    def _update_command(self) -> None:
        pass

    def _update_metrics(self) -> None:
        cube_b = _to_base(self.env, cube_pos_w(self.env))
        dist = (cube_b - self.target_b).norm(dim=-1)
        self._accumulate_episode_mean("error_pos", dist)
        self.metrics["lifted"] = lifted(self.env).float()
        self.metrics["success"] = (dist < self.cfg.success_threshold).float()


@dataclass(kw_only=True)
class LiftTargetCommandCfg(CommandTermCfg):
    """Config of `LiftTargetCommand`; resampled only at resets by default."""

    class_type: type = LiftTargetCommand
    """The command term class."""
    height_range: tuple[float, float] = (0.1, 0.25)
    """Target height of the cube's centre above the table, m."""
    success_threshold: float = 0.05
    """A cube within this distance of the target counts as a success, m."""
    resampling_time_range: tuple[float, float] = (1e6, 1e6)
    """Held for the whole episode (drawn at reset)."""

    def validate(self) -> None:
        super().validate()
        lo, hi = self.height_range
        if not 0.0 < lo <= hi:
            raise ValueError(
                f"LiftTargetCommandCfg.height_range must be 0 < low <= high (m above the table), "
                f"got {self.height_range}."
            )
        if not self.success_threshold > 0:
            raise ValueError(
                f"LiftTargetCommandCfg.success_threshold must be > 0 m, got "
                f"{self.success_threshold}."
            )


# -- observations ------------------------------------------------------------------------------
def ee_pos_b(env: ManagerBasedRlEnv, site: str = "gripper") -> torch.Tensor:
    """(num_envs, 3) gripper site position in the robot's base frame, m."""
    return _to_base(env, ee_pos_w(env, site))


def cube_pos_b(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _CUBE) -> torch.Tensor:
    """(num_envs, 3) cube centre in the robot's base frame, m (a robot gets it from perception)."""
    return _to_base(env, cube_pos_w(env, asset_cfg))


def cube_quat_b(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _CUBE) -> torch.Tensor:
    """(num_envs, 4) cube orientation in the robot's base frame, quaternion wxyz."""
    robot = env.scene[_ROBOT.name].data
    return quat_mul(
        quat_conjugate(robot.root_link_quat_w), env.scene[asset_cfg.name].data.root_link_quat_w
    )


def cube_lin_vel_w(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _CUBE) -> torch.Tensor:
    """(num_envs, 3) cube linear velocity, world frame, m/s (privileged: for the critic)."""
    return env.scene[asset_cfg.name].data.root_link_lin_vel_w


# -- rewards -----------------------------------------------------------------------------------
def _cube_half_height(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _CUBE) -> torch.Tensor:
    """(num_envs,) the cube's half height in each env (its size may be randomized), m."""
    size = env.sim.expand_model_field("geom_size")
    return size[:, env.scene[asset_cfg.name].geom_ids_global[0], 2].to(env.device, torch.float32)


def lifted(env: ManagerBasedRlEnv, min_height: float = 0.03) -> torch.Tensor:
    """(num_envs,) bool: the cube's bottom is more than `min_height` m above the table (its
    centre that far above its resting height, the env's own half height over the table)."""
    return cube_pos_w(env)[:, 2] > _cube_half_height(env) + min_height


def reaching_cube(env: ManagerBasedRlEnv, std: float) -> torch.Tensor:
    """(num_envs,) 1 - tanh(|gripper - cube| / std): 1 at the cube, -> 0 far away (Isaac Lab's
    lift reaching term)."""
    dist = (cube_pos_w(env) - ee_pos_w(env)).norm(dim=-1)
    return 1.0 - torch.tanh(dist / std)


def grasping_cube(env: ManagerBasedRlEnv, sensor_name: str) -> torch.Tensor:
    """(num_envs,) 1 while both fingertip pads touch the cube (contact sensor with two slots)."""
    return env.scene[sensor_name].found.all(dim=-1).float()


def lifting_cube(env: ManagerBasedRlEnv, min_height: float = 0.03) -> torch.Tensor:
    """(num_envs,) 1 while the cube is lifted (see `lifted`)."""
    return lifted(env, min_height).float()


def cube_goal_distance(
    env: ManagerBasedRlEnv, std: float, command_name: str = "lift_target", min_height: float = 0.03
) -> torch.Tensor:
    """(num_envs,) lifted * (1 - tanh(|cube - target| / std)): pays for carrying the lifted
    cube to the commanded point and holding it there (Isaac Lab's object_goal_distance)."""
    target_b = env.command_manager.get_command(command_name)
    dist = (cube_pos_b(env) - target_b).norm(dim=-1)
    return lifted(env, min_height).float() * (1.0 - torch.tanh(dist / std))


# -- terminations ------------------------------------------------------------------------------
def cube_dropped(env: ManagerBasedRlEnv, minimum_height: float = -0.05) -> torch.Tensor:
    """(num_envs,) bool: the cube fell off the table (its centre is below `minimum_height` m,
    the table top being z = 0)."""
    return cube_pos_w(env)[:, 2] < minimum_height


# -- events ------------------------------------------------------------------------------------
def randomize_cube_size(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    scale_range: tuple[float, float],
    asset_cfg: SceneEntityCfg = _CUBE,
) -> None:
    """Scale the cube's geom (size, bounding sphere and box) by U(scale_range) per env, and its
    inertia by the scale squared; the mass is left to `randomize_body_mass` (run that first).
    Use at startup: the reset places the cube on the table with its own half size
    (`reset_cube_on_table`)."""
    lo, hi = scale_range
    if not 0 < lo <= hi:
        raise ValueError(
            f"randomize_cube_size: scale_range must be 0 < low <= high, got {scale_range}."
        )
    entity = env.scene[asset_cfg.name]
    geom = entity.geom_ids_global[0]
    scale = sample_uniform(lo, hi, (len(env_ids), 1), env.device, env.rng)
    nominal = env.sim.mj_model
    for field in ("geom_size", "geom_rbound", "geom_aabb"):
        view = env.sim.expand_model_field(field)
        base = torch.as_tensor(getattr(nominal, field)[geom], device=env.device)
        # geom_aabb is (centre, half sizes); a box's centre is at its body origin, so scaling
        # both is right. MuJoCo Warp lays it out as (2, 3): match the view's shape.
        value = base.reshape(-1) * scale
        ids = env_ids.to(view.device)
        view[ids, geom] = (
            value.reshape(len(env_ids), *view.shape[2:]).to(view.dtype).to(view.device)
        )
    # A solid cube's inertia grows with its size squared (at a given mass): scale the env's
    # current inertia (after `randomize_body_mass`, which scales it with the mass).
    body = entity.body_ids_global[0]
    inertia = env.sim.expand_model_field("body_inertia")
    ids = env_ids.to(inertia.device)
    inertia[ids, body] = inertia[ids, body] * (scale**2).to(inertia.dtype).to(inertia.device)
    env.sim.set_const(env_ids)


def reset_cube_on_table(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    pose_range: dict[str, tuple[float, float]],
    asset_cfg: SceneEntityCfg = _CUBE,
) -> None:
    """Put the cube at rest on the table: its default x, y plus U(pose_range["x"/"y"]) m, a yaw
    of U(pose_range["yaw"]) rad, and its centre one (per-env, possibly randomized) half size
    above the table top."""
    entity = env.scene[asset_cfg.name]
    n = len(env_ids)
    state = entity.data.default_root_state[env_ids].clone()
    for i, key in enumerate(("x", "y")):
        lo, hi = pose_range.get(key, (0.0, 0.0))
        state[:, i] += sample_uniform(lo, hi, n, env.device, env.rng)
    origins = env.scene.env_origins[env_ids]
    state[:, :2] += origins[:, :2]
    state[:, 2] = origins[:, 2] + _cube_half_height(env, asset_cfg)[env_ids] + 1e-4
    lo, hi = pose_range.get("yaw", (0.0, 0.0))
    yaw = sample_uniform(lo, hi, n, env.device, env.rng)
    zero = torch.zeros_like(yaw)
    state[:, 3:7] = quat_mul(quat_from_euler_xyz(zero, zero, yaw), state[:, 3:7])
    state[:, 7:] = 0.0
    entity.write_root_state_to_sim(state, env_ids)


def randomize_camera_pose(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    sensor_name: str,
    pos_range: float,
    rot_range: float,
) -> None:
    """Jitter a camera sensor's pose per env: its position by U(-pos_range, pos_range) m per
    axis and its orientation by a rotation of U(-rot_range, rot_range) rad about each of its
    own axes (the nominal pose is the model's). Use at startup: the images of every later
    step see the world from the env's own camera."""
    if pos_range < 0 or rot_range < 0:
        raise ValueError(
            f"randomize_camera_pose: pos_range (m) and rot_range (rad) must be >= 0, got "
            f"{pos_range}, {rot_range}."
        )
    cam = env.scene[sensor_name].camera_id
    n = len(env_ids)
    pos = env.sim.expand_model_field("cam_pos")
    quat = env.sim.expand_model_field("cam_quat")
    nominal_pos = torch.as_tensor(env.sim.mj_model.cam_pos[cam], device=env.device)
    nominal_quat = torch.as_tensor(env.sim.mj_model.cam_quat[cam], device=env.device)
    dp = sample_uniform(-pos_range, pos_range, (n, 3), env.device, env.rng)
    rpy = sample_uniform(-rot_range, rot_range, (n, 3), env.device, env.rng)
    dq = quat_from_euler_xyz(rpy[:, 0], rpy[:, 1], rpy[:, 2])
    ids = env_ids.to(pos.device)
    pos[ids, cam] = (nominal_pos + dp).to(pos.dtype).to(pos.device)
    new_quat = quat_mul(nominal_quat.float().expand(n, 4), dq)
    quat[ids, cam] = new_quat.to(quat.dtype).to(quat.device)


GRASP_JOINT_POS = (0.2897, 0.50732, -0.140016, -2.176, -0.0310497, 2.51592, -0.49251, 0.04, 0.04)
"""Panda joint positions (joint1..7, finger_joint1/2) of Menagerie's `pickup` keyframe
(mjx_single_cube.xml): the open fingers straddle a cube on the table at `GRASP_CUBE_POSE`."""
GRASP_CUBE_POSE = (0.511684, 0.0645413, 0.665781, -0.746147)
"""The cube's x, y (base frame, m) and yaw quaternion w, z between those fingers."""


def reset_into_grasp_pose(
    env: ManagerBasedRlEnv,
    env_ids: torch.Tensor,
    probability: float,
    robot_cfg: SceneEntityCfg = _ROBOT,
    cube_cfg: SceneEntityCfg = _CUBE,
) -> None:
    """Start a share `probability` of the reset envs with the open gripper around the cube
    (`GRASP_JOINT_POS`, the cube resting between the fingers at `GRASP_CUBE_POSE`), so that
    closing and lifting are met from the first iterations, not only after the reach has been
    learned (a start-state distribution for exploration; the other envs keep their random
    resets). Run it after the cube's and the arm's reset events."""
    if not 0.0 <= probability <= 1.0:
        raise ValueError(
            f"reset_into_grasp_pose: probability must be in [0, 1], got {probability}."
        )
    pick = rand((len(env_ids),), env.device, env.rng) < probability
    ids = env_ids[pick.to(env_ids.device)]
    if len(ids) == 0:
        return
    robot, cube = env.scene[robot_cfg.name], env.scene[cube_cfg.name]
    q = torch.tensor(GRASP_JOINT_POS, device=env.device).expand(len(ids), -1)
    robot.write_joint_state_to_sim(q, torch.zeros_like(q), env_ids=ids)
    x, y, qw, qz = GRASP_CUBE_POSE
    state = torch.zeros(len(ids), 13, device=env.device)
    state[:, 0], state[:, 1] = x, y
    state[:, 2] = _cube_half_height(env, cube_cfg)[ids] + 1e-4
    state[:, 3], state[:, 6] = qw, qz
    state[:, :3] += env.scene.env_origins[ids]
    cube.write_root_state_to_sim(state, ids)

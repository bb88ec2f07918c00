"""Reward terms: `(env, **params) -> (num_envs,)` float32, before weight and step_dt."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import torch

from mjlab.managers.manager_base import ManagerTermBase
from mjlab.managers.scene_entity_config import SceneEntityCfg
from mjlab.utils.string import resolve_matching_values

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

_ROBOT = SceneEntityCfg("robot")


def is_alive(env: ManagerBasedRlEnv) -> torch.Tensor:
    """1 for envs not terminated this step. Returns: (num_envs,)."""
    return (~env.termination_manager.terminated).float()


def is_terminated(env: ManagerBasedRlEnv) -> torch.Tensor:
    """1 for envs terminated this step (time-outs excluded). Returns: (num_envs,)."""
    return env.termination_manager.terminated.float()


def track_lin_vel_xy_exp(
    env: ManagerBasedRlEnv,
    std: float,
    command_name: str = "twist",
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> torch.Tensor:
    """exp(-|v_cmd_xy - v_xy|^2 / std^2), base frame (legged_gym / Isaac Lab). Returns: (num_envs,) in [0, 1]."""
    vel = env.scene[asset_cfg.name].data.root_link_lin_vel_b[:, :2]
    cmd = env.command_manager.get_command(command_name)[:, :2]
    return torch.exp(-(cmd - vel).square().sum(dim=1) / std**2)


def track_ang_vel_z_exp(
    env: ManagerBasedRlEnv,
    std: float,
    command_name: str = "twist",
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> torch.Tensor:
    """exp(-(wz_cmd - wz)^2 / std^2), base frame. Returns: (num_envs,) in [0, 1]."""
    wz = env.scene[asset_cfg.name].data.root_link_ang_vel_b[:, 2]
    cmd = env.command_manager.get_command(command_name)[:, 2]
    return torch.exp(-(cmd - wz).square() / std**2)


def lin_vel_z_l2(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Squared vertical base velocity. Returns: (num_envs,) m^2/s^2."""
    return env.scene[asset_cfg.name].data.root_link_lin_vel_b[:, 2].square()


def ang_vel_xy_l2(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Squared roll/pitch rates. Returns: (num_envs,) rad^2/s^2."""
    return env.scene[asset_cfg.name].data.root_link_ang_vel_b[:, :2].square().sum(dim=1)


def flat_orientation_l2(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Squared xy of projected gravity (0 when level). Returns: (num_envs,)."""
    return env.scene[asset_cfg.name].data.projected_gravity_b[:, :2].square().sum(dim=1)


def joint_torques_l2(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Sum of squared actuator torques. Returns: (num_envs,) N^2 m^2."""
    force = env.scene[asset_cfg.name].data.actuator_force
    return asset_cfg.select_joints(force).square().sum(dim=1)


def joint_acc_l2(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Sum of squared joint accelerations. Returns: (num_envs,) rad^2/s^4."""
    acc = env.scene[asset_cfg.name].data.joint_acc
    return asset_cfg.select_joints(acc).square().sum(dim=1)


def joint_vel_l2(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Sum of squared joint velocities. Returns: (num_envs,) rad^2/s^2."""
    vel = env.scene[asset_cfg.name].data.joint_vel
    return asset_cfg.select_joints(vel).square().sum(dim=1)


def joint_deviation_l1(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """Sum of |q - q_default| over the selected joints (keeps arms and waist near their pose).
    Returns: (num_envs,) rad."""
    data = env.scene[asset_cfg.name].data
    sel = asset_cfg.select_joints
    return (sel(data.joint_pos) - sel(data.default_joint_pos)).abs().sum(dim=1)


def action_rate_l2(env: ManagerBasedRlEnv) -> torch.Tensor:
    """Sum of squared action changes between steps. Returns: (num_envs,)."""
    am = env.action_manager
    return (am.action - am.prev_action).square().sum(dim=1)


def action_acc_l2(env: ManagerBasedRlEnv) -> torch.Tensor:
    """Sum of squared second differences of the action, a_t - 2 a_{t-1} + a_{t-2} (a jerky
    policy's cost; actions before a reset count as 0). Returns: (num_envs,)."""
    am = env.action_manager
    return (am.action - 2.0 * am.prev_action + am.prev_prev_action).square().sum(dim=1)


def action_l2(env: ManagerBasedRlEnv) -> torch.Tensor:
    """Sum of squared actions. Returns: (num_envs,)."""
    return env.action_manager.action.square().sum(dim=1)


def joint_pos_limits(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
    """How far joints are beyond their soft limits, summed. Returns: (num_envs,) rad."""
    data = env.scene[asset_cfg.name].data
    q = asset_cfg.select_joints(data.joint_pos)
    lim = asset_cfg.select_joints(data.soft_joint_pos_limits)
    below = (lim[..., 0] - q).clamp(min=0.0)
    above = (q - lim[..., 1]).clamp(min=0.0)
    return (below + above).sum(dim=1)


def _when_commanded_to_move(
    env: ManagerBasedRlEnv, reward: torch.Tensor, command_name: str | None, command_threshold: float
) -> torch.Tensor:
    """`reward` where the commanded planar speed exceeds `command_threshold` m/s, else 0."""
    if command_name is None:
        return reward
    cmd = env.command_manager.get_command(command_name)
    return reward * (torch.linalg.vector_norm(cmd[:, :2], dim=1) > command_threshold).float()


def feet_air_time(
    env: ManagerBasedRlEnv,
    sensor_name: str,
    threshold: float,
    command_name: str | None = "twist",
    command_threshold: float = 0.1,
) -> torch.Tensor:
    """Sum over feet of (last air time - threshold) at each touchdown (legged_gym): rewards
    long steps; zero when the command is near zero. Returns: (num_envs,) s."""
    sensor = env.scene[sensor_name]
    reward = ((sensor.last_air_time - threshold) * sensor.first_contact.float()).sum(dim=1)
    return _when_commanded_to_move(env, reward, command_name, command_threshold)


def feet_air_time_biped(
    env: ManagerBasedRlEnv,
    sensor_name: str,
    threshold: float,
    command_name: str | None = "twist",
    command_threshold: float = 0.1,
) -> torch.Tensor:
    """Walking reward for two feet: while exactly one foot is on the ground, the shorter of the
    stance foot's contact time and the swing foot's air time, capped at `threshold` s; zero in
    double support, in flight and when the command is near zero. Unlike `feet_air_time` it is
    never negative, so short steps are not punished (the form of Isaac Lab's biped term).
    Returns: (num_envs,) s."""
    sensor = env.scene[sensor_name]
    contact = sensor.found
    in_mode = torch.where(contact, sensor.current_contact_time, sensor.current_air_time)
    single = contact.sum(dim=1) == 1
    reward = in_mode.min(dim=1).values.clamp(max=threshold) * single.float()
    return _when_commanded_to_move(env, reward, command_name, command_threshold)


def undesired_contacts(
    env: ManagerBasedRlEnv, sensor_name: str, threshold: float = 1.0
) -> torch.Tensor:
    """Number of contact-sensor slots with net force above `threshold` N. Returns: (num_envs,)."""
    return env.scene[sensor_name].in_contact_above(threshold).sum(dim=1, dtype=torch.float32)


def stand_still(
    env: ManagerBasedRlEnv,
    command_name: str = "twist",
    command_threshold: float = 0.1,
    asset_cfg: SceneEntityCfg = _ROBOT,
) -> torch.Tensor:
    """|q - q_default| summed when the command is near zero. Returns: (num_envs,) rad."""
    dev = joint_deviation_l1(env, asset_cfg)
    cmd = env.command_manager.get_command(command_name)
    return dev * (torch.linalg.vector_norm(cmd[:, :2], dim=1) < command_threshold).float()


class posture(ManagerTermBase):
    """Reward for holding the default pose: ``exp(-mean_j((q_j - q0_j)^2 / std_j^2))`` over the
    selected joints (mjlab 1.6's ``posture``), in (0, 1], 1 at the default pose.

    Term params:
        std: rad, one value for every joint or ``{regex: value}`` per joint name (each selected
            joint needs a value; later patterns win). Read once when the term is built.
        asset_cfg: the entity and its `joint_names` (default: every joint of "robot").

    Returns: (num_envs,) float32.

    Raises:
        ValueError: a std pattern matches no selected joint, a joint gets no std, or a std is
            <= 0.
    """

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        asset_cfg = cfg.params.get("asset_cfg", _ROBOT)
        entity = env.scene[asset_cfg.name]
        ids = asset_cfg.joint_ids
        names = (
            entity.joint_names[ids]
            if isinstance(ids, slice)
            else [entity.joint_names[i] for i in ids]
        )
        std = cfg.params["std"]
        values = resolve_matching_values(
            dict(std) if isinstance(std, Mapping) else float(std),
            list(names),
            what="joint",
            owner="posture std",
        )
        if min(values) <= 0:
            raise ValueError(f"posture: std must be > 0 for every joint, got {values}.")
        self._inv_var = 1.0 / torch.tensor(values, device=env.device).square()

    def __call__(
        self, env: ManagerBasedRlEnv, std, asset_cfg: SceneEntityCfg = _ROBOT
    ) -> torch.Tensor:
        data = env.scene[asset_cfg.name].data
        sel = asset_cfg.select_joints
        error = (sel(data.joint_pos) - sel(data.default_joint_pos)).square()
        return torch.exp(-(error * self._inv_var).mean(dim=1))


class electrical_power_cost(ManagerTermBase):
    """Positive mechanical power of the actuators, ``sum_j max(tau_j * qdot_j, 0)`` over the
    selected joints (mjlab 1.6's ``electrical_power_cost``): power the motors put in, with
    regenerative braking (negative power) not credited. ``tau`` is MuJoCo's generalized
    actuator force on the joint (`EntityData.actuator_force`, qfrc_actuator) of the last
    physics substep. Use with a negative weight.

    Term params:
        asset_cfg: the entity and its `joint_names` (default: every joint of "robot").

    Returns: (num_envs,) float32, W.
    """

    def __call__(self, env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _ROBOT) -> torch.Tensor:
        data = env.scene[asset_cfg.name].data
        sel = asset_cfg.select_joints
        return (sel(data.actuator_force) * sel(data.joint_vel)).clamp(min=0.0).sum(dim=1)

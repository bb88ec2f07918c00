"""Reach: a two-link planar arm moves its fingertip to a target point (reacher.xml beside this file).

Everything a task needs is here, built from mjlab-core's public API: the robot (an MJCF of our own
with PD position servos added by `PositionActuatorCfg`), a command term of our own that draws the
target, observation/reward terms written as plain functions of the env, and the env config.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from mjlab.actuator import PositionActuatorCfg
from mjlab.entity import EntityArticulationInfoCfg, EntityCfg, InitialStateCfg, load_mjcf
from mjlab.envs import ManagerBasedRlEnvCfg, ViewerCfg, mdp
from mjlab.managers import (
    CommandTerm,
    CommandTermCfg,
    EventTermCfg,
    ObservationGroupCfg,
    ObservationTermCfg,
    RewardTermCfg,
    SceneEntityCfg,
    TerminationTermCfg,
)
from mjlab.scene import SceneCfg
from mjlab.sim import MujocoCfg, SimulationCfg
from mjlab.utils.math import quat_apply, quat_apply_inverse, sample_uniform

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

REACHER_XML = Path(__file__).with_name("reacher.xml")
ARM = SceneEntityCfg("arm")
"""The whole arm (both joints)."""


# -- the target: a command term of our own ------------------------------------------------------
class TargetPositionCommand(CommandTerm):
    """`command`: (num_envs, 2) target point (x, y) in the arm's base frame, m.

    Drawn uniformly in polar coordinates (radius in `radius_range`, angle in `angle_range`) at
    every reset and every `resampling_time_range`. Metric (episode mean): `error_pos`, the
    fingertip's distance from the target, m.
    """

    cfg: TargetPositionCommandCfg
    components = ("target_x", "target_y")

    def __init__(self, cfg: TargetPositionCommandCfg, env):
        super().__init__(cfg, env)
        self.arm = env.scene[cfg.asset_name]
        ids, names = self.arm.find_bodies(cfg.fingertip_name)
        if len(ids) != 1:
            raise ValueError(
                f"TargetPositionCommandCfg.fingertip_name {cfg.fingertip_name!r} must match one "
                f"body of '{cfg.asset_name}', it matched {names}."
            )
        self._tip = ids[0]
        # The marker: a mocap body moved onto each newly drawn target.
        self._marker = None
        if cfg.marker_name is not None:
            (body,), _ = self.arm.find_bodies(cfg.marker_name)
            mocap = int(env.sim.mj_model.body_mocapid[self.arm.body_ids_global[body]])
            if mocap < 0:
                raise ValueError(
                    f"TargetPositionCommandCfg.marker_name {cfg.marker_name!r} must name a "
                    'mocap body (MJCF: <body mocap="true">, a child of the worldbody).'
                )
            self._marker = mocap
        self.target_b = torch.zeros(self.num_envs, 2, device=self.device)
        self.metrics["error_pos"] = torch.zeros(self.num_envs, device=self.device)

    @property
    def command(self) -> torch.Tensor:
        return self.target_b

    def tip_to_target(self) -> torch.Tensor:
        """Target minus fingertip position, (x, y) in the arm's base frame, m. Returns:
        (num_envs, 2)."""
        data = self.arm.data
        tip_w = data.body_link_pos_w[:, self._tip] - data.root_link_pos_w
        tip_b = quat_apply_inverse(data.root_link_quat_w, tip_w)
        return self.target_b - tip_b[:, :2]

    def _resample(self, env_ids: torch.Tensor) -> None:
        n, rng = len(env_ids), self.env.rng
        radius = sample_uniform(*self.cfg.radius_range, n, self.device, rng)
        angle = sample_uniform(*self.cfg.angle_range, n, self.device, rng)
        self.target_b[env_ids, 0] = radius * torch.cos(angle)
        self.target_b[env_ids, 1] = radius * torch.sin(angle)
        if self._marker is not None:
            # A reset runs after the physics reset, so the marker also survives episode ends.
            data = self.arm.data
            target_b = torch.nn.functional.pad(self.target_b[env_ids], (0, 1))  # z = 0: the plane
            target_w = data.root_link_pos_w[env_ids] + quat_apply(
                data.root_link_quat_w[env_ids], target_b
            )
            mocap_pos = self.env.sim.data.mocap_pos
            mocap_pos[env_ids, self._marker] = target_w.to(mocap_pos.dtype)

    def _update_metrics(self) -> None:
        self._accumulate_episode_mean("error_pos", self.tip_to_target().norm(dim=-1))


@dataclass(kw_only=True)
class TargetPositionCommandCfg(CommandTermCfg):
    """Config of `TargetPositionCommand`."""

    class_type: type = TargetPositionCommand
    """The command term class."""
    asset_name: str = "arm"
    """Scene entity whose fingertip reaches."""
    fingertip_name: str = "fingertip"
    """Body of that entity that should reach the target."""
    marker_name: str | None = "target"
    """Mocap body of that entity moved onto the target, so that videos show it; None: none."""
    radius_range: tuple[float, float] = (0.08, 0.22)
    """Distance of the target from the shoulder, m (the arm reaches 0.24 m)."""
    angle_range: tuple[float, float] = (-math.pi, math.pi)
    """Direction of the target from the base's x axis, rad."""

    def validate(self) -> None:
        """Raise ValueError naming the field when a range is not (min, max) with min <= max."""
        super().validate()
        lo, hi = self.radius_range
        if not 0.0 <= lo <= hi:
            raise ValueError(
                f"TargetPositionCommandCfg.radius_range must be (min, max) with 0 <= min <= max "
                f"in m, got {self.radius_range!r}."
            )
        lo, hi = self.angle_range
        if not lo <= hi:
            raise ValueError(
                f"TargetPositionCommandCfg.angle_range must be (min, max) with min <= max in "
                f"rad, got {self.angle_range!r}."
            )


# -- terms: plain functions of the env ----------------------------------------------------------
def fingertip_to_target(env: ManagerBasedRlEnv, command_name: str = "target") -> torch.Tensor:
    """Target minus fingertip position in the arm's base frame, m. Returns: (num_envs, 2)."""
    return env.command_manager.get_term(command_name).tip_to_target()


def reach_exp(env: ManagerBasedRlEnv, std: float, command_name: str = "target") -> torch.Tensor:
    """exp(-d^2 / std^2) of the fingertip's distance d to the target (1 on it). Returns:
    (num_envs,)."""
    d2 = fingertip_to_target(env, command_name).square().sum(dim=-1)
    return torch.exp(-d2 / std**2)


# -- the task -----------------------------------------------------------------------------------
def arm_entity_cfg() -> EntityCfg:
    """The arm with a PD position servo on each joint (kp 0.5 N m/rad, kd 0.05 N m s/rad) and a
    10 rad/s speed limit per joint (exported for the robot-side speed check; a real robot's limit
    comes from its motor data sheet)."""
    return EntityCfg(
        spec_fn=lambda: load_mjcf(REACHER_XML),
        init_state=InitialStateCfg(),
        joint_vel_limit=10.0,
        articulation=EntityArticulationInfoCfg(
            actuators=(
                PositionActuatorCfg(
                    joint_names_expr=(".*",), stiffness=0.5, damping=0.05, effort_limit=1.0
                ),
            )
        ),
    )


def reach_env_cfg(num_envs: int = 256) -> ManagerBasedRlEnvCfg:
    """Move the fingertip onto a target that jumps every 2 s; 4 s episodes at 50 Hz."""
    actor_terms = {
        "joint_pos": ObservationTermCfg(func=mdp.joint_pos_rel, params={"asset_cfg": ARM}),
        "joint_vel": ObservationTermCfg(
            func=mdp.joint_vel_rel, params={"asset_cfg": ARM}, scale=0.1
        ),
        "target": ObservationTermCfg(
            func=mdp.generated_commands, params={"command_name": "target"}, scale=5.0
        ),
        "to_target": ObservationTermCfg(func=fingertip_to_target, scale=5.0),
        "actions": ObservationTermCfg(func=mdp.last_action),
    }
    return ManagerBasedRlEnvCfg(
        decimation=4,
        episode_length_s=4.0,
        scene=SceneCfg(num_envs=num_envs, entities={"arm": arm_entity_cfg()}),
        sim=SimulationCfg(mujoco=MujocoCfg(timestep=0.005)),
        observations={
            "actor": ObservationGroupCfg(terms=dict(actor_terms)),
            "critic": ObservationGroupCfg(terms=dict(actor_terms)),
        },
        actions={"joint_pos": mdp.JointPositionActionCfg(asset_name="arm", scale=1.0)},
        commands={"target": TargetPositionCommandCfg(resampling_time_range=(2.0, 2.0))},
        rewards={
            "reach": RewardTermCfg(func=reach_exp, weight=1.0, params={"std": 0.05}),
            "reach_coarse": RewardTermCfg(func=reach_exp, weight=0.5, params={"std": 0.2}),
            "action_rate": RewardTermCfg(func=mdp.action_rate_l2, weight=-0.01),
            "joint_vel": RewardTermCfg(
                func=mdp.joint_vel_l2, weight=-0.0005, params={"asset_cfg": ARM}
            ),
        },
        terminations={"time_out": TerminationTermCfg(func=mdp.time_out, time_out=True)},
        events={
            "reset_arm": EventTermCfg(
                func=mdp.reset_joints_by_offset,
                mode="reset",
                params={"position_range": (-1.0, 1.0), "asset_cfg": ARM},
            )
        },
        viewer=ViewerCfg(camera="arm/top", width=320, height=320),
    )


def play(cfg: ManagerBasedRlEnvCfg) -> ManagerBasedRlEnvCfg:
    """Play variant: 4 envs."""
    cfg.scene.num_envs = 4
    return cfg

"""Cartpole Balance and Swing-up on mjlab's own cart-pole MJCF (cartpole.xml beside this file)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import torch

from mjlab.actuator import MotorActuatorCfg
from mjlab.entity import EntityArticulationInfoCfg, EntityCfg, InitialStateCfg, load_mjcf
from mjlab.envs import ManagerBasedRlEnvCfg, ViewerCfg, mdp
from mjlab.managers import (
    EventTermCfg,
    ObservationGroupCfg,
    ObservationTermCfg,
    RewardTermCfg,
    SceneEntityCfg,
    TerminationTermCfg,
)
from mjlab.scene import SceneCfg
from mjlab.sim import MujocoCfg, SimulationCfg

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

CARTPOLE_XML = Path(__file__).with_name("cartpole.xml")
EFFORT_LIMIT = 20.0
"""Cart motor force limit, N."""
ACTION_SCALE = 10.0
"""N of cart force per unit of policy action."""
_CART = SceneEntityCfg("cartpole", joint_names=("slider",))
_POLE = SceneEntityCfg("cartpole", joint_names=("hinge",))


def pole_angle_sincos(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _POLE) -> torch.Tensor:
    """(sin, cos) of the pole angle from upright; continuous over full turns. Returns: (num_envs, 2)."""
    q = env.scene[asset_cfg.name].data.joint_pos[:, asset_cfg.joint_ids]
    return torch.cat([torch.sin(q), torch.cos(q)], dim=-1)


def pole_upright(env: ManagerBasedRlEnv, asset_cfg: SceneEntityCfg = _POLE) -> torch.Tensor:
    """(1 + cos(angle)) / 2: 1 upright, 0 hanging. Returns: (num_envs,)."""
    q = env.scene[asset_cfg.name].data.joint_pos[:, asset_cfg.joint_ids[0]]
    return (1.0 + torch.cos(q)) / 2.0


def pole_angle_beyond(
    env: ManagerBasedRlEnv, limit: float, asset_cfg: SceneEntityCfg = _POLE
) -> torch.Tensor:
    """|pole angle| > limit rad. Returns: (num_envs,) bool."""
    q = env.scene[asset_cfg.name].data.joint_pos[:, asset_cfg.joint_ids[0]]
    return q.abs() > limit


def cart_beyond(
    env: ManagerBasedRlEnv, limit: float, asset_cfg: SceneEntityCfg = _CART
) -> torch.Tensor:
    """|cart position| > limit m. Returns: (num_envs,) bool."""
    x = env.scene[asset_cfg.name].data.joint_pos[:, asset_cfg.joint_ids[0]]
    return x.abs() > limit


def cartpole_entity_cfg() -> EntityCfg:
    return EntityCfg(
        spec_fn=lambda: load_mjcf(CARTPOLE_XML),
        init_state=InitialStateCfg(),
        articulation=EntityArticulationInfoCfg(
            actuators=(MotorActuatorCfg(joint_names_expr=("slider",), effort_limit=EFFORT_LIMIT),)
        ),
        # A simulated toy with no motor behind it: no speed limit, stated so that its policy
        # exports (the robot-side speed check is off for it).
        joint_vel_limit=math.inf,
    )


def cartpole_balance_env_cfg(num_envs: int = 64) -> ManagerBasedRlEnvCfg:
    """Keep the pole within 0.4 rad of upright and the cart on the rail for 10 s."""
    obs_terms = {
        "joint_pos": ObservationTermCfg(
            func=mdp.joint_pos_rel, params={"asset_cfg": SceneEntityCfg("cartpole")}
        ),
        "joint_vel": ObservationTermCfg(
            func=mdp.joint_vel_rel, params={"asset_cfg": SceneEntityCfg("cartpole")}
        ),
    }
    return ManagerBasedRlEnvCfg(
        decimation=2,
        episode_length_s=10.0,
        scene=SceneCfg(num_envs=num_envs, entities={"cartpole": cartpole_entity_cfg()}),
        sim=SimulationCfg(mujoco=MujocoCfg(timestep=0.01)),
        observations={
            "actor": ObservationGroupCfg(terms=dict(obs_terms)),
            "critic": ObservationGroupCfg(terms=dict(obs_terms)),
        },
        actions={
            "effort": mdp.JointEffortActionCfg(
                asset_name="cartpole", actuator_names=("slider",), scale=ACTION_SCALE
            )
        },
        rewards={
            "alive": RewardTermCfg(func=mdp.is_alive, weight=1.0),
            "terminating": RewardTermCfg(func=mdp.is_terminated, weight=-2.0),
            "upright": RewardTermCfg(func=pole_upright, weight=1.0),
            "cart_vel": RewardTermCfg(
                func=mdp.joint_vel_l2, weight=-0.01, params={"asset_cfg": _CART}
            ),
            "pole_vel": RewardTermCfg(
                func=mdp.joint_vel_l2, weight=-0.005, params={"asset_cfg": _POLE}
            ),
        },
        terminations={
            "time_out": TerminationTermCfg(func=mdp.time_out, time_out=True),
            "pole_fell": TerminationTermCfg(func=pole_angle_beyond, params={"limit": 0.4}),
            "cart_out": TerminationTermCfg(func=cart_beyond, params={"limit": 2.5}),
        },
        events={
            "reset_joints": EventTermCfg(
                func=mdp.reset_joints_by_offset,
                mode="reset",
                params={
                    "position_range": (-0.1, 0.1),
                    "velocity_range": (-0.1, 0.1),
                    "asset_cfg": SceneEntityCfg("cartpole"),
                },
            ),
        },
        viewer=ViewerCfg(camera="cartpole/side"),
    )


def cartpole_swingup_env_cfg(num_envs: int = 64) -> ManagerBasedRlEnvCfg:
    """Swing the pole up from hanging and balance it; the episode only times out."""
    cfg = cartpole_balance_env_cfg(num_envs)
    obs_terms = {
        "cart_pos": ObservationTermCfg(func=mdp.joint_pos_rel, params={"asset_cfg": _CART}),
        "pole_angle": ObservationTermCfg(func=pole_angle_sincos),
        "joint_vel": ObservationTermCfg(
            func=mdp.joint_vel_rel, params={"asset_cfg": SceneEntityCfg("cartpole")}
        ),
    }
    cfg.observations = {
        "actor": ObservationGroupCfg(terms=dict(obs_terms)),
        "critic": ObservationGroupCfg(terms=dict(obs_terms)),
    }
    cfg.rewards["alive"] = None
    cfg.rewards["terminating"] = None
    cfg.rewards["upright"] = RewardTermCfg(func=pole_upright, weight=2.0)
    cfg.terminations["pole_fell"] = None
    cfg.events["reset_joints"].params["position_range"] = (math.pi - 0.1, math.pi + 0.1)
    # Start from hanging down: the default pose is upright, so offset the hinge by pi.
    cfg.events["reset_joints"].params["asset_cfg"] = SceneEntityCfg(
        "cartpole", joint_names=("hinge",)
    )
    cfg.events["reset_cart"] = EventTermCfg(
        func=mdp.reset_joints_by_offset,
        mode="reset",
        params={"position_range": (-0.2, 0.2), "velocity_range": (-0.1, 0.1), "asset_cfg": _CART},
    )
    return cfg


def play(cfg: ManagerBasedRlEnvCfg) -> ManagerBasedRlEnvCfg:
    """Play variant: a few envs, twice as long episodes."""
    cfg.scene.num_envs = 4
    cfg.episode_length_s *= 2
    return cfg

"""The example task is found through its entry point, builds, steps, and can be solved."""

import math

import pytest
import torch
from downstream_reacher.reach_env_cfg import TargetPositionCommandCfg, reach_env_cfg

from mjlab.envs import ManagerBasedRlEnv
from mjlab.tasks import list_tasks, load_env_cfg

TASK = "Downstream-Reach-Planar-Arm"
LINK = 0.12  # m, both links (reacher.xml)


def test_the_entry_point_registers_the_task():
    assert TASK in list_tasks()
    cfg = load_env_cfg(TASK)
    assert cfg.scene.num_envs == 256
    assert load_env_cfg(TASK, play=True).scene.num_envs == 4


def test_targets_lie_within_reach_and_observations_are_finite():
    env = ManagerBasedRlEnv(reach_env_cfg(num_envs=16))
    try:
        obs, _ = env.reset()
        target = env.command_manager.get_command("target")
        radius = target.norm(dim=-1)
        assert ((radius >= 0.08 - 1e-6) & (radius <= 0.22 + 1e-6)).all()
        assert obs["actor"].shape == (16, 2 + 2 + 2 + 2 + 2)
        for _ in range(5):
            obs, reward, *_ = env.step(torch.zeros(16, 2))
        assert torch.isfinite(obs["actor"]).all() and torch.isfinite(reward).all()
    finally:
        env.close()


def _inverse_kinematics(target: torch.Tensor) -> torch.Tensor:
    """Joint angles (shoulder, elbow >= 0) that put the fingertip on `target` (n, 2), m."""
    x, y = target[:, 0], target[:, 1]
    cos_elbow = ((x**2 + y**2 - 2 * LINK**2) / (2 * LINK**2)).clamp(-1.0, 1.0)
    elbow = torch.acos(cos_elbow)
    shoulder = torch.atan2(y, x) - torch.atan2(LINK * torch.sin(elbow), LINK * (1 + cos_elbow))
    shoulder = (shoulder + math.pi) % (2 * math.pi) - math.pi
    return torch.stack([shoulder, elbow], dim=-1)


def test_a_perfect_policy_reaches_every_target_within_a_centimetre():
    # Position actions are the joint targets (scale 1, default 0): analytic inverse kinematics
    # is a perfect policy, so the task is solvable, and on the target the reach terms pay
    # nearly their maximum.
    env = ManagerBasedRlEnv(reach_env_cfg(num_envs=32))
    try:
        env.reset()
        term = env.command_manager.get_term("target")
        for _ in range(50):  # 1 s: the targets move only every 2 s
            action = _inverse_kinematics(term.command)
            _, reward, *_ = env.step(action)
        error = term.tip_to_target().norm(dim=-1)
        assert error.max() < 0.01, error.max()
        # The marker stands on each env's target (the arm's base is at its world origin).
        marker = env.sim.data.mocap_pos[:, 0, :2].float()
        torch.testing.assert_close(marker, term.command, atol=1e-6, rtol=0)
        # reach (1) + reach_coarse (0.5) near their maxima, times step_dt (rewards are per step)
        assert reward.min() > 1.4 * env.step_dt
    finally:
        env.close()


def test_a_bad_target_range_is_refused_by_name():
    with pytest.raises(ValueError, match="angle_range"):
        TargetPositionCommandCfg(angle_range=(1.0, -1.0))
    with pytest.raises(ValueError, match="radius_range"):
        TargetPositionCommandCfg(radius_range=(0.2, 0.1))

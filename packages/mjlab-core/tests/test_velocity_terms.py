"""The velocity task's own reward terms (`mjlab.tasks.velocity.mdp`) on a real G1 env."""

from __future__ import annotations

import math

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.managers import SceneEntityCfg
from mjlab.tasks.registry import load_env_cfg
from mjlab.tasks.velocity import mdp as velocity_mdp
from mjlab.tasks.velocity.config.g1 import (
    POSTURE_STD_RUNNING,
    POSTURE_STD_STANDING,
    POSTURE_STD_WALKING,
)
from mjlab.utils.math import quat_from_euler_xyz


@pytest.fixture(scope="module")
def env():
    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-G1")
    cfg.scene.num_envs = 3
    env = ManagerBasedRlEnv(cfg, device="cpu")
    env.reset()
    yield env
    env.close()


def _pose(env, joint_offsets: dict[str, float] | None = None, roll: float = 0.0) -> None:
    """Default joints (plus offsets in env 1), pelvis rolled by `roll` in env 2, then forward."""
    robot = env.scene["robot"]
    q = robot.data.default_joint_pos.clone()
    for name, offset in (joint_offsets or {}).items():
        q[1, robot.joint_names.index(name)] += offset
    robot.write_joint_state_to_sim(q, torch.zeros_like(q))
    root = torch.zeros(3, 13)
    root[:, 2] = 0.8
    r = torch.tensor([0.0, 0.0, roll])
    root[:, 3:7] = quat_from_euler_xyz(r, torch.zeros(3), torch.zeros(3))
    robot.write_root_state_to_sim(root)
    env.sim.forward()


def _command(env, vx: float, vy: float = 0.0, wz: float = 0.0) -> None:
    env.command_manager.get_command("twist")[:] = torch.tensor([vx, vy, wz])


def _posture(env) -> torch.Tensor:
    return velocity_mdp.variable_posture(
        env, POSTURE_STD_STANDING, POSTURE_STD_WALKING, POSTURE_STD_RUNNING
    )


def test_posture_is_one_at_the_default_pose_and_uses_the_table_of_the_commanded_speed(env):
    _pose(env, {"left_knee_joint": 0.35})
    n = len(env.scene["robot"].joint_names)
    _command(env, 0.0)
    standing = _posture(env)
    _command(env, 0.5)
    walking = _posture(env)
    _command(env, 2.0)
    running = _posture(env)
    for r in (standing, walking, running):
        assert r[0].item() == pytest.approx(1.0, abs=1e-5)
    # One knee off by 0.35 rad: (0.35 / std)^2 averaged over the joints.
    assert standing[1].item() == pytest.approx(math.exp(-((0.35 / 0.05) ** 2) / n), rel=1e-4)
    assert walking[1].item() == pytest.approx(math.exp(-1.0 / n), rel=1e-4)
    assert running[1].item() == pytest.approx(math.exp(-((0.35 / 0.6) ** 2) / n), rel=1e-4)


def test_posture_names_the_joint_no_pattern_covers(env):
    with pytest.raises(ValueError, match="left_hip_pitch_joint"):
        velocity_mdp.variable_posture(env, {"right_.*": 0.1}, {".*": 0.1}, {".*": 0.1})


def test_upright_falls_with_the_torso_tilt(env):
    _pose(env, roll=0.0)
    torso = SceneEntityCfg("robot", body_names=("torso_link",))
    torso.resolve(env.scene)
    flat = velocity_mdp.upright(env, std=math.sqrt(0.2), asset_cfg=torso)
    _pose(env, roll=0.5)
    tilted = velocity_mdp.upright(env, std=math.sqrt(0.2), asset_cfg=torso)
    # The G1 torso sits upright above the pelvis in the default pose (waist joints at 0).
    assert flat[0].item() == pytest.approx(1.0, abs=1e-4)
    assert tilted[2].item() == pytest.approx(math.exp(-(math.sin(0.5) ** 2) / 0.2), rel=1e-3)


def test_foot_terms_vanish_when_the_command_is_standing(env):
    feet = SceneEntityCfg("robot", body_names=("left_ankle_roll_link", "right_ankle_roll_link"))
    feet.resolve(env.scene)
    _pose(env)
    robot = env.scene["robot"]
    root = torch.zeros(3, 13)
    root[:, 2] = 0.8
    root[:, 3] = 1.0
    root[:, 7] = 1.0  # the whole robot moves at 1 m/s: feet move too
    robot.write_root_state_to_sim(root)
    env.sim.forward()
    _command(env, 0.5)
    moving = velocity_mdp.feet_clearance(env, 0.1, 0.037, asset_cfg=feet)
    _command(env, 0.0)
    standing = velocity_mdp.feet_clearance(env, 0.1, 0.037, asset_cfg=feet)
    assert (moving > 0).all()
    assert (standing == 0).all()


def test_g1_position_targets_stay_inside_each_envs_joint_range(env):
    """The G1 recipe clamps targets to the joint range as the deploy loop does; the range is
    read per env and per step, so a randomized range is followed."""
    term = env.action_manager.get_term("joint_pos")
    assert term.cfg.clamp_to_joint_limits
    robot = env.scene["robot"]
    ids = term.joint_ids
    knee = robot.joint_names.index("left_knee_joint")
    col = ids.index(knee)
    saved = robot.data.joint_pos_limits.clone()
    try:
        robot.data.joint_pos_limits[1, knee] = torch.tensor([0.1, 0.2])
        actions = torch.zeros(3, term.action_dim)
        actions[0] = 100.0
        actions[1] = -100.0
        term.process_actions(actions)
        limits = robot.data.joint_pos_limits[:, ids]
        targets = term.processed_actions
        assert torch.equal(targets[0], limits[0, :, 1])  # every joint at its upper bound
        assert torch.equal(targets[1], limits[1, :, 0])  # every joint at its lower bound
        assert targets[1, col] == pytest.approx(0.1)  # env 1's own, changed knee range
        unclamped = term.offset[2] + term.scale * 0.0
        assert torch.equal(targets[2], unclamped)  # inside the range: untouched
        actions[2, col] = 0.1
        term.process_actions(actions)
        assert targets[2, col] == pytest.approx(float(term.offset[2, col] + term.scale[col] * 0.1))
    finally:
        robot.data.joint_pos_limits[:] = saved
        term.process_actions(torch.zeros(3, term.action_dim))


def test_position_targets_past_the_range_pass_when_the_clamp_is_off():
    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
    cfg.scene.num_envs = 1
    assert not cfg.actions["joint_pos"].clamp_to_joint_limits
    env = ManagerBasedRlEnv(cfg, device="cpu")
    try:
        term = env.action_manager.get_term("joint_pos")
        term.process_actions(torch.full((1, term.action_dim), 100.0))
        upper = env.scene["robot"].data.joint_pos_limits[0, term.joint_ids, 1]
        assert (term.processed_actions[0] > upper).all()
    finally:
        env.close()

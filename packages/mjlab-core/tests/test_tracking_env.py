"""The G1 tracking tasks on real MuJoCo: the motion command starts envs on the reference, plays
one frame per step, ends the episode with the motion, samples start frames where episodes fail,
and refuses a motion that does not fit the robot or the control rate."""

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.tasks import load_env_cfg
from mjlab.tasks.tracking.synthetic import g1_synthetic_motion

TASK = "Mjlab-Tracking-Flat-Unitree-G1"


def _env(play=True, num_envs=4, **motion):
    cfg = load_env_cfg(TASK, play=play)
    cfg.scene.num_envs = num_envs
    for key, value in motion.items():
        setattr(cfg.commands["motion"], key, value)
    return ManagerBasedRlEnv(cfg, device="cpu")


def _reference_actions(env):
    """Actions whose PD targets are the reference joint positions."""
    cmd = env.command_manager.get_term("motion")
    term = next(iter(env.action_manager.terms.values()))
    return (cmd.joint_pos - term.offset) / term.scale


def test_an_env_starts_on_the_reference_and_follows_it_frame_by_frame():
    env = _env()
    try:
        env.reset(seed=0)
        cmd = env.command_manager.get_term("motion")
        assert cmd.time_steps.tolist() == [0, 0, 0, 0]
        # The robot is placed exactly on frame 0 (play: no noise).
        err = (cmd.body_pos_relative_w - cmd.robot_body_pos_w).norm(dim=-1)
        assert err.max() < 1e-5
        assert torch.allclose(cmd.command[:, :29], cmd.robot.data.joint_pos, atol=1e-5)
        # The first step's body tracking reward is close to its maximum, and the frame advances
        # by one per step. (PD targets alone do not hold the G1 up for long: with these gains
        # the knees sag under its weight, which the policy learns to compensate.)
        env.step(_reference_actions(env))
        rewards = env.reward_manager
        body = rewards.step_reward[:, rewards.active_terms.index("motion_body_pos")]
        assert (body > 0.99).all(), body  # weight 1: the kernel's value
        for k in range(2, 11):
            env.step(_reference_actions(env))
            assert cmd.time_steps.tolist() == [k] * 4
        err = (cmd.body_pos_relative_w - cmd.robot_body_pos_w).norm(dim=-1).mean()
        assert err < 0.03, err
    finally:
        env.close()


def test_the_episode_ends_as_a_time_out_at_the_motions_last_frame():
    env = _env(num_envs=2)
    try:
        env.reset(seed=0)
        cmd = env.command_manager.get_term("motion")
        cmd.time_steps[:] = cmd.num_frames - 2
        _, _, terminated, truncated, _ = env.step(_reference_actions(env))
        assert not (terminated | truncated).any()
        assert cmd.time_steps.tolist() == [cmd.num_frames - 1] * 2
        _, _, terminated, truncated, _ = env.step(_reference_actions(env))
        assert truncated.all() and not terminated.any()
        assert env.extras["log"]["Episode_Termination/motion_ended"] == 2  # both envs
        assert cmd.time_steps.tolist() == [0, 0]  # play: a new episode starts at frame 0
    finally:
        env.close()


def test_start_frames_are_sampled_where_episodes_fail():
    env = _env(play=False, num_envs=64)
    try:
        env.reset(seed=0)
        cmd = env.command_manager.get_term("motion")
        uniform = cmd.sampling_probabilities()
        assert torch.allclose(uniform, torch.full_like(uniform, 1.0 / cmd.num_bins))
        # Failures recorded in bin 3 (frames 150-199): its probability rises, the others' fall.
        cmd._bin_failed[3] = 1.0
        p = cmd.sampling_probabilities()
        assert p[3] > 0.9 and torch.isclose(p.sum(), torch.tensor(1.0))
        ids = torch.arange(64)
        cmd._resample(ids)
        in_bin = ((cmd.time_steps * cmd.num_bins) // cmd.num_frames == 3).float().mean()
        assert in_bin > 0.8
        # Training resets add noise: the start pose is near, not on, the reference.
        err = (cmd.body_pos_relative_w - cmd.robot_body_pos_w).norm(dim=-1).mean()
        assert 1e-3 < err < 0.15
    finally:
        env.close()


def test_a_failed_episode_is_counted_in_the_bin_of_its_frame():
    env = _env(play=False, num_envs=8)
    try:
        env.reset(seed=0)
        cmd = env.command_manager.get_term("motion")
        cmd.cfg.adaptive_alpha = 1.0
        cmd.time_steps[:] = 120  # bin 2
        zero = torch.zeros(8, env.action_manager.total_action_dim)
        # Drop every robot: the anchor is far below the reference, the episodes terminate.
        qpos = env.sim.data.qpos
        qpos[:, 2] = 0.2
        env.sim.forward()
        env.step(zero)
        env.step(zero)  # the failures enter the moving average at the next compute
        assert cmd._bin_failed[2] > 0 and cmd._bin_failed.sum() == cmd._bin_failed[2]
    finally:
        env.close()


def test_a_motion_at_another_rate_or_for_another_robot_is_refused_naming_the_fix(tmp_path):
    g1_synthetic_motion("squat", fps=30.0).save(tmp_path / "squat30.npz")
    with pytest.raises(ValueError, match=r"30 frames per second .* --output-fps 50"):
        _env(motion_file=str(tmp_path / "squat30.npz"))
    motion = g1_synthetic_motion("squat")
    names = list(motion.joint_names)
    names[0], names[1] = names[1], names[0]
    import dataclasses

    dataclasses.replace(motion, joint_names=tuple(names)).save(tmp_path / "swapped.npz")
    with pytest.raises(ValueError, match="do not match the 29 joints"):
        _env(motion_file=str(tmp_path / "swapped.npz"))


def test_a_motion_file_in_degrees_or_upside_down_is_refused_when_the_env_is_built(tmp_path):
    import dataclasses

    import numpy as np

    motion = g1_synthetic_motion("squat")
    dataclasses.replace(motion, joint_pos=np.degrees(motion.joint_pos)).save(tmp_path / "deg.npz")
    with pytest.raises(ValueError, match=r"deg\.npz: joint .* Degrees\?"):
        _env(num_envs=1, motion_file=str(tmp_path / "deg.npz"))
    flipped = motion.body_quat_w.copy()
    flipped[..., :] = flipped[..., [1, 0, 3, 2]]  # wxyz read in the wrong order: 180 deg about x
    dataclasses.replace(motion, body_quat_w=flipped).save(tmp_path / "flip.npz")
    with pytest.raises(ValueError, match="upside down"):
        _env(num_envs=1, motion_file=str(tmp_path / "flip.npz"))


def test_the_no_state_estimation_variant_drops_the_anchor_position_and_base_velocity():
    full = load_env_cfg(TASK).observations["actor"].terms
    blind = load_env_cfg(TASK + "-No-State-Estimation").observations["actor"].terms
    assert full["motion_anchor_pos_b"] is not None and full["base_lin_vel"] is not None
    assert blind["motion_anchor_pos_b"] is None and blind["base_lin_vel"] is None
    assert blind["motion_anchor_ori_b"] is not None

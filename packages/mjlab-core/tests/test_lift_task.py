"""The Franka cube-lift task on real MuJoCo: the cube rests on the table, the gripper can
grasp and lift it (a scripted grasp through the task's own action term), the command sits over
the cube, the terms and terminations say what happened."""

import math

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.tasks import load_env_cfg
from mjlab.tasks.manipulation import mdp as lift

# Menagerie's `pickup` keyframe of mjx_single_cube: the open fingers around a box at
# (0.5117, 0.0645), yawed -96 degrees. Joint order: joint1..7, finger_joint1, finger_joint2.
PICKUP_Q = list(lift.GRASP_JOINT_POS)
PICKUP_CUBE = list(lift.GRASP_CUBE_POSE[:2])


def _env(num_envs: int = 4, randomize: bool = True, grasp_starts: float = 0.0):
    cfg = load_env_cfg("Mjlab-Lift-Cube-Franka")
    cfg.scene.num_envs = num_envs
    cfg.events["reset_in_grasp_pose"].params["probability"] = grasp_starts
    if not randomize:
        for name in ("cube_size", "cube_mass", "cube_friction", "reset_cube", "reset_arm"):
            cfg.events[name] = None
    return ManagerBasedRlEnv(cfg)


def _hold_action(env: ManagerBasedRlEnv, targets: torch.Tensor) -> torch.Tensor:
    """The raw action whose processed joint targets are `targets` (num_envs, 8)."""
    term = env.action_manager.terms["joint_pos"]
    return (targets - term.offset) / term.scale


def test_the_cube_rests_on_the_table_with_its_own_size():
    env = _env(num_envs=16)
    env.reset(seed=0)
    size = env.sim.expand_model_field("geom_size")[:, env.scene["cube"].geom_ids_global[0], 0]
    assert float(size.min()) < 0.019 and float(size.max()) > 0.021  # sizes do differ
    held = _hold_action(env, env.action_manager.terms["joint_pos"].offset.expand(16, -1))
    for _ in range(25):  # 0.5 s
        env.step(held)
    z = lift.cube_pos_w(env)[:, 2]
    # Resting on the table top (z = 0) on its own half size, to within contact penetration.
    assert torch.allclose(z, size.float().to(z), atol=2e-3)
    assert float(env.scene["cube"].data.root_link_lin_vel_w.norm(dim=-1).max()) < 0.02
    target = env.command_manager.get_command("lift_target")
    cube_b = lift.cube_pos_b(env)
    assert torch.allclose(target[:, :2], cube_b[:, :2], atol=0.02)  # over where it lay
    assert bool(((target[:, 2] >= 0.1) & (target[:, 2] <= 0.25)).all())


def test_a_scripted_grasp_from_the_grasp_start_lifts_the_cube_and_the_terms_see_it():
    # Every episode starts in the grasp pose (the task starts a quarter of them there).
    env = _env(num_envs=1, grasp_starts=1.0)
    env.reset(seed=0)
    q = torch.tensor([PICKUP_Q])
    assert torch.allclose(env.scene["robot"].data.joint_pos, q, atol=1e-6)
    assert torch.allclose(lift.cube_pos_w(env)[:, :2], torch.tensor([PICKUP_CUBE[:2]]), atol=1e-6)
    targets = q[:, :8].clone()
    grasped = lifted = False
    for i in range(50):
        targets[:, 7] = 0.04 if i < 5 else 0.0  # close the fingers
        if i >= 25:  # then raise the arm (shoulder and elbow) over 20 steps
            k = min(1.0, (i - 25) / 20)
            targets[:, 1] = PICKUP_Q[1] - 0.4 * k
            targets[:, 3] = PICKUP_Q[3] + 0.3 * k
        _, _, terminated, _, _ = env.step(_hold_action(env, targets))
        grasped |= bool(lift.grasping_cube(env, "finger_contact")[0] > 0)
        lifted |= bool(lift.lifted(env)[0])
        assert not bool(terminated[0])
    assert grasped and lifted
    assert float(lift.cube_pos_w(env)[0, 2]) > 0.15  # carried up with the hand
    assert float((lift.cube_pos_w(env) - lift.ee_pos_w(env)).norm()) < 0.03
    rewards = env.reward_manager
    assert float(rewards.step_reward[0, rewards.active_terms.index("lifting")]) > 0  # it pays


def test_a_cube_pushed_off_the_table_ends_the_episode():
    env = _env(num_envs=2, randomize=False)
    env.reset(seed=0)
    cube = env.scene["cube"]
    # Env 1: the cube just beyond the table's far edge (x 0.9 m), falling.
    state = torch.tensor([[0.95, 0.0, 0.05, 1.0, 0.0, 0.0, 0.0, 0, 0, 0, 0, 0, 0]])
    cube.write_root_state_to_sim(state, env_ids=torch.tensor([1]))
    env.sim.forward()
    hold = _hold_action(env, env.action_manager.terms["joint_pos"].offset.expand(2, -1))
    ended = torch.zeros(2, dtype=torch.bool)
    for _ in range(15):  # 0.3 s: 0.44 m of free fall
        _, _, terminated, truncated, _ = env.step(hold)
        ended |= terminated
        assert not bool(truncated.any())
    assert ended.tolist() == [False, True]


def test_the_success_metric_and_the_command_ranges_are_logged():
    env = _env(num_envs=2)
    env.reset(seed=0)
    hold = _hold_action(env, env.action_manager.terms["joint_pos"].offset.expand(2, -1))
    for _ in range(env.max_episode_length):
        _, _, _, truncated, extras = env.step(hold)
    assert bool(truncated.all())
    log = extras["log"]
    # A cube left on the table is neither lifted nor a success.
    assert log["Metrics/lift_target/success"] == 0.0
    assert log["Metrics/lift_target/lifted"] == 0.0
    assert log["Metrics/lift_target/error_pos"] > 0.05


def test_bad_lift_config_is_one_clear_error():
    with pytest.raises(ValueError, match="height_range"):
        lift.LiftTargetCommandCfg(height_range=(0.2, 0.1)).validate()
    with pytest.raises(ValueError, match="success_threshold"):
        lift.LiftTargetCommandCfg(success_threshold=0.0).validate()


def test_camera_jitter_moves_each_envs_camera():
    cfg = load_env_cfg("Mjlab-Lift-Cube-Franka-Depth")
    cfg.scene.num_envs = 2
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    cam = env.scene["camera"].camera_id
    pos = env.sim.expand_model_field("cam_pos")[:, cam]
    nominal = torch.as_tensor(env.sim.mj_model.cam_pos[cam]).to(pos)
    offset = (pos - nominal).abs()
    assert float(offset.max()) <= 0.02 + 1e-9 and float(offset.max()) > 1e-4
    assert not torch.allclose(pos[0], pos[1])
    quat = env.sim.expand_model_field("cam_quat")[:, cam]
    angle = 2 * torch.acos(
        (quat * torch.as_tensor(env.sim.mj_model.cam_quat[cam]).to(quat)).sum(-1).abs().clamp(max=1)
    )
    assert math.radians(0.1) < float(angle.max()) < math.radians(2.0) * math.sqrt(3) + 1e-6

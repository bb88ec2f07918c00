"""ManagerBasedRlEnv: step data flow, input validation and the cases C03-C06."""

import math

import numpy as np
import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv, mdp
from mjlab.managers import ObservationTermCfg, RewardTermCfg, SceneEntityCfg, TerminationTermCfg
from mjlab.tasks import load_env_cfg
from mjlab.tasks.cartpole.cartpole_env_cfg import cartpole_balance_env_cfg


def _cartpole(num_envs=2, **changes):
    cfg = cartpole_balance_env_cfg(num_envs)
    for key, value in changes.items():
        setattr(cfg, key, value)
    return cfg


def test_step_dt_episode_length_and_spaces():
    env = ManagerBasedRlEnv(_cartpole(3))
    assert env.step_dt == pytest.approx(0.02)
    assert env.max_episode_length == math.ceil(10.0 / 0.02)
    obs, _ = env.reset(seed=0)
    assert env.single_observation_space["actor"].shape == obs["actor"].shape[1:] == (4,)
    assert env.action_space.shape == (3, 1)
    obs, rew, term, trunc, _extras = env.step(torch.zeros(3, 1))
    assert rew.shape == (3,) and term.dtype == torch.bool and trunc.dtype == torch.bool
    assert env.common_step_counter == 1 and (env.episode_length_buf == 1).all()


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (torch.zeros(2, 2), r"expected \(2, 1\)"),
        (torch.zeros(2), r"expected \(2, 1\)"),
        (torch.full((2, 1), float("nan")), "NaN"),
        (torch.zeros(2, 1, dtype=torch.long), "float"),
    ],
)
def test_bad_actions_raise_value_error_naming_the_expected_shape(action, message):
    env = ManagerBasedRlEnv(_cartpole())
    env.reset()
    with pytest.raises(ValueError, match=message):
        env.step(action)


def _history_cfg(history_length=3, delay=0):
    cfg = _cartpole(2)
    cfg.observations["actor"].terms["joint_pos"] = ObservationTermCfg(
        func=mdp.joint_pos_rel,
        params={"asset_cfg": SceneEntityCfg("cartpole")},
        history_length=history_length,
        delay=delay,
    )
    return cfg


def test_history_advances_once_per_step_and_reading_has_no_side_effect():
    # Case C03.
    env = ManagerBasedRlEnv(_history_cfg())
    obs, _ = env.reset(seed=0)
    first = obs["actor"][:, :2].clone()
    # Filled on reset: every slot holds the reset value.
    torch.testing.assert_close(obs["actor"][:, 2:4], first)
    torch.testing.assert_close(obs["actor"][:, 4:6], first)
    actions = torch.ones(2, 1)
    obs, *_ = env.step(actions)
    after_step = obs["actor"].clone()
    again = env.observation_manager.compute(update_history=False)
    assert torch.equal(again["actor"], after_step)
    # The newest slot is the current joint position; the window shifted exactly once.
    current = env.scene["cartpole"].data.joint_pos - env.scene["cartpole"].data.default_joint_pos
    torch.testing.assert_close(after_step[:, 4:6], current)
    torch.testing.assert_close(after_step[:, 2:4], first)


def test_partial_reset_keeps_other_envs_history():
    env = ManagerBasedRlEnv(_history_cfg())
    env.reset(seed=0)
    for _ in range(3):
        obs, *_ = env.step(torch.ones(2, 1))
    before = obs["actor"][1].clone()
    obs, _ = env.reset(env_ids=torch.tensor([0]))
    assert torch.equal(obs["actor"][1], before)
    torch.testing.assert_close(obs["actor"][0, 0:2], obs["actor"][0, 4:6])  # env 0 refilled


def test_observation_delay_shows_the_value_from_earlier_steps():
    env = ManagerBasedRlEnv(_history_cfg(history_length=0, delay=2))
    env.reset(seed=0)
    seen = []
    for _ in range(4):
        obs, *_ = env.step(torch.ones(2, 1))
        d = env.scene["cartpole"].data
        seen.append((d.joint_pos - d.default_joint_pos).clone())
        if len(seen) > 2:
            torch.testing.assert_close(obs["actor"][:, :2], seen[-3])


@pytest.mark.parametrize(
    ("section", "name", "term", "message"),
    [
        (
            "rewards",
            "bad_reward",
            RewardTermCfg(func=lambda env: torch.zeros(env.num_envs, 1), weight=1.0),
            r"Reward term 'bad_reward' returned shape \(2, 1\); expected \(2,\)",
        ),
        (
            "rewards",
            "no_weight",
            RewardTermCfg(func=mdp.is_alive),
            "Reward term 'no_weight' has no weight",
        ),
        (
            "terminations",
            "float_done",
            TerminationTermCfg(func=lambda env: torch.zeros(env.num_envs)),
            "Termination term 'float_done' returned dtype torch.float32; expected torch.bool",
        ),
        (
            "rewards",
            "ghost",
            RewardTermCfg(
                func=mdp.joint_vel_l2, weight=1.0, params={"asset_cfg": SceneEntityCfg("ghost")}
            ),
            "Reward term 'ghost'.*no entity or sensor 'ghost'",
        ),
        (
            "rewards",
            "no_match",
            RewardTermCfg(
                func=mdp.joint_vel_l2,
                weight=1.0,
                params={"asset_cfg": SceneEntityCfg("cartpole", joint_names=("elbow",))},
            ),
            "Reward term 'no_match'.*elbow",
        ),
    ],
)
def test_config_errors_raise_at_construction_and_name_the_term(section, name, term, message):
    # Case C04 and its kin.
    cfg = _cartpole()
    getattr(cfg, section)[name] = term
    with pytest.raises(ValueError, match=message):
        ManagerBasedRlEnv(cfg)


def test_observation_term_of_wrong_rank_names_the_term():
    cfg = _cartpole()
    cfg.observations["actor"].terms["flat"] = ObservationTermCfg(
        func=lambda env: torch.zeros(env.num_envs)
    )
    with pytest.raises(ValueError, match=r"Observation term 'actor/flat' returned shape \(2,\)"):
        ManagerBasedRlEnv(cfg)


def _go1_flat(num_envs: int):
    """A reset Go1 flat velocity env and its robot entity."""
    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
    cfg.scene.num_envs = num_envs
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    return env, env.scene["robot"]


def test_upside_down_robot_terminates_without_nan():
    # Case C05: a flipped robot has projected gravity z ~ +1 (after float32 rounding possibly
    # 1.0000001, where an unclamped acos is NaN and the robot would never terminate).
    env, robot = _go1_flat(num_envs=2)
    state = torch.cat(
        [robot.data.root_link_pos_w, robot.data.root_link_quat_w, torch.zeros(2, 6)], dim=-1
    )
    state[0, 2] = 0.6
    state[0, 3:7] = torch.tensor([0.0, 1.0, 0.0, 0.0])  # rotated by pi about x: upside down
    robot.write_root_state_to_sim(state)
    env.sim.forward()
    assert robot.data.projected_gravity_b[0, 2].item() == pytest.approx(1.0, abs=1e-6)
    done = env.termination_manager.terms["bad_orientation"].func(
        env, **env.termination_manager.terms["bad_orientation"].params
    )
    assert done.tolist() == [True, False]
    obs, rew, term, _, extras = env.step(torch.zeros(2, 12))
    assert term[0] and extras["log"]["Episode_Termination/bad_orientation"] == 1
    assert torch.isfinite(rew).all() and torch.isfinite(obs["actor"]).all()


def test_bad_orientation_agrees_with_the_tilt_angle_and_rejects_impossible_limits():
    # The term compares g_z > -cos(limit) instead of acos(-g_z) > limit: the same decision at
    # these tilts, upright and upside down included, for limits near 0, pi/2 and pi too (the
    # two forms may differ only within float32 rounding of the limit).
    env, robot = _go1_flat(num_envs=64)
    g = torch.Generator().manual_seed(3)
    tilt = torch.linspace(0.0, math.pi, 64)
    axis = torch.nn.functional.normalize(
        torch.cat([torch.randn(64, 2, generator=g), torch.zeros(64, 1)], 1), dim=1
    )
    quat = torch.cat([torch.cos(tilt / 2)[:, None], torch.sin(tilt / 2)[:, None] * axis], dim=1)
    state = torch.cat([robot.data.root_link_pos_w, quat, torch.zeros(64, 6)], dim=-1)
    robot.write_root_state_to_sim(state)
    env.sim.forward()
    gz = robot.data.projected_gravity_b[:, 2]
    for degrees in (0, 10, 45, 70, 90, 135, 179, 179.99, 180 - 1e-9, 180):
        limit = math.radians(degrees)
        expected = torch.acos((-gz).clamp(-1.0, 1.0)) > limit
        assert torch.equal(mdp.bad_orientation(env, limit_angle=limit), expected), degrees
    assert mdp.bad_orientation(env, limit_angle=math.radians(70)).sum().item() > 10
    for limit in (-0.1, 3.2, 70.0):
        with pytest.raises(ValueError, match=r"limit_angle must be in \[0, pi\] rad"):
            mdp.bad_orientation(env, limit_angle=limit)


def test_the_tilt_threshold_is_the_largest_float32_at_or_below_the_limit():
    from mjlab.envs.mdp.terminations import _float32_at_most

    for x in (-1.0, -0.5, 0.0, -math.cos(math.radians(70)), -math.cos(math.pi / 2), 0.99999998):
        t = _float32_at_most(x)
        assert float(np.float32(t)) == t and t <= x
        assert float(np.nextafter(np.float32(t), np.float32(np.inf))) > x


def test_select_joints_is_the_tensor_itself_for_all_joints_and_a_selection_otherwise():
    x = torch.arange(12.0).view(2, 6)
    assert SceneEntityCfg("robot").select_joints(x) is x
    some = SceneEntityCfg("robot", joint_ids=[4, 1])
    assert some.select_joints(x).tolist() == [[4.0, 1.0], [10.0, 7.0]]
    assert (
        some.select_joints(x).tolist()
        == SceneEntityCfg("robot", joint_ids=np.array([4, 1])).select_joints(x).tolist()
    )
    assert SceneEntityCfg("robot", joint_ids=slice(2, 4)).select_joints(x).tolist() == [
        [2.0, 3.0],
        [8.0, 9.0],
    ]


def test_metrics_logged_by_terms_survive_steps_with_resets():
    # Case C06: a reward term logs a metric; a termination fires in env 0 every step.
    def logging_reward(env):
        env.extras["log"]["Metrics/custom"] = 7.0
        return torch.ones(env.num_envs)

    cfg = _cartpole(2)
    cfg.rewards["logging"] = RewardTermCfg(func=logging_reward, weight=1.0)
    cfg.terminations["always_env0"] = TerminationTermCfg(
        func=lambda env: torch.arange(env.num_envs, device=env.device) == 0
    )
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    for _ in range(3):
        *_, extras = env.step(torch.zeros(2, 1))
        log = extras["log"]
        assert log["Metrics/custom"] == 7.0
        assert log["Episode_Termination/always_env0"] == 1
        # Episode sum of the env that reset in this step: one step of reward 1 * dt / 10 s.
        assert log["Episode_Reward/logging"] == pytest.approx(1.0 * env.step_dt / 10.0)


def test_diverged_physics_resets_only_that_env_and_is_counted():
    env = ManagerBasedRlEnv(_cartpole(3))
    env.reset(seed=0)
    for _ in range(3):
        env.step(torch.zeros(3, 1))
    env.sim.data.qvel[1, 1] = float("nan")
    lengths = env.episode_length_buf.clone()
    obs, rew, term, _trunc, extras = env.step(torch.zeros(3, 1))
    assert extras["log"]["Metrics/physics_divergence"] == 1
    assert term.tolist() == [False, True, False]
    assert env.episode_length_buf.tolist() == [lengths[0] + 1, 0, lengths[2] + 1]
    assert torch.isfinite(obs["actor"]).all() and torch.isfinite(rew).all()


def test_same_seed_gives_the_same_rollout():
    def rollout(seed):
        env = ManagerBasedRlEnv(load_env_cfg("Mjlab-Cartpole-Balance"))
        obs, _ = env.reset(seed=seed)
        gen = torch.Generator().manual_seed(123)
        out = [obs["actor"].clone()]
        for _ in range(30):
            obs, *_ = env.step(torch.randn(env.num_envs, 1, generator=gen))
            out.append(obs["actor"].clone())
        return torch.stack(out)

    a, b, c = rollout(5), rollout(5), rollout(6)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)

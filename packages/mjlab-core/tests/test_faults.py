"""Faults are counted, never silently lost: physics that is invalid right after a reset, and
reward terms that return NaN."""

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.managers import EventTermCfg, ObservationTermCfg, RewardTermCfg
from mjlab.tasks import load_env_cfg


def _absurd_velocity_in_env_0(env, env_ids, asset_name="cartpole"):
    """Reset event: env 0 starts with a velocity far beyond mjMAXVAL (1e10)."""
    entity = env.scene[asset_name]
    ids = env_ids[env_ids == 0]
    if len(ids):
        pos = entity.data.default_joint_pos[ids]
        vel = torch.full_like(pos, 1e12)
        entity.write_joint_state_to_sim(pos, vel, env_ids=ids)


def _nan_for_env_1(env):
    value = torch.zeros(env.num_envs, device=env.device)
    value[1] = float("nan")
    return value


def _cartpole(**changes):
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 3
    for key, value in changes.items():
        setattr(cfg, key, value)
    return cfg


def test_a_world_invalid_right_after_reset_counts_as_physics_divergence():
    cfg = _cartpole()
    cfg.events["absurd"] = EventTermCfg(func=_absurd_velocity_in_env_0, mode="reset")
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    assert env.sim.diverged.tolist() == [True, False, False]
    _, reward, terminated, truncated, extras = env.step(torch.zeros(3, 1))
    assert float(extras["log"]["Metrics/physics_divergence"]) == 1.0
    assert terminated.tolist() == [True, False, False] and not truncated[0]
    assert reward[0] == 0.0


@pytest.mark.parametrize("steps_before", [0, 4])
def test_a_blow_up_in_any_step_of_an_episode_is_counted_and_isolated(steps_before):
    # A force far beyond what the cart can take makes qacc exceed mjMAXVAL in the first
    # substep: MuJoCo resets the world to its defaults and runs on. In the episode's first
    # step its clock then ends where a healthy world's does, so only MuJoCo's own instability
    # count can tell.
    env, ref = ManagerBasedRlEnv(_cartpole()), ManagerBasedRlEnv(_cartpole())
    for e in (env, ref):
        e.reset(seed=0)
        for _ in range(steps_before):
            e.step(torch.zeros(3, 1))
    env.sim.data.qfrc_applied[1, 0] = 1e30
    _, reward, terminated, truncated, extras = env.step(torch.zeros(3, 1))
    ref.step(torch.zeros(3, 1))
    assert float(extras["log"]["Metrics/physics_divergence"]) == 1.0
    assert terminated.tolist() == [False, True, False] and not truncated.any()
    assert reward[1] == 0.0
    assert env.episode_length_buf.tolist() == [steps_before + 1, 0, steps_before + 1]
    # The other worlds stepped exactly as without the blow-up, and the next step counts none.
    assert torch.equal(env.sim.data.qpos[[0, 2]], ref.sim.data.qpos[[0, 2]])
    assert torch.equal(env.sim.data.qvel[[0, 2]], ref.sim.data.qvel[[0, 2]])
    _, _, terminated, _, extras = env.step(torch.zeros(3, 1))
    assert float(extras["log"]["Metrics/physics_divergence"]) == 0.0 and not terminated.any()


@pytest.mark.parametrize("host_checks", [True, False])
def test_a_nan_reward_term_is_counted_per_term_and_warned_about_once(host_checks):
    cfg = _cartpole()
    cfg.rewards["broken"] = RewardTermCfg(func=_nan_for_env_1, weight=1.0)
    env = ManagerBasedRlEnv(cfg)
    env.reward_manager.host_checks = host_checks  # False: what a CUDA env does
    env.reset(seed=0)
    for _ in range(4):
        _, reward, *_ = env.step(torch.zeros(3, 1))
        assert torch.isfinite(reward).all()
    with pytest.warns(RuntimeWarning, match="Reward term 'broken' returned NaN/Inf \\(4 values"):
        env.reset(seed=0)
    log = env.extras["log"]
    assert log["Metrics/nonfinite_reward/broken"] == 4.0
    assert "Metrics/nonfinite_reward/alive" not in log
    env.step(torch.zeros(3, 1))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per term
        env.reset(seed=0)
    assert env.extras["log"]["Metrics/nonfinite_reward/broken"] == 1.0


def test_nonfinite_rewards_raise_names_the_term_and_the_envs():
    cfg = _cartpole(nonfinite_rewards="raise")
    cfg.rewards["broken"] = RewardTermCfg(func=_nan_for_env_1, weight=1.0)
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    with pytest.raises(
        FloatingPointError, match=r"Reward term 'broken' returned NaN/Inf for envs \[1\]"
    ):
        env.step(torch.zeros(3, 1))


def test_without_auto_reset_ended_envs_wait_for_an_explicit_reset():
    cfg = _cartpole(auto_reset=False)
    cfg.episode_length_s = 3 * cfg.decimation * cfg.sim.mujoco.timestep  # 3 steps
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    for _ in range(3):
        _, _, terminated, truncated, _ = env.step(torch.zeros(3, 1))
    done = terminated | truncated
    assert done.all()
    assert env.episode_length_buf.tolist() == [3, 3, 3], "not reset inside step"
    with pytest.raises(
        RuntimeError,
        match=r"Envs \[0, 1, 2\] ended their episode and were not reset .*env.reset\(env_ids",
    ):
        env.step(torch.zeros(3, 1))
    env.reset(env_ids=torch.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"Envs \[2\] ended"):
        env.step(torch.zeros(3, 1))
    env.reset(env_ids=torch.tensor([2]))
    env.step(torch.zeros(3, 1))
    assert env.episode_length_buf.tolist() == [1, 1, 1]


def _nan_and_inf(env):
    value = torch.zeros(env.num_envs, 2, device=env.device)
    value[1, 0] = float("nan")
    value[2, 1] = float("-inf")
    return value


@pytest.mark.parametrize("host_checks", [True, False])
def test_nan_and_inf_observations_reach_the_policy_as_zero_and_are_counted(host_checks):
    cfg = _cartpole()
    cfg.observations["actor"].terms["broken"] = ObservationTermCfg(func=_nan_and_inf)
    env = ManagerBasedRlEnv(cfg)
    env.observation_manager.host_checks = host_checks  # False: what a CUDA env does
    env.reset(seed=0)
    obs, *_, extras = env.step(torch.zeros(3, 1))
    assert torch.isfinite(obs["actor"]).all()
    assert obs["actor"][1, -2] == 0.0 and obs["actor"][2, -1] == 0.0
    assert int(extras["log"]["Metrics/nonfinite_observations"]) == 2
    raw = env.observation_manager.raw_terms("actor")["broken"]
    assert raw.tolist() == [[0.0, 0.0]] * 3

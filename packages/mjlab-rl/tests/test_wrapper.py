"""RslRlVecEnvWrapper honours rsl-rl's VecEnv contract."""

import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from mjlab.envs import ManagerBasedRlEnv, mdp
from mjlab.managers import ObservationTermCfg, SceneEntityCfg
from mjlab.rl import RslRlVecEnvWrapper
from mjlab.tasks import load_env_cfg


def _env(history=0, finite=False, num_envs=3):
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = num_envs
    cfg.is_finite_horizon = finite
    if history:
        cfg.observations["actor"].terms["joint_pos"] = ObservationTermCfg(
            func=mdp.joint_pos_rel,
            params={"asset_cfg": SceneEntityCfg("cartpole")},
            history_length=history,
        )
    return RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))


def test_wrapper_is_a_vec_env_with_the_env_attributes():
    env = _env()
    assert isinstance(env, VecEnv)
    assert env.num_envs == 3 and env.num_actions == 1
    assert env.max_episode_length == 500
    assert env.unwrapped is env.env
    obs = env.get_observations()
    assert isinstance(obs, TensorDict) and obs.batch_size == torch.Size([3])
    assert set(obs.keys()) == {"actor", "critic"}


def test_get_observations_has_no_side_effects():
    # Case C03 through the wrapper.
    env = _env(history=3)
    obs, *_ = env.step(torch.ones(3, 1))
    first = env.get_observations()["actor"].clone()
    second = env.get_observations()["actor"].clone()
    assert torch.equal(first, obs["actor"]) and torch.equal(first, second)


def test_step_returns_dones_and_time_outs():
    env = _env(num_envs=2)
    env.episode_length_buf = torch.tensor([499, 10])
    _, rew, dones, extras = env.step(torch.zeros(2, 1))
    assert dones.tolist() == [1, 0]
    assert extras["time_outs"].tolist() == [True, False]
    assert env.episode_length_buf.tolist() == [0, 11]
    assert rew.shape == (2,) and "log" in extras


def test_finite_horizon_tasks_report_no_time_outs():
    env = _env(finite=True, num_envs=2)
    env.episode_length_buf = torch.tensor([499, 10])
    _, _, dones, extras = env.step(torch.zeros(2, 1))
    assert dones.tolist() == [1, 0] and "time_outs" not in extras


def test_clip_actions_clamps_before_the_env():
    env = RslRlVecEnvWrapper(
        ManagerBasedRlEnv(load_env_cfg("Mjlab-Cartpole-Balance")), clip_actions=0.5
    )
    env.step(torch.full((env.num_envs, 1), 7.0))
    assert torch.all(env.unwrapped.action_manager.action == 0.5)

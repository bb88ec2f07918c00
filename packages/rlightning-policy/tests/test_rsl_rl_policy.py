"""RSLRLPolicy on real rsl-rl-lib PPO and the point-mass env: weights, transitions, updates."""

import warnings

import pytest
import torch
from rsl_rl.algorithms import PPO
from tensordict import TensorDict

from rlightning.engine import RolloutWorker
from rlightning.policy import PolicyConfig, PolicyRole, TrainConfig
from rlightning.policy.rsl_rl_policy import RSLRLPolicy, env_meta_from_vec_env
from rlightning.policy.rsl_rl_policy.returns import compute_gae
from rlightning.types import EnvRet


def _learner(pm, env, seed=0, **algorithm):
    torch.manual_seed(seed)
    policy = RSLRLPolicy(
        PolicyConfig(train_cfg=pm.point_mass_train_cfg(**algorithm), device="cpu"),
        PolicyRole.TRAIN,
    )
    policy.init_train(TrainConfig(), env_meta_from_vec_env(env))
    return policy


def _actor(pm, env, seed=1, **algorithm):
    torch.manual_seed(seed)
    policy = RSLRLPolicy(
        PolicyConfig(train_cfg=pm.point_mass_train_cfg(**algorithm), device="cpu"),
        PolicyRole.EVAL,
    )
    policy.init_eval(env_meta=env_meta_from_vec_env(env))
    return policy


def _sync(learner, actor):
    actor.push_weights(learner.get_trainable_parameters())
    assert actor.wait_for_weight_update_done(timeout=10.0)


def test_weight_round_trip_train_to_eval_gives_identical_actions(pm):
    env = pm.PointMassEnv(num_envs=16)
    learner, actor = _learner(pm, env, seed=0), _actor(pm, env, seed=1)
    env_ret = EnvRet("env_0", env.get_observations())

    def sampled_actions(policy):
        torch.manual_seed(123)
        return policy.rollout_step(env_ret).actions

    assert not torch.equal(sampled_actions(learner), sampled_actions(actor))
    _sync(learner, actor)
    assert torch.equal(sampled_actions(learner), sampled_actions(actor))
    mean_learner = learner.algo.actor(env_ret.observation)
    mean_actor = actor.algo.actor(env_ret.observation)
    assert torch.equal(mean_learner, mean_actor)
    assert learner.get_param_fingerprint() == actor.get_param_fingerprint()
    assert actor.weight_version == 1
    actor.close()


def test_pushed_weights_wait_for_the_idle_gate(pm):
    env = pm.PointMassEnv(num_envs=4)
    learner, actor = _learner(pm, env, seed=0), _actor(pm, env, seed=1)
    before = actor.get_param_fingerprint()
    with actor.idle_gate():  # an inference step is "running"
        actor.push_weights(learner.get_trainable_parameters())
        assert not actor.wait_for_weight_update_done(timeout=0.3)
        assert actor.get_param_fingerprint() == before
        assert not actor.is_idle()
    assert actor.wait_for_weight_update_done(timeout=10.0)
    assert actor.get_param_fingerprint() == learner.get_param_fingerprint()
    actor.close()


def test_one_update_changes_parameters_and_lowers_the_value_loss(pm):
    env = pm.PointMassEnv(num_envs=32)
    # Unclipped value loss: with clipping, one update moves V at most clip_param per sample.
    learner = _learner(pm, env, use_clipped_value_loss=False)
    actor = _actor(pm, env, use_clipped_value_loss=False)
    _sync(learner, actor)
    data, _ = RolloutWorker(env, actor, num_steps_per_env=24).collect()
    returns, _ = compute_gae(
        data["rewards"], data["dones"], data["values"], data["next_values"], 0.98, 0.95
    )
    observations = data["observations"].clone()

    def value_loss():
        with torch.no_grad():
            values = learner.algo.critic(observations.flatten(0, 1)).reshape(returns.shape)
        return (values - returns).square().mean().item()

    loss_before = value_loss()
    weights_before = learner.get_trainable_parameters()
    learner.update_dataset(data)
    losses = learner.train()
    assert set(losses) >= {"value", "surrogate", "entropy", "learning_rate"}
    assert learner.num_updates == 1 and not learner.dataset
    weights_after = learner.get_trainable_parameters()
    for module in ("actor", "critic"):
        changed = [
            k
            for k in weights_before[module]
            if not torch.equal(weights_before[module][k], weights_after[module][k])
        ]
        assert changed, f"no {module} tensor changed"
    assert value_loss() < 0.8 * loss_before
    actor.close()


def test_gae_targets_match_rsl_rl_compute_returns(pm):
    env = pm.PointMassEnv(num_envs=8, max_episode_length=10)
    learner, actor = _learner(pm, env), _actor(pm, env)
    _sync(learner, actor)
    worker = RolloutWorker(env, actor, num_steps_per_env=24)
    data, _ = worker.collect()
    storage = learner._fill_storage(data.clone())
    learner.algo.compute_returns(env.get_observations())  # rsl-rl's own GAE on the same data
    returns, _ = compute_gae(
        data["rewards"], data["dones"], data["values"], data["next_values"], 0.98, 0.95
    )
    torch.testing.assert_close(returns, storage.returns.squeeze(-1), rtol=1e-5, atol=1e-5)
    actor.close()


def test_rewards_and_dones_align_with_the_action_that_caused_them(pm):
    class RecordingEnv(pm.PointMassEnv):
        def step(self, actions):
            before = self.get_observations()
            obs, rewards, dones, extras = super().step(actions)
            self.record.append((before, actions.clone(), rewards, dones, extras["time_outs"]))
            return obs, rewards, dones, extras

    env = RecordingEnv(num_envs=16, max_episode_length=7, bound=0.9, seed=3)
    env.record = []
    actor = _actor(pm, env)
    data, stats = RolloutWorker(env, actor, num_steps_per_env=20).collect()
    assert data.batch_size == torch.Size([20, 16])

    observed = torch.stack([r[0]["actor"] for r in env.record])
    actions = torch.stack([r[1] for r in env.record])
    rewards = torch.stack([r[2] for r in env.record])
    dones = torch.stack([r[3] for r in env.record])
    time_outs = torch.stack([r[4] for r in env.record])
    assert time_outs.any() and (dones & ~time_outs).any(), "need both time-outs and terminations"

    assert torch.equal(data["observations"]["actor"], observed)
    assert torch.equal(data["actions"], actions)
    assert torch.equal(data["dones"], dones)
    assert torch.equal(data["time_outs"], time_outs)
    # rsl-rl's time-out bootstrapping: r_t + gamma * V(s_t) where the episode was cut.
    expected = rewards + 0.98 * data["values"] * time_outs
    torch.testing.assert_close(data["rewards"], expected)
    # The bootstrap value of step t is the value the actor computes for s_{t+1} at step t + 1.
    torch.testing.assert_close(data["next_values"][:-1], data["values"][1:])
    assert len(stats.episode_lengths) == int(dones.sum())
    actor.close()


def test_load_state_dict_warns_on_unknown_and_missing_modules(pm):
    env = pm.PointMassEnv(num_envs=4)
    learner, actor = _learner(pm, env, seed=0), _actor(pm, env, seed=1)
    weights = learner.get_trainable_parameters()

    with pytest.warns(UserWarning, match=r"unknown modules \['rnd'\]"):
        actor.load_state_dict({**weights, "rnd": {}})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        actor.load_state_dict({"actor": weights["actor"], "critic_typo": weights["critic"]})
    messages = [str(w.message) for w in caught]
    assert any("unknown modules ['critic_typo']" in m for m in messages), messages
    assert any("modules ['critic'] are missing" in m for m in messages), messages

    fresh = _actor(pm, env, seed=2)
    fresh_critic = fresh.get_trainable_parameters()["critic"]
    with pytest.warns(UserWarning, match="missing"):
        fresh.load_state_dict({"actor": weights["actor"]})
    after = fresh.get_trainable_parameters()
    assert all(torch.equal(after["actor"][k], v) for k, v in weights["actor"].items())
    assert all(torch.equal(after["critic"][k], v) for k, v in fresh_critic.items())

    # Tensor-level mismatches inside a module are warned about and skipped, never fatal.
    before = {k: v.clone() for k, v in actor.get_trainable_parameters()["actor"].items()}
    broken = {k: v[:1] for k, v in weights["actor"].items() if v.ndim and v.shape[0] > 1}
    broken["not_a_tensor_of_this_model"] = torch.zeros(1)
    with pytest.warns(UserWarning, match=r"module 'actor': tensors of the wrong shape") as caught:
        actor.load_state_dict({"actor": broken, "critic": weights["critic"]})
    text = " ".join(str(w.message) for w in caught)
    assert "unexpected tensors ['not_a_tensor_of_this_model']" in text
    after = actor.get_trainable_parameters()["actor"]
    assert all(torch.equal(after[k], before[k]) for k in broken if k in before)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a complete, matching dict loads silently
        actor.load_state_dict(weights)
    for policy in (actor, fresh):
        policy.close()


def test_random_actions_before_the_networks_exist(pm):
    env = pm.PointMassEnv(num_envs=256)
    policy = RSLRLPolicy(PolicyConfig(train_cfg=pm.point_mass_train_cfg()), PolicyRole.EVAL)
    env_ret = EnvRet("env_0", env.get_observations())
    with pytest.raises(RuntimeError, match="action_space"):
        policy.rollout_step(env_ret)
    policy.env_meta = env_meta_from_vec_env(env)
    response = policy.rollout_step(env_ret)
    assert response.actions.shape == (256, 1)
    assert response.actions.min() >= -1.0 and response.actions.max() <= 1.0
    assert response.actions.std() > 0.4  # uniform on [-1, 1]: std 0.577
    assert "values" not in response
    obs, rewards, dones, extras = env.step(response.actions)
    step_ret = EnvRet("env_0", obs, rewards, dones & ~extras["time_outs"], extras["time_outs"])
    with pytest.raises(ValueError, match="random"):
        policy.postprocess(step_ret, response)


def test_postprocess_rejects_a_reset_env_ret_and_a_foreign_env(pm):
    env = pm.PointMassEnv(num_envs=4)
    actor = _actor(pm, env)
    reset_ret = EnvRet("env_0", env.get_observations())
    response = actor.rollout(reset_ret)
    with pytest.raises(ValueError, match="last_reward"):
        actor.postprocess(reset_ret, response)
    obs, rewards, dones, extras = env.step(response.actions)
    other = EnvRet("env_1", obs, rewards, dones, extras["time_outs"])
    with pytest.raises(ValueError, match="env_1"):
        actor.postprocess(other, response)
    actor.close()


def test_checkpoint_is_written_atomically_and_restores_the_weights(pm, tmp_path):
    env = pm.PointMassEnv(num_envs=4)
    learner = _learner(pm, env, seed=0)
    path = tmp_path / "run" / "model_0.pt"
    learner.save_checkpoint(path)
    assert sorted(p.name for p in path.parent.iterdir()) == ["model_0.pt"]
    restored = _learner(pm, env, seed=5)
    assert restored.get_param_fingerprint() != learner.get_param_fingerprint()
    restored.load_state_dict(torch.load(path, weights_only=True))
    assert restored.get_param_fingerprint() == learner.get_param_fingerprint()


def test_update_dataset_and_train_reject_bad_input(pm):
    env = pm.PointMassEnv(num_envs=4)
    learner = _learner(pm, env)
    with pytest.raises(RuntimeError, match="update_dataset"):
        learner.train()
    with pytest.raises(ValueError, match=r"\(T, N\)"):
        learner.update_dataset(TensorDict({"rewards": torch.zeros(4)}, batch_size=[4]))
    with pytest.raises(ValueError, match="next_values"):
        learner.update_dataset(TensorDict({"rewards": torch.zeros(3, 4)}, batch_size=[3, 4]))
    with pytest.raises(RuntimeError, match="init_eval"):
        learner.init_eval(env_meta=env_meta_from_vec_env(env))


def test_construct_network_names_unsupported_config(pm):
    env = pm.PointMassEnv(num_envs=4)
    meta = env_meta_from_vec_env(env)
    cfg = pm.point_mass_train_cfg()
    cfg["algorithm"]["rnd_cfg"] = {"weight": 1.0}
    policy = RSLRLPolicy(PolicyConfig(train_cfg=cfg), PolicyRole.TRAIN)
    with pytest.raises(ValueError, match="rnd_cfg"):
        policy.init_train(TrainConfig(), meta)
    cfg = pm.point_mass_train_cfg()
    del cfg["actor"]["distribution_cfg"]
    policy = RSLRLPolicy(PolicyConfig(train_cfg=cfg), PolicyRole.TRAIN)
    with pytest.raises(ValueError, match="distribution_cfg"):
        policy.init_train(TrainConfig(), meta)
    with pytest.raises(ValueError, match="env_meta_from_vec_env"):
        RSLRLPolicy(PolicyConfig(train_cfg=pm.point_mass_train_cfg()), "train").init_train(
            TrainConfig(), None
        )


def test_construct_network_takes_the_policys_config_and_builds_an_agent(pm):
    from rlightning.policy.rsl_rl_policy import algorithms

    env = pm.PointMassEnv(num_envs=4)
    meta = env_meta_from_vec_env(env)
    config = PolicyConfig(train_cfg=pm.point_mass_train_cfg(), device="cpu")
    built = {}
    for name, model_config in (("config", config), ("dict", config.train_cfg)):
        torch.manual_seed(0)
        policy = RSLRLPolicy(PolicyConfig(device="cpu"), PolicyRole.TRAIN)
        policy.construct_network(model_config, meta)
        assert isinstance(policy.algo, algorithms.Agent)
        assert issubclass(policy.algo_cls, PPO)
        built[name] = policy.get_trainable_parameters()
        policy.close()
    for module, tensors in built["config"].items():
        assert all(torch.equal(v, built["dict"][module][k]) for k, v in tensors.items())

"""MjlabOnPolicyRunner: checkpoints round trip, legacy migration (C01), atomic saves."""

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.rl import MjlabOnPolicyRunner, RslRlVecEnvWrapper, to_rsl_rl_train_cfg
from mjlab.tasks import load_env_cfg, load_rl_cfg


def _runner(tmp_path=None, num_envs=8):
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = num_envs
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
    agent = load_rl_cfg("Mjlab-Cartpole-Balance")
    agent.num_steps_per_env = 8
    return MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(agent), str(tmp_path) if tmp_path else None)


def _actions(runner, obs):
    policy = runner.get_inference_policy()
    with torch.inference_mode():
        return policy(obs)


def test_save_load_round_trip_restores_iteration_counter_normalizer_and_optimizer(tmp_path):
    runner = _runner(tmp_path)
    runner.learn(3)
    runner.env.unwrapped.common_step_counter = 1234
    path = tmp_path / "model_2.pt"
    runner.save(str(path))
    obs = runner.env.get_observations()
    expected = _actions(runner, obs)
    actor = runner.alg.get_policy()
    mean = actor.obs_normalizer._mean.clone()
    assert not torch.allclose(mean, torch.zeros_like(mean)), "normalizer learned something"
    opt_state = runner.alg.optimizer.state_dict()

    fresh = _runner()
    fresh.load(str(path))
    assert fresh.current_learning_iteration == runner.current_learning_iteration
    assert fresh.env.unwrapped.common_step_counter == 1234
    assert torch.equal(fresh.alg.get_policy().obs_normalizer._mean, mean)
    assert torch.equal(_actions(fresh, obs), expected)
    loaded_state = fresh.alg.optimizer.state_dict()["state"]
    for key, value in opt_state["state"].items():
        assert torch.equal(loaded_state[key]["exp_avg"], value["exp_avg"])


def _legacy_checkpoint(runner, std_key="std"):
    """A pre-5.x checkpoint made from a real runner's weights, keys renamed the old way."""
    actor = runner.alg.get_policy().state_dict()
    critic = runner.alg._raw_critic.state_dict()
    model = {}
    for k, v in actor.items():
        if k.startswith("mlp."):
            model["actor." + k.removeprefix("mlp.")] = v
        elif k.startswith("obs_normalizer."):
            model["actor_obs_normalizer." + k.removeprefix("obs_normalizer.")] = v
        elif k == "distribution.std_param":
            model[std_key] = v if std_key == "std" else torch.log(v)
    for k, v in critic.items():
        if k.startswith("mlp."):
            model["critic." + k.removeprefix("mlp.")] = v
        elif k.startswith("obs_normalizer."):
            model["critic_obs_normalizer." + k.removeprefix("obs_normalizer.")] = v
    return {
        "model_state_dict": model,
        "optimizer_state_dict": runner.alg.optimizer.state_dict(),
        "iter": 7,
        "infos": None,
    }


def test_legacy_checkpoint_loads_with_identical_actions_and_noise(tmp_path):
    # Case C01: actor.*/critic.*/actor_obs_normalizer.*/std from rsl-rl before the 4.x split.
    source = _runner()
    source.learn(2)
    with torch.no_grad():
        source.alg.get_policy().distribution.std_param.fill_(0.37)
    path = tmp_path / "legacy.pt"
    torch.save(_legacy_checkpoint(source), path)
    obs = source.env.get_observations()
    target = _runner()
    infos = target.load(str(path))
    assert infos is None
    assert target.current_learning_iteration == 7
    assert torch.equal(_actions(target, obs), _actions(source, obs))
    assert torch.allclose(target.alg.get_policy().distribution.std_param, torch.full((1,), 0.37))


def test_4x_checkpoint_with_std_in_the_actor_dict_loads(tmp_path):
    source = _runner()
    saved = source.alg.save()
    saved["actor_state_dict"] = dict(saved["actor_state_dict"])
    saved["actor_state_dict"]["std"] = (
        saved["actor_state_dict"].pop("distribution.std_param") * 0 + 0.5
    )
    saved["iter"], saved["infos"] = 3, {}
    torch.save(saved, tmp_path / "v4.pt")
    target = _runner()
    target.load(str(tmp_path / "v4.pt"))
    assert torch.allclose(target.alg.get_policy().distribution.std_param, torch.full((1,), 0.5))


def test_not_a_checkpoint_is_a_clear_error(tmp_path):
    torch.save({"weights": torch.zeros(2)}, tmp_path / "x.pt")
    with pytest.raises(ValueError, match="Not an rsl-rl checkpoint"):
        _runner().load(str(tmp_path / "x.pt"))


def test_failing_write_leaves_the_previous_checkpoint_intact(tmp_path, monkeypatch):
    runner = _runner()
    path = tmp_path / "model_1.pt"
    runner.save(str(path))
    before = path.read_bytes()
    real_save = torch.save

    def broken_save(obj, f, *args, **kwargs):
        real_save(obj, f, *args, **kwargs)
        with open(f, "r+b") as handle:  # a half-written file, then the disk fills up
            handle.truncate(100)
        raise OSError("No space left on device")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(OSError, match="No space left"):
        runner.save(str(path))
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["model_1.pt"], "no temp file left behind"


def test_onnx_export_goes_beside_a_checkpoint_in_a_folder_named_model(tmp_path):
    # Case C07: paths are never derived by splitting on "model".
    run = tmp_path / "my_model_experiments" / "2026-03-30_12-00-00"
    runner = _runner()
    runner.save(str(run / "model_10.pt"))
    runner.export_policy_to_onnx(str(run))
    assert sorted(p.name for p in run.iterdir()) == ["model_10.pt", "policy.onnx"]
    assert not (tmp_path / "my_").exists()

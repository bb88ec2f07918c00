"""MjlabOnPolicyRunner: checkpoints round trip, legacy migration (C01), atomic saves."""

import os
from pathlib import Path

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
        real_save(obj, f, *args, **kwargs)  # half the work done, then the write fails
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


def _old_layout_checkpoint(runner, std_last=False):
    """A checkpoint laid out as rsl-rl < 4 wrote it, from a real runner's weights.

    The old ActorCritic's state dict lists its own `std` first, then the actor, critic and
    normalizer modules; its Adam saw the parameters in that same order. With `std_last`, a variant
    that registered std after the networks (state dict and optimizer both in that order).
    """
    actor, critic = runner.alg._raw_actor.state_dict(), runner.alg._raw_critic.state_dict()
    nets = {"actor." + k[4:]: v for k, v in actor.items() if k.startswith("mlp.")}
    nets |= {
        f"actor_obs_normalizer.{k[15:]}": v for k, v in actor.items() if k.startswith("obs_norm")
    }
    nets |= {"critic." + k[4:]: v for k, v in critic.items() if k.startswith("mlp.")}
    nets |= {
        f"critic_obs_normalizer.{k[15:]}": v for k, v in critic.items() if k.startswith("obs_norm")
    }
    std = {"std": actor["distribution.std_param"]}
    model = nets | std if std_last else std | nets
    # The optimizer state of each parameter, in the old parameter order.
    new_names = [n for n, _ in runner.alg._raw_actor.named_parameters()]
    new_names = ["actor." + n for n in new_names] + [
        "critic." + n for n, _ in runner.alg._raw_critic.named_parameters()
    ]
    new_names = [
        n.replace("actor.mlp.", "actor.").replace("critic.mlp.", "critic.") for n in new_names
    ]
    new_names = [("std" if n == "actor.distribution.std_param" else n) for n in new_names]
    opt = runner.alg.optimizer.state_dict()
    old_names = [k for k in model if "obs_normalizer" not in k]
    old_state = {
        i: opt["state"][new_names.index(k)]
        for i, k in enumerate(old_names)
        if new_names.index(k) in opt["state"]
    }
    optimizer = {"state": old_state, "param_groups": opt["param_groups"]}
    return {"model_state_dict": model, "optimizer_state_dict": optimizer, "iter": 7, "infos": None}


@pytest.mark.parametrize("std_last", [False, True], ids=["actor_critic_order", "std_last"])
def test_training_resumes_from_an_old_layout_checkpoint_with_its_optimizer_state(
    tmp_path, std_last
):
    # Case C01, end to end: the old checkpoint loads, acts identically, and PPO can keep training
    # with the old Adam moments attached to the right parameters.
    source = _runner(num_envs=4)
    source.learn(1)
    torch.save(_old_layout_checkpoint(source, std_last), tmp_path / "old.pt")
    obs = source.env.get_observations()
    target = _runner()
    assert target.load(str(tmp_path / "old.pt")) is None
    assert target.current_learning_iteration == 7
    assert torch.equal(_actions(target, obs), _actions(source, obs))
    std_state = target.alg.optimizer.state[target.alg._raw_actor.distribution.std_param]
    source_std_state = source.alg.optimizer.state[source.alg._raw_actor.distribution.std_param]
    assert torch.equal(std_state["exp_avg"], source_std_state["exp_avg"])
    target.learn(1)
    assert target.current_learning_iteration == 8  # the iteration after the checkpoint's


def test_old_log_std_checkpoint_restores_the_log_parameter(tmp_path):
    def log_runner():
        cfg = load_env_cfg("Mjlab-Cartpole-Balance")
        cfg.scene.num_envs = 4
        agent = load_rl_cfg("Mjlab-Cartpole-Balance")
        agent.actor.noise_std_type = "log"
        env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
        return MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(agent), None)

    source = log_runner()
    saved = source.alg.save()
    saved["actor_state_dict"] = dict(saved["actor_state_dict"])
    saved["actor_state_dict"].pop("distribution.log_std_param")
    saved["actor_state_dict"]["log_std"] = torch.full((1,), -1.25)
    saved["iter"], saved["infos"] = 4, None
    torch.save(saved, tmp_path / "v4_log.pt")
    target = log_runner()
    target.load(str(tmp_path / "v4_log.pt"))
    param = target.alg.get_policy().distribution.log_std_param
    assert torch.equal(param.detach(), torch.full((1,), -1.25))
    assert target.current_learning_iteration == 4


def test_unknown_key_in_an_old_checkpoint_fails_a_strict_load_by_name(tmp_path):
    source = _runner()
    checkpoint = _old_layout_checkpoint(source)
    checkpoint["model_state_dict"]["actor_rnn.weight_hh_l0"] = torch.zeros(3)
    torch.save(checkpoint, tmp_path / "odd.pt")
    with pytest.raises(RuntimeError, match=r"actor_rnn\.weight_hh_l0"):
        _runner().load(str(tmp_path / "odd.pt"))
    relaxed = _runner()
    relaxed.load(str(tmp_path / "odd.pt"), strict=False)
    obs = source.env.get_observations()
    assert torch.equal(_actions(relaxed, obs), _actions(source, obs))


def test_checkpoint_without_env_state_loads_and_keeps_the_counter(tmp_path):
    source = _runner()
    saved = source.alg.save()
    saved["iter"], saved["infos"] = 5, {"note": "saved by plain rsl-rl"}
    torch.save(saved, tmp_path / "plain.pt")
    target = _runner()
    target.env.unwrapped.common_step_counter = 99
    assert target.load(str(tmp_path / "plain.pt")) == {"note": "saved by plain rsl-rl"}
    assert target.env.unwrapped.common_step_counter == 99
    assert target.current_learning_iteration == 5


def test_partial_load_cfg_keeps_the_iteration_and_optimizer(tmp_path):
    source = _runner()
    source.learn(1)
    source.save(str(tmp_path / "model_0.pt"))
    target = _runner()
    target.current_learning_iteration = 42
    target.load(str(tmp_path / "model_0.pt"), load_cfg={"actor": True})
    assert target.current_learning_iteration == 42
    assert target.alg.optimizer.state_dict()["state"] == {}
    obs = source.env.get_observations()
    assert torch.equal(_actions(target, obs), _actions(source, obs))


def test_infos_that_load_could_not_read_are_refused_and_keep_the_previous_checkpoint(tmp_path):
    runner = _runner()
    path = tmp_path / "model_3.pt"
    runner.save(str(path), infos={"ok": 1})
    before = path.read_bytes()
    with pytest.raises(ValueError, match=r"infos\['callback'\] is a function, which a checkpoint"):
        runner.save(str(path), infos={"callback": lambda: None})
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["model_3.pt"]
    assert _runner().load(str(path))["ok"] == 1


@pytest.mark.parametrize("upload", [True, False])
def test_upload_model_decides_whether_checkpoints_reach_wandb(tmp_path, monkeypatch, upload):
    import wandb

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 2
    agent = load_rl_cfg("Mjlab-Cartpole-Balance")
    agent.logger, agent.upload_model, agent.wandb_tags = "wandb", upload, ("cartpole", "ci")
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
    run_dir = tmp_path / "run"
    runner = MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(agent), str(run_dir))
    runner.logger.init_logging_writer()
    try:
        assert set(wandb.run.tags) == {"cartpole", "ci"}
        runner.save(str(run_dir / "model_0.pt"))
        uploaded = Path(wandb.run.dir) / "model_0.pt"
        assert uploaded.exists() == upload
    finally:
        runner.logger.stop_logging_writer()
    assert (run_dir / "model_0.pt").is_file()


def test_numpy_infos_round_trip_through_save_and_load(tmp_path):
    import numpy as np

    runner = _runner()
    infos = {
        "best": np.float32(1.5),
        "mean": np.mean([1.0, 2.0]),  # np.float64, a float subclass
        "step": np.int64(7),
        "curve": np.arange(3.0),
        "tag": ("a", 2),
        np.int64(3): "numpy key",
    }
    runner.save(str(tmp_path / "model_1.pt"), infos=infos)
    loaded = _runner().load(str(tmp_path / "model_1.pt"))
    assert loaded["best"] == 1.5 and loaded["step"] == 7 and loaded["tag"] == ("a", 2)
    assert type(loaded["mean"]) is float and loaded[3] == "numpy key"
    assert torch.equal(loaded["curve"], torch.arange(3.0, dtype=torch.float64))
    import enum

    class Mode(enum.IntEnum):
        A = 1

    with pytest.raises(ValueError, match=r"infos\['mode'\] is a Mode"):
        runner.save(str(tmp_path / "model_2.pt"), infos={"mode": Mode.A})
    with pytest.raises(ValueError, match=r"infos\['objs'\] is a ndarray"):
        runner.save(str(tmp_path / "model_2.pt"), infos={"objs": np.array([object()])})


def test_a_device_error_while_loading_is_not_reported_as_a_broken_file(tmp_path):
    runner = _runner()
    runner.save(str(tmp_path / "model_1.pt"))
    with pytest.raises(RuntimeError) as info:
        _runner().load(str(tmp_path / "model_1.pt"), map_location="bogus")
    assert "not a valid checkpoint" not in str(info.value)


@pytest.mark.parametrize("content", [b"", b"\x00garbage" * 40, "truncated"])
def test_a_broken_checkpoint_file_is_one_clear_error_without_weights_only_advice(tmp_path, content):
    path = tmp_path / "model_9.pt"
    if content == "truncated":
        _runner().save(str(path))
        path.write_bytes(path.read_bytes()[:500])
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match="is not a valid checkpoint") as info:
        _runner().load(str(path))
    message = str(info.value)
    assert "weights_only" not in message and "\n" not in message


def test_a_full_disk_is_named_and_the_previous_checkpoint_stays(tmp_path, monkeypatch):
    runner = _runner()
    path = tmp_path / "model_1.pt"
    runner.save(str(path))
    before = path.read_bytes()

    def full(fd):  # the kernel reports a full disk when the data is flushed
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match=r"Disk full: checkpoint .* the previous checkpoint"):
        runner.save(str(path))
    assert path.read_bytes() == before


@pytest.mark.slow
def test_kill_9_during_saves_leaves_a_loadable_checkpoint_and_the_next_save_cleans_up(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    child = f"""
import sys
sys.path.insert(0, {os.path.dirname(__file__)!r})
from test_runner import _runner
runner = _runner()
i = 0
while True:
    runner.save({str(tmp_path / "model.pt")!r}, infos={{"i": i}})
    i += 1
"""
    proc = subprocess.Popen(
        [sys.executable, "-c", child], env=dict(os.environ, CUDA_VISIBLE_DEVICES="")
    )
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "model.pt").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)  # many saves in flight
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    runner = _runner()
    infos = runner.load(str(tmp_path / "model.pt"))  # the last completed save, whole
    assert infos["i"] >= 0
    runner.save(str(tmp_path / "model.pt"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.pt"]


def test_the_runner_prints_no_model_structure_unless_verbose(tmp_path, capsys):
    _runner(tmp_path / "quiet").logger.init_logging_writer()
    out = capsys.readouterr().out
    assert "Actor Model" not in out and "Resolved observation sets" not in out, out
    assert "git diff" not in out
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 2
    train_cfg = to_rsl_rl_train_cfg(load_rl_cfg("Mjlab-Cartpole-Balance"))
    train_cfg["verbose"] = True
    MjlabOnPolicyRunner(RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg)), train_cfg, None)
    assert "Actor Model: MLPModel(" in capsys.readouterr().out

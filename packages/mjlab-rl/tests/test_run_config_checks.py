"""Cross-field checks of a run config: one line at the command line, before the env is built."""

import pytest

from mjlab.envs import ManagerBasedRlEnv
from mjlab.rl import MjlabOnPolicyRunner, RslRlVecEnvWrapper, to_rsl_rl_train_cfg
from mjlab.rl.config import check_minibatch
from mjlab.tasks import load_env_cfg, load_rl_cfg


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--env.actions.effort.scale", "nan"], "env.actions['effort'].scale is nan"),
        (
            [
                "--env.scene.num-envs",
                "4",
                "--agent.num-steps-per-env",
                "8",
                "--agent.algorithm.num-mini-batches",
                "40",
            ],
            "agent.algorithm.num_mini_batches 40 splits an update's 32 samples",
        ),
    ],
    ids=["nan-action-scale", "zero-sized-minibatches"],
)
def test_an_inconsistent_run_config_is_one_line_before_the_env_is_built(
    extra, message, tmp_path, monkeypatch, capsys
):
    from mjlab.rl.scripts import train

    monkeypatch.chdir(tmp_path)
    built = []
    monkeypatch.setattr(ManagerBasedRlEnv, "__init__", lambda *a, **k: built.append(1))
    with pytest.raises(SystemExit) as stop:
        train.main(["Mjlab-Cartpole-Balance", "--agent.logger", "tensorboard", *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(err) == 1, err
    assert err[0].startswith("train: error: ") and message in err[0], err
    assert not built and not any(tmp_path.rglob("params"))


def test_zero_sized_minibatches_are_refused_by_the_runner_too():
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 4
    agent = load_rl_cfg("Mjlab-Cartpole-Balance")
    agent.num_steps_per_env = 8
    agent.algorithm.num_mini_batches = 40
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
    with pytest.raises(ValueError, match="minibatches of 0 samples"):
        MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(agent))


def test_small_minibatches_warn_and_sensible_ones_do_not(recwarn):
    assert check_minibatch(4, 8, 4) == 8
    assert any("very small" in str(w.message) for w in recwarn)
    recwarn.clear()
    assert check_minibatch(4096, 24, 4) == 24576
    assert not recwarn.list


def test_recurrent_policies_need_at_least_one_env_per_minibatch():
    # rsl-rl splits a recurrent model's rollout by envs (whole trajectories), not by samples:
    # 4 envs in 8 minibatches gives empty ones although 4 x 24 samples would suffice.
    assert check_minibatch(4, 24, 8) == 12
    with pytest.raises(ValueError, match="minibatches of 0 envs"):
        check_minibatch(4, 24, 8, recurrent=True)
    assert check_minibatch(8, 24, 8, recurrent=True) == 24


def test_a_recurrent_actor_with_more_minibatches_than_envs_is_one_line(
    tmp_path, monkeypatch, capsys
):
    from mjlab.rl.scripts import train

    monkeypatch.chdir(tmp_path)
    built = []
    monkeypatch.setattr(ManagerBasedRlEnv, "__init__", lambda *a, **k: built.append(1))
    args = ["--env.scene.num-envs", "4", "--agent.algorithm.num-mini-batches", "8"]
    args += ["--agent.actor.class-name", "RNNModel"]
    with pytest.raises(SystemExit) as stop:
        train.main(["Mjlab-Cartpole-Balance", "--agent.logger", "tensorboard", *args])
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(err) == 1, err
    assert "minibatches of 0 envs" in err[0], err
    assert not built

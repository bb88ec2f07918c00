"""One training run (`mjlab.rl.run.TrainingRun`): phases, the export callback, a task's own
runner class, and which errors are one line."""

import dataclasses
from typing import ClassVar

import pytest

from mjlab.rl.cli import parse_task_cli
from mjlab.rl.errors import UserError, user_errors
from mjlab.rl.run import PolicyExport, TrainingRun
from mjlab.rl.runner import MjlabOnPolicyRunner
from mjlab.rl.scripts import train

TASK = "Mjlab-Cartpole-Balance"
SMALL = ["--env.scene.num-envs", "8", "--agent.num-steps-per-env", "8"]


class _CountingRunner(MjlabOnPolicyRunner):
    """A task's own runner class, as `register_mjlab_task(runner_cls=...)` gives it."""

    saves: ClassVar[list[str]] = []

    def save(self, path: str, infos: dict | None = None) -> None:
        type(self).saves.append(path)
        super().save(path, infos)


def test_a_tasks_runner_class_trains_and_exports_without_a_class_built_at_run_time(
    tmp_path, monkeypatch
):
    from mjlab.tasks import registry

    spec = registry._spec(TASK)
    monkeypatch.setitem(
        registry._REGISTRY, TASK, dataclasses.replace(spec, runner_cls=_CountingRunner)
    )
    monkeypatch.setattr(_CountingRunner, "saves", [])
    args = [TASK, *SMALL, "--agent.max-iterations", "2", "--log-root", str(tmp_path)]
    task, cfg = parse_task_cli("train", train.TrainCfg, args)
    learner = train.RslRlPpoLearner()
    training = TrainingRun(task, cfg, learner)
    training.run()
    assert type(learner.runner) is _CountingRunner
    assert [p.rsplit("/", 1)[1] for p in _CountingRunner.saves] == ["model_0.pt", "model_1.pt"]
    assert training.export.written == training.log_dir / "policy.onnx"
    assert training.export.written.is_file()
    # rsl-rl's logger is mjlab's class, not a Logger with methods replaced on the instance.
    from mjlab.rl.logger import MjlabLogger

    assert type(learner.runner.logger) is MjlabLogger
    assert not {"log", "init_logging_writer"} & set(vars(learner.runner.logger))


def test_no_export_onnx_writes_no_policy_file(tmp_path):
    args = [TASK, *SMALL, "--agent.max-iterations", "1", "--no-export-onnx"]
    task, cfg = parse_task_cli("train", train.TrainCfg, [*args, "--log-root", str(tmp_path)])
    run_dir = train.run(task, cfg)
    assert (run_dir / "model_0.pt").is_file() and not (run_dir / "policy.onnx").exists()


def test_an_error_while_learning_keeps_its_type_and_traceback(tmp_path, monkeypatch, capsys):
    def bad_value(self, *args, **kwargs):
        raise ValueError("a bug while learning")

    monkeypatch.setattr(MjlabOnPolicyRunner, "learn", bad_value)
    with pytest.raises(ValueError, match="a bug while learning"):
        train.main([TASK, *SMALL, "--log-root", str(tmp_path)])
    assert "train: error:" not in capsys.readouterr().err


def test_the_same_error_before_learning_is_one_line(tmp_path, monkeypatch, capsys):
    from mjlab.rl import run as run_module

    def bad_env(*args, **kwargs):
        raise ValueError("the env config is wrong")

    monkeypatch.setattr(run_module, "ManagerBasedRlEnv", bad_env)
    with pytest.raises(SystemExit) as stop:
        train.main([TASK, *SMALL, "--log-root", str(tmp_path)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "Traceback" not in err
    assert err.strip() == "train: error: the env config is wrong (--debug shows the traceback)"
    assert not any(tmp_path.rglob("params")), "a failed start leaves no run folder"


def test_user_errors_turns_set_up_errors_into_user_errors_and_keeps_the_cause():
    with pytest.raises(UserError, match=r"^Unknown task 'X'$") as raised, user_errors():
        raise KeyError("Unknown task 'X'")
    assert isinstance(raised.value.__cause__, KeyError)
    with pytest.raises(RuntimeError), user_errors():  # a fault, not a mistake
        raise RuntimeError("CUDA error")


class _Learner:
    prefix = "[test]"

    def __init__(self, error):
        self.error, self.calls = error, 0

    def export_policy(self, checkpoint):
        self.calls += 1
        if self.error is not None:
            raise self.error
        return checkpoint.parent / "policy.onnx"


def test_the_export_callback_says_a_refused_task_once_and_a_failure_with_its_traceback(
    tmp_path, capsys
):
    from mjlab.export import ExportError

    refused = _Learner(ExportError("term 'x' has no deployment description"))
    export = PolicyExport(refused, prefix="[test]")
    assert export(tmp_path / "model_0.pt") is None
    assert export(tmp_path / "model_1.pt") is None
    assert refused.calls == 1 and export.refused
    err = capsys.readouterr().err
    assert err.count("[test] policy.onnx not written: term 'x'") == 1, err

    broken = PolicyExport(_Learner(RuntimeError("disk on fire")), prefix="[test]")
    assert broken(tmp_path / "model_0.pt") is None and not broken.refused
    err = capsys.readouterr().err
    assert "[test] ONNX export beside" in err and "Traceback" in err and "disk on fire" in err

    fine = PolicyExport(_Learner(None))
    assert fine(tmp_path / "model_0.pt") == tmp_path / "policy.onnx" == fine.written
    assert PolicyExport(_Learner(None), enabled=False)(tmp_path / "model_0.pt") is None


def test_debug_raises_the_error_a_user_error_stands_for(tmp_path):
    with pytest.raises(FileNotFoundError):
        train.main([TASK, "--agent.resume", "--log-root", str(tmp_path), "--debug"])


def test_a_disagreeing_env_seed_is_refused_not_ignored():
    from types import SimpleNamespace

    from mjlab.rl.run import seed_command

    def cfg(env_seed):
        return SimpleNamespace(
            env=SimpleNamespace(seed=env_seed, sim=SimpleNamespace(deterministic=False)),
            agent=SimpleNamespace(seed=7),
            deterministic=False,
        )

    with pytest.raises(ValueError, match=r"--env\.seed 3 and --agent\.seed 7 disagree"):
        seed_command(cfg(3))
    for agreeing in (None, 7):
        c = cfg(agreeing)
        assert seed_command(c).env == 7 and c.env.seed == 7


def test_a_task_runner_class_must_derive_from_the_mjlab_runner(monkeypatch):
    import mjlab.tasks
    from mjlab.rl.ppo_learner import RslRlPpoLearner

    monkeypatch.setattr(mjlab.tasks, "load_runner_cls", lambda task_id: dict)
    with pytest.raises(ValueError, match=r"not a subclass of mjlab\.rl\.MjlabOnPolicyRunner"):
        RslRlPpoLearner.make_runner(None, None, "Some-Task", "cpu")


def test_a_disagreeing_env_seed_is_one_line_before_anything_is_set_up(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        train.main(["Mjlab-Cartpole-Balance", "--env.seed", "1", "--log-root", str(tmp_path)])
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    assert "--env.seed 1 and --agent.seed 42 disagree" in err and len(err.splitlines()) == 1
    assert "device:" not in out and not list(tmp_path.rglob("*.yaml"))

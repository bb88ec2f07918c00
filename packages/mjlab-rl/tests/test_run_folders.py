"""Run folders: never shared between runs, never outside the log root, never left empty by a
failed start; resume finds the newest run that has a checkpoint; stale temp files go away."""

import os
import sys

import pytest

from mjlab.rl import run as run_module
from mjlab.rl.cli import find_checkpoint, new_run_dir


def test_two_runs_started_in_the_same_second_get_two_folders(tmp_path):
    folders = [new_run_dir(tmp_path, "exp", "") for _ in range(3)]
    assert len(set(folders)) == 3 and all(f.is_dir() for f in folders)
    # Within one second the later ones get suffixes: <stamp>_1, <stamp>_2.
    same_second = [f for f in folders if f.name.startswith(folders[0].name)]
    assert [f.name for f in same_second][1:] == [
        f"{folders[0].name}_{k}" for k in range(1, len(same_second))
    ]


@pytest.mark.parametrize("name", ["..", "a/b", "../escape", "a\\b", "."])
def test_an_experiment_name_that_is_not_a_plain_folder_is_refused(tmp_path, name):
    with pytest.raises(ValueError, match="must be a plain folder name"):
        new_run_dir(tmp_path / "logs", name, "")
    assert not (tmp_path / "logs").exists() or not any((tmp_path / "logs").rglob("*"))


def test_resume_picks_the_newest_run_that_has_a_checkpoint(tmp_path):
    old = tmp_path / "2026-01-01_00-00-00"
    (old / "sub").mkdir(parents=True)
    for it in (5, 50, 10):
        (old / f"model_{it}.pt").write_bytes(b"x")
    (tmp_path / "2026-06-01_00-00-00").mkdir()  # newer, failed before any checkpoint
    assert find_checkpoint(tmp_path, ".*", r"model_.*\.pt") == old / "model_50.pt"
    with pytest.raises(FileNotFoundError, match="has a checkpoint matching"):
        find_checkpoint(tmp_path, ".*", r"model_999\.pt")


def test_the_next_save_removes_temp_files_of_a_killed_save(tmp_path):
    sys.path.insert(0, os.path.dirname(__file__))
    from test_runner import _runner

    stale = tmp_path / ".model_3.pt.abc123.tmp"
    stale.write_bytes(b"half a checkpoint")
    runner = _runner()
    runner.save(str(tmp_path / "model_4.pt"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model_4.pt"]


def test_a_run_that_fails_at_start_up_leaves_no_folder(tmp_path, monkeypatch):
    from mjlab.rl.cli import parse_task_cli
    from mjlab.rl.scripts import train

    task, cfg = parse_task_cli(
        "train", train.TrainCfg, ["Mjlab-Cartpole-Balance", "--log-root", str(tmp_path / "logs")]
    )

    def no_env(*args, **kwargs):
        raise RuntimeError("the env could not be built")

    monkeypatch.setattr(run_module, "ManagerBasedRlEnv", no_env)
    with pytest.raises(RuntimeError, match="could not be built"):
        train.run(task, cfg)
    experiment = tmp_path / "logs" / cfg.agent.experiment_name
    assert experiment.is_dir() and list(experiment.iterdir()) == []


def test_a_run_that_fails_while_learning_keeps_its_folder(tmp_path, monkeypatch):
    from mjlab.rl.cli import parse_task_cli
    from mjlab.rl.scripts import train

    task, cfg = parse_task_cli(
        "train", train.TrainCfg, ["Mjlab-Cartpole-Balance", "--log-root", str(tmp_path / "logs")]
    )

    def crash(self, *args, **kwargs):
        raise RuntimeError("crashed while learning")

    monkeypatch.setattr(train.MjlabOnPolicyRunner, "learn", crash)
    with pytest.raises(RuntimeError, match="crashed while learning"):
        train.run(task, cfg)
    (run,) = (tmp_path / "logs" / cfg.agent.experiment_name).iterdir()
    assert (run / "params" / "env.yaml").is_file()


def test_only_rank_0_of_a_multi_gpu_run_makes_a_run_folder(tmp_path, monkeypatch):
    from mjlab.rl.cli import parse_task_cli
    from mjlab.rl.scripts import train

    task, cfg = parse_task_cli(
        "train", train.TrainCfg, ["Mjlab-Cartpole-Balance", "--log-root", str(tmp_path / "logs")]
    )
    made = []
    real = run_module.new_run_dir
    monkeypatch.setattr(run_module, "new_run_dir", lambda *a: made.append(real(*a)) or made[-1])

    def stop(*args, **kwargs):  # the env would need CUDA here; the folders are decided by now
        raise RuntimeError("stop")

    monkeypatch.setattr(run_module, "ManagerBasedRlEnv", stop)
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    with pytest.raises(RuntimeError, match="stop"):
        train.run(task, cfg)
    assert made == [] and not (tmp_path / "logs").exists()
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(RuntimeError, match="stop"):
        train.run(task, cfg)
    assert len(made) == 1


def _unusable_log_root(kind: str, tmp_path) -> str:
    if kind == "file":
        (tmp_path / "notes.txt").write_text("not a folder")
        return str(tmp_path / "notes.txt")
    if kind == "under-a-file":
        (tmp_path / "notes.txt").write_text("not a folder")
        return str(tmp_path / "notes.txt" / "logs")
    if kind == "sysfs":
        if not os.path.isdir("/sys/kernel"):
            pytest.skip("needs Linux's /sys")
        return "/sys/mjlab-logs"
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    folder = tmp_path / "read-only"
    folder.mkdir(mode=0o555)
    return str(folder / "logs")


@pytest.mark.parametrize("kind", ["file", "under-a-file", "sysfs", "read-only"])
def test_an_unusable_log_root_is_one_line_naming_the_option_before_the_env_is_built(
    kind, tmp_path, monkeypatch, capsys
):
    from mjlab.rl.scripts import train

    root = _unusable_log_root(kind, tmp_path)

    def no_env(*args, **kwargs):
        raise AssertionError("the env was built before the log root was checked")

    monkeypatch.setattr(run_module, "ManagerBasedRlEnv", no_env)
    with pytest.raises(SystemExit) as stop:
        train.main(["Mjlab-Cartpole-Balance", "--log-root", root])
    err = capsys.readouterr().err
    assert stop.value.code == 2, err
    assert "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert line.startswith(f"train: error: --log-root {root} "), line
    assert "file, not a folder" in line if kind == "file" else "cannot be used" in line


def test_an_experiment_folder_that_is_a_file_is_refused_naming_it(tmp_path):
    (tmp_path / "go1").write_text("not a folder")
    with pytest.raises(ValueError, match=r"experiment folder .*go1 cannot be made: File exists"):
        new_run_dir(tmp_path, "go1", "")

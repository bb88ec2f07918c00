"""The train / play / list-envs commands: their output, help and one-line mistakes."""

import pytest


def test_list_envs_prints_the_task_table(capsys):
    # In-process (the README tour runs the installed `list-envs` command itself).
    from mjlab.rl.scripts.list_envs import main

    main([])
    out = capsys.readouterr().out
    assert "Mjlab-Velocity-Rough-Unitree-G1" in out and "unitree_go1/go1" in out
    # Not a terminal: nothing is cut to fit a width.
    assert "Mjlab-Tracking-Flat-Unitree-G1-No-State-Estimation" in out and "\u2026" not in out
    assert "franka_emika_panda/mjx_panda, table, cube  256       0.02" in out


def test_train_without_a_task_lists_tasks(capsys):
    from mjlab.rl.scripts.train import main

    with pytest.raises(SystemExit) as stop:
        main([])
    assert stop.value.code == 2 and "Mjlab-Cartpole-Balance" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message", "raised"),
    [
        (
            ["train", "Mjlab-Cartpole-Balanse"],
            "Unknown task 'Mjlab-Cartpole-Balanse'. Did you mean",
            KeyError,
        ),
        (
            ["play", "Mjlab-Cartpole-Balance", "--checkpoint-file", "missing.pt"],
            "missing.pt",
            FileNotFoundError,
        ),
        (
            ["train", "Mjlab-Cartpole-Balance", "--device", "gpu0"],
            "--device 'gpu0' is not",
            ValueError,
        ),
        (["train", "Mjlab-Cartpole-Balance", "--env.decimation", "0"], "decimation", None),
        (["train", "Mjlab-Cartpole-Balance", "--env.scene.num-envs", "abc"], "abc", None),
        (["train", "Mjlab-Cartpole-Balance", "--env.decimaton", "2"], "--env.decimation", None),
        (["play", "Mjlab-Cartpole-Balance"], "--checkpoint-file", ValueError),
        (
            ["train", "Mjlab-Cartpole-Balance", "--agent.algorithm.symmetry-cfg.use-mirror-loss"],
            "need data_augmentation_func",
            None,  # raised while tyro builds the config: tyro reports it
        ),
        (
            [
                "train",
                "Mjlab-Cartpole-Balance",
                "--agent.algorithm.symmetry-cfg.data-augmentation-func",
                "mjlab.nowhere:mirror",
            ],
            "data_augmentation_func 'mjlab.nowhere:mirror' cannot be resolved",
            ValueError,
        ),
    ],
    ids=[
        "misspelled-task",
        "missing-checkpoint",
        "bad-device",
        "bad-value",
        "not-a-number",
        "misspelled-option",
        "no-checkpoint",
        "symmetry-without-function",
        "symmetry-function-not-found",
    ],
)
def test_a_mistake_at_the_command_line_is_one_line_and_exit_status_2(
    args, message, raised, tmp_path, monkeypatch, capsys
):
    import importlib

    monkeypatch.chdir(tmp_path)
    main = importlib.import_module(f"mjlab.rl.scripts.{args[0]}").main
    with pytest.raises(SystemExit) as stop:
        main(args[1:])
    err = capsys.readouterr().err
    assert stop.value.code == 2, err
    errors = [line for line in err.splitlines() if "error" in line]
    assert "Traceback" not in err
    assert len(errors) == 1 and errors[0].startswith(f"{args[0]}: error: "), err
    assert message in errors[0], err
    assert not any(tmp_path.rglob("params")), "a failed start leaves no run folder"
    if raised is not None:  # --debug: the exception itself, with its traceback
        with pytest.raises(raised):
            main([*args[1:], "--debug"])


def test_help_shows_the_common_options_first_and_help_all_hides_fixed_fields(capsys):
    from mjlab.rl.scripts.train import main

    with pytest.raises(SystemExit) as stop:
        main(["Mjlab-Velocity-Flat-Unitree-Go1", "--help"])
    short = capsys.readouterr().out
    assert stop.value.code == 0
    assert len(short.splitlines()) < 40 and "--env.scene.num-envs" in short
    assert "(now 512)" in short and "--help-all" in short
    with pytest.raises(SystemExit):
        main(["Mjlab-Velocity-Flat-Unitree-Go1", "--help-all"])
    full = capsys.readouterr().out
    assert "--env.rewards" in full and "fixed to" not in full and "<function" not in full


def test_a_missing_motion_file_is_refused_before_anything_is_built(tmp_path, capsys):
    from mjlab.rl.scripts.train import main

    with pytest.raises(SystemExit) as stop:
        main(
            [
                "Mjlab-Tracking-Flat-Unitree-G1",
                "--env.commands.motion.motion-file",
                str(tmp_path / "dance.npz"),
                "--log-root",
                str(tmp_path / "logs"),
            ]
        )
    captured = capsys.readouterr()
    assert stop.value.code == 2 and "device:" not in captured.out
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "--env.commands.motion.motion-file" in err
    assert "dance.npz': no such file" in err and "synthetic:squat" in err
    assert not (tmp_path / "logs").exists()


def test_a_missing_file_of_an_observation_term_is_refused_naming_its_option(tmp_path):
    import dataclasses

    from mjlab.managers.manager_term_config import ObservationTermCfg
    from mjlab.rl.cli import check_input_files
    from mjlab.tasks import load_env_cfg

    @dataclasses.dataclass(kw_only=True)
    class LookupTermCfg(ObservationTermCfg):
        table_file: str = ""
        """The lookup table."""

    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    term = cfg.observations["actor"].terms["joint_pos"]
    fields = {f.name: getattr(term, f.name) for f in dataclasses.fields(term) if f.init}
    cfg.observations["actor"].terms["joint_pos"] = LookupTermCfg(
        **fields, table_file=str(tmp_path / "table.npz")
    )
    with pytest.raises(FileNotFoundError) as err:
        check_input_files(cfg)
    # As tyro spells it (and accepts): hyphens in field names and dict keys.
    assert "--env.observations.actor.terms.joint-pos.table-file" in str(err.value)
    assert "table.npz" in str(err.value)

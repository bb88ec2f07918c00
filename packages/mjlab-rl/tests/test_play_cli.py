"""`play` from the command line: inputs checked before the env is built, --seconds, where the
video goes and what it shows."""

import pytest

from mjlab.rl.scripts.play import main


def test_a_missing_checkpoint_is_refused_before_the_env_is_built(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["Mjlab-Cartpole-Balance", "--checkpoint-file", str(tmp_path / "nope.pt")])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "--checkpoint-file" in err and "nope.pt" in err
    assert "model_<it>.pt" in err  # what to give instead
    assert "device:" not in captured.out  # nothing was set up


def test_seconds_is_simulated_time_in_whole_env_steps(capsys):
    # Cartpole steps at 0.02 s: 0.1 s is 5 steps (with zero actions no episode ends).
    main(["Mjlab-Cartpole-Balance", "--agent", "zero", "--seconds", "0.1"])
    assert "mean episode length 5.0 steps" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["Mjlab-Cartpole-Balance", "--agent", "zero", "--seconds", "1", "--steps", "3"])
    assert "--steps or --seconds, not both" in capsys.readouterr().err


@pytest.mark.slow
def test_the_video_goes_under_logs_and_shows_a_lit_scene(tmp_path, monkeypatch, capsys):
    import imageio.v3 as iio

    monkeypatch.chdir(tmp_path)
    main(
        [
            "Mjlab-Velocity-Flat-Unitree-Go1",
            "--agent",
            "zero",
            "--steps",
            "3",
            "--video",
            "--env.scene.num-envs",
            "1",
        ]
    )
    assert [p.name for p in tmp_path.iterdir()] == ["logs"]  # nothing beside it
    video = tmp_path / "logs" / "videos" / "play_Mjlab-Velocity-Flat-Unitree-Go1_zero.mp4"
    frames = iio.imread(video)
    assert frames.shape[1:] == (480, 640, 3)
    top = frames[0, :120].astype(float)
    assert top.mean() > 60, "the upper part (sky) is not black"


def test_one_policy_at_a_time(tmp_path, capsys):
    onnx = str(tmp_path / "policy.onnx")  # refused before any file is read
    for extra in (["--checkpoint-file", str(tmp_path / "model_1.pt")], ["--agent", "zero"]):
        with pytest.raises(SystemExit) as exit_info:
            main(["Mjlab-Velocity-Flat-Unitree-Go1", "--onnx-file", onnx, *extra])
        assert exit_info.value.code == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert "give one policy" in line


def test_play_is_seeded_as_train_is(capsys):
    # The shared seeding (mjlab.rl.run.seed_command): one --agent.seed, the same resets and
    # random actions; another seed, another play.
    def summary(seed: str) -> str:
        main(["Mjlab-Cartpole-Swingup", "--agent", "random", "--steps", "40", "--agent.seed", seed])
        lines = [line for line in capsys.readouterr().out.splitlines() if "mean" in line]
        assert lines
        return "\n".join(lines)

    assert summary("3") == summary("3")
    assert summary("3") != summary("4")

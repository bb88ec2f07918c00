"""`export-onnx`: any checkpoint of a run becomes the ONNX file `train` would have written for it,
with the same deployment metadata; mistakes are one line."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from mjlab.rl.cli import parse_task_cli
from mjlab.rl.scripts import export_onnx, train

TASK = "Mjlab-Velocity-Flat-Unitree-Go1"
# --env options the export must be given too; the delay gives the policy's observation a state
# that must start afresh at each episode (on the robot side as in the env).
TRAINED_WITH = [
    "--env.episode-length-s",
    "10",
    "--env.observations.actor.terms.joint-pos.delay",
    "1",
]
GO1 = [TASK, "--env.scene.num-envs", "8", "--agent.num-steps-per-env", "8", *TRAINED_WITH]


def _actions(path, obs: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    return session.run(None, {name: obs})[0]


def _metadata(path) -> dict[str, str]:
    return {p.key: p.value for p in onnx.load(str(path)).metadata_props}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("logs")
    args = [*GO1, "--agent.max-iterations", "2", "--agent.save-interval", "1"]
    run = train.run(*parse_task_cli("train", train.TrainCfg, [*args, "--log-root", str(root)]))
    assert run is not None
    return run


@pytest.mark.slow
def test_the_last_checkpoint_exports_to_what_train_wrote_beside_it(run_dir, capsys):
    last = max(run_dir.glob("model_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    export_onnx.main([TASK, "--checkpoint-file", str(last), *TRAINED_WITH])
    out = last.with_suffix(".onnx")
    assert f"wrote {out}" in capsys.readouterr().out
    assert _metadata(out) == _metadata(run_dir / "policy.onnx")
    obs = np.random.default_rng(0).normal(size=(5, 48)).astype(np.float32)
    np.testing.assert_array_equal(_actions(out, obs), _actions(run_dir / "policy.onnx", obs))


@pytest.mark.slow
def test_an_earlier_checkpoint_gives_its_own_policy(run_dir, tmp_path):
    out = tmp_path / "ship" / "go1.onnx"  # a folder that does not exist yet
    ckpt = str(run_dir / "model_0.pt")
    export_onnx.main([TASK, "--checkpoint-file", ckpt, "--output", str(out), *TRAINED_WITH])
    obs = np.random.default_rng(1).normal(size=(5, 48)).astype(np.float32)
    assert not np.array_equal(_actions(out, obs), _actions(run_dir / "policy.onnx", obs))
    # The same deployment metadata; the digest covers the network, so it differs.
    ours, trains = _metadata(out), _metadata(run_dir / "policy.onnx")
    assert ours.pop("mjlab.sha256") != trains.pop("mjlab.sha256")
    assert ours == trains


@pytest.mark.slow
def test_an_env_option_left_out_is_refused_naming_it(run_dir, tmp_path, capsys):
    out = tmp_path / "p.onnx"
    with pytest.raises(SystemExit) as stop:
        export_onnx.main(
            [TASK, "--checkpoint-file", str(run_dir / "model_0.pt"), "--output", str(out)]
        )
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "episode_length_s 10.0 (trained) -> 20.0 (here)" in line
    assert "--env.episode-length-s 10.0" in line  # the fix
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ([], ["--checkpoint-file PATH"]),
        (["--checkpoint-file", "nope.pt"], ["--checkpoint-file", "nope.pt", "model_<it>.pt"]),
        (["--checkpoint-file", "{ckpt}", "--output", "x.pt"], ["--output", ".onnx", "x.pt"]),
    ],
)
def test_a_mistake_is_one_line_naming_the_option(tmp_path, extra, words, capsys):
    ckpt = tmp_path / "model_1.pt"
    ckpt.write_bytes(b"checked after --output")
    args = [a.replace("{ckpt}", str(ckpt)) for a in extra]
    with pytest.raises(SystemExit) as stop:
        export_onnx.main([TASK, *args])
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("export-onnx: error: ")
    for word in words:
        assert word in line


def test_help_shows_the_commands_own_options_not_a_runs(capsys):
    with pytest.raises(SystemExit) as stop:
        export_onnx.main([TASK, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert "--checkpoint-file" in out and "--output" in out
    assert "--agent.resume" not in out and "--agent.max-iterations" not in out


@pytest.mark.slow
def test_a_tracking_policy_is_exported_with_its_motion_beside_it(tmp_path, capsys):
    from mjlab.deploy import MotionPlayer, OnnxPolicy
    from mjlab.tasks.tracking.synthetic import g1_synthetic_motion

    task = "Mjlab-Tracking-Flat-Unitree-G1"
    args = [task, "--env.scene.num-envs", "4", "--agent.num-steps-per-env", "4"]
    args += ["--agent.max-iterations", "1", "--log-root", str(tmp_path / "logs")]
    run = train.run(*parse_task_cli("train", train.TrainCfg, args))
    assert run is not None
    ckpt = max(run.glob("model_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    out = tmp_path / "ship" / "g1_squat.onnx"
    motion = out.parent / "g1_squat_motion.npz"  # each exported file in a folder keeps its own
    g1_synthetic_motion("arm_swing").save(motion)  # a stale one from another policy: replaced
    export_onnx.main([task, "--checkpoint-file", str(ckpt), "--output", str(out)])
    assert f"its motion: {motion}" in capsys.readouterr().out
    # The robot side accepts it as the policy's motion (it checks the content hash).
    MotionPlayer(motion, OnnxPolicy(out).metadata)


@pytest.mark.slow
def test_the_exported_file_plays_as_its_checkpoint(run_dir):
    from mjlab.rl.scripts import play

    last = max(run_dir.glob("model_*.pt"), key=lambda p: int(p.stem.split("_")[1]))

    # 0.2 s episodes: in 40 steps every env starts 4 new ones, and the runtime must start
    # each robot's delayed observation afresh with it, as the env does.
    short = ["--env.scene.num-envs", "4", "--env.episode-length-s", "0.2", "--device", "cpu"]

    def played(policy: list[str]) -> tuple[float, float]:
        args = [TASK, *policy, "--steps", "40", *short, *TRAINED_WITH[2:]]
        result = play.run(*parse_task_cli("play", play._cfg_type(), args, play=True))
        return result["mean_episode_length"], result["mean_reward"]

    from_checkpoint = played(["--checkpoint-file", str(last)])
    assert from_checkpoint[0] == 10.0  # every episode ran to its time-out
    # policy.onnx is that checkpoint's export, run torch-free from the env's raw terms.
    from_onnx = played(["--onnx-file", str(run_dir / "policy.onnx")])
    assert from_onnx[0] == from_checkpoint[0]
    assert from_onnx[1] == pytest.approx(from_checkpoint[1], rel=1e-5, abs=1e-6)


@pytest.mark.slow
def test_an_onnx_file_that_does_not_fit_the_env_is_refused_naming_the_field(run_dir, capsys):
    from mjlab.rl.scripts import play

    with pytest.raises(SystemExit) as stop:  # trained with a delay, played without
        play.main([TASK, "--onnx-file", str(run_dir / "policy.onnx"), "--steps", "2"])
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "does not fit this env: its observations differ" in line and "--env" in line

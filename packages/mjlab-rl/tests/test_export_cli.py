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
TRAINED_WITH = ["--env.episode-length-s", "10"]  # an --env option the export must be given too
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

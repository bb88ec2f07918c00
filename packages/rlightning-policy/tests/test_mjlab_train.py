"""`train-rlightning` goes through mjlab's training run: seeds, --deterministic, params files,
policy.onnx, and a refused option as one line."""

import pytest
import torch
import yaml


@pytest.fixture
def restore_torch_flags():
    """`--deterministic` sets process-wide torch flags: put them back for the next tests."""
    flags = (
        torch.are_deterministic_algorithms_enabled(),
        torch.backends.cudnn.deterministic,
        torch.backends.cudnn.benchmark,
    )
    yield
    torch.use_deterministic_algorithms(flags[0])
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = flags[1:]


def test_train_rlightning_seeds_its_run_and_takes_deterministic_as_train_does(
    tmp_path, restore_torch_flags
):
    pytest.importorskip("mjlab.tasks")
    from rlightning.engine import mjlab_train

    argv = ["Mjlab-Cartpole-Balance", "--env.scene.num-envs", "16", "--agent.max-iterations"]
    argv += ["1", "--agent.seed", "5", "--deterministic", "--log-root", str(tmp_path)]
    mjlab_train.main(argv)
    (params,) = tmp_path.rglob("params")
    seeds = yaml.safe_load((params / "seed.yaml").read_text())
    # The engines seed torch with the run's seed itself, and the file says so.
    assert seeds["seed"] == seeds["env"] == seeds["torch"] == 5
    assert seeds["deterministic"] is True
    env = yaml.safe_load((params / "env.yaml").read_text())
    assert env["seed"] == 5 and env["sim"]["deterministic"] is True
    assert (params.parent / "policy.onnx").is_file()
    assert sorted(p.name for p in params.parent.glob("model_*.pt")) == ["model_0.pt"]


def test_train_rlightning_no_export_onnx_keeps_checkpoints_and_writes_no_policy_file(tmp_path):
    pytest.importorskip("mjlab.tasks")
    from rlightning.engine import mjlab_train

    argv = ["Mjlab-Cartpole-Balance", "--env.scene.num-envs", "16", "--agent.max-iterations"]
    mjlab_train.main([*argv, "1", "--no-export-onnx", "--log-root", str(tmp_path)])
    (params,) = tmp_path.rglob("params")
    assert not (params.parent / "policy.onnx").exists()
    assert (params.parent / "model_0.pt").is_file()


def test_train_rlightning_refuses_resume_in_one_line_before_anything_is_built(tmp_path, capsys):
    # --agent.resume was accepted and silently ignored; the run cannot resume.
    pytest.importorskip("mjlab.tasks")
    from rlightning.engine import mjlab_train

    with pytest.raises(SystemExit) as stop:
        mjlab_train.main(
            ["Mjlab-Cartpole-Balance", "--agent.resume", "--log-root", str(tmp_path / "logs")]
        )
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot resume a run (--agent.resume)" in err
    assert not (tmp_path / "logs").exists() or not any((tmp_path / "logs").rglob("*.yaml"))

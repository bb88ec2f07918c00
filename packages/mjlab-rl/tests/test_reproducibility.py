"""A seed fixes a whole `train` run on CPU, bit for bit, and a resumed run continues exactly as
the uninterrupted one (checkpoints, the training curve and the tensorboard scalars)."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from mjlab.rl.cli import parse_task_cli
from mjlab.rl.scripts import train

CARTPOLE = ["Mjlab-Cartpole-Balance", "--env.scene.num-envs", "64"]
GO1 = [
    "Mjlab-Velocity-Flat-Unitree-Go1",
    "--env.scene.num-envs",
    "32",
    "--agent.num-steps-per-env",
    "16",
]
# Wall-clock values: logged, never reproducible.
_CLOCK = {"infos.run_state.logger.tot_time"}
_CLOCK_COLUMNS = {"wall_time_s", "steps_per_s", "collect_s", "update_s"}


def _train(log_root: Path, argv: list[str], *options: str, export: bool = False) -> Path:
    args = [*argv, "--log-root", str(log_root), *options]
    if not export:
        args.append("--no-export-onnx")
    run_dir = train.run(*parse_task_cli("train", train.TrainCfg, args))
    assert run_dir is not None
    return run_dir


def _differences(a, b, path: str = "") -> list[str]:
    if path in _CLOCK:
        return []
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in _differences(a[k], b[k], f"{path}.{k}".lstrip("."))]
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return [f"{path}: length {len(a)} != {len(b)}"]
        pairs = enumerate(zip(a, b, strict=True))
        return [d for i, (x, y) in pairs for d in _differences(x, y, f"{path}[{i}]")]
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        same = a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)
        return [] if same else [f"{path}: tensors differ"]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def _checkpoint_differences(a: Path, b: Path) -> list[str]:
    return _differences(torch.load(a, weights_only=True), torch.load(b, weights_only=True))


def _curve(run_dir: Path, first: int = 0) -> list[dict]:
    with open(run_dir / "training_curve.csv") as handle:
        rows = list(csv.DictReader(handle))
    return [
        {k: v for k, v in row.items() if k not in _CLOCK_COLUMNS}
        for row in rows
        if int(row["iteration"]) >= first
    ]


def _scalars(run_dir: Path, first: int = 0) -> dict[str, list[tuple[int, float]]]:
    """Tensorboard scalars by tag, (step, value), without the timing tags."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir))
    events.Reload()
    out = {}
    for tag in events.Tags()["scalars"]:
        if tag.startswith("Perf/") or tag.endswith("/time"):
            continue
        values = [(e.step, e.value) for e in events.Scalars(tag) if e.step >= first]
        if values:
            out[tag] = values
    return out


@pytest.fixture(scope="module")
def cartpole_run(tmp_path_factory) -> Path:
    """4 iterations of Cartpole with seed 3: checkpoints after iterations 0, 2 and 3."""
    root = tmp_path_factory.mktemp("cartpole_a")
    return _train(root, CARTPOLE, "--agent.seed", "3", "--agent.max-iterations", "4",
                  "--agent.save-interval", "2")  # fmt: skip


@pytest.mark.slow  # three train processes, ~45 s
def test_the_same_seed_gives_the_same_cartpole_run_bit_for_bit_and_another_seed_another(
    cartpole_run, tmp_path
):
    # Another process, as a user reruns it: other string hashes (set and dict orders of
    # strings), one torch/OpenMP thread instead of the machine's count.
    env = {**os.environ, "PYTHONHASHSEED": "12345", "OMP_NUM_THREADS": "1"}
    args = [*CARTPOLE, "--agent.seed", "3", "--agent.max-iterations", "4",
            "--agent.save-interval", "2", "--log-root", str(tmp_path / "b"), "--no-export-onnx"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "mjlab.rl.scripts.train", *args],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    again = Path(re.findall(r"run folder: (.+)$", done.stdout, re.M)[-1].strip())
    for name in ("model_0.pt", "model_2.pt", "model_3.pt"):
        assert _checkpoint_differences(cartpole_run / name, again / name) == [], name
    assert _curve(cartpole_run) == _curve(again)
    assert len(_curve(again)) == 4
    scalars = _scalars(cartpole_run)
    assert "Train/mean_reward" in scalars and "Loss/value" in scalars
    assert scalars == _scalars(again)
    seeds = yaml.safe_load((again / "params" / "seed.yaml").read_text())
    assert seeds["seed"] == seeds["env"] == 3
    assert len({seeds["torch"], seeds["numpy"], seeds["python"], 3}) == 4

    other = _train(tmp_path / "c", CARTPOLE, "--agent.seed", "4", "--agent.max-iterations", "1",
                   "--no-save-env-state")  # fmt: skip
    infos = torch.load(other / "model_0.pt", weights_only=True)["infos"]
    assert "state" not in infos["env_state"] and "torch" in infos["run_state"]
    different = _checkpoint_differences(cartpole_run / "model_0.pt", other / "model_0.pt")
    assert any(d.startswith("actor_state_dict.mlp") for d in different), different
    assert _curve(other)[0]["mean_reward"] != _curve(cartpole_run)[0]["mean_reward"]


def test_a_resumed_cartpole_run_continues_exactly_as_the_uninterrupted_run(cartpole_run, capsys):
    resumed = _train(cartpole_run.parent.parent, CARTPOLE, "--agent.seed", "3",
                     "--agent.max-iterations", "1", "--agent.resume",
                     "--agent.load-run", re.escape(cartpole_run.name),
                     "--agent.load-checkpoint", "model_2.pt")  # fmt: skip
    assert "an exact resume" in capsys.readouterr().out
    # The next iteration after model_2.pt is 3, as in the uninterrupted run.
    assert sorted(p.name for p in resumed.glob("model_*.pt")) == ["model_3.pt"]
    assert _checkpoint_differences(cartpole_run / "model_3.pt", resumed / "model_3.pt") == []
    assert _curve(resumed) == _curve(cartpole_run, first=3)
    assert _scalars(resumed) == _scalars(cartpole_run, first=3)


def test_a_checkpoint_from_before_a_field_existed_resumes_exactly_while_the_field_is_at_its_default(
    cartpole_run, tmp_path, capsys
):
    # A checkpoint written by an older version lacks the fields added since (here
    # sim.mujoco.ccd_iterations, at its default 35): still the same run, continued exactly.
    old = tmp_path / "cartpole" / "old_version"
    old.mkdir(parents=True)
    checkpoint = torch.load(cartpole_run / "model_2.pt", weights_only=True)
    del checkpoint["infos"]["env_state"]["config"]["sim.mujoco.ccd_iterations"]
    torch.save(checkpoint, old / "model_2.pt")

    def resume(*options: str) -> Path:
        return _train(tmp_path, CARTPOLE, "--agent.seed", "3", "--agent.max-iterations", "1",
                      "--agent.resume", "--agent.load-run", "old_version",
                      "--agent.load-checkpoint", "model_2.pt", *options)  # fmt: skip

    resumed = resume()
    assert "an exact resume" in capsys.readouterr().out
    assert _checkpoint_differences(cartpole_run / "model_3.pt", resumed / "model_3.pt") == []
    # The same missing field set off its default is a change of the run: not restored into.
    resume("--env.sim.mujoco.ccd-iterations", "60")
    out = capsys.readouterr().out
    assert "config differs from the checkpoint's (sim.mujoco.ccd_iterations (none) -> 60)" in out


@pytest.mark.slow  # Go1 runs, ~35 s
def test_go1_same_seed_same_run_and_a_resumed_run_continues_exactly(tmp_path, capsys):
    common = [
        *GO1,
        "--agent.seed",
        "7",
        "--agent.save-interval",
        "2",
        "--agent.logger",
        "tensorboard",
    ]
    # With policy.onnx written beside every checkpoint, as by default.
    first = _train(tmp_path, common, "--agent.max-iterations", "4", export=True)
    second = _train(tmp_path / "again", common, "--agent.max-iterations", "4", export=True)
    assert (first / "policy.onnx").is_file()
    for name in ("model_0.pt", "model_2.pt", "model_3.pt"):
        assert _checkpoint_differences(first / name, second / name) == [], name
    assert _curve(first) == _curve(second)
    assert _scalars(first) == _scalars(second)

    capsys.readouterr()
    resumed = _train(tmp_path, common, "--agent.max-iterations", "1", "--agent.resume",
                     "--agent.load-run", re.escape(first.name),
                     "--agent.load-checkpoint", "model_2.pt", export=True)  # fmt: skip
    assert "an exact resume" in capsys.readouterr().out
    assert _checkpoint_differences(first / "model_3.pt", resumed / "model_3.pt") == []
    assert _scalars(resumed) == _scalars(first, first=3)

    # A changed env config is not restored into: networks and optimizer only, said so.
    changed = _train(tmp_path, [*common, "--env.scene.num-envs", "16"],
                     "--agent.max-iterations", "1", "--agent.resume",
                     "--agent.load-run", re.escape(first.name),
                     "--agent.load-checkpoint", "model_2.pt")  # fmt: skip
    out = capsys.readouterr().out
    assert "config differs from the checkpoint's (scene.num_envs 32 -> 16)" in out
    # Numbered as a continuation all the same: the iteration after 2 is 3.
    assert sorted(p.name for p in changed.glob("model_*.pt")) == ["model_3.pt"]
    assert not torch.equal(*(torch.load(d / "model_3.pt", weights_only=True)["actor_state_dict"]
                             ["mlp.0.weight"] for d in (first, changed)))  # fmt: skip

"""Locomotion tasks learn: a short real training run (the `train` command, rsl-rl PPO, C MuJoCo)
keeps its robots up longer at the end than at the start. A task whose physics is broken (a
robot with no ground contact) or whose reward pays for falling (the G1 before its termination
penalty: mean episode length 60 -> 20 steps in 50 iterations) fails here. The same measurement
for every locomotion task, with more iterations: `bench/learning_check.py`. A run is seeded
(bit for bit on this CPU), so each ratio is a fixed number here (the test prints it), e.g. Go1
2.17 at 13 iterations of 512 envs (4.88 at 20), against the 1.05 required. 13 is the fewest
iterations `summarize` compares.

The rough tasks' runs also carry the terrain curriculum's figures: their logs hold the mean
terrain level and the highest level, and `bench/training_curve.py` writes them as the CSV
columns `terrain_level` and `terrain_level_max` (a flat task's CSV has neither)."""

import csv
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

_BENCH = Path(__file__).resolve().parents[1] / "bench"

LEARNING_RUNS = {
    "Mjlab-Velocity-Flat-Unitree-Go1": (13, 512),
    "Mjlab-Velocity-Flat-Unitree-G1": (32, 256),
    "Mjlab-Velocity-Rough-Unitree-Go1": (13, 256),
    "Mjlab-Velocity-Rough-Unitree-G1": (32, 256),
}
"""Task: (iterations, num_envs) of its learning check. G1 rough: mean episode length 71.0 ->
81.9 (ratio 1.15) over 32 iterations of 256 envs, 1.5 min (at 20 iterations it had not risen
yet)."""


def _bench_module(name: str):
    spec = importlib.util.spec_from_file_location(name, _BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _learning_check():
    return _bench_module("learning_check")


def _training_curve_module():
    return _bench_module("training_curve")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """`task_id -> (curves, run folder)`: each task's learning-check run, trained once for every
    test of this module that reads it."""
    check = _learning_check()
    runs: dict[str, tuple[dict, Path]] = {}

    def get(task_id: str) -> tuple[dict, Path]:
        if task_id not in runs:
            iterations, num_envs = LEARNING_RUNS[task_id]
            workdir = tmp_path_factory.mktemp(task_id)
            curves = check.train_briefly(
                task_id, iterations=iterations, num_envs=num_envs, workdir=workdir
            )
            (run,) = (p for p in (workdir / "logs" / "rsl_rl").glob("*/*") if p.is_dir())
            runs[task_id] = (curves, run)
        return runs[task_id]

    return get


def _training_curve(run: Path, out: Path) -> tuple[list[dict[str, str]], str]:
    """`bench/training_curve.py run --out out` as a user runs it: the CSV rows and stdout."""
    done = subprocess.run(
        [sys.executable, str(_BENCH / "training_curve.py"), str(run), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert out.with_suffix(".png").stat().st_size > 0
    with open(out.with_suffix(".csv"), newline="") as f:
        return list(csv.DictReader(f)), done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("task_id", list(LEARNING_RUNS))
def test_mean_episode_length_rises_over_the_first_iterations(task_id, trained):
    curves, _ = trained(task_id)
    summary = _learning_check().summarize(curves)
    print(f"{task_id}: {summary}")
    iterations, num_envs = LEARNING_RUNS[task_id]
    assert summary["ratio"] > 1.05, (
        f"{task_id}: mean episode length went from {summary['early']:.1f} to "
        f"{summary['late']:.1f} steps over {iterations} iterations of {num_envs} envs"
    )
    # The learning check reports the terrain curriculum of exactly the rough tasks.
    assert ("terrain_late" in summary) == ("Rough" in task_id)


@pytest.mark.slow
def test_a_rough_run_logs_its_terrain_levels_and_the_training_curve_has_them(trained, tmp_path):
    curves, run = trained("Mjlab-Velocity-Rough-Unitree-Go1")
    iterations, _ = LEARNING_RUNS["Mjlab-Velocity-Rough-Unitree-Go1"]
    # The task's terrain has 5 rows (levels 0-4); robots start on levels 0 and 1.
    assert list(curves["terrain_level_max"]) == [4.0] * iterations
    assert ((curves["terrain_level"] >= 0) & (curves["terrain_level"] <= 4)).all()
    assert curves["terrain_level"][0] < 1.0

    # A run logged before the highest level was logged gets it from its env config.
    env = yaml.safe_load((run / "params" / "env.yaml").read_text())
    assert _training_curve_module().highest_terrain_level(env) == 4

    rows, stdout = _training_curve(run, tmp_path / "go1_rough")
    assert len(rows) == iterations
    assert [float(r["terrain_level"]) for r in rows] == pytest.approx(
        list(curves["terrain_level"]), rel=1e-5
    )
    assert {r["terrain_level_max"] for r in rows} == {"4"}
    assert "mean terrain level: final" in stdout


@pytest.mark.slow
def test_a_flat_runs_training_curve_has_no_terrain_columns(trained, tmp_path):
    curves, run = trained("Mjlab-Velocity-Flat-Unitree-Go1")
    assert "terrain_level" not in curves
    env = yaml.safe_load((run / "params" / "env.yaml").read_text())
    assert _training_curve_module().highest_terrain_level(env) is None
    rows, stdout = _training_curve(run, tmp_path / "go1_flat")
    assert "terrain_level" not in rows[0] and "terrain_level_max" not in rows[0]
    assert "track_lin_vel_xy_exp" in rows[0]
    assert "terrain" not in stdout

"""Locomotion tasks learn: a short real training run (the `train` command, rsl-rl PPO, C MuJoCo)
keeps its robots up longer at the end than at the start. A task whose physics is broken (a
robot with no ground contact) or whose reward pays for falling (the G1 before its termination
penalty: mean episode length 60 -> 20 steps in 50 iterations) fails here. The same measurement
for every locomotion task, with more iterations: `bench/learning_check.py`. A run is seeded
(bit for bit on this CPU), so each ratio is a fixed number here: G1 1.112 at 32 iterations of
256 envs (1.113 with 512, 1.127 at 40), Go1 2.17 at 13 of 512 (4.88 at 20), against the 1.05
required. 13 is the fewest iterations `summarize` compares."""

import importlib.util
from pathlib import Path

import pytest

_BENCH = Path(__file__).resolve().parents[1] / "bench" / "learning_check.py"


def _learning_check():
    spec = importlib.util.spec_from_file_location("learning_check", _BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize(
    ("task_id", "iterations", "num_envs"),
    [("Mjlab-Velocity-Flat-Unitree-Go1", 13, 512), ("Mjlab-Velocity-Flat-Unitree-G1", 32, 256)],
)
def test_mean_episode_length_rises_over_the_first_iterations(
    task_id, iterations, num_envs, tmp_path
):
    check = _learning_check()
    curves = check.train_briefly(
        task_id, iterations=iterations, num_envs=num_envs, workdir=tmp_path
    )
    summary = check.summarize(curves)
    print(f"{task_id}: {summary}")
    assert summary["ratio"] > 1.05, (
        f"{task_id}: mean episode length went from {summary['early']:.1f} to "
        f"{summary['late']:.1f} steps over {iterations} iterations"
    )

"""Integration tests across packages: they need the whole workspace (uv sync)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def linear_policy_file():
    """`(path, metadata) -> path`: a zero linear policy carrying `metadata`."""
    from mjlab.deploy.testing import write_linear_policy

    return lambda path, metadata: write_linear_policy(path, metadata=metadata)


@pytest.fixture(scope="session")
def cartpole_train_run(tmp_path_factory) -> Path:
    """The run folder of `train Mjlab-Cartpole-Balance` with the task's defaults (64 envs, 150
    iterations), on the CPU. One real training run for every test that needs a Cartpole policy
    trained by the `train` command (end to end: its policy.onnx; rlightning parity: its
    checkpoint against rlightning's local engine)."""
    workdir = tmp_path_factory.mktemp("cartpole_train")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "mjlab.rl.scripts.train",
            "Mjlab-Cartpole-Balance",
        ],
        cwd=workdir,
        env=dict(os.environ, CUDA_VISIBLE_DEVICES=""),
        check=True,
        capture_output=True,
        timeout=900,
    )
    (run,) = (workdir / "logs" / "rsl_rl" / "cartpole").iterdir()
    return run

"""bench/gpu_check.sh's pieces on the CPU: the throughput bench writes the JSON rows the report
reads, and the report turns real outputs into its table (the GPU itself is only measured where
one is lent; see docs/guides/gpu.md)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_throughput_rows_and_report(tmp_path):
    rows = tmp_path / "throughput.jsonl"
    for graph in ("--cuda-graph", "--no-cuda-graph"):
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "bench" / "env_throughput.py"),
                "--task",
                "Mjlab-Cartpole-Balance",
                "--num-envs",
                "8",
                "--seconds",
                "0.2",
                graph,
                "--json-out",
                str(rows),
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
    data = [json.loads(line) for line in rows.read_text().splitlines()]
    assert [r["cuda_graph"] for r in data] == [True, False]
    assert all(r["env_steps_per_s"] > 0 and r["backend"] == "mujoco" for r in data)
    # Stepped as training and play step it; the hypervisor's share of the CPU, where readable.
    assert all(r["inference_mode"] is True for r in data)
    assert all(r["steal_percent"] is None or 0.0 <= r["steal_percent"] <= 100.0 for r in data)

    md = tmp_path / "gpu_test.md"
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "gpu_report.py"),
            "--dir",
            str(tmp_path),
            "--device-name",
            "CPU (test)",
            "--markdown",
            str(md),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    text = md.read_text()
    assert text in out
    assert "| Mjlab-Cartpole-Balance | 8 | on |" in text and "| 8 | off |" in text
    assert text.count("not run") == 2  # no pytest.xml, no learning.jsonl in this directory

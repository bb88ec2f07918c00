"""The trained policies shipped in docs/results/policies: every file is listed in the manifest
with what made it, loads as an intact deployment file of its task, and does in plain MuJoCo
what the manifest says it does."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

POLICIES = Path(__file__).resolve().parents[1] / "docs" / "results" / "policies"
MANIFEST = POLICIES / "policies.json"
RUN_FIELDS = {
    "task", "command", "checkpoint", "export", "seed", "iterations", "minutes", "env_steps",
    "hardware",
}  # fmt: skip


def _manifest() -> dict[str, dict]:
    return json.loads(MANIFEST.read_text())["policies"]


def _checks() -> list[tuple[str, dict]]:
    return [(name, check) for name, entry in _manifest().items() for check in entry["checks"]]


def test_every_shipped_file_is_in_the_manifest_with_the_run_that_made_it():
    files = {p.name for p in POLICIES.iterdir() if p.suffix in (".onnx", ".npz")}
    listed = set()
    for name, entry in _manifest().items():
        missing = RUN_FIELDS - set(entry)
        assert not missing, f"{name}: the manifest lacks {sorted(missing)}"
        assert entry["command"].startswith("uv run train " + entry["task"]), name
        # How the file is made from the run's checkpoint (plus the run's --env options, if any).
        export = entry["export"].split()
        assert export[:4] == ["uv", "run", "export-onnx", entry["task"]], name
        assert f"<run>/{entry['checkpoint']}" in export, name
        assert export[export.index("--output") + 1] == f"docs/results/policies/{name}", name
        listed.add(name)
        listed.update(entry.get("extra_files", []))
    assert files == listed, f"not in the manifest: {files - listed}; missing: {listed - files}"


@pytest.mark.parametrize("name", sorted(_manifest()))
def test_shipped_policy_loads_intact_as_its_task(name):
    from mjlab.deploy.policy import OnnxPolicy

    policy = OnnxPolicy(POLICIES / name)
    assert policy.metadata is not None and policy.metadata.task_id == _manifest()[name]["task"]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "check"), _checks(), ids=lambda v: str(v))
def test_shipped_policy_follows_its_command_in_plain_mujoco(name, check):
    pytest.importorskip("mujoco")
    from mjlab.deploy.control import SafetyCfg
    from mjlab.deploy.policy import OnnxPolicy
    from mjlab.deploy.sim2sim import Sim2Sim

    safety = SafetyCfg(soft_start_s=0.0, **check.get("safety", {}))
    sim = Sim2Sim(OnnxPolicy(POLICIES / name), safety=safety)
    report = sim.run(seconds=check["seconds"], command=tuple(check["command"]))
    assert report.falls == 0, f"{name} fell at command {check['command']}"
    vx, vy = report.mean_lin_vel
    err = math.hypot(vx - check["command"][0], vy - check["command"][1])
    assert err <= check["tolerance"], (
        f"{name} at {check['command']}: mean planar velocity ({vx:.2f}, {vy:.2f}) m/s"
    )

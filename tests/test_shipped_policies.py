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


def _check_kind(check: dict) -> str:
    kinds = [k for k in ("command", "motion", "play_env") if k in check]
    assert len(kinds) == 1, f"a check names one of command, motion or play_env: {check}"
    return kinds[0]


def test_every_check_names_what_it_runs_and_its_files_are_shipped():
    for name, entry in _manifest().items():
        assert entry["checks"], f"{name}: no check"
        for check in entry["checks"]:
            kind = _check_kind(check)
            if kind == "motion":
                assert check["motion"] in entry.get("extra_files", []), name
                assert (POLICIES / check["motion"]).is_file(), name
            if kind == "play_env":
                assert set(check["play_env"]) == {"num_envs", "seed", "command", "min_metrics"}


@pytest.mark.slow
@pytest.mark.parametrize(("name", "check"), _checks(), ids=lambda v: str(v))
def test_shipped_policy_does_what_the_manifest_says(name, check):
    pytest.importorskip("mujoco")
    from mjlab.deploy.control import SafetyCfg
    from mjlab.deploy.policy import OnnxPolicy
    from mjlab.deploy.sim2sim import Sim2Sim

    kind = _check_kind(check)
    if kind == "play_env":  # in the task's env: a manipulation task's objects are there
        _check_in_play_env(name, check)
        return
    if kind == "motion":  # in plain MuJoCo, a tracking policy plays its motion once
        sim = Sim2Sim(OnnxPolicy(POLICIES / name), motion=POLICIES / check["motion"])
        report = sim.run_motion()
        assert report.completed, f"{name}: {report.summary()}"
        assert report.mean_body_pos_error <= check["max_mean_body_pos_error"], report.summary()
        return
    safety = SafetyCfg(soft_start_s=0.0, **check.get("safety", {}))
    sim = Sim2Sim(OnnxPolicy(POLICIES / name), safety=safety)  # in plain MuJoCo
    report = sim.run(seconds=check["seconds"], command=tuple(check["command"]))
    assert report.falls == 0, f"{name} fell at command {check['command']}"
    vx, vy = report.mean_lin_vel
    err = math.hypot(vx - check["command"][0], vy - check["command"][1])
    assert err <= check["tolerance"], (
        f"{name} at {check['command']}: mean planar velocity ({vx:.2f}, {vy:.2f}) m/s"
    )


def _check_in_play_env(name: str, check: dict) -> None:
    """Run the file torch-free (`OnnxPolicy`, one batched runtime fed the raw terms) in the
    task's play env for one episode length and compare the command's metrics on the step
    before `time_out` (their mean over envs; an env ended early, e.g. by a dropped cube, is
    measured in the episode it started again) with the manifest's minimums."""
    import torch

    from mjlab.deploy.policy import OnnxPolicy
    from mjlab.envs import ManagerBasedRlEnv
    from mjlab.tasks import load_env_cfg

    spec = check["play_env"]
    policy = OnnxPolicy(POLICIES / name)
    cfg = load_env_cfg(policy.metadata.task_id, play=True)
    cfg.scene.num_envs = spec["num_envs"]
    env = ManagerBasedRlEnv(cfg, device="cpu")
    try:
        env.reset(seed=spec["seed"])
        for _ in range(env.max_episode_length - 1):  # no env reaches time_out
            raw = env.observation_manager.raw_terms("actor")
            obs = policy.build_observation({k: v.numpy() for k, v in raw.items()})
            _, _, terminated, truncated, _ = env.step(torch.from_numpy(policy(obs)))
            policy.reset((terminated | truncated).numpy())  # those robots start afresh
        term = env.command_manager.get_term(spec["command"])
        got = {k: float(term.metrics[k].mean()) for k in spec["min_metrics"]}
    finally:
        env.close()
    for key, least in spec["min_metrics"].items():
        assert got[key] >= least, f"{name}: {key} {got[key]:.2f} < {least} ({got})"


def test_an_onnx_file_played_in_another_task_is_one_line_naming_its_task(capsys):
    from mjlab.rl.scripts.play import main

    go1 = POLICIES / "go1_flat.onnx"
    with pytest.raises(SystemExit) as exit_info:
        main(["Mjlab-Cartpole-Balance", "--onnx-file", str(go1)])
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert f"play Mjlab-Velocity-Flat-Unitree-Go1 --onnx-file {go1}" in line  # the fix
    assert "device:" not in captured.out  # refused before the env was built


@pytest.mark.slow
def test_a_shipped_file_plays_in_its_task_and_walks_where_zero_actions_do_not(capsys):
    from mjlab.rl.scripts.play import main

    def mean_return(policy: list[str]) -> float:
        main(["Mjlab-Velocity-Flat-Unitree-Go1", *policy, "--steps", "150"])
        out = capsys.readouterr().out
        return float(out.rsplit("mean return ", 1)[1].split()[0])

    walked = mean_return(["--onnx-file", str(POLICIES / "go1_flat.onnx")])
    stood = mean_return(["--agent", "zero"])
    assert walked > stood + 1.0, (walked, stood)  # velocity tracking pays only when it walks

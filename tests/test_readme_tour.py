"""The README's tour, run as written (with small sizes) on a headless machine with no MUJOCO_GL.

Each command of the two tour blocks is taken from README.md, `uv run X` runs this environment's
`X`, `<run>` and `model_<N>.pt` become the run folder and checkpoint the previous `train` wrote,
and size options are appended (a few iterations, a few envs, a second of sim2sim). Everything
else is the README's text: if a command there stops working, this test fails. It runs offline,
with the MENAGERIE_ROOT mirror the tour names, in a git checkout where what the tour writes must
not show up in `git status`. Each `train` / `train-rlightning` and the commands after it that
read its `<run>` form a chain, run in the README's order; the chains run side by side (process
start-up dominates each command).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BIN = Path(sys.executable).parent

SMALL = {
    "train": ["--env.scene.num-envs", "32", "--agent.max-iterations", "3"],
    "train-rlightning": ["--env.scene.num-envs", "32", "--agent.max-iterations", "3"],
    "play": ["--steps", "20"],
    "sim2sim": ["--seconds", "1"],
    "run": ["--seconds", "1", "--soft-start-s", "0.2"],
}
"""Options appended to each kind of command (its own options, so the README text stays)."""


NOISE = ("Actor Model", "Resolved observation sets", "Storing git diff", "Token authentication")
"""Third-party printouts a user cannot act on, which the tour must not show."""


def tour_commands() -> list[str]:
    """The commands of the README's tour blocks: the bash blocks after "A five-minute tour" and
    "A walking robot", comments removed."""
    text = README.read_text()
    commands = []
    for marker in ("A five-minute tour", "A walking robot"):
        start = text.index(marker)
        block = re.search(r"```bash\n(.*?)```", text[start:], re.S)
        assert block, f"no bash block after {marker!r} in README.md"
        for line in block.group(1).splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                commands.append(line)
    return commands


def _check_go1_run(run: Path, out: str) -> None:
    """What a Go1 `train` leaves: checkpoints, params, a policy.onnx with the task's metadata."""
    import numpy as np

    from mjlab.deploy import OnnxPolicy

    assert "device: cpu (auto" in out  # no GPU, no flag: the device is chosen and printed
    files = {p.name for p in run.iterdir()}
    assert {"model_0.pt", "model_2.pt", "policy.onnx", "params"} <= files, files
    assert (run / "params" / "env.yaml").read_text().startswith("decimation: 4")
    policy = OnnxPolicy(run / "policy.onnx")
    assert policy.metadata.task_id == "Mjlab-Velocity-Flat-Unitree-Go1"
    assert policy.joint_names[:3] == ["FR_hip_joint", "FR_thigh_joint", "FR_calf_joint"]
    assert policy(np.zeros(policy.obs_dim, dtype=np.float32)).shape == (12,)
    assert not (run.parents[3] / "wandb").exists(), "wandb writes into the run folder"


def _kind(argv: list[str]) -> str:
    if argv[0] == "deploy":
        return argv[1]
    return argv[0]


def _newest(pattern: str, root: Path) -> Path:
    found = sorted(root.glob(pattern), key=lambda p: p.stat().st_mtime)
    assert found, f"nothing matches {pattern} under {root}"
    return found[-1]


def _chains(commands: list[str]) -> list[list[str]]:
    """The tour as independent chains, each run in order: a `train`/`train-rlightning` starts a
    chain, and the commands after it (which read its `<run>`) follow in the same chain."""
    chains: list[list[str]] = []
    for command in commands:
        if not chains or _kind(shlex.split(command)[2:]) in ("train", "train-rlightning"):
            chains.append([])
        chains[-1].append(command)
    return chains


def resolve_command(command: str, cwd: Path) -> tuple[list[str], str]:
    """A documented `uv run X ...` command as run here, and its kind: X is this environment's
    executable, `<run>` and `model_<N>.pt` become the newest run folder and checkpoint under
    `cwd`, a shipped policy (docs/results/policies/...) the repository's file, and SMALL's
    options for its kind are appended."""
    argv = shlex.split(command)
    assert argv[:2] == ["uv", "run"], command
    argv = argv[2:]
    kind = _kind(argv)
    for i, arg in enumerate(argv):
        if "<run>" in arg:
            experiment = arg.split("/<run>")[0]
            run = _newest("*", cwd / experiment)
            arg = arg.replace(f"{experiment}/<run>", str(run))
            if re.search(r"model_\d+\.pt$", arg):
                arg = str(_newest("model_*.pt", run))
            argv[i] = arg
        elif arg.startswith("docs/results/policies/"):  # a shipped file, from the repository root
            argv[i] = str(README.parent / arg)
    return [str(BIN / argv[0]), *argv[1:], *SMALL.get(kind, [])], kind


def _run_and_check(command: str, tmp_path: Path, env: dict) -> float:
    """Run one tour command as the README writes it (sizes appended) and check what it did;
    returns its wall time in seconds."""
    argv, kind = resolve_command(command, tmp_path)
    start = time.monotonic()
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    seconds = time.monotonic() - start
    out = done.stdout + done.stderr
    # An untrained Go1 may fall in sim2sim / run: their documented exit status 1.
    allowed = (0, 1) if kind in ("sim2sim", "run") else (0,)
    assert done.returncode in allowed, f"{command}\n{out[-3000:]}"
    assert "Traceback" not in out, f"{command}\n{out[-3000:]}"
    for noise in NOISE:  # quiet by default: --verbose shows these
        assert noise not in out, f"{command} printed {noise!r}\n{out[-3000:]}"
    assert not re.search(r"^wandb: ", out, re.M), f"{command}: wandb's chatter\n{out[-3000:]}"
    if kind == "list-envs":
        assert "Mjlab-Cartpole-Balance" in out
    if kind in ("train", "train-rlightning"):
        assert "training curve: " in out, out[-2000:]
        assert "Learning iteration" not in out  # one progress line, not rsl-rl's block
        assert re.search(r"\[(mjlab|rlightning)\] it 3/3 \| ", out), out[-2000:]
        curve = Path(out.split("training curve: ")[1].split()[0])
        assert curve.stat().st_size > 0
        if "Go1" in command:
            _check_go1_run(curve.parent, out)
    if kind == "play":
        assert (tmp_path / "logs").exists() and "video: " in out
        import imageio.v3 as iio

        frames = iio.imread(Path(out.split("video: ")[1].split()[0]))
        assert frames.shape[0] == 20 and frames.std() > 5.0, "20 frames, not blank"
    if kind == "inspect":
        assert "joint" in out
    if kind == "sim2sim":
        policy = Path(next(a for a in argv if a.endswith(".onnx")))
        assert (policy.parent / "videos" / "sim2sim.mp4").stat().st_size > 1000
    if kind == "run":
        assert "walked" in out
    return seconds


def _untracked(checkout: Path) -> list[str]:
    """Files `git status` would show as new in `checkout` (its .gitignore applied)."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=True,
    )
    return [line[3:] for line in done.stdout.splitlines() if line[3:] != ".gitignore"]


def test_the_tour_says_how_to_run_offline_before_the_first_robot_command():
    text = README.read_text()
    tour = text[text.index("A five-minute tour") :]
    first_robot = min(tour.index(robot) for robot in ("Go1", "G1", "Franka"))
    assert "MENAGERIE_ROOT" in tour[:first_robot]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_readme_tour_runs_as_written_headless(tmp_path):
    commands = tour_commands()
    assert len(commands) >= 8 and commands[0] == "uv run list-envs"
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM")}
    env["CUDA_VISIBLE_DEVICES"] = ""
    # Offline, as the tour says: the robot models come from the mirror MENAGERIE_ROOT names.
    assert Path(env["MENAGERIE_ROOT"]).is_dir(), "the tests run with the offline mirror"
    # The working folder stands in for a fresh clone: what the tour writes must be ignored
    # by the repository's .gitignore (under logs/), never left as untracked files.
    (tmp_path / ".gitignore").write_text((README.parent / ".gitignore").read_text())
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    chains = _chains(commands)
    assert [c for chain in chains for c in chain] == commands

    def run_chain(chain: list[str]) -> list[tuple[str, float]]:
        return [(command, _run_and_check(command, tmp_path, env)) for command in chain]

    # The chains share nothing but the working folder (each `train` writes its own experiment
    # folder), so they run side by side: process start-up dominates, and it waits on I/O.
    with ThreadPoolExecutor(max_workers=len(chains)) as pool:
        timings = [t for chain in pool.map(run_chain, chains) for t in chain]
    for command, seconds in timings:
        print(f"{seconds:6.1f} s  {command}")
    rl_runs = list((tmp_path / "logs" / "rlightning").glob("*/*"))
    assert rl_runs and (rl_runs[0] / "params" / "env.yaml").exists()
    assert (rl_runs[0] / "policy.onnx").exists()
    assert _untracked(tmp_path) == [], "the tour left files outside logs/"

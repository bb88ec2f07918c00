"""The guides' commands (docs/**/*.md) run as written, headless, the way the README tour does.

Every line of a ```bash block is a `uv run X ...` command that this test runs with small sizes
appended (`test_readme_tour.resolve_command`, then `TINY`), unless the block is preceded by a
`<!-- docs-test: skip, <reason> -->` line: installs, servers, GPUs, clusters, benchmarks. A
command the README tour already runs is not run again, except a `train` whose run folder a later
command of the same page reads. Each page's commands run in order in a folder of their own
(`<run>` is that page's newest run), pages side by side. ```python blocks run in one fresh
namespace each, unless marked the same way.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SKIP = "<!-- docs-test: skip"
TINY = {
    "train": ["--env.scene.num-envs", "4", "--agent.max-iterations", "1"],
    "train-rlightning": ["--env.scene.num-envs", "4", "--agent.max-iterations", "1"],
}
"""Appended after the tour's sizes (the last value wins): the guides' runs check that each
command works as written, not what it learns, so one iteration of 4 envs is enough."""

_spec = importlib.util.spec_from_file_location(
    "readme_tour", Path(__file__).with_name("test_readme_tour.py")
)
tour = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tour)


def doc_blocks(language: str) -> list[tuple[str, str, str | None]]:
    """(page, block text, skip reason or None) of every ```language block in docs/, in order."""
    found = []
    pattern = re.compile(
        rf"(?:^({re.escape(SKIP)}[^\n]*)\n)?^```{language}\n(.*?)^```", re.S | re.M
    )
    for page in sorted(DOCS.rglob("*.md")):
        for marker, body in pattern.findall(page.read_text()):
            reason = None
            if marker:
                reason = marker.removeprefix(SKIP).removesuffix("-->").strip(" ,")
            found.append((str(page.relative_to(DOCS)), body, reason))
    return found


def _lines(block: str) -> list[str]:
    return [c for line in block.splitlines() if (c := line.split("#", 1)[0].strip())]


def page_chains() -> dict[str, list[str]]:
    """Each page's commands to run, in order (the README tour's own left out, see above)."""
    in_tour = set(tour.tour_commands())
    chains: dict[str, list[str]] = {}
    for page, block, reason in doc_blocks("bash"):
        if reason is None:
            chains.setdefault(page, []).extend(_lines(block))
    kept = {}
    for page, commands in chains.items():
        run = []
        for i, command in enumerate(commands):
            if command in in_tour:
                kind = tour._kind(command.split()[2:])
                later = [c for c in commands[i + 1 :] if c not in in_tour and "<run>" in c]
                if kind not in ("train", "train-rlightning") or not later:
                    continue
            run.append(command)
        if run:
            kept[page] = run
    return kept


def test_every_guide_command_is_run_or_skipped_with_a_reason():
    blocks = doc_blocks("bash")
    assert len(blocks) >= 10, "the guides' bash blocks were not found"
    for page, block, reason in blocks:
        if reason is not None:
            assert len(reason) > 10, f"{page}: a skipped block must say why: {block[:80]}"
            continue
        for command in _lines(block):
            assert command.startswith("uv run "), (
                f"{page}: {command!r} is neither `uv run ...` nor in a block marked {SKIP}, reason -->"
            )
            assert (tour.BIN / command.split()[2]).exists(), f"{page}: no such command: {command}"
    for page, _block, reason in doc_blocks("python"):
        assert reason is None or len(reason) > 10, f"{page}: a skipped block must say why"
    assert "guides/tracking.md" in page_chains()


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_guides_commands_run_as_written_headless(tmp_path):
    chains = page_chains()
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM")}
    env["CUDA_VISIBLE_DEVICES"] = ""

    def run_page(item: tuple[str, list[str]]) -> list[tuple[str, float]]:
        page, commands = item
        cwd = tmp_path / page.replace("/", "_").removesuffix(".md")
        cwd.mkdir()
        timings = []
        for command in commands:
            argv, kind = tour.resolve_command(command, cwd)
            if kind == "sim2sim" and "--motion" in argv:
                # A motion plays once, start to end: no --seconds to append.
                argv = argv[: len(argv) - len(tour.SMALL["sim2sim"])]
            argv += TINY.get(kind, [])
            start = time.monotonic()
            done = subprocess.run(
                argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600
            )
            timings.append((f"{page}: {command}", time.monotonic() - start))
            print(f"{timings[-1][1]:6.1f} s  {timings[-1][0]}", flush=True)
            out = done.stdout + done.stderr
            # An untrained policy may fall in sim2sim / run: their documented exit status 1.
            allowed = (0, 1) if kind in ("sim2sim", "run") else (0,)
            assert done.returncode in allowed, f"{page}: {command}\n{out[-3000:]}"
            assert "Traceback" not in out, f"{page}: {command}\n{out[-3000:]}"
            if kind in ("train", "train-rlightning") and "--help" not in command:
                assert "training curve: " in out, f"{page}: {command}\n{out[-2000:]}"
            if kind == "inspect":
                assert "joint" in out, out[-2000:]
        return timings

    with ThreadPoolExecutor(max_workers=len(chains)) as pool:
        timings = [t for page in pool.map(run_page, chains.items()) for t in page]
    assert len(timings) == sum(len(c) for c in chains.values())
    assert (tmp_path / "guides_tracking" / "logs" / "motions" / "squat.npz").exists()


@pytest.mark.slow
def test_the_guides_python_blocks_run(capsys):
    blocks = [(page, code) for page, code, reason in doc_blocks("python") if reason is None]
    assert blocks, "no runnable python block in the guides"
    for page, code in blocks:
        exec(compile(code, str(DOCS / page), "exec"), {})
    assert "Mjlab-Cartpole-Balance" in capsys.readouterr().out

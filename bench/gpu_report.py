"""Collect what bench/gpu_check.sh measured into one table, printed and written as Markdown.

    uv run python bench/gpu_report.py --dir bench/out/gpu_check --device-name "NVIDIA H200" \
        --markdown docs/results/gpu_nvidia_h200.md

Reads `pytest.xml` (JUnit), `throughput.jsonl` (bench/env_throughput.py --json-out) and
`learning.jsonl` (bench/learning_check.py --json-out) from `--dir`; a missing file is reported
as "not run" (that step failed before writing it; see its .log beside it).
"""

from __future__ import annotations

import argparse
import json
import platform
import xml.etree.ElementTree as ET
from datetime import date
from pathlib import Path


def _jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _pytest_summary(path: Path) -> str:
    if not path.is_file():
        return "not run (see pytest.log)"
    root = ET.parse(path).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    if suite is None:
        return "no test suite in pytest.xml"
    total, failures, errors, skipped = (
        int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")
    )
    passed = total - failures - errors - skipped
    failed = [
        case.get("name", "?")
        for case in suite.iter("testcase")
        if case.find("failure") is not None or case.find("error") is not None
    ]
    line = f"{passed} passed, {failures + errors} failed, {skipped} skipped"
    if failed:
        line += " (failed: " + ", ".join(failed[:8]) + (" ..." if len(failed) > 8 else "") + ")"
    return line


def build_report(directory: Path, device_name: str) -> str:
    lines = [
        f"# GPU check: {device_name}",
        "",
        f"Measured {date.today().isoformat()} by `bash bench/gpu_check.sh` "
        f"(host {platform.node()}, Python {platform.python_version()}).",
        "",
        '## Tests: `pytest -m "gpu or warp"`',
        "",
        _pytest_summary(directory / "pytest.xml"),
        "",
        "## Env throughput (bench/env_throughput.py)",
        "",
    ]
    rows = _jsonl(directory / "throughput.jsonl")
    if rows:
        lines += [
            "| task | num_envs | CUDA graph | env steps/s | raw physics steps/s | env/raw | build + first step s |",
            "|---|---:|---|---:|---:|---:|---:|",
        ]
        for r in rows:
            lines.append(
                f"| {r['task']} | {r['num_envs']} | {'on' if r['cuda_graph'] else 'off'} | "
                f"{r['env_steps_per_s']:,.0f} | {r['raw_steps_per_s']:,.0f} | "
                f"{r.get('ratio', r['env_steps_per_s'] / r['raw_steps_per_s']):.2f} | "
                f"{r['build_first_step_s']:.1f} |"
            )
    else:
        lines.append("not run (see throughput.log)")
    lines += ["", "## Training (bench/learning_check.py)", ""]
    learning = _jsonl(directory / "learning.jsonl")
    if learning:
        lines += [
            "| task | num_envs | iterations | minutes | episode length it 3-7 | last 5 | late/early | tracking (of max) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in learning:
            lines.append(
                f"| {r['task']} | {r['num_envs']} | {r['iterations']} | {r['minutes']:.1f} | "
                f"{r['early']:.1f} | {r['late']:.1f} | {r['ratio']:.2f} | {r['track_late']:.3f} |"
            )
    else:
        lines.append("not run (see learning.log)")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--device-name", required=True)
    parser.add_argument("--markdown", type=Path, required=True)
    args = parser.parse_args()
    report = build_report(args.dir, args.device_name)
    print(report)
    args.markdown.write_text(report)
    print(f"written: {args.markdown}")


if __name__ == "__main__":
    main()

"""Helpers of .ci/packages (standard library only).

--check-installed LABEL VENV    run with the venv's python: the modules of that install (a
                                package, maybe with extras) import from the venv's site-packages,
                                not from the source tree; the robot-side mjlab-export has no torch.
--summary REPORT.xml ...        one row per package (junit reports of pytest, and pytest's output
                                in REPORT.log beside each): passed, skipped, failed, deselected,
                                seconds, then every skip reason; exit 1 if a package failed,
                                errored, ran no test or left no report.
"""

from __future__ import annotations

import argparse
import ast
import collections
import importlib
import importlib.util
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

MODULES = {
    "mjlab-core": ["mjlab.sim", "mjlab.envs", "mjlab.tasks"],
    "mjlab-export": ["mjlab.deploy"],
    "mjlab-export[torch,sim,viewer]": ["mjlab.deploy", "mjlab.export", "mjlab.viewer"],
    "mjlab-rl": ["mjlab.rl", "mjlab.sim", "mjlab.export", "mjlab.viewer"],
    "rlightning-policy[ray]": ["rlightning.policy.rsl_rl_policy", "rlightning.engine"],
}


def check_installed(label: str, venv: Path) -> None:
    venv = venv.resolve()
    for name in MODULES[label]:
        module = importlib.import_module(name)
        where = Path(next(iter(module.__path__))).resolve()
        if venv not in where.parents:
            raise SystemExit(f"{label}: {name} imports from {where}, not from {venv}")
    print(f"{label}: {', '.join(MODULES[label])} import from {venv}")
    if label == "mjlab-export":
        # The robot-side install: onnxruntime + numpy, no torch anywhere.
        if "torch" in sys.modules:
            raise SystemExit("mjlab-export: importing mjlab.deploy imported torch")
        if importlib.util.find_spec("torch") is not None:
            raise SystemExit("mjlab-export: torch is installed in the robot-side venv")
        print("mjlab-export: robot-side install, torch is neither imported nor installed")


def _reason(skipped: ET.Element) -> str:
    """A skip's reason; a module-level skip keeps it in the text as (file, line, message)."""
    reason = skipped.get("message", "")
    if reason == "collection skipped":
        try:
            file, _, message = ast.literal_eval((skipped.text or "").strip())
            reason = f"{Path(file).name}: {message.removeprefix('Skipped: ')} (whole module)"
        except (ValueError, SyntaxError):
            reason = (skipped.text or reason).strip()
    if skipped.get("type") == "pytest.xfail":
        reason = f"expected failure (xfail): {reason}"
    return reason.strip()


def summary(reports: list[Path]) -> int:
    rows: list[tuple[str, str, int, int, int, int, float]] = []
    reasons: collections.Counter[tuple[str, str]] = collections.Counter()
    bad = False
    for report in reports:
        package = report.stem
        if not report.exists():  # pytest never got to write it (killed, usage error)
            rows.append((package, "no report", 0, 0, 1, 0, 0.0))
            bad = True
            continue
        counts: collections.Counter[str] = collections.Counter()
        seconds = 0.0
        for case in ET.parse(report).getroot().iter("testcase"):
            seconds += float(case.get("time", 0.0))
            outcome = "passed"
            for child in case:
                if child.tag == "skipped":
                    outcome = "skipped"
                    reasons[(package, _reason(child))] += 1
                elif child.tag in ("failure", "error"):
                    outcome = "failed"
            counts[outcome] += 1
        # Deselected tests (pytest -m) are not in the junit report; pytest's last line has them.
        log = report.with_suffix(".log")
        found = re.findall(r"(\d+) deselected", log.read_text()) if log.exists() else []
        deselected = int(found[-1]) if found else 0
        rows.append(
            (
                package,
                "",
                counts["passed"],
                counts["skipped"],
                counts["failed"],
                deselected,
                seconds,
            )
        )
        bad |= counts["failed"] > 0 or counts["passed"] == 0
    print(
        f"{'package':<24} {'passed':>7} {'skipped':>8} {'failed':>7} {'deselected':>11} "
        f"{'seconds':>8}"
    )
    for package, note, passed, skipped, failed, deselected, seconds in rows:
        print(
            f"{package:<24} {passed:>7} {skipped:>8} {failed:>7} {deselected:>11} "
            f"{seconds:>8.0f} {note}".rstrip()
        )
    for (package, reason), n in reasons.items():
        print(f"  skipped in {package} ({n}): {reason}")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check-installed", nargs=2, metavar=("PACKAGE", "VENV"))
    parser.add_argument("--summary", nargs="+", type=Path, metavar="REPORT")
    args = parser.parse_args()
    if args.check_installed:
        check_installed(args.check_installed[0], Path(args.check_installed[1]))
        return 0
    if args.summary:
        return summary(args.summary)
    parser.error("give --check-installed or --summary")  # exits with status 2


if __name__ == "__main__":
    sys.exit(main())

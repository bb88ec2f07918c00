"""What `train --deterministic` costs, and what a seed fixes, measured in one run.

Trains the same task three times from the same seed in fresh processes: twice as by default and
once with `--deterministic` (torch's deterministic algorithms). Prints each run's training time,
the deterministic run's time as a ratio of the default's, and whether the final checkpoints are
equal bit for bit (networks, optimizer, env state), so one run shows both the guarantee and the
flag's price on this machine.

    uv run python bench/determinism.py                       # Go1 flat, 1024 envs, 5 iterations
    uv run python bench/determinism.py --num-envs 4096 --device cuda:0
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_MIRROR = Path(__file__).resolve().parents[2] / "shared" / "menagerie"


def _train(args, root: Path, deterministic: bool) -> tuple[float, Path]:
    cmd = [
        sys.executable, "-m", "mjlab.rl.scripts.train", args.task,
        "--env.scene.num-envs", str(args.num_envs),
        "--agent.max-iterations", str(args.iterations),
        "--agent.seed", str(args.seed), "--agent.logger", "tensorboard",
        "--log-root", str(root), "--no-export-onnx",
    ]  # fmt: skip
    if args.device:
        cmd += ["--device", args.device]
    if deterministic:
        cmd.append("--deterministic")
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    elapsed = time.perf_counter() - start
    run_dir = Path(re.findall(r"run folder: (.+)$", out, re.M)[-1].strip())
    return elapsed, run_dir / f"model_{args.iterations - 1}.pt"


def _same(a: Path, b: Path) -> bool:
    import torch

    def walk(x, y, path=""):
        if path.endswith(("tot_time", ".config")):  # the clock; the config differs
            return True
        if isinstance(x, dict):
            return x.keys() == y.keys() and all(walk(x[k], y[k], f"{path}.{k}") for k in x)
        if isinstance(x, (list, tuple)):
            return len(x) == len(y) and all(walk(u, v, path) for u, v in zip(x, y, strict=True))
        if isinstance(x, torch.Tensor):
            return torch.equal(x, y)
        return x == y

    return walk(torch.load(a, weights_only=True), torch.load(b, weights_only=True))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--task", default="Mjlab-Velocity-Flat-Unitree-Go1")
    parser.add_argument("--num-envs", type=int, default=1024)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    if "MENAGERIE_ROOT" not in os.environ and _MIRROR.is_dir():
        os.environ["MENAGERIE_ROOT"] = str(_MIRROR)
    os.environ.setdefault("WANDB_MODE", "offline")
    with tempfile.TemporaryDirectory() as tmp:
        runs = {
            name: _train(args, Path(tmp) / name.replace(" ", "_"), name == "deterministic")
            for name in ("default", "default again", "deterministic")
        }
        print(f"{args.task}, {args.num_envs} envs, {args.iterations} iterations, seed {args.seed}")
        for name, (seconds, _) in runs.items():
            print(f"  {name:<14} {seconds:6.1f} s (process, build and training)")
        # The faster default run: the first one also pays for cold file caches.
        base = min(runs["default"][0], runs["default again"][0])
        print(f"  deterministic / default time: {runs['deterministic'][0] / base:.2f}")
        for other in ("default again", "deterministic"):
            same = _same(runs["default"][1], runs[other][1])
            print(f"  default == {other} (bit for bit): {same}")


if __name__ == "__main__":
    main()

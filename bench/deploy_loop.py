"""The robot-side control loop's own cost at 50 Hz: period jitter, overruns, inference latency and
the loop's overhead (everything but the robot's read/send and inference), in real time.

Two robots, one run each: `memory` (a robot whose read/send cost nothing: the loop alone) and
`mujoco` (the policy's Menagerie robot in plain MuJoCo, physics inside `send`). The policy is the
given .onnx file, or a Go1-sized MLP (48 -> 512 -> 256 -> 128 -> 12, ELU, random weights) built
with `mjlab.deploy.testing.write_mlp_policy`.

    uv run python bench/deploy_loop.py [--policy policy.onnx] [--seconds 10]

Prints one table; the ratios (p99 of overhead and inference to the 20 ms period) are measured in
this run. Needs mjlab-export[sim] for the mujoco robot.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from mjlab.deploy import OnnxPolicy
from mjlab.deploy.control import ControlLoop, JointCommand, RobotState, SafetyCfg
from mjlab.deploy.testing import write_mlp_policy


def go1_sized_policy(path: Path) -> Path:
    """A random MLP of the trained Go1 policy's size with the test suite's Go1 metadata."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "packages/mjlab-export/tests"))
    from conftest import go1_like_metadata

    return write_mlp_policy(path, go1_like_metadata())


class MemoryRobot:
    """A robot that stands still at the default pose; read/send cost (almost) nothing."""

    def __init__(self, policy: OnnxPolicy):
        meta = policy.metadata
        self.q = np.asarray(meta.default_joint_pos, dtype=np.float64)
        self.terms = {t.name: np.zeros(t.dim) for t in meta.observations if t.func != "last_action"}
        for t in meta.observations:
            if t.func == "projected_gravity":
                self.terms[t.name] = np.array([0.0, 0.0, -1.0])
        self.tick = 0

    def read(self) -> RobotState:
        self.tick += 1
        return RobotState(
            joint_pos=self.q, joint_vel=np.zeros_like(self.q), terms=self.terms, stamp=self.tick
        )

    def send(self, command: JointCommand) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", type=Path, default=None, help="the .onnx file")
    parser.add_argument("--seconds", type=float, default=10.0, help="run time per robot, s")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.policy or go1_sized_policy(Path(tmp) / "go1_sized.onnx")
        rows = []
        robots = ["memory", "mujoco"]
        for name in robots:
            policy = OnnxPolicy(path)
            if name == "memory":
                robot = MemoryRobot(policy)
            else:
                try:
                    from mjlab.deploy.mujoco_robot import MujocoRobot
                except ImportError:
                    print("mujoco robot skipped: pip install 'mjlab-export[sim]'")
                    continue
                robot = MujocoRobot(policy)
            loop = ControlLoop(policy, robot, SafetyCfg(soft_start_s=0.0), realtime=True)
            stats = loop.run(seconds=args.seconds)
            rows.append((name, stats))
    period = rows[0][1].step_dt
    print(
        f"control loop at {1 / period:.0f} Hz, {args.seconds:.0f} s per robot, policy {path if args.policy else 'Go1-sized MLP'}"
    )
    print(
        f"{'robot':<8}{'cycles':>7}{'overruns':>9}{'jitter p50':>11}{'p99':>8}{'infer p50':>10}{'p99':>8}{'overhead p50':>13}{'p99':>8}{'(overhead+infer) p99 / period':>31}"
    )
    for name, s in rows:
        ratio = (s.percentile("overhead", 99) + s.percentile("inference", 99)) / period
        print(
            f"{name:<8}{s.cycles:>7}{s.overruns:>9}{s.percentile('jitter', 50) * 1e3:>9.3f}ms{s.percentile('jitter', 99) * 1e3:>6.3f}ms"
            f"{s.percentile('inference', 50) * 1e6:>8.0f}us{s.percentile('inference', 99) * 1e6:>6.0f}us"
            f"{s.percentile('overhead', 50) * 1e6:>11.0f}us{s.percentile('overhead', 99) * 1e6:>6.0f}us{ratio:>31.4f}"
        )


if __name__ == "__main__":
    main()

"""Env steps/s of the Go1 flat velocity env next to raw physics of the same model, same run.

For each N: `ManagerBasedRlEnv.step` with random actions (env steps/s), and the raw limit: the
env's own simulation (`mujoco.batch` on CPU) stepped `decimation` substeps from each physics
state the env stepped from, recorded during the env phase (controls, resets and pushes
included), with no managers: the same physics work, in env steps/s. Their ratio is the
managers' overhead; the printed ratio is the median of the pairs' ratios, the rates are the
medians of each side. (Holding the controls still instead lets the robots settle into cheaper
contact states and is not the same work.) Also prints the time from constructing the env to its
first step.

The env steps under `torch.inference_mode()`, as rsl_rl's runner collects rollouts and `play`
runs the policy (`--no-inference-mode`: the plain step, which spent ~10 % more time outside
the physics at N=64 on CPU in two alternating-block comparisons).

    uv run python bench/env_throughput.py                 # N = 64, 1024, 4096 on CPU
    uv run python bench/env_throughput.py --device cuda:0 # MuJoCo Warp, CUDA graphs on
    uv run python bench/env_throughput.py --device cuda:0 --no-cuda-graph

Then a short profile of the env step at each N: milliseconds per step in the physics and in
each manager (wall time; on CUDA each phase is synchronized, which the real step is not).
The table's last column, steal %, is the CPU time the hypervisor gave to other guests during
the pairs (Linux; n/a elsewhere).
The goals (issue #15, Go1 flat on CPU): ratio >= 0.85 at N=1024 and >= 0.70 at N=64.

`--json-out FILE` appends one JSON line per N (bench/gpu_check.sh collects them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import torch

_MIRROR = Path(__file__).resolve().parents[2] / "shared" / "menagerie"
if "MENAGERIE_ROOT" not in os.environ and _MIRROR.is_dir():
    os.environ["MENAGERIE_ROOT"] = str(_MIRROR)

from mjlab.envs import ManagerBasedRlEnv  # noqa: E402
from mjlab.tasks import load_env_cfg  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--task", default="Mjlab-Velocity-Flat-Unitree-Go1")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[64, 1024, 4096])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seconds", type=float, default=6.0, help="env time per N, all pairs")
    parser.add_argument("--pairs", type=int, default=5, help="env/replay pairs per N (median)")
    parser.add_argument(
        "--cuda-graph",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="MuJoCo Warp on CUDA: replay step/forward as CUDA graphs (SimulationCfg.use_cuda_graph)",
    )
    parser.add_argument(
        "--inference-mode",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="step the env under torch.inference_mode(), as training rollouts and play do",
    )
    parser.add_argument("--json-out", type=Path, default=None)
    args = parser.parse_args()
    print(
        f"task={args.task} device={args.device} cuda_graph={args.cuda_graph} "
        f"inference_mode={args.inference_mode} cores={os.cpu_count()}"
    )
    print(
        f"{'N':>6} {'env steps/s':>13} {'raw env-equiv steps/s':>22} {'ratio':>6} "
        f"{'build+first step s':>19} {'steal %':>8}"
    )
    profiles: dict[int, dict[str, float]] = {}
    for n in args.num_envs:
        cfg = load_env_cfg(args.task)
        cfg.scene.num_envs = n
        cfg.sim.use_cuda_graph = args.cuda_graph
        t0 = time.perf_counter()
        env = ManagerBasedRlEnv(cfg, device=args.device)
        env.reset(seed=0)
        dim = env.action_manager.total_action_dim
        env.step(torch.zeros(n, dim, device=env.device))
        first = time.perf_counter() - t0
        sync = torch.cuda.synchronize if env.device.type == "cuda" else (lambda: None)

        actions = [torch.randn(n, dim, device=env.device) * 0.5 for _ in range(64)]
        calls = [0]

        def env_step(env=env, actions=actions, calls=calls):
            env.step(actions[calls[0] % len(actions)])
            calls[0] += 1

        # Several short env/replay pairs, each pair back to back: the median of their ratios
        # is steadier on a shared VM than one long pair.
        ticks = _cpu_ticks()
        # Built outside inference mode, stepped inside it, as rsl_rl's runner and `play` do.
        with torch.inference_mode(args.inference_mode):
            pairs = [
                replay_pair(env, env_step, cfg.decimation, sync, args.seconds / args.pairs)
                for _ in range(args.pairs)
            ]
        env_rate = statistics.median(p[0] for p in pairs)
        raw_rate = statistics.median(p[1] for p in pairs)
        ratio = statistics.median(p[0] / p[1] for p in pairs)
        steal = _steal_percent(ticks, _cpu_ticks())
        with torch.inference_mode(args.inference_mode):
            profiles[n] = profile(env, env_step, sync, args.seconds)
        print(
            f"{n:>6} {env_rate:>13,.0f} {raw_rate:>22,.0f} {ratio:>6.2f} {first:>19.2f} "
            f"{'n/a' if steal is None else f'{steal:.1f}':>8}"
        )
        if args.json_out is not None:
            row = {
                "task": args.task,
                "device": args.device,
                "backend": env.sim.backend,
                "cuda_graph": args.cuda_graph,
                "inference_mode": args.inference_mode,
                "num_envs": n,
                "env_steps_per_s": env_rate,
                "raw_steps_per_s": raw_rate,
                "ratio": ratio,
                "build_first_step_s": first,
                "steal_percent": steal,
            }
            with args.json_out.open("a") as f:
                f.write(json.dumps(row) + "\n")
        env.close()
    print("\nprofile: ms per env step (physics = Simulation.step, decimation substeps)")
    names = list(dict.fromkeys(k for p in profiles.values() for k in p))
    print(f"{'phase':>22} " + " ".join(f"{'N=' + str(n):>9}" for n in profiles))
    for name in names:
        print(f"{name:>22} " + " ".join(f"{p.get(name, 0.0):>9.3f}" for p in profiles.values()))


def _cpu_ticks() -> list[int] | None:
    """The machine's CPU time counters (`/proc/stat`, Linux), or None elsewhere."""
    try:
        with open("/proc/stat") as f:
            return [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None


def _steal_percent(before: list[int] | None, after: list[int] | None) -> float | None:
    """Share of CPU time the hypervisor gave to other guests between two readings, % (the
    8th counter of /proc/stat's cpu line). On a shared VM the rates swing with it and with
    neighbours' memory traffic (which no counter shows): compare ratios, not rates, across runs."""
    if before is None or after is None or len(before) < 8:
        return None
    delta = [b - a for a, b in zip(before, after, strict=True)]
    total = sum(delta[:8])  # guest time is already counted in user time
    return 100.0 * delta[7] / total if total else None


def replay_pair(env, env_step, decimation: int, sync, seconds: float) -> tuple[float, float]:
    """(env steps/s, raw env-equivalent steps/s) over the same physics.

    The env steps for `seconds` while the physics state each `Simulation.step` call starts from
    (controls included, and whatever the env's resets and pushes wrote) is recorded; then the
    raw simulation steps `decimation` substeps from each recorded state in turn, with no
    managers. Writing a recorded state is a copy of the state rows (~1 KB per world), charged
    to the raw side."""
    sim, n = env.sim, env.num_envs
    env_step()  # warm-up
    sync()
    recorded: list[dict[str, torch.Tensor]] = []
    step = sim.step
    recording = [0.0]  # seconds spent copying states: the benchmark's, not the env's

    def recording_step(nstep: int = 1) -> None:
        t = time.perf_counter()
        recorded.append(sim.get_state())
        recording[0] += time.perf_counter() - t
        step(nstep)

    sim.step = recording_step
    steps, start = 0, time.perf_counter()
    try:
        while time.perf_counter() - start < seconds:
            env_step()
            steps += 1
        sync()
        env_rate = steps * n / (time.perf_counter() - start - recording[0])
    finally:
        del sim.step  # the instance attribute: back to the class's method
    end_state = sim.get_state()
    diverged = sim.diverged.clone()
    write = sim._backend.set_state  # the plain copy, without Simulation's checks
    sync()
    start = time.perf_counter()
    for state in recorded:
        write(state)
        sim.step(decimation)
    sync()
    raw_rate = len(recorded) * n / (time.perf_counter() - start)
    # The env carries on from its own state; the replay's flags are not the env's.
    sim.set_state(end_state)
    sim.forward()
    sim.diverged.copy_(diverged)
    return env_rate, raw_rate


def profile(env, env_step, sync, seconds: float) -> dict[str, float]:
    """Wall time per env step of each phase of `ManagerBasedRlEnv.step`, ms."""
    phases = {
        "physics": (env.sim, "step"),
        "actions": (env.action_manager, "process_action"),
        "apply actions": (env.action_manager, "apply_action"),
        "sensors": (env.scene, "update"),
        "terminations": (env.termination_manager, "compute"),
        "rewards": (env.reward_manager, "compute"),
        "metrics": (env.metrics_manager, "compute"),
        "resets": (env, "_reset_idx"),
        "commands": (env.command_manager, "compute"),
        "events": (env.event_manager, "apply"),
        "observations": (env.observation_manager, "compute"),
    }
    spent = dict.fromkeys(phases, 0.0)
    depth = [0]  # a phase called inside another (reset events) counts for the outer one

    def timed(label, fn):
        def wrapper(*a, **k):
            if depth[0]:
                return fn(*a, **k)
            depth[0] += 1
            sync()
            t = time.perf_counter()
            try:
                out = fn(*a, **k)
                sync()
            finally:
                depth[0] -= 1
            spent[label] += time.perf_counter() - t
            return out

        return wrapper

    for label, (obj, name) in phases.items():
        setattr(obj, name, timed(label, getattr(obj, name)))
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds / 2:
        env_step()
        steps += 1
    sync()
    total = time.perf_counter() - start
    for obj, name in phases.values():
        delattr(obj, name)  # the instance attribute: back to the class's method
    out = {k: v / steps * 1e3 for k, v in spent.items()}
    out["other (step itself)"] = total / steps * 1e3 - sum(out.values())
    out["total"] = total / steps * 1e3
    return out


if __name__ == "__main__":
    main()

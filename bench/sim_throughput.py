"""Physics throughput of `mjlab.sim.Simulation.step` next to raw MuJoCo in the same run.

For cartpole (mjlab's own MJCF) and Go1 (mujoco-menagerie `unitree_go1/scene`, holding its `home`
keyframe with position actuators) at each N, prints physics steps/s (worlds x substeps per
second) of `Simulation.step(nstep)` and of the raw baseline on the same model, and their ratio.

Baselines: C MuJoCo -> `mujoco.batch.Batch(model, N, persistent=True).step(nstep=..., stage=VEL)`,
i.e. the same work without mjlab's divergence check and torch views; Warp -> `mujoco_warp.step`
calls in a CUDA graph (or plain launches on CPU).

    uv run python bench/sim_throughput.py                    # C MuJoCo, N = 64, 1024, 4096
    uv run python bench/sim_throughput.py --backend warp --device cuda:0
    uv run python bench/sim_throughput.py --no-cuda-graph --backend warp --device cuda:0
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import mujoco
import numpy as np
import torch

from mjlab.sim import MujocoCfg, Simulation, SimulationCfg

_MIRROR = Path(__file__).resolve().parents[2] / "shared" / "menagerie"
if "MENAGERIE_ROOT" not in os.environ and _MIRROR.is_dir():
    os.environ["MENAGERIE_ROOT"] = str(_MIRROR)

CARTPOLE = (
    Path(__file__).resolve().parents[1]
    / "packages/mjlab-core/src/mjlab/tasks/cartpole/cartpole.xml"
)


def load(name: str) -> tuple[mujoco.MjModel, np.ndarray]:
    """Returns the model (with its timestep) and a ctrl vector to hold."""
    if name == "cartpole":
        model = mujoco.MjModel.from_xml_path(str(CARTPOLE))
        return model, np.zeros(model.nu)
    import mujoco_menagerie

    model = mujoco_menagerie.get("unitree_go1").spec("scene").compile()
    return model, model.key_ctrl[0].copy()


def timed(fn, min_seconds: float) -> tuple[int, float]:
    fn()  # warm-up (and graph capture)
    calls, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < min_seconds:
        fn()
        calls += 1
    return calls, elapsed


def raw_mujoco(model, ctrl, n, nstep, nthread):
    from mujoco import batch as mjbatch

    b = mjbatch.Batch(model, n, nthread=nthread, persistent=True)
    b.reset(keyframe=0 if model.nkey else -1)
    b.bind("ctrl")[:] = ctrl
    return lambda: b.step(nstep=nstep, stage=mujoco.mjtStage.mjSTAGE_VEL.value)


def raw_warp(model, ctrl, n, nstep, device, use_graph):
    import mujoco_warp as mjw
    import warp as wp

    wp.init()
    wpdev = wp.device_from_torch(torch.device(device))
    data = mujoco.MjData(model)
    if model.nkey:
        mujoco.mj_resetDataKeyframe(model, data, 0)
    data.ctrl[:] = ctrl
    mujoco.mj_forward(model, data)
    with wp.ScopedDevice(wpdev):
        m = mjw.put_model(model)
        d = mjw.put_data(model, data, nworld=n)

    def run():
        for _ in range(nstep):
            mjw.step(m, d)

    if not (use_graph and wpdev.is_cuda):

        def plain():
            with wp.ScopedDevice(wpdev):
                run()

        return plain
    with wp.ScopedDevice(wpdev):
        run()
        with wp.ScopedCapture() as capture:
            run()
    return lambda: (wp.capture_launch(capture.graph), wp.synchronize_device(wpdev))


def ours(model, ctrl, n, nstep, backend, device, use_graph, nthread):
    cfg = SimulationCfg(
        backend=backend,
        nthread=nthread,
        use_cuda_graph=use_graph,
        mujoco=MujocoCfg(timestep=model.opt.timestep),
    )
    sim = Simulation(n, cfg, model, device=device)
    sim.reset(keyframe=0 if model.nkey else -1)
    sim.data.ctrl[:] = torch.as_tensor(ctrl, dtype=sim.data.ctrl.dtype)
    sync = torch.cuda.synchronize if sim.device.type == "cuda" else (lambda: None)
    return (lambda: (sim.step(nstep), sync())), sim.mj_model


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", choices=["mujoco", "warp"], default="mujoco")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[64, 1024, 4096])
    parser.add_argument("--models", nargs="+", default=["cartpole", "go1"])
    parser.add_argument("--nstep", type=int, default=4, help="substeps per call (decimation)")
    parser.add_argument("--seconds", type=float, default=2.0, help="minimum time per measurement")
    parser.add_argument("--nthread", type=int, default=0, help="C MuJoCo threads (0: all cores)")
    parser.add_argument("--no-cuda-graph", action="store_true")
    args = parser.parse_args()
    use_graph = not args.no_cuda_graph

    print(
        f"backend={args.backend} device={args.device} nstep={args.nstep} cores={os.cpu_count()}"
        f" cuda_graph={use_graph if args.backend == 'warp' else '-'}"
    )
    print(f"{'model':<9} {'N':>6} {'mjlab steps/s':>15} {'raw steps/s':>15} {'ratio':>7}")
    for name in args.models:
        model, ctrl = load(name)
        for n in args.num_envs:
            mine, configured = ours(
                model, ctrl, n, args.nstep, args.backend, args.device, use_graph, args.nthread
            )
            # The raw baseline steps the very model mjlab compiled and configured.
            if args.backend == "mujoco":
                raw = raw_mujoco(configured, ctrl, n, args.nstep, args.nthread)
            else:
                raw = raw_warp(configured, ctrl, n, args.nstep, args.device, use_graph)
            # Interleave the two so that machine load drifts hit both alike.
            raw_rate = mine_rate = 0.0
            for _ in range(2):
                c, t = timed(raw, args.seconds / 2)
                raw_rate += c * n * args.nstep / t / 2
                c, t = timed(mine, args.seconds / 2)
                mine_rate += c * n * args.nstep / t / 2
            print(
                f"{name:<9} {n:>6} {mine_rate:>15,.0f} {raw_rate:>15,.0f} {mine_rate / raw_rate:>7.3f}"
            )


if __name__ == "__main__":
    main()

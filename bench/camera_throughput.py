"""Camera sensor cost per env and frame, and the two backends' images side by side.

Scene: the Menagerie Franka Panda with its cube (mjx_single_cube, keyframe "home"), a camera
0.8 m above the table looking at the cube. For each backend: renders `--frames` frames of
`--num-envs` envs at `--size` x `--size` (RGB + depth) and prints ms per env per frame. With
`--parity` (and both backends), one env of each at the same state: depth and RGB differences,
and a side-by-side PNG (RGB and depth of C MuJoCo/OpenGL, then MuJoCo Warp).

    MENAGERIE_ROOT=... uv run python bench/camera_throughput.py [--backends mujoco warp]
        [--num-envs 16] [--size 64] [--frames 5] [--parity docs/results/camera_backends.png]

On a machine without a GPU MuJoCo Warp runs on Warp's CPU device; the first run compiles its
kernels (a minute).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from mjlab.entity import EntityCfg
from mjlab.scene import Scene, SceneCfg
from mjlab.sensor import CameraSensorCfg
from mjlab.sim.sim_cfg import SimulationCfg
from mjlab.sim.simulation import Simulation


def panda_scene(num_envs: int, backend: str, size: int, device: str) -> Scene:
    import mujoco_menagerie

    panda = EntityCfg(
        spec_fn=lambda: mujoco_menagerie.get("franka_emika_panda").spec("mjx_single_cube")
    )
    cam = CameraSensorCfg(
        name="top",
        pos=(1.0, 0.0, 0.8),
        lookat=(0.5, 0.0, 0.03),
        width=size,
        height=size,
        data_types=("rgb", "depth"),
    )
    scene = Scene(SceneCfg(num_envs=num_envs, entities={"panda": panda}, sensors=(cam,)))
    sim = Simulation(num_envs, SimulationCfg(backend=backend), scene.compile(), device=device)
    scene.initialize(sim)
    sim.reset(keyframe=0)
    return scene


def measure(backend: str, num_envs: int, size: int, frames: int, device: str) -> float:
    """ms per env per frame (RGB + depth), after one warm-up frame."""
    cam = panda_scene(num_envs, backend, size, device)["top"]
    _ = cam.depth  # warm-up: compiles / uploads
    start = time.perf_counter()
    for _ in range(frames):
        cam.update(0.02)
        _ = cam.depth
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / (frames * num_envs) * 1e3


def parity(path: str, size: int, device: str) -> None:
    cams = {
        b: panda_scene(1, b, size, device if b == "warp" else "cpu")["top"]
        for b in ("mujoco", "warp")
    }
    rgb = {b: c.rgb[0].cpu().numpy().astype(np.float32) for b, c in cams.items()}
    depth = {b: c.depth[0].cpu().numpy() for b, c in cams.items()}
    dd = np.abs(depth["mujoco"] - depth["warp"])
    dr = np.abs(rgb["mujoco"] - rgb["warp"])
    print(
        f"depth |diff|: mean {dd.mean():.2e} m, median {np.median(dd):.2e} m, max {dd.max():.3f} m, "
        f"pixels over 1 mm {(dd > 1e-3).mean():.1%}"
    )
    print(f"rgb |diff| (0-255): mean {dr.mean():.1f}, max {dr.max():.0f}")
    from PIL import Image

    far = max(float(depth["mujoco"].max()), 1e-6)
    tiles = []
    for b in ("mujoco", "warp"):
        d8 = (255 * (1 - depth[b] / far)).clip(0, 255).astype(np.uint8)
        tiles += [rgb[b].astype(np.uint8), np.repeat(d8[..., None], 3, axis=2)]
    image = Image.fromarray(np.concatenate(tiles, axis=1))
    image.resize((image.width * 4, image.height * 4), Image.NEAREST).save(path)
    print(f"wrote {path} (RGB, depth: C MuJoCo/OpenGL | MuJoCo Warp)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backends", nargs="+", default=["mujoco", "warp"])
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--frames", type=int, default=5)
    parser.add_argument("--device", default="cpu", help="MuJoCo Warp's device (cpu or cuda)")
    parser.add_argument("--parity", default=None, help="write the side-by-side PNG here")
    args = parser.parse_args()
    for backend in args.backends:
        device = args.device if backend == "warp" else "cpu"
        ms = measure(backend, args.num_envs, args.size, args.frames, device)
        print(
            f"{backend:6s} ({device}): {ms:.2f} ms per env per frame, {args.num_envs} envs, "
            f"{args.size}x{args.size} RGB + depth"
        )
    if args.parity:
        parity(args.parity, args.size, args.device)


if __name__ == "__main__":
    main()

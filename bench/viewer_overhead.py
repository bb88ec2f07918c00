"""What `play --viewer web` costs while nobody is connected: the play loop's env steps/s with
the web viewer open (no browser) next to the same loop without it, same env, same run.

    uv run python bench/viewer_overhead.py                      # Go1 flat, 64 envs, CPU
    uv run python bench/viewer_overhead.py --num-envs 1024 --seconds 10

Prints both rates and their ratio (1.00: free). The loop is play's own: `viewer.wait()`, the
viewer inputs, `env.step`, then `viewer.update` (which reads nothing while no one watches).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch

_MIRROR = Path(__file__).resolve().parents[2] / "shared" / "menagerie"
if "MENAGERIE_ROOT" not in os.environ and _MIRROR.is_dir():
    os.environ["MENAGERIE_ROOT"] = str(_MIRROR)

from mjlab.envs import ManagerBasedRlEnv  # noqa: E402
from mjlab.rl.scripts import play  # noqa: E402
from mjlab.rl.vecenv_wrapper import RslRlVecEnvWrapper  # noqa: E402
from mjlab.tasks import load_env_cfg  # noqa: E402


def _rate(env, wrapped, watch, seconds: float) -> float:
    """Env steps/s of play's loop for `seconds` (after 20 warm-up steps)."""
    n = env.num_envs
    obs = wrapped.get_observations()
    ep_return = torch.zeros(n)
    ep_length = torch.zeros(n, dtype=torch.long)
    actions = torch.zeros(n, wrapped.num_actions)
    steps, start = -20, 0.0
    with torch.inference_mode():
        while True:
            if steps == 0:
                start = time.perf_counter()
            if watch is not None:
                watch.viewer.wait()
                obs = play._apply_viewer_inputs(watch, env, wrapped, obs, ep_return, ep_length)
            obs, rew, _, _ = wrapped.step(actions)
            ep_return += rew
            ep_length += 1
            if watch is not None:
                play._update_viewer(watch.viewer, env, ep_length, ep_return)
            steps += 1
            if steps > 0 and time.perf_counter() - start >= seconds:
                return steps * n / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--task", default="Mjlab-Velocity-Flat-Unitree-Go1")
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()

    cfg = load_env_cfg(args.task, play=True)
    cfg.scene.num_envs = args.num_envs
    env = ManagerBasedRlEnv(cfg)
    wrapped = RslRlVecEnvWrapper(env)
    viewer_args = argparse.Namespace(viewer="web", viewer_host="127.0.0.1", viewer_port=0)
    watch = play._open_viewer(viewer_args, env, args.task)
    try:
        # Alternate so that a change in machine load hits both alike.
        without, with_viewer = [], []
        for _ in range(2):
            without.append(_rate(env, wrapped, None, args.seconds / 2))
            with_viewer.append(_rate(env, wrapped, watch, args.seconds / 2))
    finally:
        watch.viewer.close()
        env.close()
    a, b = sum(without) / 2, sum(with_viewer) / 2
    print(f"{args.task}, {args.num_envs} envs, CPU, nobody connected:")
    print(f"  play loop without a viewer: {a:,.0f} env steps/s")
    print(f"  play loop with --viewer web: {b:,.0f} env steps/s")
    print(f"  ratio: {b / a:.3f}")


if __name__ == "__main__":
    main()

"""What one PPO update costs on this machine: rsl-rl's real `PPO.update` on a real rollout.

Collects one rollout of the task with its own training config (MjlabOnPolicyRunner, the env
and policy of `train`), then times `runner.alg.update()` on that same storage for several
(epochs, minibatches) and torch thread counts, and the rollout itself, all in one run:

    uv run python bench/ppo_update.py                     # Go1 flat, 1024 envs, CPU

Prints seconds per update and env steps/s of a whole iteration (rollout + update) for each,
and the ratio of that to the rollout alone. The update is timed on a copy of the networks and
optimizer each time, so every variant starts from the same weights.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import os
import time
from pathlib import Path

import torch

_MIRROR = Path(__file__).resolve().parents[2] / "shared" / "menagerie"
if "MENAGERIE_ROOT" not in os.environ and _MIRROR.is_dir():
    os.environ["MENAGERIE_ROOT"] = str(_MIRROR)

from mjlab.envs import ManagerBasedRlEnv  # noqa: E402
from mjlab.rl import MjlabOnPolicyRunner, RslRlVecEnvWrapper, to_rsl_rl_train_cfg  # noqa: E402
from mjlab.tasks import load_env_cfg, load_rl_cfg  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--task", default="Mjlab-Velocity-Flat-Unitree-Go1")
    parser.add_argument("--num-envs", type=int, default=1024)
    args = parser.parse_args()

    cfg = load_env_cfg(args.task)
    cfg.scene.num_envs = args.num_envs
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
    agent = load_rl_cfg(args.task)
    with contextlib.redirect_stdout(io.StringIO()):  # rsl-rl prints the networks
        runner = MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(agent), None)
    steps = agent.num_steps_per_env * args.num_envs

    # One rollout as `learn` collects it (inference mode, rsl-rl's storage), timed.
    alg = runner.alg
    obs = env.get_observations()
    start = time.perf_counter()
    with torch.inference_mode():
        for _ in range(agent.num_steps_per_env):
            actions = alg.act(obs)
            obs, rewards, dones, extras = env.step(actions)
            alg.process_env_step(obs, rewards, dones, extras)
        alg.compute_returns(obs)
    rollout_s = time.perf_counter() - start
    print(
        f"task={args.task} num_envs={args.num_envs} steps/iteration={steps} cores={os.cpu_count()}"
    )
    print(f"rollout: {rollout_s:.2f} s ({steps / rollout_s:,.0f} env steps/s incl. the policy)")
    print(
        f"{'epochs x minibatches':>21} {'threads':>7} {'update s':>9} "
        f"{'iteration env steps/s':>22} {'of rollout':>10}"
    )
    state = copy.deepcopy((alg.actor.state_dict(), alg.critic.state_dict()))
    optimizer = copy.deepcopy(alg.optimizer.state_dict())
    storage_step = alg.storage.step
    variants = [(5, 4), (3, 4), (5, 2), (2, 4)]
    default_threads = torch.get_num_threads()
    for threads in sorted({default_threads, 1}, reverse=True):
        torch.set_num_threads(threads)
        for epochs, minibatches in variants:
            alg.actor.load_state_dict(state[0])
            alg.critic.load_state_dict(state[1])
            alg.optimizer.load_state_dict(optimizer)
            alg.num_learning_epochs, alg.num_mini_batches = epochs, minibatches
            alg.storage.step = storage_step
            start = time.perf_counter()
            alg.update()
            update_s = time.perf_counter() - start
            rate = steps / (rollout_s + update_s)
            print(
                f"{f'{epochs} x {minibatches}':>21} {threads:>7} {update_s:>9.2f} "
                f"{rate:>22,.0f} {rollout_s / (rollout_s + update_s):>10.2f}"
            )
    torch.set_num_threads(default_threads)


if __name__ == "__main__":
    main()

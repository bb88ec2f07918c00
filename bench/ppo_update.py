"""What one PPO update costs on this machine: rsl-rl's real `PPO.update` on a real rollout.

Collects one rollout of the task with its own training config (MjlabOnPolicyRunner, the env
and policy of `train`), then times `runner.alg.update()` on that same storage for several
(epochs, minibatches) and torch thread counts, and the rollout itself, all in one run
(`--repeats` times each, alternating env-only legs and rollouts; medians):

    uv run python bench/ppo_update.py                     # Go1 flat, 1024 envs, CPU
    uv run python bench/ppo_update.py --activation relu   # the same, other networks
    uv run python bench/ppo_update.py --hidden-dims 128 128 128

Prints seconds per update and env steps/s of a whole iteration (rollout + update) for each,
and its ratio to the rollout alone and to the env alone (the same number of env steps with
random actions and no policy; issue #15's goal: >= 0.75 at 1024 envs). The update is timed on
a copy of the networks and optimizer each time, so every variant starts from the same weights.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import io
import os
import statistics
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
    parser.add_argument(
        "--hidden-dims",
        type=int,
        nargs="+",
        default=None,
        help="actor and critic hidden layers instead of the task's (e.g. 128 128 128)",
    )
    parser.add_argument(
        "--activation", default=None, help="hidden-layer activation instead of the task's"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="env-only legs, rollouts and updates timed this many times each (median)",
    )
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1, got {args.repeats}")

    agent = load_rl_cfg(args.task)
    # Through dataclasses.replace, so the model config validates the override.
    overrides = {"hidden_dims": tuple(args.hidden_dims)} if args.hidden_dims else {}
    if args.activation:
        overrides["activation"] = args.activation
    agent.actor = dataclasses.replace(agent.actor, **overrides)
    agent.critic = dataclasses.replace(agent.critic, **overrides)
    cfg = load_env_cfg(args.task)
    cfg.scene.num_envs = args.num_envs
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
    with contextlib.redirect_stdout(io.StringIO()):  # rsl-rl prints the networks
        runner = MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(agent), None)
    steps = agent.num_steps_per_env * args.num_envs

    # One rollout as `learn` collects it (inference mode, rsl-rl's storage), timed after an
    # untimed one (the first calls of a fresh process are slower).
    alg = runner.alg
    obs = env.get_observations()

    def rollout(obs):
        alg.storage.clear()
        with torch.inference_mode():
            for _ in range(agent.num_steps_per_env):
                actions = alg.act(obs)
                obs, rewards, dones, extras = env.step(actions)
                alg.process_env_step(obs, rewards, dones, extras)
            alg.compute_returns(obs)
        return obs

    # The env alone for as many steps, random actions, no policy: what the training
    # ratio is taken against ("training env steps/s >= 0.75 of env-only"). Env-only legs and
    # rollouts alternate, and each side's median is used: one slow leg on a shared VM does
    # not decide the ratio. The last rollout's storage is what the updates train on.
    raw_env = env.unwrapped
    dim = raw_env.action_manager.total_action_dim
    actions = [torch.randn(args.num_envs, dim) * 0.5 for _ in range(agent.num_steps_per_env)]

    def env_only() -> float:
        with torch.inference_mode():
            start = time.perf_counter()
            for a in actions:
                raw_env.step(a)
            return time.perf_counter() - start

    obs = rollout(obs)
    env_only()
    env_legs, rollouts = [], []
    for _ in range(args.repeats):
        env_legs.append(env_only())
        obs = env.get_observations()
        start = time.perf_counter()
        obs = rollout(obs)
        rollouts.append(time.perf_counter() - start)
    env_only_s, rollout_s = statistics.median(env_legs), statistics.median(rollouts)
    print(
        f"task={args.task} num_envs={args.num_envs} steps/iteration={steps} cores={os.cpu_count()}"
        f" actor={agent.actor.hidden_dims} {agent.actor.activation}"
        f" critic={agent.critic.hidden_dims} {agent.critic.activation}"
    )
    print(
        f"env only: {env_only_s:.2f} s ({steps / env_only_s:,.0f} env steps/s), median of "
        f"{_spread(env_legs)}"
    )
    print(
        f"rollout: {rollout_s:.2f} s ({steps / rollout_s:,.0f} env steps/s incl. the policy), "
        f"median of {_spread(rollouts)}"
    )
    print(
        f"{'epochs x minibatches':>21} {'threads':>7} {'update s':>9} "
        f"{'iteration env steps/s':>22} {'of rollout':>10} {'of env only':>11}"
    )
    state = copy.deepcopy((alg.actor.state_dict(), alg.critic.state_dict()))
    optimizer = copy.deepcopy(alg.optimizer.state_dict())
    storage_step = alg.storage.step
    variants = [(5, 4), (3, 4), (5, 2), (2, 4)]
    default_threads = torch.get_num_threads()
    for threads in sorted({default_threads, 1}, reverse=True):
        torch.set_num_threads(threads)
        for epochs, minibatches in variants:
            alg.num_learning_epochs, alg.num_mini_batches = epochs, minibatches
            times = []
            for _ in range(args.repeats):
                alg.actor.load_state_dict(state[0])
                alg.critic.load_state_dict(state[1])
                alg.optimizer.load_state_dict(optimizer)
                alg.storage.step = storage_step
                start = time.perf_counter()
                alg.update()
                times.append(time.perf_counter() - start)
            update_s = statistics.median(times)
            rate = steps / (rollout_s + update_s)
            print(
                f"{f'{epochs} x {minibatches}':>21} {threads:>7} {update_s:>9.2f} "
                f"{rate:>22,.0f} {rollout_s / (rollout_s + update_s):>10.2f} "
                f"{env_only_s / (rollout_s + update_s):>11.2f}"
            )
    torch.set_num_threads(default_threads)


def _spread(values: list[float]) -> str:
    """'3 (1.71-2.81 s)': how many timings and their range."""
    return f"{len(values)} ({min(values):.2f}-{max(values):.2f} s)"


if __name__ == "__main__":
    main()

"""rlightning's local engine and MjlabOnPolicyRunner learn Cartpole Balance alike.

The runner's side is the `train` command's run of the session (`cartpole_train_run`, also used
by the end-to-end test): the same MjlabOnPolicyRunner, env config and 150 iterations (the task's
default)."""

import time

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.rl import MjlabOnPolicyRunner, RslRlVecEnvWrapper, to_rsl_rl_train_cfg
from mjlab.tasks import load_env_cfg, load_rl_cfg

ITERATIONS = 150


def _env():
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.seed = 0
    return RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))


def _evaluate(policy) -> float:
    """Mean episode length (steps) of the deterministic policy over one full episode, 16 envs."""
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 16
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
    obs = env.get_observations()
    alive = torch.ones(16, dtype=torch.bool)
    length = torch.zeros(16)
    with torch.inference_mode():
        for _ in range(env.max_episode_length):
            obs, _, dones, extras = env.step(policy(obs))
            length += alive.float()
            alive &= ~(dones.bool() & ~extras["time_outs"])
    return float(length.mean())


@pytest.mark.slow
def test_local_engine_matches_the_mjlab_runner_on_cartpole_balance(cartpole_train_run):
    from rlightning.engine import LocalEngine
    from rlightning.policy import TrainConfig

    agent = load_rl_cfg("Mjlab-Cartpole-Balance")
    # The runner trained by `train` for ITERATIONS iterations: its last checkpoint.
    runner = MjlabOnPolicyRunner(_env(), to_rsl_rl_train_cfg(agent), None)
    runner.load(str(cartpole_train_run / f"model_{ITERATIONS - 1}.pt"))
    runner_len = _evaluate(runner.get_inference_policy())

    start = time.perf_counter()
    engine = LocalEngine(
        _env,
        to_rsl_rl_train_cfg(agent),
        TrainConfig(max_iterations=ITERATIONS, seed=0, log_interval=1000),
    )
    engine.run(ITERATIONS)
    engine_seconds = time.perf_counter() - start
    actor = engine.learner.actor
    engine_len = _evaluate(lambda obs: actor(obs))
    engine.close()
    print(
        f"episode length after {ITERATIONS} iterations: runner {runner_len:.0f}, "
        f"rlightning local {engine_len:.0f} ({engine_seconds:.0f} s)"
    )
    # Same algorithm, same budget: both balance for (nearly) the whole 500-step episode.
    assert runner_len >= 450 and engine_len >= 450
    assert abs(runner_len - engine_len) <= 50

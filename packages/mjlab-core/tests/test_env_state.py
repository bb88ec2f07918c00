"""`ManagerBasedRlEnv.get_state` / `set_state`: an env given another env's state continues
exactly as that env would have (the basis of exact resume in `mjlab.rl`)."""

from __future__ import annotations

import io

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.tasks import load_env_cfg
from mjlab.utils.snapshot import StateMismatchError


def _cfg(task: str, num_envs: int, backend: str = "mujoco"):
    cfg = load_env_cfg(task)
    cfg.scene.num_envs = num_envs
    cfg.sim.backend = backend
    cfg.sim.deterministic = backend == "warp"  # MuJoCo Warp's deterministic mode runs too
    cfg.seed = 5
    return cfg


def _actions(env: ManagerBasedRlEnv, count: int) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    shape = (env.num_envs, env.action_manager.total_action_dim)
    return [torch.randn(shape, generator=gen) for _ in range(count)]


def _rollout(env: ManagerBasedRlEnv, actions: list[torch.Tensor]) -> list[torch.Tensor]:
    """Per step: every observation group, the reward and the done flags, as one vector."""
    out = []
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(action)
        parts = [obs[g].flatten() for g in sorted(obs)]
        parts += [reward, terminated.float(), truncated.float(), env.sim.data.qpos.flatten()]
        out.append(torch.cat([p.double().cpu() for p in parts]))
    return out


@pytest.mark.parametrize(
    ("task", "backend", "num_envs", "before", "after"),
    [
        ("Mjlab-Velocity-Rough-Unitree-Go1", "mujoco", 6, 70, 60),
        ("Mjlab-Velocity-Flat-Unitree-G1", "mujoco", 4, 60, 50),
        ("Mjlab-Cartpole-Swingup", "warp", 2, 20, 15),
    ],
)
def test_an_env_given_another_envs_state_continues_exactly_as_that_env(
    task, backend, num_envs, before, after
):
    # Long enough for resets inside step, command resampling, pushes and delay buffers to matter.
    original = ManagerBasedRlEnv(_cfg(task, num_envs, backend))
    if backend == "warp":
        assert original.sim._backend.m.opt.deterministic == 7  # DeterminismType.ALL
    original.reset()
    actions = _actions(original, before + after)
    _rollout(original, actions[:before])
    state = original.get_state()
    assert not any(".cfg" in path or path.startswith("cfg") for path in state["env"])
    buffer = io.BytesIO()  # what a checkpoint does with it: plain types only
    torch.save(state, buffer)
    buffer.seek(0)
    state = torch.load(buffer, weights_only=True)
    expected = _rollout(original, actions[before:])

    copy = ManagerBasedRlEnv(_cfg(task, num_envs, backend))
    copy.reset()
    _rollout(copy, actions[:3])  # somewhere else entirely
    # The check can fail: without the state, the same actions give another trajectory.
    assert not torch.equal(_rollout(copy, actions[before:])[-1], expected[-1])
    copy.set_state(state)
    got = _rollout(copy, actions[before:])
    for step, (want, have) in enumerate(zip(expected, got, strict=True)):
        assert torch.equal(want, have), f"step {step} after the restore differs"


def test_a_state_that_does_not_fit_the_env_is_refused_by_name():
    cfg = _cfg("Mjlab-Cartpole-Balance", 4)
    env = ManagerBasedRlEnv(cfg)
    env.reset()
    state = env.get_state()
    cfg.scene.num_envs = 3
    smaller = ManagerBasedRlEnv(cfg)
    with pytest.raises(ValueError, match=r"shape \(4, \d+\).*\(3, \d+\).*num_envs"):
        smaller.set_state(state)
    other = ManagerBasedRlEnv(_cfg("Mjlab-Velocity-Flat-Unitree-Go1", 4))
    with pytest.raises(StateMismatchError, match="has no"):
        other.set_state({"sim": other.sim.get_state(), "env": state["env"]})

"""`ManagerBasedRlEnv.get_state` / `set_state`: an env given another env's state continues
exactly as that env would have (the basis of exact resume in `mjlab.rl`)."""

from __future__ import annotations

import io

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.managers import RewardTermCfg
from mjlab.tasks import load_env_cfg
from mjlab.utils.snapshot import StateMismatchError


class _StepCounter:
    """A class-based reward term with state of its own (held in its config's `func`)."""

    def __init__(self, cfg, env):
        self.count = torch.zeros(env.num_envs, device=env.device)

    def __call__(self, env):
        self.count += 1
        return self.count * 1e-3

    def reset(self, env_ids):
        self.count[env_ids] = 0


def _cfg(task: str, num_envs: int, backend: str = "mujoco"):
    cfg = load_env_cfg(task)
    cfg.scene.num_envs = num_envs
    cfg.rewards["step_counter"] = RewardTermCfg(func=_StepCounter, weight=1.0)
    if "twist" in cfg.commands:  # timers that fire within the test's steps
        cfg.commands["twist"].resampling_time_range = (0.3, 0.8)
        cfg.events["push"].interval_range_s = (0.4, 0.9)
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
    # Long enough for resets inside step, command resampling and pushes (short timers here).
    original = ManagerBasedRlEnv(_cfg(task, num_envs, backend))
    if backend == "warp":
        assert original.sim._backend.m.opt.deterministic == 7  # DeterminismType.ALL
    original.reset()
    actions = _actions(original, before + after)
    _rollout(original, actions[:before])
    state = original.get_state()
    # Config values are not state (only objects found in a config's `func` are walked).
    assert all(".func." in p for p in state["env"] if p.startswith("cfg") or ".cfg" in p)
    assert any(path.endswith("func.count") for path in state["env"])  # the class term's state
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
    qpos = other.sim.data.qpos.clone()
    moved = {"state": other.sim.get_state()["state"] + 1.0}  # fits the physics, not the managers
    with pytest.raises(StateMismatchError, match="has no"):
        other.set_state({"sim": moved, "env": state["env"]})
    assert torch.equal(other.sim.data.qpos, qpos)  # all or nothing: the physics was not written

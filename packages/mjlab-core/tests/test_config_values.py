"""Configs are values: building an env never changes the config it was given, one config builds
independent envs, and a group's setting stays in its group."""

import copy
import inspect

import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.tasks import load_env_cfg

TASK = "Mjlab-Cartpole-Balance"


def _small_cfg(task=TASK):
    cfg = load_env_cfg(task)
    cfg.scene.num_envs = 4
    return cfg


def _term_cfgs(env):
    for manager in (env.reward_manager, env.termination_manager, env.event_manager):
        yield from manager.cfg.values()
    for group in env.observation_manager.cfg.values():
        yield from (t for t in group.terms.values() if t is not None)


def test_building_and_running_an_env_leaves_its_config_unchanged():
    for task in (TASK, "Mjlab-Velocity-Flat-Unitree-Go1"):
        cfg = _small_cfg(task)
        before = copy.deepcopy(cfg)
        env = ManagerBasedRlEnv(cfg)
        env.reset(seed=0)
        env.step(torch.zeros(env.action_space.shape))
        assert cfg == before, f"{task}: building the env changed its config"
        assert env.cfg is not cfg


def test_one_config_builds_two_independent_envs():
    cfg = _small_cfg()
    first, second = ManagerBasedRlEnv(cfg), ManagerBasedRlEnv(cfg)
    # No resolved term (a class-based term instance) is shared or bound to the other env.
    ids_first = {id(t) for t in _term_cfgs(first)}
    assert not ids_first & {id(t) for t in _term_cfgs(second)}
    for env in (first, second):
        for term in _term_cfgs(env):
            if not inspect.isfunction(term.func) and hasattr(term.func, "env"):
                assert term.func.env is env
    first.reset(seed=0)
    obs_second, _ = second.reset(seed=1)
    snapshot = {k: v.clone() for k, v in obs_second.items()}
    for _ in range(5):
        first.step(torch.ones(first.action_space.shape))
    for group, value in second.observation_manager.compute(update_history=False).items():
        assert torch.equal(value, snapshot[group]), f"stepping one env changed the other's {group}"


def test_a_group_history_setting_never_reaches_another_group():
    cfg = _small_cfg()
    actor, critic = cfg.observations["actor"], cfg.observations["critic"]
    shared = {id(t) for t in actor.terms.values()} & {id(t) for t in critic.terms.values()}
    critic_dim = ManagerBasedRlEnv(cfg).observation_manager.group_dims["critic"]
    actor.history_length = 3
    env = ManagerBasedRlEnv(cfg)
    dims = env.observation_manager.group_dims
    assert dims["critic"] == critic_dim, f"the actor's history reached the critic ({shared=})"
    single = sum(d[0] for d in env.observation_manager.term_dims["critic"].values())
    assert dims["actor"] == (3 * single,)
    assert all(t.history_length == 0 for t in critic.terms.values() if t is not None)


def test_loaded_configs_share_nothing_mutable():
    from mjlab.tasks.robots.go1 import GO1

    a, b = (load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1") for _ in range(2))
    a.scene.entities["robot"].collisions[0].friction = (0.1,)
    a.scene.sensors[0].primary.patterns = ("nothing",)
    assert b.scene.entities["robot"].collisions[0].friction == (0.8,)
    assert GO1.collisions[0].friction == (0.8,)
    assert b.scene.sensors[0].primary.patterns != ("nothing",)


def test_a_term_function_object_is_shared_not_copied():
    """copy_config copies the config structure only: a callable term object stays the caller's."""
    from mjlab.managers import RewardTermCfg

    class Counting:
        calls = 0

        def __call__(self, env):
            Counting.calls += 1
            self.last_env = env
            return torch.zeros(env.num_envs)

    term = Counting()
    cfg = _small_cfg()
    cfg.rewards["counting"] = RewardTermCfg(func=term, weight=1.0)
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    env.step(torch.zeros(env.action_space.shape))
    assert term.last_env is env and Counting.calls >= 2

"""mjlab 1.6's manager names: EventTermCfg.min_step_count_between_reset spaces out a reset
event per env; ManagerTermBase class terms keep env state; the Null managers have a manager's
interface and no terms; VecEnvObs / VecEnvStepReturn name what the env returns."""

import typing

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv, VecEnvStepReturn
from mjlab.managers import (
    EventMode,
    EventTermCfg,
    ManagerTermBase,
    NullCommandManager,
    NullCurriculumManager,
    NullMetricsManager,
    RewardTermCfg,
)
from mjlab.tasks import load_env_cfg


def _cfg():
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 3
    return cfg


def test_a_reset_event_waits_its_minimum_steps_per_env():
    counts = torch.zeros(3, dtype=torch.long)

    def count(env, env_ids):
        counts[env_ids.cpu()] += 1

    cfg = _cfg()
    cfg.events["count"] = EventTermCfg(func=count, mode="reset", min_step_count_between_reset=5)
    env = ManagerBasedRlEnv(cfg)
    try:
        env.reset()  # the first reset of every env applies
        assert counts.tolist() == [1, 1, 1]
        actions = torch.zeros(3, env.action_manager.total_action_dim)
        for _ in range(2):
            env.step(actions)
        env.reset(env_ids=torch.tensor([0, 1]))  # 2 steps after: too soon
        assert counts.tolist() == [1, 1, 1]
        for _ in range(4):
            env.step(actions)
        env.reset(env_ids=torch.tensor([0]))  # 6 steps after: applies to env 0 only
        assert counts.tolist() == [2, 1, 1]
        env.reset(env_ids=torch.tensor([0, 2]))  # env 0 just had it; env 2 is due
        assert counts.tolist() == [2, 1, 2]
    finally:
        env.close()
    with pytest.raises(ValueError, match="min_step_count_between_reset must be an integer >= 0"):
        EventTermCfg(func=count, mode="reset", min_step_count_between_reset=-1)


class _DistanceSinceReset(ManagerTermBase):
    """A reward of the cart's travel since the env's reset: state kept in the term."""

    def __init__(self, cfg, env):
        super().__init__(cfg, env)
        self.start = torch.zeros(self.num_envs, device=self.device)

    def reset(self, env_ids=None):
        self.start[env_ids] = self.env.scene["cartpole"].data.joint_pos[env_ids, 0].float()

    def __call__(self, env):
        return (env.scene["cartpole"].data.joint_pos[:, 0].float() - self.start).abs()


def test_a_manager_term_base_term_keeps_its_state_in_the_env_state():
    cfg = _cfg()
    cfg.rewards["travel"] = RewardTermCfg(func=_DistanceSinceReset, weight=1.0)
    env = ManagerBasedRlEnv(cfg)
    try:
        env.reset()
        term = env.reward_manager.terms["travel"].func
        assert isinstance(term, _DistanceSinceReset) and term.num_envs == 3
        actions = torch.ones(3, env.action_manager.total_action_dim)
        for _ in range(5):
            env.step(actions)
        column = env.reward_manager.active_terms.index("travel")
        assert (env.reward_manager.step_reward[:, column] > 0).all()
        state = env.get_state()
        assert any(k.endswith(".start") for k in state["env"]), "the term's tensor is env state"
    finally:
        env.close()


def test_null_managers_have_a_managers_interface_and_no_terms():
    commands, curriculum, metrics = (
        NullCommandManager(),
        NullCurriculumManager(),
        NullMetricsManager(),
    )
    for manager in (commands, curriculum, metrics):
        assert manager.active_terms == [] and manager.reset(torch.arange(3)) == {}
    commands.compute(0.02)
    curriculum.compute(torch.arange(3))
    metrics.compute()
    with pytest.raises(KeyError, match="no commands"):
        commands.get_command("twist")


def test_event_mode_and_the_step_return_type_name_what_the_env_uses():
    assert set(typing.get_args(EventMode)) == {"startup", "reset", "interval", "step"}
    env = ManagerBasedRlEnv(_cfg())
    try:
        env.reset()
        out = env.step(torch.zeros(3, env.action_manager.total_action_dim))
        assert typing.get_origin(VecEnvStepReturn) is tuple
        assert len(out) == len(typing.get_args(VecEnvStepReturn)) == 5
    finally:
        env.close()


def test_rewards_unscaled_by_dt_are_the_scaled_ones_over_step_dt():
    rewards = []
    for scale in (True, False):
        cfg = _cfg()
        cfg.seed = 5
        cfg.scale_rewards_by_dt = scale
        env = ManagerBasedRlEnv(cfg)
        try:
            env.reset()
            rewards.append(env.step(torch.ones(3, env.action_manager.total_action_dim))[1])
            dt = env.step_dt
        finally:
            env.close()
    torch.testing.assert_close(rewards[1], rewards[0] / dt, rtol=1e-5, atol=1e-6)
    assert not torch.allclose(rewards[0], rewards[1])


def test_a_velocity_action_with_use_default_offset_starts_from_the_default_velocities():
    from mjlab.actuator import VelocityActuatorCfg
    from mjlab.envs.mdp import JointVelocityActionCfg

    cfg = _cfg()
    entity = cfg.scene.entities["cartpole"]
    entity.articulation.actuators = (
        VelocityActuatorCfg(joint_names_expr=("slider",), damping=5.0, effort_limit=20.0),
    )
    entity.init_state.joint_vel = {"slider": 0.3, "hinge": 0.0}
    cfg.actions = {
        "vel": JointVelocityActionCfg(
            asset_name="cartpole", actuator_names=("slider",), offset=1.0, use_default_offset=True
        )
    }
    env = ManagerBasedRlEnv(cfg)
    try:
        term = env.action_manager.get_term("vel")
        assert torch.allclose(term.offset, torch.full((3, 1), 0.3))  # not the given 1.0
    finally:
        env.close()


def test_the_registry_takes_mjlabs_task_name_and_our_task_id():
    from mjlab.tasks import load_env_cfg, load_runner_cls

    by_name = load_env_cfg(task_name="Mjlab-Cartpole-Balance", play=True)
    by_id = load_env_cfg(task_id="Mjlab-Cartpole-Balance", play=True)
    assert (by_name.scene.num_envs, by_name.rewards.keys()) == (
        by_id.scene.num_envs,
        by_id.rewards.keys(),
    )
    # (load_rl_cfg takes the same arguments; it needs mjlab-rl, which mjlab-core alone lacks.)
    assert load_runner_cls(task_name="Mjlab-Cartpole-Balance") is None
    with pytest.raises(TypeError, match="give exactly one"):
        load_env_cfg("Mjlab-Cartpole-Balance", task_id="Mjlab-Cartpole-Balance")


def test_action_acc_l2_is_the_squared_second_difference_of_the_actions():
    from mjlab.envs import mdp

    cfg = _cfg()
    cfg.rewards["action_acc"] = RewardTermCfg(func=mdp.action_acc_l2, weight=-1.0)
    env = ManagerBasedRlEnv(cfg)
    try:
        env.reset()
        actions = [torch.full((3, 1), v) for v in (0.2, -0.1, 0.4)]
        for a in actions:
            env.step(a)
        expected = ((0.4 - 2 * -0.1 + 0.2) ** 2) * torch.ones(3)
        torch.testing.assert_close(mdp.action_acc_l2(env), expected)
        column = env.reward_manager.active_terms.index("action_acc")
        torch.testing.assert_close(env.reward_manager.step_reward[:, column], -expected)
        env.reset(env_ids=torch.tensor([1]))  # a reset env's history starts from 0
        assert env.action_manager.prev_prev_action[1].abs().sum() == 0
    finally:
        env.close()
    # An env without the term keeps no second history.
    env = ManagerBasedRlEnv(_cfg())
    try:
        env.reset()
        env.step(torch.zeros(3, 1))
        assert env.action_manager._prev_prev_action is None
    finally:
        env.close()

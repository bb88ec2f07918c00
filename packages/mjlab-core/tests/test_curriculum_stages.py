"""mdp.reward_curriculum / mdp.termination_curriculum: a stage changes its term from the env
step it names on, in order, and a wrong stage is refused when the env is built."""

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv, mdp
from mjlab.managers import CurriculumTermCfg
from mjlab.tasks import load_env_cfg


def _cfg(**curriculum):
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 4
    cfg.curriculum = {**cfg.curriculum, **curriculum}
    return cfg


def _reward_stages(stages, name="cart_vel"):
    return CurriculumTermCfg(
        func=mdp.reward_curriculum, params={"reward_name": name, "stages": stages}
    )


def test_reward_stages_change_weight_and_params_from_their_step_on():
    stages = [
        {"step": 5, "weight": -1.0},
        {"step": 10, "params": {"asset_cfg": None}},  # replaced below: a real param edit
    ]
    stages[1]["params"] = {"asset_cfg": _cfg().rewards["pole_vel"].params["asset_cfg"]}
    env = ManagerBasedRlEnv(_cfg(cart_vel_stages=_reward_stages(stages)))
    term = env.reward_manager.terms["cart_vel"]
    column = env.reward_manager.active_terms.index("cart_vel")
    try:
        env.reset()
        assert term.weight == -0.01
        actions = torch.ones(4, env.action_manager.total_action_dim)
        for _ in range(6):
            env.step(actions)
        assert env.common_step_counter == 6 and term.weight == -0.01  # no reset since step 5
        env.reset()  # curriculum terms run on resets
        assert term.weight == -1.0
        assert term.params["asset_cfg"].joint_names == ("slider",)
        env.step(actions)
        # The step's reward uses the new weight: -1.0 * cart_vel^2 (per second).
        vel = env.scene["cartpole"].data.joint_vel[:, 0]
        torch.testing.assert_close(env.reward_manager.step_reward[:, column], -(vel**2))
        for _ in range(4):
            env.step(actions)
        env.reset()
        assert env.common_step_counter >= 10 and term.weight == -1.0  # kept from stage 0
        assert term.params["asset_cfg"].joint_names == ("hinge",)
        env.step(actions)
        # The stage's selection was resolved when the env was built: the hinge alone.
        hinge = env.scene["cartpole"].data.joint_vel[:, 1]
        torch.testing.assert_close(env.reward_manager.step_reward[:, column], -(hinge**2))
        log = env.curriculum_manager.reset(torch.arange(4))
        assert log["Curriculum/cart_vel_stages/stage"] == 1.0
        # The config the env was built from is unchanged (configs are values).
        assert env.cfg.rewards["cart_vel"].weight == -0.01
    finally:
        env.close()


def test_termination_stage_turns_a_term_into_a_time_out():
    stages = [{"step": 3, "params": {"limit": -1.0}, "time_out": True}]
    cfg = _cfg(
        fell=CurriculumTermCfg(
            func=mdp.termination_curriculum,
            params={"termination_name": "pole_fell", "stages": stages},
        )
    )
    env = ManagerBasedRlEnv(cfg)
    try:
        env.reset()
        actions = torch.ones(4, env.action_manager.total_action_dim)
        for _ in range(3):
            env.step(actions)
        env.reset()
        term = env.termination_manager.terms["pole_fell"]
        assert term.params["limit"] == -1.0 and term.time_out is True
        _, _, terminated, truncated, _ = env.step(actions)
        # |angle| > -1 holds for every pole: the term fires, as a time-out (truncation).
        assert truncated.all() and not terminated.any()
    finally:
        env.close()


@pytest.mark.parametrize(
    "stages, message",
    [
        ([{"step": 10, "weight": -1.0}, {"step": 5, "weight": -2.0}], r"must not decrease"),
        ([{"weight": -1.0}], r"stage 0: needs 'step'"),
        ([{"step": 1, "wieght": -1.0}], r"unknown key\(s\) \['wieght'\]"),
        ([{"step": 1, "params": {"sdt": 1.0}}], r"the term has no param 'sdt'"),
        ([], r"at least one stage"),
    ],
)
def test_a_wrong_stage_is_refused_when_the_env_is_built(stages, message):
    with pytest.raises(ValueError, match=message):
        ManagerBasedRlEnv(_cfg(bad=_reward_stages(stages)))


def test_an_unknown_reward_term_is_refused_naming_the_terms():
    with pytest.raises(ValueError, match=r"no term 'cart_velocity' among \["):
        ManagerBasedRlEnv(_cfg(bad=_reward_stages([{"step": 1}], name="cart_velocity")))


def test_an_env_state_taken_in_a_stage_restores_into_a_fresh_env_with_that_stage():
    stages = [{"step": 2, "weight": -1.0}]
    env = ManagerBasedRlEnv(_cfg(cart_vel_stages=_reward_stages(stages)))
    fresh = ManagerBasedRlEnv(_cfg(cart_vel_stages=_reward_stages(stages)))
    try:
        env.reset()
        actions = torch.ones(4, env.action_manager.total_action_dim)
        for _ in range(3):
            env.step(actions)
        env.reset()
        assert env.reward_manager.terms["cart_vel"].weight == -1.0
        state = env.get_state()
        fresh.reset()
        fresh.set_state(state)
        assert fresh.reward_manager.terms["cart_vel"].weight == -1.0
        # Both continue alike, rewards included.
        for _ in range(3):
            a = env.step(actions)[1]
            b = fresh.step(actions)[1]
            torch.testing.assert_close(a, b, rtol=0, atol=0)
    finally:
        env.close()
        fresh.close()


def test_a_stage_may_set_a_param_the_function_takes_but_the_config_left_at_its_default():
    def cart_speed(env, power: float = 2.0):
        return env.scene["cartpole"].data.joint_vel[:, 0].abs() ** power

    from mjlab.managers import RewardTermCfg

    cfg = _cfg(speed_stages=_reward_stages([{"step": 1, "params": {"power": 1.0}}], "speed"))
    cfg.rewards["speed"] = RewardTermCfg(func=cart_speed, weight=1.0)
    env = ManagerBasedRlEnv(cfg)
    try:
        env.reset()
        actions = torch.ones(4, env.action_manager.total_action_dim)
        env.step(actions)
        env.reset()
        env.step(actions)
        column = env.reward_manager.active_terms.index("speed")
        vel = env.scene["cartpole"].data.joint_vel[:, 0]
        torch.testing.assert_close(env.reward_manager.step_reward[:, column], vel.abs())
    finally:
        env.close()

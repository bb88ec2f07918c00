"""mjlab.utils.noise (mjlab 1.6 names): each noise config draws what it says and combines by
its operation; a noise model with an additive bias keeps one bias per env episode, in a real
env, and the env state carries it."""

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.tasks import load_env_cfg
from mjlab.utils.noise import (
    ConstantNoiseCfg,
    GaussianNoiseCfg,
    NoiseModelCfg,
    NoiseModelWithAdditiveBias,
    NoiseModelWithAdditiveBiasCfg,
    UniformNoiseCfg,
)


def _gen():
    return torch.Generator().manual_seed(0)


def test_noise_configs_draw_their_distribution_and_combine_by_operation():
    data = torch.full((4000, 5), 2.0)
    u = UniformNoiseCfg(n_min=-0.5, n_max=0.25).apply(data, _gen()) - 2.0
    assert u.min() >= -0.5 and u.max() <= 0.25 and abs(u.mean().item() + 0.125) < 0.01
    g = GaussianNoiseCfg(mean=0.1, std=0.2).apply(data, _gen()) - 2.0
    assert abs(g.mean().item() - 0.1) < 0.01 and abs(g.std().item() - 0.2) < 0.01
    assert (ConstantNoiseCfg(bias=0.3).apply(data) == 2.3).all()
    scaled = UniformNoiseCfg(n_min=0.5, n_max=0.5, operation="scale").apply(data, _gen())
    assert (scaled == 1.0).all()
    assert (ConstantNoiseCfg(bias=-1.0, operation="abs").apply(data) == -1.0).all()
    # The same generator state gives the same draw (a seed fixes the noise).
    a = GaussianNoiseCfg(std=1.0).apply(data, _gen())
    assert torch.equal(a, GaussianNoiseCfg(std=1.0).apply(data, _gen()))


def test_bad_noise_settings_are_refused_naming_the_field():
    with pytest.raises(ValueError, match=r"UniformNoiseCfg.operation is 'mul'"):
        UniformNoiseCfg(operation="mul")
    with pytest.raises(ValueError, match=r"GaussianNoiseCfg.std is -0.1"):
        GaussianNoiseCfg(std=-0.1)
    with pytest.raises(ValueError, match=r"bias_noise_cfg is None"):
        NoiseModelWithAdditiveBiasCfg(noise_cfg=ConstantNoiseCfg())
    assert NoiseModelWithAdditiveBiasCfg.class_type is NoiseModelWithAdditiveBias


def _env(noise) -> ManagerBasedRlEnv:
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 8
    cfg.observations["actor"].enable_corruption = True
    cfg.observations["actor"].terms["joint_pos"].noise = noise
    return ManagerBasedRlEnv(cfg)


def _offset(env, obs) -> torch.Tensor:
    """What the noise added to the actor's joint_pos (2 columns) in `obs`."""
    return obs["actor"][:, :2] - env.observation_manager._raw["actor"]["joint_pos"]


def test_an_additive_bias_is_drawn_per_env_episode_and_kept_within_it():
    noise = NoiseModelWithAdditiveBiasCfg(
        noise_cfg=ConstantNoiseCfg(bias=0.0),
        bias_noise_cfg=UniformNoiseCfg(n_min=0.5, n_max=0.6),
    )
    env = _env(noise)
    try:
        env.reset()
        actions = torch.zeros(8, env.action_manager.total_action_dim)
        first = _offset(env, env.step(actions)[0])
        assert (first >= 0.5 - 1e-6).all() and (first <= 0.6 + 1e-6).all()
        assert len(torch.unique(first)) > 8  # per env and per component
        # constant over the episode
        torch.testing.assert_close(_offset(env, env.step(actions)[0]), first)
        again = _offset(env, env.reset(env_ids=torch.tensor([3]))[0])
        assert not torch.equal(again[3], first[3])
        torch.testing.assert_close(again[torch.arange(8) != 3], first[torch.arange(8) != 3])

        # The env state carries the biases: a fresh env given it adds the same ones.
        state = env.get_state()
        fresh = _env(noise)
        try:
            fresh.reset()
            fresh.step(actions)
            fresh.set_state(state)
            torch.testing.assert_close(
                fresh.observation_manager.noise_models["actor/joint_pos"].bias,
                env.observation_manager.noise_models["actor/joint_pos"].bias,
            )
        finally:
            fresh.close()
        # The caller's config still holds the config, not the model.
        assert isinstance(noise, NoiseModelCfg)
    finally:
        env.close()


def test_one_bias_per_env_when_not_per_component_and_a_plain_model_applies_its_noise():
    shared = NoiseModelWithAdditiveBiasCfg(
        noise_cfg=ConstantNoiseCfg(bias=0.0),
        bias_noise_cfg=UniformNoiseCfg(n_min=-1.0, n_max=1.0),
        sample_bias_per_component=False,
    )
    env = _env(shared)
    try:
        offset = _offset(env, env.reset()[0])
        torch.testing.assert_close(offset[:, 0], offset[:, 1])
    finally:
        env.close()
    env = _env(NoiseModelCfg(noise_cfg=ConstantNoiseCfg(bias=0.25)))
    try:
        torch.testing.assert_close(_offset(env, env.reset()[0]), torch.full((8, 2), 0.25))
    finally:
        env.close()


@pytest.mark.parametrize(
    "noise, expected",
    [
        (UniformNoiseCfg(n_min=2.0, n_max=2.0, operation="scale"), lambda raw: raw * 2.0),
        (
            GaussianNoiseCfg(mean=3.0, std=0.0, operation="abs"),
            lambda raw: torch.full_like(raw, 3.0),
        ),
        (UniformNoiseCfg(n_min=0.5, n_max=0.5), lambda raw: raw + 0.5),
    ],
)
def test_every_operation_acts_in_a_concatenated_group(noise, expected):
    env = _env(noise)
    try:
        obs = env.step(torch.ones(8, env.action_manager.total_action_dim))[0]
        raw = env.observation_manager._raw["actor"]["joint_pos"]
        torch.testing.assert_close(obs["actor"][:, :2], expected(raw))
    finally:
        env.close()


def test_the_bias_is_its_configs_draw_whatever_its_operation():
    noise = NoiseModelWithAdditiveBiasCfg(
        noise_cfg=ConstantNoiseCfg(bias=0.0),
        bias_noise_cfg=UniformNoiseCfg(n_min=0.5, n_max=0.6, operation="scale"),
    )
    env = _env(noise)
    try:
        bias = env.observation_manager.noise_models["actor/joint_pos"].bias
        assert (bias >= 0.5 - 1e-6).all() and (bias <= 0.6 + 1e-6).all()
    finally:
        env.close()

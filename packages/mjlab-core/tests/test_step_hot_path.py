"""The env step's fast paths give the same values as the plain ones: cached entity data,
fused observation groups, stacked rewards and terminations, and a step free of `.item()`."""

from collections import Counter

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from mjlab.envs import ManagerBasedRlEnv, mdp
from mjlab.managers import (
    GaussianNoiseCfg,
    ObservationGroupCfg,
    ObservationTermCfg,
    SceneEntityCfg,
    UniformNoiseCfg,
)
from mjlab.tasks import load_env_cfg
from mjlab.tasks.cartpole.cartpole_env_cfg import cartpole_balance_env_cfg
from mjlab.utils.math import projected_gravity, quat_apply_inverse


def _go1(num_envs=4):
    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
    cfg.scene.num_envs = num_envs
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    return env


def _fresh(env):
    """Root and joint values computed straight from the simulation, no cache."""
    robot = env.scene["robot"]
    qpos, qvel = env.sim.data.qpos.float(), env.sim.data.qvel.float()
    quat = qpos[:, 3:7]
    return {
        "lin_vel_b": quat_apply_inverse(quat, qvel[:, :3]),
        "gravity_b": projected_gravity(quat),
        "joint_pos": qpos[:, robot._qpos_adr],
        "joint_vel": qvel[:, robot._dof_adr],
    }


def _cached(env):
    data = env.scene["robot"].data
    return {
        "lin_vel_b": data.root_link_lin_vel_b,
        "gravity_b": data.projected_gravity_b,
        "joint_pos": data.joint_pos,
        "joint_vel": data.joint_vel,
    }


def _assert_current(env):
    fresh, cached = _fresh(env), _cached(env)
    for key in fresh:
        torch.testing.assert_close(cached[key], fresh[key], msg=key)


@pytest.mark.parametrize("inference", [False, True])
def test_cached_entity_values_follow_steps_resets_and_direct_writes(inference):
    env = _go1()
    data = env.scene["robot"].data
    dim = env.action_manager.total_action_dim
    mode = torch.inference_mode() if inference else torch.enable_grad()
    with mode:
        first = data.joint_pos
        assert data.joint_pos is first  # one computation per physics state
        for _ in range(3):
            env.step(torch.randn(4, dim) * 0.5)
            _assert_current(env)
        assert not torch.equal(data.joint_pos, first)
        # A reset event's kind of write: straight into the state, before any forward.
        env.sim.data.qpos[:, 7] += 0.25
        env.sim.data.qvel[:, 0] += 1.0
        _assert_current(env)
        env.reset(env_ids=torch.tensor([1, 3]))
        _assert_current(env)
    # A caller that edits a returned tensor does not poison the next reader.
    data.joint_pos.zero_()
    data.root_link_lin_vel_b.add_(5.0)
    _assert_current(env)


def _noisy_cartpole():
    cfg = cartpole_balance_env_cfg(4)
    robot = SceneEntityCfg("cartpole")
    cfg.observations["actor"] = ObservationGroupCfg(
        terms={
            # Noise with a single value: the fused and the term-by-term pipelines must agree
            # exactly, whatever random numbers each draws.
            "pos": ObservationTermCfg(
                func=mdp.joint_pos_rel,
                params={"asset_cfg": robot},
                noise=UniformNoiseCfg(n_min=0.3, n_max=0.3),
                clip=(-0.2, 0.5),
                scale=2.0,
            ),
            "vel": ObservationTermCfg(
                func=mdp.joint_vel_rel,
                params={"asset_cfg": robot},
                noise=GaussianNoiseCfg(mean=-0.1, std=0.0),
                scale=(0.5, 3.0),
            ),
            "vel_history": ObservationTermCfg(
                func=mdp.joint_vel_rel, params={"asset_cfg": robot}, history_length=3
            ),
            "pos_delayed": ObservationTermCfg(
                func=mdp.joint_pos_rel, params={"asset_cfg": robot}, delay=2
            ),
            "action": ObservationTermCfg(func=mdp.last_action, clip=(-0.05, 0.05)),
        },
        enable_corruption=True,
    )
    return cfg


def test_a_fused_observation_group_equals_the_term_by_term_pipeline():
    fused, plain = ManagerBasedRlEnv(_noisy_cartpole()), ManagerBasedRlEnv(_noisy_cartpole())
    assert "actor" in fused.observation_manager._fused
    plain.observation_manager._fused.clear()  # the general path, term by term
    obs_f, _ = fused.reset(seed=3)
    obs_p, _ = plain.reset(seed=3)
    torch.testing.assert_close(obs_f["actor"], obs_p["actor"])
    for step in range(6):
        action = torch.full((4, 1), 0.1 * (step - 3))
        obs_f = fused.step(action)[0]
        obs_p = plain.step(action)[0]
        torch.testing.assert_close(obs_f["actor"], obs_p["actor"], msg=f"step {step}")
        raw_f = fused.observation_manager.raw_terms("actor")
        raw_p = plain.observation_manager.raw_terms("actor")
        for name in raw_p:
            torch.testing.assert_close(raw_f[name], raw_p[name], msg=name)
    # The clip and scale were applied (not just carried through).
    assert obs_f["actor"][:, 0].abs().max() <= 2 * 0.5 + 1e-6
    assert obs_f["actor"][:, -1].abs().max() <= 0.05 + 1e-6


def test_a_partial_reset_refills_only_the_reset_envs_history_in_a_fused_group():
    env = ManagerBasedRlEnv(_noisy_cartpole())
    env.reset(seed=0)
    for _ in range(4):
        env.step(torch.full((4, 1), 0.5))
    before = env.observation_manager._buffers["actor"]["vel_history"].buf.clone()
    env.reset(env_ids=torch.tensor([2]))
    after = env.observation_manager._buffers["actor"]["vel_history"].buf
    torch.testing.assert_close(after[[0, 1, 3]], before[[0, 1, 3]])
    # The reset env's history is its new value in every slot.
    assert torch.allclose(after[2], after[2, -1].expand_as(after[2]))


class _HostSyncs(TorchDispatchMode):
    """Counts the operations that make the host wait for the device on a GPU."""

    def __init__(self):
        super().__init__()
        self.calls = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func)
        if "_local_scalar_dense" in name or "nonzero" in name or "is_nonzero" in name:
            self.calls[name] += 1
        return func(*args, **(kwargs or {}))


def test_the_step_reads_no_value_back_to_the_host():
    env = _go1(num_envs=16)
    # What a CUDA env does: no host reads of NaN/Inf counts.
    env.action_manager.host_checks = False
    env.reward_manager.host_checks = False
    env.observation_manager.host_checks = False
    dim = env.action_manager.total_action_dim
    with _HostSyncs() as syncs:
        for _ in range(60):
            env.step(torch.randn(16, dim))  # random actions: falls, so resets happen
    # No .item()/bool(tensor) at all. What remains is one index selection (nonzero) per
    # data-dependent subset: envs to reset, commands due, interval events due.
    assert syncs.calls["aten._local_scalar_dense.default"] == 0
    assert syncs.calls["aten.nonzero.default"] <= 3 * 60
    assert env.extras["log"]["Metrics/nonfinite_actions"].item() == 0
    # Episode logs are tensors (a logger averages them), not host floats.
    env.reset()
    logs = env.extras["log"]
    assert all(isinstance(v, torch.Tensor) for k, v in logs.items() if k.startswith("Episode_")), (
        logs
    )


def test_without_host_checks_a_nan_action_acts_as_zero_and_is_counted():
    env = _go1(num_envs=2)
    env.action_manager.host_checks = False
    action = torch.zeros(2, env.action_manager.total_action_dim)
    action[1, 3] = float("nan")
    action[0, 0] = float("inf")
    env.step(action)
    assert env.extras["log"]["Metrics/nonfinite_actions"].item() == 2
    assert torch.isfinite(env.action_manager.action).all()
    assert env.action_manager.action[1, 3] == 0.0


def test_stacked_rewards_round_exactly_like_adding_the_terms_one_by_one():
    env = _go1(num_envs=8)
    dim = env.action_manager.total_action_dim
    manager = env.reward_manager
    for _ in range(3):
        env.step(torch.randn(8, dim) * 0.5)
        expected = torch.zeros(8)
        for term in manager.terms.values():
            value = term.func(env, **term.params).float()
            expected += value * (term.weight * env.step_dt)
        assert torch.equal(manager.compute(dt=env.step_dt), expected)


def test_a_reward_weight_changed_while_training_takes_effect_at_once():
    env = _go1(num_envs=4)
    dim = env.action_manager.total_action_dim
    env.step(torch.randn(4, dim) * 0.5)
    manager = env.reward_manager
    before = manager.compute(dt=env.step_dt).clone()
    manager.terms["track_lin_vel_xy_exp"].weight += 2.0  # a curriculum's edit
    after = manager.compute(dt=env.step_dt)
    value = manager.terms["track_lin_vel_xy_exp"].func(env, std=0.5)
    torch.testing.assert_close(after - before, value * 2.0 * env.step_dt)


_CALLS = Counter()


def _counted_base_lin_vel(env):
    _CALLS["base_lin_vel"] += 1
    return env.scene["robot"].data.root_link_lin_vel_b


def test_a_term_two_groups_share_is_computed_once_and_copied_exactly():
    envs = []
    for _ in range(2):
        cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
        cfg.scene.num_envs = 4
        for group in ("actor", "critic"):
            cfg.observations[group].terms["base_lin_vel"].func = _counted_base_lin_vel
        envs.append(ManagerBasedRlEnv(cfg))
    shared, plain = envs
    critic = shared.observation_manager._fused["critic"]
    actor_terms = list(shared.observation_manager.group_terms["actor"])
    assert set(critic.shared_from) == set(actor_terms)  # the critic adds foot_contact
    assert len(critic.shared) == 1  # adjacent in both groups: one copy
    for fused in plain.observation_manager._fused.values():  # every term called
        fused.shared, fused.shared_from, fused.shared_sources = [], {}, set()
    shared.reset(seed=0)
    plain.reset(seed=0)
    dim = shared.action_manager.total_action_dim
    for step in range(5):
        action = torch.randn(4, dim, generator=torch.Generator().manual_seed(step))
        _CALLS.clear()
        obs_s = shared.step(action)[0]
        assert _CALLS["base_lin_vel"] == 1
        _CALLS.clear()
        obs_p = plain.step(action)[0]
        assert _CALLS["base_lin_vel"] == 2
        for group in ("actor", "critic"):
            assert torch.equal(obs_s[group], obs_p[group]), (group, step)
        raw_s = shared.observation_manager.raw_terms("critic")
        raw_p = plain.observation_manager.raw_terms("critic")
        for name in raw_p:
            assert torch.equal(raw_s[name], raw_p[name]), name
    # A group computed on its own calls its terms: its values are current, never a copy of
    # what another group computed before the state changed.
    shared.sim.data.qvel[:, 0] += 1.0
    _CALLS.clear()
    critic_obs = shared.observation_manager.compute_group("critic")
    assert _CALLS["base_lin_vel"] == 1
    lin_vel = shared.scene["robot"].data.root_link_lin_vel_b
    assert torch.equal(critic_obs[:, :3], lin_vel)


def _scaled_joint_pos(env, k: float = 1.0):
    return env.scene["cartpole"].data.joint_pos * k


def _nan_in_env_1(env):
    value = torch.zeros(env.num_envs, 1, device=env.device)
    value[1] = float("nan")
    return value


def test_a_shared_term_follows_its_source_through_processing_nan_resets_and_param_changes():
    cfg = cartpole_balance_env_cfg(4)
    cfg.observations["actor"] = ObservationGroupCfg(
        terms={
            # The source is noised, clipped, scaled and kept with history in the actor; the
            # critic's copy is the raw value.
            "pos": ObservationTermCfg(
                func=_scaled_joint_pos,
                params={"k": 1.0},
                noise=UniformNoiseCfg(n_min=-0.3, n_max=0.3),
                clip=(-0.1, 0.1),
                scale=3.0,
                history_length=2,
            ),
            "bad": ObservationTermCfg(func=_nan_in_env_1),
        },
        enable_corruption=True,
    )
    cfg.observations["critic"] = ObservationGroupCfg(
        terms={
            "pos": ObservationTermCfg(func=_scaled_joint_pos, params={"k": 1.0}),
            "bad": ObservationTermCfg(func=_nan_in_env_1),
        }
    )
    env = ManagerBasedRlEnv(cfg)
    manager = env.observation_manager
    assert set(manager._fused["critic"].shared_from) == {"pos", "bad"}
    env.reset(seed=0)
    for step in range(4):
        obs, *_, extras = env.step(torch.full((4, 1), 0.3))
        joint_pos = env.scene["cartpole"].data.joint_pos
        assert torch.equal(obs["critic"][:, :2], joint_pos), step
        assert obs["critic"][:, 2].tolist() == [0.0] * 4
        # The NaN is replaced once, in the actor; the critic copies the zero: counted once.
        assert int(extras["log"]["Metrics/nonfinite_observations"]) == 1
    obs, _ = env.reset(env_ids=torch.tensor([2]))
    assert torch.equal(obs["critic"][:, :2], env.scene["cartpole"].data.joint_pos)
    # A curriculum's kind of edit after the build: the critic's term is called again.
    manager.group_terms["critic"]["pos"].params["k"] = 2.0
    obs = env.step(torch.full((4, 1), 0.3))[0]
    joint_pos = env.scene["cartpole"].data.joint_pos
    assert torch.equal(obs["critic"][:, :2], joint_pos * 2.0)
    assert not torch.equal(obs["critic"][:, :2], manager.raw_terms("actor")["pos"])


def test_interval_events_and_due_commands_add_no_host_reads_to_the_step():
    # Ids the step makes itself (interval events due, commands due) are valid by construction:
    # the calls below them (sim.set_const, the command's resample) must not range-check them
    # again, which reads a value back on CUDA.
    from mjlab.managers import EventTermCfg

    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
    cfg.scene.num_envs = 4
    base = SceneEntityCfg("robot", body_names=("trunk",))
    every_step = (0.02, 0.02)
    cfg.events["mass_every_step"] = EventTermCfg(
        func=mdp.randomize_body_mass,
        mode="interval",
        interval_range_s=every_step,
        params={"mass_range": (0.9, 1.1), "operation": "scale", "asset_cfg": base},
    )
    cfg.events["com_every_step"] = EventTermCfg(
        func=mdp.randomize_body_com,
        mode="interval",
        interval_range_s=every_step,
        params={"com_range": {"x": (-0.01, 0.01)}, "asset_cfg": base},
    )
    cfg.commands["twist"].resampling_time_range = every_step
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    env.action_manager.host_checks = False
    env.reward_manager.host_checks = False
    env.observation_manager.host_checks = False
    action = torch.zeros(4, env.action_manager.total_action_dim)
    before = env.sim.expand_model_field("body_mass").clone()
    with _HostSyncs() as syncs:
        for _ in range(3):
            env.step(action)
    assert not torch.equal(env.sim.expand_model_field("body_mass"), before)  # events ran
    assert syncs.calls["aten._local_scalar_dense.default"] == 0, syncs.calls

"""mjlab 1.6's remaining manager config fields, in small real envs: the random observation
delay (`delay_*` of `ObservationTermCfg`), `ObservationGroupCfg.concatenate_dim` /
`nan_policy` / `nan_check_per_term`, `MetricsTermCfg.per_substep` / `reduce`,
`ActionTermCfg.entity_name` and `CommandTermCfg.debug_vis`."""

from __future__ import annotations

import copy
import types
import warnings

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv, mdp
from mjlab.managers.command_manager import CommandTerm
from mjlab.managers.manager_term_config import (
    ActionTermCfg,
    CommandTermCfg,
    MetricsTermCfg,
    ObservationGroupCfg,
    ObservationTermCfg,
    TerminationTermCfg,
)
from mjlab.managers.scene_entity_config import SceneEntityCfg
from mjlab.tasks import load_env_cfg

N = 16


def step_count(env) -> torch.Tensor:
    """(num_envs, 1): env steps of the episode so far (0 right after a reset)."""
    return env.episode_length_buf.float().unsqueeze(-1)


_SLIDER = SceneEntityCfg("cartpole", joint_names=("slider",))


def cart_pos(env, asset_cfg=_SLIDER):
    return env.scene[asset_cfg.name].data.joint_pos[:, asset_cfg.joint_ids]


NAN_ENV = 2


def nan_in_one_env(env) -> torch.Tensor:
    """(num_envs, 2) ones, NaN in the second value of env NAN_ENV."""
    value = torch.ones(env.num_envs, 2, device=env.device)
    value[NAN_ENV, 1] = torch.nan
    return value


def _cfg(num_envs: int = N, seed: int = 3):
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = num_envs
    cfg.seed = seed
    cfg.episode_length_s = 1000.0
    # No episode ends by itself: the step counts below stay the test's.
    cfg.terminations = {"time_out": TerminationTermCfg(func=mdp.time_out, time_out=True)}
    return cfg


def _delay_env(concatenate: bool = True, seed: int = 3, **delay) -> ManagerBasedRlEnv:
    cfg = _cfg(seed=seed)
    cfg.observations["lagged"] = ObservationGroupCfg(
        terms={
            "t": ObservationTermCfg(func=step_count, **delay),
            "cart": ObservationTermCfg(func=cart_pos),
        },
        concatenate_terms=concatenate,
    )
    return ManagerBasedRlEnv(cfg)


def _lagged(obs) -> torch.Tensor:
    group = obs["lagged"]
    return (group["t"] if isinstance(group, dict) else group[:, :1]).squeeze(-1)


def _zero(env) -> torch.Tensor:
    return torch.zeros(env.num_envs, env.action_manager.total_action_dim)


def _lags_over(env, steps: int):
    """Per step: (episode step t, observed value, the manager's lag per env)."""
    delay = env.observation_manager._delays["lagged"]["t"]
    out = []
    obs, _ = env.reset()
    out.append((0, _lagged(obs), delay.lag.clone()))
    for t in range(1, steps + 1):
        obs = env.step(_zero(env))[0]
        out.append((t, _lagged(obs), delay.lag.clone()))
    return out


# -- random delay --------------------------------------------------------------------------------
@pytest.mark.parametrize("concatenate", [True, False])
def test_a_random_lag_stays_within_its_bounds_per_env_and_reads_that_old_value(concatenate):
    env = _delay_env(concatenate, delay_min_lag=1, delay_max_lag=3)
    try:
        seen = set()
        for t, value, lag in _lags_over(env, 25):
            assert ((lag >= 1) & (lag <= 3)).all()
            # The value `lag` steps old; the episode's first value when it is younger.
            torch.testing.assert_close(value, (t - lag).clamp(min=0).float())
            if t >= 3:
                assert ((t - value >= 1) & (t - value <= 3)).all()
                seen.update((t - value).long().tolist())
        assert seen == {1, 2, 3}
        assert len(torch.unique(lag)) > 1  # per env (16 envs)
    finally:
        env.close()


def test_a_shared_lag_is_the_same_in_every_env_and_changes_over_time():
    env = _delay_env(delay_min_lag=0, delay_max_lag=4, delay_per_env=False)
    try:
        lags = [lag for _, _, lag in _lags_over(env, 20)]
        assert all(len(torch.unique(lag)) == 1 for lag in lags)
        assert len({int(lag[0]) for lag in lags}) > 1
    finally:
        env.close()


def test_the_hold_probability_keeps_lags_that_often():
    def change_rate(hold: float) -> float:
        env = _delay_env(delay_min_lag=0, delay_max_lag=3, delay_hold_prob=hold)
        try:
            lags = torch.stack([lag for _, _, lag in _lags_over(env, 40)])
            return (lags[1:] != lags[:-1]).float().mean().item()
        finally:
            env.close()

    # A new draw differs from the old lag with probability 3/4; a hold keeps it.
    assert change_rate(0.0) > 0.65
    assert 0.25 < change_rate(0.5) < 0.5
    assert change_rate(1.0) == 0.0


def test_lags_refresh_every_update_period_at_each_envs_phase():
    period = 5
    env = _delay_env(
        delay_min_lag=0, delay_max_lag=6, delay_update_period=period, delay_per_env_phase=True
    )
    try:
        delay = env.observation_manager._delays["lagged"]["t"]
        assert ((delay.phase >= 0) & (delay.phase < period)).all()
        lags = torch.stack([lag for _, _, lag in _lags_over(env, 30)])  # (31, N) after pushes
        phase = delay.phase
        assert len(torch.unique(phase)) > 1  # staggered
        pushes = torch.arange(lags.shape[0]).unsqueeze(1)  # the refresh clock of push p is p
        changed = torch.cat([lags[:1] != delay.min_lag, lags[1:] != lags[:-1]])
        due = torch.remainder(pushes + phase, period) == 0
        assert not (changed & ~due).any()  # only at an env's own refresh steps
        assert changed.sum() > 30  # and there they do change
        # Without staggering every env refreshes at its episode's steps 0, 5, 10, ...
        env2 = _delay_env(
            delay_min_lag=0, delay_max_lag=6, delay_update_period=period, delay_per_env_phase=False
        )
        try:
            lags2 = torch.stack([lag for _, _, lag in _lags_over(env2, 12)])
            assert (env2.observation_manager._delays["lagged"]["t"].phase == 0).all()
            for p in range(1, lags2.shape[0]):
                if p % period:
                    assert torch.equal(lags2[p], lags2[p - 1])
        finally:
            env2.close()
    finally:
        env.close()


def test_a_reset_refills_the_line_restarts_the_lag_and_redraws_the_phase():
    env = _delay_env(delay_min_lag=2, delay_max_lag=4, delay_update_period=3)
    try:
        delay = env.observation_manager._delays["lagged"]["t"]
        _lags_over(env, 10)
        before = _lagged(env.obs_buf).clone()
        phases = [delay.phase.clone()]
        obs, _ = env.reset(env_ids=torch.tensor([3]))
        value = _lagged(obs)
        assert value[3] == 0.0  # its new episode's first value, whatever its lag
        others = torch.arange(N) != 3
        assert torch.equal(value[others], before[others])  # the others did not advance
        assert delay.steps[3] == 1 and (delay.steps[others] == 11).all()
        assert (delay.lag > 2).any()  # so the restart check below can fail
        for _ in range(4):
            env.reset()
            phases.append(delay.phase.clone())
            # The lag restarts at delay_min_lag; the reset's own push redraws it only where
            # the new phase makes the refresh due at step 0.
            not_due = delay.phase != 0
            assert (delay.lag[not_due] == 2).all() and ((delay.lag >= 2) & (delay.lag <= 4)).all()
        assert any(not torch.equal(p, phases[0]) for p in phases[1:])
        assert all(((p >= 0) & (p < 3)).all() for p in phases)
    finally:
        env.close()


def test_a_constant_lag_is_the_fixed_delay_and_the_bounds_are_checked():
    cfg = _cfg()
    cfg.observations["fixed"] = ObservationGroupCfg(
        terms={"t": ObservationTermCfg(func=step_count, delay=2, history_length=3)}
    )
    cfg.observations["lag"] = ObservationGroupCfg(
        terms={
            "t": ObservationTermCfg(
                func=step_count, delay_min_lag=2, delay_max_lag=2, history_length=3
            )
        }
    )
    before = copy.deepcopy(cfg.observations)
    env = ManagerBasedRlEnv(cfg)
    try:
        assert not env.observation_manager._delays["lag"]  # no random line, no draws
        obs, _ = env.reset()
        for _ in range(6):
            assert torch.equal(obs["fixed"], obs["lag"])
            obs = env.step(_zero(env))[0]
        assert obs["lag"][0].tolist() == [2.0, 3.0, 4.0]  # the 3 values ending 2 steps ago
        assert cfg.observations == before  # building and stepping leave the config be
    finally:
        env.close()
    with pytest.raises(ValueError, match=r"delay_max_lag \(1\) must be >= delay_min_lag \(2\)"):
        ObservationTermCfg(func=step_count, delay_min_lag=2, delay_max_lag=1)
    with pytest.raises(ValueError, match=r"delay_hold_prob must be a probability"):
        ObservationTermCfg(func=step_count, delay_max_lag=2, delay_hold_prob=1.5)


def test_a_random_lag_with_a_history_keeps_the_delayed_values_and_export_omits_it():
    env = _delay_env(delay=1, delay_min_lag=0, delay_max_lag=2, history_length=4)
    try:
        delay = env.observation_manager._delays["lagged"]["t"]
        obs, _ = env.reset()
        outs = []
        for t in range(1, 9):
            obs = env.step(_zero(env))[0]
            outs.append((t - 1 - delay.lag).clamp(min=0).float())  # base 1 + random lag
            hist = obs["lagged"][:, :4]
            # Filled with the reset's output (the first value, 0), then the delayed values.
            expected = torch.stack(([torch.zeros(N)] * 4 + outs)[-4:], dim=1)
            torch.testing.assert_close(hist, expected)
        # A deployment gets the term's `delay` only: the simulated lag is training-only.
        (term,) = [
            t for t in env.observation_manager.describe("lagged")["terms"] if t["name"] == "t"
        ]
        assert term["delay"] == 1
    finally:
        env.close()


def test_the_env_state_carries_the_delay_lines_lags_and_phases():
    delay = dict(
        delay_min_lag=0,
        delay_max_lag=5,
        delay_hold_prob=0.3,
        delay_update_period=3,
        history_length=2,
    )
    env = _delay_env(**delay)
    other = _delay_env(seed=11, **delay)  # other phases and generator
    try:
        env.reset()
        for _ in range(7):
            env.step(_zero(env))
        state = env.get_state()
        assert any("_delays" in path and path.endswith(".phase") for path in state["env"])
        expected = [env.step(_zero(env))[0]["lagged"] for _ in range(8)]
        other.reset()
        other.set_state(state)
        got = [other.step(_zero(other))[0]["lagged"] for _ in range(8)]
        for a, b in zip(expected, got, strict=True):
            assert torch.equal(a, b)
    finally:
        env.close()
        other.close()


# -- nan policies --------------------------------------------------------------------------------
def _nan_env(policy: str, per_term: bool = True, concatenate: bool = True) -> ManagerBasedRlEnv:
    cfg = _cfg(num_envs=4)
    terms = {
        "cart": ObservationTermCfg(func=cart_pos),
        "bad": ObservationTermCfg(func=nan_in_one_env),
    }
    cfg.observations["plain"] = ObservationGroupCfg(terms=dict(terms))  # shares the terms
    cfg.observations["checked"] = ObservationGroupCfg(
        terms=dict(terms),
        nan_policy=policy,
        nan_check_per_term=per_term,
        concatenate_terms=concatenate,
    )
    return ManagerBasedRlEnv(cfg)


@pytest.mark.parametrize("policy", ["disabled", "sanitize"])
def test_silent_policies_replace_nan_by_zero_and_count_it(policy):
    env = _nan_env(policy)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            obs, _ = env.reset()
            obs = env.step(_zero(env))[0]
        checked = obs["checked"]
        assert torch.isfinite(checked).all() and checked[NAN_ENV, 2] == 0.0
        assert checked[NAN_ENV, 1] == 1.0 and (checked[:, 1:] != 0).sum() == 4 * 2 - 1
        assert env.observation_manager.nonfinite.item() >= 1
    finally:
        env.close()


@pytest.mark.parametrize(
    ("per_term", "concatenate", "label"),
    [
        (True, True, r"'checked/bad'"),
        (False, True, r"group 'checked'"),
        (True, False, r"'checked/bad'"),
        (False, False, r"group 'checked'"),
    ],
)
def test_warn_names_the_term_or_group_and_the_envs(per_term, concatenate, label):
    env = _nan_env("warn", per_term, concatenate)
    try:
        with pytest.warns(RuntimeWarning, match=rf"{label} of envs \[{NAN_ENV}\]"):
            env.reset()
        with pytest.warns(RuntimeWarning, match=rf"{label} of envs \[{NAN_ENV}\]") as caught:
            obs = env.step(_zero(env))[0]
        assert len([w for w in caught if "checked" in str(w.message)]) == 1
        value = obs["checked"]["bad"] if not concatenate else obs["checked"][:, 1:]
        assert torch.isfinite(value).all()
    finally:
        env.close()


@pytest.mark.parametrize(
    ("per_term", "concatenate", "label"),
    [(True, True, r"'checked/bad'"), (False, True, r"group 'checked'"), (True, False, "bad")],
)
def test_error_raises_naming_the_term_or_group_and_the_envs(per_term, concatenate, label):
    cfg_env = _nan_env("error", per_term, concatenate)
    try:
        with pytest.raises(ValueError, match=rf"{label}.* of envs \[{NAN_ENV}\]"):
            cfg_env.reset()
    finally:
        cfg_env.close()
    with pytest.raises(ValueError, match=r"nan_policy is 'ignore'"):
        ObservationGroupCfg(nan_policy="ignore")


class _FakeEvent:
    """Stands in for a CUDA event: the test says when the copy has arrived."""

    done = False

    def record(self) -> None:
        pass

    def query(self) -> bool:
        return _FakeEvent.done

    def synchronize(self) -> None:
        pass


def test_warnings_from_a_gpu_wait_for_the_copy_and_lose_nothing():
    from mjlab.managers.observation_manager import _NonfiniteWarnings

    report = _NonfiniteWarnings("cpu")
    report.deferred, report.new_event = True, _FakeEvent  # the GPU path's logic, on the CPU
    _FakeEvent.done = False
    labels = ["'g/a'", "'g/b'"]

    def flags(env: int | None, term: int = 0) -> torch.Tensor:
        out = torch.zeros(2, 4, dtype=torch.bool)
        if env is not None:
            out[term, env] = True
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing is read in the steps that make the reports
        report.submit("g", labels, flags(1))
        report.submit("g", labels, flags(2, term=1))  # the first copy is still on its way
    _FakeEvent.done = True
    with pytest.warns(RuntimeWarning, match=r"'g/a' of envs \[1\]") as first:
        report.submit("g", labels, flags(None))
    assert len(first) == 1
    with pytest.warns(RuntimeWarning, match=r"'g/b' of envs \[2\]") as rest:
        report.flush()
    assert len(rest) == 1 and not report.events and not report.pending


# -- concatenate_dim -----------------------------------------------------------------------------
def two_by_three(env):
    return torch.ones(env.num_envs, 2, 3, device=env.device)


def two_by_four(env):
    return torch.full((env.num_envs, 2, 4), 2.0, device=env.device)


def five_by_three(env):
    return torch.full((env.num_envs, 5, 3), 3.0, device=env.device)


@pytest.mark.parametrize(
    ("dim", "funcs", "shape"),
    [
        (-1, (two_by_three, two_by_four), (2, 7)),
        (1, (two_by_three, two_by_four), (2, 7)),
        (0, (two_by_three, five_by_three), (7, 3)),
        (-2, (two_by_three, five_by_three), (7, 3)),
    ],
)
def test_concatenate_dim_joins_the_terms_along_that_axis(dim, funcs, shape):
    cfg = _cfg(num_envs=2)
    cfg.observations["grid"] = ObservationGroupCfg(
        terms={f.__name__: ObservationTermCfg(func=f) for f in funcs}, concatenate_dim=dim
    )
    env = ManagerBasedRlEnv(cfg)
    try:
        obs, _ = env.reset()
        assert obs["grid"].shape == (2, *shape)
        assert env.observation_manager.group_dims["grid"] == shape
        assert env.single_observation_space["grid"].shape == shape
        expected = torch.cat([f(env) for f in funcs], dim=dim if dim < 0 else dim + 1)
        assert torch.equal(obs["grid"], expected)
    finally:
        env.close()


def test_a_concatenate_dim_the_terms_cannot_share_is_refused_when_built():
    cfg = _cfg(num_envs=2)
    cfg.observations["grid"] = ObservationGroupCfg(
        terms={
            "a": ObservationTermCfg(func=two_by_three),
            "b": ObservationTermCfg(func=two_by_four),
        },
        concatenate_dim=0,
    )
    with pytest.raises(ValueError, match=r"'grid'.*cannot be concatenated along axis 0"):
        ManagerBasedRlEnv(cfg)
    cfg.observations["grid"].concatenate_dim = 2
    with pytest.raises(ValueError, match=r"concatenate_dim=2 is not an axis"):
        ManagerBasedRlEnv(cfg)
    with pytest.raises(ValueError, match=r"concatenate_dim must be an integer"):
        ObservationGroupCfg(concatenate_dim=0.5)


# -- metrics -------------------------------------------------------------------------------------
def sim_time(env) -> torch.Tensor:
    return env.sim.data.time.float()


def test_metrics_reduce_an_episode_as_asked_and_per_substep_averages_the_substeps():
    cfg = _cfg(num_envs=3)
    cfg.metrics = {
        "mean": MetricsTermCfg(func=lambda env: step_count(env).squeeze(-1)),
        "sum": MetricsTermCfg(func=lambda env: step_count(env).squeeze(-1), reduce="sum"),
        "max": MetricsTermCfg(func=lambda env: 10.0 - step_count(env).squeeze(-1), reduce="max"),
        "last": MetricsTermCfg(func=lambda env: step_count(env).squeeze(-1), reduce="last"),
        "time": MetricsTermCfg(func=sim_time),
        "time_substeps": MetricsTermCfg(func=sim_time, per_substep=True),
    }
    env = ManagerBasedRlEnv(cfg)
    try:
        assert env.sim.pre_substep_hooks  # per-substep terms step the physics substep-wise
        env.reset()
        steps = 6
        for _ in range(steps):
            env.step(_zero(env))
        _, extras = env.reset()
        log = {k: v.item() for k, v in extras["log"].items() if k.startswith("Metrics/")}
        assert log["Metrics/mean"] == pytest.approx((steps + 1) / 2)
        assert log["Metrics/sum"] == pytest.approx(steps * (steps + 1) / 2)
        assert log["Metrics/max"] == pytest.approx(9.0)
        assert log["Metrics/last"] == pytest.approx(steps)
        # decimation 2: the substeps end dt/2 earlier on average than the step does.
        half = env.physics_dt / 2
        assert log["Metrics/time"] - log["Metrics/time_substeps"] == pytest.approx(half, abs=1e-5)
        # An episode without steps reports 0 under every reduction.
        _, extras = env.reset()
        assert all(extras["log"][f"Metrics/{k}"].item() == 0.0 for k in ("max", "last", "sum"))
    finally:
        env.close()
    with pytest.raises(ValueError, match=r"reduce is 'median'"):
        MetricsTermCfg(func=sim_time, reduce="median")


# -- actions and commands ------------------------------------------------------------------------
def _action_cfg(**names):
    return mdp.JointEffortActionCfg(actuator_names=("slider",), scale=1.0, **names)


@pytest.mark.parametrize(
    "names",
    [
        {"entity_name": "cartpole"},
        {"asset_name": "cartpole"},
        {"entity_name": "cartpole", "asset_name": "cartpole"},
    ],
)
def test_entity_name_and_asset_name_are_one_setting(names):
    cfg = _cfg(num_envs=2)
    action = _action_cfg(**names)
    cfg.actions = {"slide": action}
    env = ManagerBasedRlEnv(cfg)
    try:
        term = env.action_manager.get_term("slide")
        assert term.cfg.entity_name == term.cfg.asset_name == "cartpole"
        assert term.entity is env.scene["cartpole"]
        assert env.action_manager.describe()[0]["entity"] == "cartpole"
        assert cfg.actions["slide"] == action and action.entity_name == names.get("entity_name")
    finally:
        env.close()


def test_disagreeing_entity_names_are_refused():
    with pytest.raises(ValueError, match=r"entity_name is 'cartpole' but asset_name is 'robot'"):
        _action_cfg(entity_name="cartpole", asset_name="robot")
    action = _action_cfg(asset_name="cartpole")
    action.entity_name = "other"
    with pytest.raises(ValueError, match=r"entity_name is 'other' but asset_name is 'cartpole'"):
        action.validate()
    assert ActionTermCfg(class_type=object).resolved_entity_name() == "robot"


class _Drawn(CommandTerm):
    drawn = 0

    def _debug_vis_impl(self, scene) -> None:
        type(self).drawn += 1


def test_debug_vis_is_accepted_and_switches_the_terms_that_can_draw():
    env = types.SimpleNamespace(num_envs=2, device="cpu")
    cfg = CommandTermCfg(class_type=CommandTerm, debug_vis=True)
    plain = CommandTerm(cfg, env)
    assert plain.debug_vis and not plain.has_debug_vis_implementation
    assert plain.set_debug_vis(False) is False
    drawn = _Drawn(CommandTermCfg(class_type=_Drawn, debug_vis=True), env)
    drawn.debug_vis_callback(None)
    assert drawn.set_debug_vis(False) is True
    drawn.debug_vis_callback(None)
    assert _Drawn.drawn == 1
    assert mdp.UniformVelocityCommandCfg(debug_vis=True).debug_vis is True
    with pytest.raises(ValueError, match=r"debug_vis must be True or False"):
        CommandTermCfg(class_type=CommandTerm, debug_vis="yes")


def test_a_late_gpu_copy_is_waited_for_after_max_waits_steps():
    from mjlab.managers.observation_manager import _NonfiniteWarnings

    report = _NonfiniteWarnings("cpu")
    report.deferred, report.new_event = True, _FakeEvent
    _FakeEvent.done = False  # a busy GPU: the copy never reports done by itself
    labels = ["'g/a'"]
    first = torch.zeros(1, 4, dtype=torch.bool)
    first[0, 3] = True
    empty = torch.zeros(1, 4, dtype=torch.bool)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report.submit("g", labels, first)
        for _ in range(report.MAX_WAITS - 1):
            report.submit("g", labels, empty)
    with pytest.warns(RuntimeWarning, match=r"'g/a' of envs \[3\]"):
        report.submit("g", labels, empty)  # the MAX_WAITS-th wait: synchronized and warned


def test_closing_the_env_issues_the_reports_still_on_their_way(monkeypatch):
    from mjlab.managers import observation_manager

    flushed = []
    monkeypatch.setattr(
        observation_manager._NonfiniteWarnings, "flush", lambda self: flushed.append(self)
    )
    env = ManagerBasedRlEnv(_cfg())
    env.close()
    assert flushed == [env.observation_manager._nan_warnings]


@pytest.mark.parametrize(
    ("dim", "funcs"), [(0, (two_by_three, five_by_three)), (-1, (two_by_three, two_by_four))]
)
def test_a_flattened_history_of_multi_axis_terms_matches_the_declared_shape(dim, funcs):
    from mjlab.managers.manager_term_config import ObservationGroupCfg

    cfg = _cfg(num_envs=2)
    cfg.observations["grid"] = ObservationGroupCfg(
        terms={f.__name__: ObservationTermCfg(func=f) for f in funcs},
        concatenate_dim=dim,
        history_length=2,
    )
    env = ManagerBasedRlEnv(cfg)
    try:
        obs, _ = env.reset()
        width = 2 * sum(f(env).shape[1] * f(env).shape[2] for f in funcs)
        assert tuple(obs["grid"].shape) == (2, width)
        assert env.observation_manager.group_dims["grid"] == (width,)
        assert env.single_observation_space["grid"].shape == (width,)
    finally:
        env.close()

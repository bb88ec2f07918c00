"""Every float of an env config is finite where NaN/Inf means nothing, and ranges are ordered:
refused when the env is built, naming the field's path."""

import pytest

from mjlab.envs import ManagerBasedRlEnv
from mjlab.tasks import load_env_cfg
from mjlab.utils.config import ConfigError, validate_config

NAN, INF = float("nan"), float("inf")


def _set_action_scale(c):
    c.actions["effort"].scale = NAN


def _set_reward_weight(c):
    c.rewards[next(iter(c.rewards))].weight = INF


def _set_observation_scale(c):
    next(iter(c.observations["actor"].terms.values())).scale = INF


def _set_noise(c):
    next(iter(c.observations["actor"].terms.values())).noise.n_max = NAN


def _set_event_range(c):
    c.events["base_mass"].params["mass_range"] = (1.1, 0.9)


def _set_command_range(c):
    c.commands["twist"].ranges.lin_vel_x = (1.0, -1.0)


def _set_gain(c):
    c.scene.entities["robot"].articulation.actuators[0].stiffness[".*_hip_joint"] = NAN


@pytest.mark.parametrize(
    ("task", "edit", "path"),
    [
        ("Mjlab-Cartpole-Balance", _set_action_scale, "cfg.actions['effort'].scale is nan"),
        ("Mjlab-Velocity-Flat-Unitree-Go1", _set_reward_weight, "weight"),
        ("Mjlab-Velocity-Flat-Unitree-Go1", _set_observation_scale, "].scale is inf"),
        ("Mjlab-Velocity-Flat-Unitree-Go1", _set_noise, "noise.n_max is nan"),
        ("Mjlab-Velocity-Flat-Unitree-Go1", _set_event_range, "params['mass_range']"),
        ("Mjlab-Velocity-Flat-Unitree-Go1", _set_command_range, "ranges.lin_vel_x"),
        ("Mjlab-Velocity-Flat-Unitree-Go1", _set_gain, "stiffness['.*_hip_joint'] is nan"),
    ],
    ids=[
        "action-scale-nan",
        "reward-weight-inf",
        "obs-scale-inf",
        "noise-nan",
        "event-range-order",
        "command-range-order",
        "gain-nan",
    ],
)
def test_non_finite_or_unordered_term_settings_are_refused_naming_the_field(task, edit, path):
    cfg = load_env_cfg(task)
    edit(cfg)
    with pytest.raises(ConfigError) as err:
        validate_config(cfg)
    assert path in str(err.value)


def test_an_env_with_a_nan_action_scale_is_not_built():
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 1
    cfg.actions["effort"].scale = NAN
    with pytest.raises(ConfigError, match=r"actions\['effort'\]\.scale is nan"):
        ManagerBasedRlEnv(cfg)


def test_unbounded_clips_and_limits_stay_allowed():
    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
    next(iter(cfg.observations["actor"].terms.values())).clip = (-INF, INF)
    cfg.scene.entities["robot"].articulation.actuators[0].effort_limit[".*_hip_joint"] = INF
    validate_config(cfg)


def test_inf_is_allowed_under_whole_word_max_and_min_names_only():
    from dataclasses import dataclass

    from mjlab.utils.config import Config

    @dataclass(kw_only=True)
    class Limits(Config):
        max_force: float = INF
        height_min: float = -INF
        minimum_height: float = -INF
        params: dict = None  # type: ignore[assignment]

    validate_config(Limits(params={"max": INF, "speed_max": INF}))
    for name in ("maxima", "domain", "admin_gain"):
        with pytest.raises(ConfigError, match=name):
            validate_config(Limits(params={name: INF}))


def test_ranges_are_whole_words_not_part_of_arrange():
    validate_config({"arrange": (2.0, 1.0)})  # not a (lo, hi) range
    with pytest.raises(ConfigError, match="lo <= hi"):
        validate_config({"pose_range": (2.0, 1.0)})
    with pytest.raises(ConfigError, match="lo <= hi"):
        validate_config({"ranges": {"yaw": (2.0, 1.0)}})


def test_uniform_noise_of_infinite_width_is_refused():
    from mjlab.managers.manager_term_config import UniformNoiseCfg

    with pytest.raises(ValueError, match="n_max is inf"):
        UniformNoiseCfg(n_max=INF)

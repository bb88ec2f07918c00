"""A config edited after `load_env_cfg` is validated again when the env is built: each mistake
is one ConfigError naming the field by its path and saying what is expected."""

import pytest

from mjlab.envs import ManagerBasedRlEnv
from mjlab.managers import EventTermCfg, ObservationTermCfg, RewardTermCfg
from mjlab.tasks import load_env_cfg
from mjlab.utils.config import ConfigError, validate_config


def _cfg():
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 1
    return cfg


def _first_term(cfg):
    return next(iter(cfg.observations["actor"].terms.values()))


CASES = {
    "negative_episode_length": (
        lambda c: setattr(c, "episode_length_s", -1.0),
        r"^cfg: ManagerBasedRlEnvCfg\.episode_length_s must be a finite number of seconds > 0",
    ),
    "zero_decimation": (
        lambda c: setattr(c, "decimation", 0),
        r"^cfg: ManagerBasedRlEnvCfg\.decimation must be an integer >= 1",
    ),
    "negative_history": (
        lambda c: setattr(_first_term(c), "history_length", -1),
        r"^cfg\.observations\['actor'\]\.terms\['\w+'\]: ObservationTermCfg\.history_length",
    ),
    "negative_delay": (
        lambda c: setattr(_first_term(c), "delay", -2),
        r"^cfg\.observations\['actor'\]\.terms\['\w+'\]: ObservationTermCfg\.delay must be",
    ),
    "misspelled_event_mode": (
        lambda c: setattr(c.events["reset_joints"], "mode", "resett"),
        r"^cfg\.events\['reset_joints'\]: EventTermCfg\.mode is 'resett'; use 'startup'",
    ),
    "string_as_observation_term": (
        lambda c: c.observations["actor"].terms.__setitem__("lin", "base_lin_vel"),
        r"terms\['lin'\] is 'base_lin_vel' \(str\); give ObservationTermCfg\(func=",
    ),
    "reward_of_the_wrong_kind": (
        lambda c: c.rewards.__setitem__("x", ObservationTermCfg(func=len)),
        r"^cfg: ManagerBasedRlEnvCfg\.rewards\['x'\] is .*expected a RewardTermCfg",
    ),
    "nan_reward_weight": (
        lambda c: setattr(c.rewards["alive"], "weight", float("nan")),
        r"^cfg\.rewards\['alive'\]: RewardTermCfg\.weight must be a finite number",
    ),
    "zero_timestep": (
        lambda c: setattr(c.sim.mujoco, "timestep", 0.0),
        r"^cfg\.sim\.mujoco: MujocoCfg\.timestep must be a number > 0",
    ),
    "no_envs": (
        lambda c: setattr(c.scene, "num_envs", 0),
        r"^cfg\.scene: SceneCfg\.num_envs must be an integer >= 1",
    ),
    "backwards_interval": (
        lambda c: (
            c.events.__setitem__(
                "push",
                EventTermCfg(func=len, mode="interval", interval_range_s=(1.0, 2.0)),
            )
            or setattr(c.events["push"], "interval_range_s", (3.0, 1.0))
        ),
        r"^cfg\.events\['push'\]: EventTermCfg\.interval_range_s must be a \(lo, hi\) pair",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_edited_config_is_validated_when_the_env_is_built(case):
    mutate, message = CASES[case]
    cfg = _cfg()
    mutate(cfg)
    with pytest.raises(ConfigError, match=message):
        ManagerBasedRlEnv(cfg)


def test_the_same_validation_runs_when_a_config_is_constructed():
    with pytest.raises(ValueError, match=r"EventTermCfg\.mode is 'resett'"):
        EventTermCfg(func=len, mode="resett")
    with pytest.raises(ValueError, match=r"ObservationTermCfg\.delay must be an integer >= 0"):
        ObservationTermCfg(func=len, delay=-1)
    with pytest.raises(ValueError, match=r"RewardTermCfg\.weight must be a finite number"):
        RewardTermCfg(func=len, weight=float("inf"))


def test_a_valid_registered_config_passes_and_is_not_changed():
    cfg = _cfg()
    before = repr(cfg)
    validate_config(cfg)
    assert repr(cfg) == before


def test_an_invalid_regex_in_a_joint_selection_names_the_pattern_and_the_term():
    from mjlab.managers import SceneEntityCfg

    cfg = _cfg()
    cfg.rewards["cart_vel"].params["asset_cfg"] = SceneEntityCfg(
        "cartpole", joint_names=("sl(ider",)
    )
    with pytest.raises(
        ValueError, match=r"Reward term 'cart_vel', param 'asset_cfg': 'sl\(ider' is not a valid"
    ):
        ManagerBasedRlEnv(cfg)


def test_actions_on_another_device_are_refused_naming_both_devices():
    import torch

    env = ManagerBasedRlEnv(_cfg())
    env.reset()
    with pytest.raises(ValueError, match=r"Actions are on meta; the env runs on cpu"):
        env.step(torch.zeros(1, 1, device="meta"))


def test_a_malformed_mjcf_names_the_entity_and_the_file(tmp_path):
    from mjlab.entity import load_mjcf

    bad = tmp_path / "robot.xml"
    bad.write_text("<mujoco><worldbody><body></worldbody></mujoco>")
    cfg = _cfg()
    cfg.scene.entities["cartpole"].spec_fn = lambda: load_mjcf(bad)
    with pytest.raises(ValueError, match=rf"Entity 'cartpole': .*MJCF file {bad}: XML"):
        ManagerBasedRlEnv(cfg)


def test_an_observation_term_whose_shape_changes_is_named():
    import torch

    from mjlab.managers import ObservationTermCfg

    calls = {"n": 0}

    def grows(env):
        calls["n"] += 1
        return torch.zeros(env.num_envs, 2 if calls["n"] <= 2 else 3)

    cfg = _cfg()
    cfg.observations["actor"].terms["grows"] = ObservationTermCfg(func=grows)
    env = ManagerBasedRlEnv(cfg)
    with pytest.raises(ValueError, match=r"'actor/grows' returned shape \(1, 3\); it returned"):
        env.reset()
        env.step(torch.zeros(1, 1))

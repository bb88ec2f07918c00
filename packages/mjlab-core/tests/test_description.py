"""Deployment descriptions: what the managers say a robot must compute, as plain data."""

import json

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.tasks import load_env_cfg

GO1 = "Mjlab-Velocity-Flat-Unitree-Go1"


def _env(mutate=None):
    cfg = load_env_cfg(GO1)
    cfg.scene.num_envs = 2
    if mutate is not None:
        mutate(cfg)
    return ManagerBasedRlEnv(cfg)


def _delay_joint_pos(cfg):
    terms = cfg.observations["actor"].terms
    terms["joint_pos"].delay = 2
    terms["joint_pos"].history_length = 3
    terms["joint_vel"].clip = (-5.0, 5.0)
    terms["joint_vel"].scale = 0.05


def test_observation_description_lists_every_term_in_order_with_its_pipeline():
    env = _env(_delay_joint_pos)
    d = env.observation_manager.describe("actor")
    json.dumps(d)  # plain data
    assert d["group"] == "actor" and d["concatenate_terms"] is True
    names = [t["name"] for t in d["terms"]]
    assert names == list(env.observation_manager.group_terms["actor"])
    by_name = {t["name"]: t for t in d["terms"]}
    jp = by_name["joint_pos"]
    assert (jp["func"], jp["shape"], jp["delay"], jp["history_length"]) == (
        "joint_pos_rel",
        [12],
        2,
        3,
    )
    assert jp["flatten_history_dim"] is True and "noise" not in jp
    assert by_name["joint_vel"]["clip"] == [-5.0, 5.0] and by_name["joint_vel"]["scale"] == 0.05
    assert by_name["command"]["params"] == {"command_name": "twist"}


def test_group_history_is_described_on_every_term():
    env = _env(lambda cfg: setattr(cfg.observations["actor"], "history_length", 2))
    assert {t["history_length"] for t in env.observation_manager.describe("actor")["terms"]} == {2}


def test_action_description_gives_joints_in_order_with_scale_offset_and_gains():
    env = _env()
    (d,) = env.action_manager.describe()
    json.dumps(d)
    term = next(iter(env.action_manager.terms.values()))
    robot = env.scene["robot"]
    assert d["action_type"] == "joint_position" and d["type"] == "JointPositionAction"
    assert d["joint_names"] == [robot.joint_names[j] for j in term.joint_ids]
    assert d["dim"] == 12 and d["clip"] is None
    assert d["scale"] == term.scale.tolist()
    assert d["offset"] == robot.data.default_joint_pos[0, term.joint_ids].tolist()
    assert d["offset"] == d["default_joint_pos"]
    assert d["stiffness"] == pytest.approx(robot.data.joint_stiffness[0, term.joint_ids].tolist())
    assert all(lo < hi for lo, hi in d["joint_pos_limits"])


def test_raw_terms_are_the_term_values_before_noise_clip_and_scale():
    def no_noise(cfg):
        _delay_joint_pos(cfg)
        cfg.observations["actor"].enable_corruption = False

    env = _env(no_noise)
    env.reset(seed=0)
    obs, *_ = env.step(torch.zeros(2, 12))
    raw = env.observation_manager.raw_terms("actor")
    om = env.observation_manager
    for name, term in om.group_terms["actor"].items():
        torch.testing.assert_close(raw[name], term.func(env, **term.params).float())
    # The observation holds the processed value: joint_vel (no delay, no history) is at its
    # offset in the vector as clip(raw) * scale.
    terms = om.describe("actor")["terms"]
    sizes = [t["shape"][0] * max(t["history_length"], 1) for t in terms]
    start = sum(sizes[: [t["name"] for t in terms].index("joint_vel")])
    torch.testing.assert_close(
        obs["actor"][:, start : start + 12], raw["joint_vel"].clamp(-5.0, 5.0) * 0.05
    )

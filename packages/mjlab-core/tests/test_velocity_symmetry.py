"""Left/right mirror of the velocity tasks (`mjlab.tasks.velocity.symmetry`) for rsl-rl's
symmetry augmentation."""

import pytest
import torch
from tensordict import TensorDict

from mjlab.envs import ManagerBasedRlEnv
from mjlab.tasks import load_env_cfg
from mjlab.tasks.velocity.symmetry import (
    joint_mirror,
    mirror_name,
    mirror_observations_and_actions,
)


def _env(task: str, num_envs: int = 2) -> ManagerBasedRlEnv:
    cfg = load_env_cfg(task)
    cfg.scene.num_envs = num_envs
    return ManagerBasedRlEnv(cfg)


def test_mirror_names_swap_sides_of_humanoid_and_quadruped_joints():
    assert mirror_name("left_hip_roll_joint") == "right_hip_roll_joint"
    assert mirror_name("right_wrist_yaw_joint") == "left_wrist_yaw_joint"
    assert mirror_name("FL_calf_joint") == "FR_calf_joint"
    assert mirror_name("RL_hip_joint") == "RR_hip_joint"
    assert mirror_name("waist_yaw_joint") == "waist_yaw_joint"
    assert mirror_name("trunk") == "trunk"


@pytest.mark.parametrize("task", ["Mjlab-Velocity-Flat-Unitree-G1"])
def test_mirroring_the_batch_twice_gives_it_back(task):
    env = _env(task)
    obs, _ = env.reset()
    td = TensorDict(dict(obs), batch_size=[2])
    actions = torch.randn(2, env.action_manager.total_action_dim)
    once, once_actions = mirror_observations_and_actions(env, td, actions)
    assert once.batch_size[0] == 4 and once_actions.shape[0] == 4
    mirrored = once[2:]
    twice, twice_actions = mirror_observations_and_actions(env, mirrored, once_actions[2:])
    for group in td.keys():
        assert torch.equal(twice[group][2:], td[group]), group
        assert not torch.equal(mirrored[group], td[group]), group
    assert torch.equal(twice_actions[2:], actions)


def test_g1_joint_signs_come_from_the_axes():
    env = _env("Mjlab-Velocity-Flat-Unitree-G1", num_envs=1)
    m = joint_mirror(env)
    sign = dict(zip(m.names, m.sign, strict=True))
    assert sign["left_hip_pitch_joint"] == 1 and sign["left_knee_joint"] == 1
    assert sign["left_hip_roll_joint"] == -1 and sign["left_hip_yaw_joint"] == -1
    assert sign["waist_yaw_joint"] == -1 and sign["waist_pitch_joint"] == 1
    partner = {m.names[i]: m.names[p] for i, p in enumerate(m.partner)}
    assert partner["left_elbow_joint"] == "right_elbow_joint"
    assert partner["waist_roll_joint"] == "waist_roll_joint"

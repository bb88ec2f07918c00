"""CommandTerm.hold/release: a held command survives resampling and heading control."""

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.tasks import load_env_cfg


@pytest.fixture(scope="module")
def go1_env():
    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
    cfg.scene.num_envs = 3
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    yield env
    env.close()


def test_a_held_command_survives_resampling_and_heading_control_until_released(go1_env):
    env = go1_env
    term = env.command_manager.get_term("twist")
    term.cfg.heading_command = True
    held = torch.tensor([0.7, -0.1, 0.3])
    term.hold([1], held)
    torch.testing.assert_close(term.command[1], held)  # at once
    zeros = torch.zeros(env.num_envs, env.action_manager.total_action_dim)
    others = term.command[[0, 2]].clone()
    term.steps_left[:] = 1  # every env resamples in the next step
    env.step(zeros)
    torch.testing.assert_close(term.command[1], held)
    assert not torch.equal(term.command[[0, 2]], others)  # the others were resampled
    # The observation the policy acts on next carries the held command.
    row = env.obs_buf["actor"][1]
    windows = row.unfold(0, 3, 1)
    assert torch.isclose(windows, held).all(dim=1).any()
    env.reset(env_ids=torch.tensor([1]))  # a reset draws a command too: still held
    torch.testing.assert_close(term.command[1], held)
    term.release()
    term.steps_left[:] = 1
    env.step(zeros)
    assert not torch.allclose(term.command[1], held)


def test_hold_refuses_a_value_of_the_wrong_size(go1_env):
    term = go1_env.command_manager.get_term("twist")
    with pytest.raises(ValueError, match=r"has 3 values .*lin_vel_x.*shape \(2,\)"):
        term.hold([0], [0.5, 0.0])

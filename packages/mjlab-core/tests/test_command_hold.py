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
    # Held values are a viewer's, not env state: checkpoints do not carry them.
    from mjlab.utils.snapshot import capture

    state = capture(term)
    assert any("steps_left" in path for path in state)
    assert not any("_held" in path for path in state)
    term.release()  # the task's own command comes back at once (a new draw)
    assert not torch.allclose(term.command[1], held)
    assert term._held is None


def test_hold_refuses_a_value_of_the_wrong_size(go1_env):
    term = go1_env.command_manager.get_term("twist")
    with pytest.raises(ValueError, match=r"has 3 values .*lin_vel_x.*shape \(2,\)"):
        term.hold([0], [0.5, 0.0])


def test_hold_needs_a_term_that_keeps_its_command_tensor(go1_env):
    term = go1_env.command_manager.get_term("twist")

    class Copying(type(term)):
        @property
        def command(self):
            return self.vel_command_b.clone()

    copying = object.__new__(Copying)
    copying.__dict__.update(term.__dict__)
    with pytest.raises(TypeError, match="returns a new tensor on each call"):
        copying.hold([0], [0.5, 0.0, 0.0])

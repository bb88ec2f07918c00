"""`feet_air_time_biped` on hand-set contact-sensor states (the term is a pure function of the
sensor's found flags and timers and of the command)."""

from types import SimpleNamespace

import torch

from mjlab.envs import mdp


def _env(found, contact_time, air_time, cmd):
    sensor = SimpleNamespace(
        found=torch.tensor(found),
        current_contact_time=torch.tensor(contact_time),
        current_air_time=torch.tensor(air_time),
    )
    command = torch.tensor(cmd)
    return SimpleNamespace(
        scene={"feet": sensor},
        command_manager=SimpleNamespace(get_command=lambda name: command),
    )


def test_biped_air_time_pays_single_stance_only_capped_and_never_negative():
    env = _env(
        found=[[True, False], [True, True], [False, False], [False, True], [True, False]],
        contact_time=[[0.3, 0.0], [0.5, 0.5], [0.0, 0.0], [0.0, 0.9], [0.3, 0.0]],
        air_time=[[0.0, 0.1], [0.0, 0.0], [0.2, 0.2], [0.7, 0.0], [0.0, 0.1]],
        cmd=[[0.5, 0, 0], [0.5, 0, 0], [0.5, 0, 0], [0.5, 0, 0], [0.0, 0.05, 0]],
    )
    reward = mdp.feet_air_time_biped(env, sensor_name="feet", threshold=0.4)
    # single stance: min(0.3 stance, 0.1 swing); double support 0; flight 0;
    # min(0.9, 0.7) capped at 0.4; standing command 0.
    torch.testing.assert_close(reward, torch.tensor([0.1, 0.0, 0.0, 0.4, 0.0]))
    assert (reward >= 0).all()

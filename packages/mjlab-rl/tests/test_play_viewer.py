"""`play --viewer web|native`: every registered task plays in the web viewer; the command sliders
hold the watched env's command; a mistake is one line. A real browser: tests/test_viewer_browser.py."""

import shutil
import subprocess

import numpy as np
import pytest
import torch

from mjlab.tasks import list_tasks


@pytest.mark.parametrize("task", list_tasks())
def test_every_registered_task_plays_in_the_web_viewer(task, capsys):
    from mjlab.rl.scripts.play import main

    args = ["--agent", "random", "--viewer", "web", "--viewer-port", "0", "--steps", "3"]
    main([task, *args, "--env.scene.num-envs", "2"])
    out = capsys.readouterr().out
    assert "[mjlab] web viewer: http://127.0.0.1:" in out
    assert "mean episode length 3.0 steps" in out
    port = out.split("[mjlab] web viewer: http://127.0.0.1:")[1].split()[0]
    if shutil.which("ss"):  # the viewer was closed with the run
        listeners = subprocess.run(["ss", "-ltn"], capture_output=True, text=True).stdout
        assert "LISTEN" in listeners and f"127.0.0.1:{port} " not in listeners


def test_the_command_sliders_hold_the_watched_envs_command():
    from mjlab.envs import ManagerBasedRlEnv
    from mjlab.rl.scripts import play
    from mjlab.rl.vecenv_wrapper import RslRlVecEnvWrapper
    from mjlab.tasks import load_env_cfg

    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1", play=True)
    cfg.scene.num_envs = 3
    env = ManagerBasedRlEnv(cfg)
    wrapped = RslRlVecEnvWrapper(env)
    args = type("Args", (), {"viewer": "web", "viewer_host": "127.0.0.1", "viewer_port": 0})
    watch = play._open_viewer(args, env, "Mjlab-Velocity-Flat-Unitree-Go1")
    try:
        viewer, term = watch.viewer, watch.term
        # The first view frames the robot as --video does (the task's ViewerCfg).
        camera = viewer.server.initial_camera
        distance = np.linalg.norm(np.asarray(camera.position) - np.asarray(camera.look_at))
        assert distance == pytest.approx(cfg.viewer.distance)
        assert [s.label for s in viewer._command_sliders] == list(term.components)
        ranges = cfg.commands["twist"].ranges
        assert (viewer._command_sliders[0].min, viewer._command_sliders[0].max) == ranges.lin_vel_x
        obs = wrapped.get_observations()
        zeros = torch.zeros(3, wrapped.num_actions)
        lengths = torch.zeros(3, dtype=torch.long)
        returns = torch.zeros(3)
        # Off: the task's commands run, nothing is held.
        play._apply_viewer_inputs(watch, env, wrapped, obs, returns, lengths)
        assert watch.held is None and term._held is None
        # On, watching env 2: its command is the sliders', through resampling.
        viewer.env_index = 2
        viewer._command_toggle.value = True
        for slider, value in zip(viewer._command_sliders, (0.8, -0.2, 0.5), strict=True):
            slider.value = value
        play._apply_viewer_inputs(watch, env, wrapped, obs, returns, lengths)
        term.steps_left[:] = 1
        wrapped.step(zeros)
        np.testing.assert_allclose(term.command[2].numpy(), [0.8, -0.2, 0.5], atol=1e-6)
        assert not torch.allclose(term.command[0], term.command[2])
        # The reset button resets the watched env only.
        wrapped.step(zeros)
        viewer._reset = True
        lengths[:] = 7
        play._apply_viewer_inputs(watch, env, wrapped, obs, returns, lengths)
        assert env.episode_length_buf.tolist() == [2, 2, 0] and lengths.tolist() == [7, 7, 0]
        # Off again: released, the task's own command is back at once.
        viewer._command_toggle.value = False
        play._apply_viewer_inputs(watch, env, wrapped, obs, returns, lengths)
        assert term._held is None
        assert not np.allclose(term.command[2].numpy(), [0.8, -0.2, 0.5])
    finally:
        watch.viewer.close()
        env.close()


def test_native_viewer_without_a_display_is_one_line(monkeypatch, capsys):
    from mjlab.rl.scripts.play import main

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(SystemExit) as stop:
        main(["Mjlab-Cartpole-Balance", "--agent", "zero", "--viewer", "native"])
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and len(err.splitlines()) == 1
    assert "--viewer native needs a display" in err and "--viewer web" in err


def test_a_video_while_watching_needs_a_length(capsys):
    from mjlab.rl.scripts.play import main

    with pytest.raises(SystemExit) as stop:
        main(["Mjlab-Cartpole-Balance", "--agent", "zero", "--viewer", "web", "--video"])
    assert stop.value.code == 2
    assert "--video with --viewer needs --steps" in capsys.readouterr().err

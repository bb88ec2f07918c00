"""Every registered task builds, steps and matches its spaces; Cartpole Balance is solvable."""

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.tasks import list_tasks, load_env_cfg

EXPECTED = {
    "Mjlab-Cartpole-Balance",
    "Mjlab-Cartpole-Swingup",
    "Mjlab-Velocity-Flat-Unitree-Go1",
    "Mjlab-Velocity-Rough-Unitree-Go1",
    "Mjlab-Velocity-Flat-Unitree-G1",
    "Mjlab-Velocity-Rough-Unitree-G1",
    "Mjlab-Tracking-Flat-Unitree-G1",
    "Mjlab-Tracking-Flat-Unitree-G1-No-State-Estimation",
}


def test_builtin_tasks_are_registered():
    assert set(list_tasks()) >= EXPECTED


def test_unknown_task_lists_close_matches():
    with pytest.raises(KeyError, match="Did you mean: Mjlab-Cartpole-Balance"):
        load_env_cfg("Mjlab-Cartpole-Balanse")


def test_load_env_cfg_returns_fresh_copies():
    a = load_env_cfg("Mjlab-Cartpole-Balance")
    a.scene.num_envs = 999
    assert load_env_cfg("Mjlab-Cartpole-Balance").scene.num_envs != 999


@pytest.mark.parametrize("task_id", sorted(EXPECTED))
@pytest.mark.parametrize("play", [False, True], ids=["train", "play"])
def test_task_constructs_steps_and_matches_its_spaces(task_id, play):
    cfg = load_env_cfg(task_id, play=play)
    cfg.scene.num_envs = 4
    env = ManagerBasedRlEnv(cfg)
    obs, _ = env.reset(seed=0)
    for group, value in obs.items():
        assert env.single_observation_space[group].shape == value.shape[1:]
    assert env.action_space.shape == (4, env.action_manager.total_action_dim)
    gen = torch.Generator().manual_seed(0)
    for _ in range(20):
        action = torch.randn(env.action_space.shape, generator=gen)
        obs, rew, _term, _trunc, _ = env.step(action)
        assert all(torch.isfinite(v).all() for v in obs.values())
        assert torch.isfinite(rew).all()
    env.close()


def test_cartpole_balance_is_solvable_by_a_pd_controller():
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 8
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    pole = env.scene["cartpole"]
    for step in range(env.max_episode_length):
        q, v = pole.data.joint_pos, pole.data.joint_vel
        # Force (N) = 40 theta + 8 theta_dot + x + 2 x_dot, in action units of 10 N.
        force = 40 * q[:, 1] + 8 * v[:, 1] + 1.0 * q[:, 0] + 2.0 * v[:, 0]
        _, _, term, trunc, _ = env.step((force / 10).unsqueeze(-1))
        assert not term.any(), f"pole fell at step {step}"
    assert trunc.all(), "every env reached the full episode length"


def test_a_broken_entry_point_is_named_and_the_other_tasks_stay(tmp_path, monkeypatch):
    # A project's task module with a bug, found through the `mjlab.tasks` entry-point group.
    from importlib import metadata

    from mjlab.tasks import registry

    (tmp_path / "broken_project_tasks.py").write_text("register_mjlab_task('X', 1, 2, 3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    broken = metadata.EntryPoint(name="broken", value="broken_project_tasks", group="mjlab.tasks")
    installed = list(metadata.entry_points(group="mjlab.tasks"))  # mjlab-core's `builtin`
    monkeypatch.setattr(
        registry.metadata,
        "entry_points",
        lambda group: [broken, *installed] if group == "mjlab.tasks" else [],
    )
    monkeypatch.setattr(registry, "_DISCOVERED", False)
    monkeypatch.setattr(registry, "_BROKEN", {})
    with pytest.warns(UserWarning, match="'broken = broken_project_tasks'.*NameError"):
        tasks = registry.list_tasks()
    assert "Mjlab-Cartpole-Balance" in tasks
    with pytest.raises(KeyError, match=r"Not loaded: .*broken_project_tasks.py:1"):
        registry.load_env_cfg("Broken-Task")

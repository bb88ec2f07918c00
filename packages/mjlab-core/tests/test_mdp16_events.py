"""mjlab 1.6's event helpers and NaN termination: resolve_env_ids, reset_scene_to_default,
apply_external_force_torque, nan_detection, on a real Go1 env."""

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv, mdp
from mjlab.managers import SceneEntityCfg
from mjlab.tasks import load_env_cfg


@pytest.fixture(scope="module")
def env():
    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
    cfg.scene.num_envs = 3
    env = ManagerBasedRlEnv(cfg)
    env.reset()
    yield env
    env.close()


def test_resolve_env_ids_gives_every_env_for_none_and_checks_ids(env):
    assert mdp.resolve_env_ids(env, None).tolist() == [0, 1, 2]
    assert mdp.resolve_env_ids(env, [2, 0]).tolist() == [2, 0]
    with pytest.raises(ValueError):
        mdp.resolve_env_ids(env, [3])


def test_reset_scene_to_default_restores_root_and_joints_of_the_chosen_envs(env):
    robot = env.scene["robot"]
    data = robot.data
    pose = data.default_root_state.clone()
    pose[:, :3] += env.scene.env_origins + torch.tensor([0.3, -0.2, 0.1])
    pose[:, 7:10] = 0.5
    robot.write_root_state_to_sim(pose)
    robot.write_joint_state_to_sim(data.default_joint_pos + 0.2, data.default_joint_vel + 1.0)
    env.sim.forward()
    mdp.reset_scene_to_default(env, torch.tensor([0, 2]))
    env.sim.forward()
    qpos, qvel = env.sim.data.qpos.float(), env.sim.data.qvel.float()
    for i in (0, 2):
        expected = data.default_root_state[i, :3] + env.scene.env_origins[i]
        torch.testing.assert_close(qpos[i, :3], expected)
        torch.testing.assert_close(qpos[i, 7:], data.default_joint_pos[i])
        assert qvel[i].abs().max() == 0.0
    # Env 1 keeps what was written.
    torch.testing.assert_close(qpos[1, 7:], data.default_joint_pos[1] + 0.2)
    assert torch.allclose(qvel[1, :3], torch.full((3,), 0.5, dtype=qvel.dtype))


def test_external_force_is_drawn_in_range_for_the_chosen_envs_and_bodies_and_acts(env):
    mdp.reset_scene_to_default(env, None)
    robot = env.scene["robot"]
    trunk = SceneEntityCfg("robot", body_names=("trunk",))
    trunk.resolve(env.scene)
    gid = robot.body_ids_global[robot.body_names.index("trunk")]
    xfrc = env.sim.data.xfrc_applied
    xfrc.zero_()
    # Upward force well above the Go1's weight (~12 kg) on env 1's trunk only.
    mdp.apply_external_force_torque(env, torch.tensor([1]), (400.0, 500.0), (-1.0, 1.0), trunk)
    assert (xfrc[1, gid, :3] >= 400.0).all() and (xfrc[1, gid, :3] <= 500.0).all()
    assert (xfrc[1, gid, 3:].abs() <= 1.0).all()
    others = torch.ones_like(xfrc, dtype=torch.bool)
    others[1, gid] = False
    assert (xfrc[others] == 0).all()
    z0 = env.sim.data.qpos[:, 2].clone()
    env.sim.step(10)
    rise = env.sim.data.qpos[:, 2] - z0
    assert rise[1] > 0.01 and rise[0] < 0.005 and rise[2] < 0.005
    # An env's reset clears it; (0, 0) ranges remove it.
    env.reset(env_ids=torch.tensor([1]))
    assert (xfrc[1] == 0).all()
    mdp.apply_external_force_torque(env, torch.tensor([1]), (400.0, 500.0), (0.0, 0.0), trunk)
    mdp.apply_external_force_torque(env, None, (0.0, 0.0), (0.0, 0.0), trunk)
    assert (xfrc == 0).all()


def test_nan_detection_flags_only_the_diverged_env(env):
    mdp.reset_scene_to_default(env, None)
    env.sim.forward()
    assert not mdp.nan_detection(env).any()
    env.sim.data.qvel[1, 3] = float("nan")
    assert mdp.nan_detection(env).tolist() == [False, True, False]
    mdp.reset_scene_to_default(env, None)


def test_contact_match_takes_mjlabs_pattern_and_leaves_out_excluded_names():
    from mjlab.sensor import ContactMatch, ContactSensorCfg

    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
    cfg.scene.num_envs = 2
    cfg.scene.sensors = (
        *cfg.scene.sensors,
        ContactSensorCfg(
            name="front_feet",
            primary=ContactMatch(mode="geom", pattern=r"[FR][RL]", exclude="R."),
        ),
    )
    env = ManagerBasedRlEnv(cfg)
    try:
        sensor = env.scene["front_feet"]
        assert [n.split("/")[-1] for n in sensor.slot_names] == ["FR", "FL"]
        env.reset()
        env.step(torch.zeros(2, env.action_manager.total_action_dim))
        assert sensor.found.shape == (2, 2)
    finally:
        env.close()
    with pytest.raises(ValueError, match="exactly one of patterns"):
        ContactMatch(mode="geom", pattern="FR", patterns=("FL",))
    with pytest.raises(ValueError, match=r"exclude=.*leaves none"):
        ContactMatch(mode="geom", pattern="FR", exclude=(".*",)).select(["FR"], "entity 'robot'")

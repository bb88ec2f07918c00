"""mjlab 1.6's remaining mdp terms on real Go1 envs: posture, electrical_power_cost,
mean_action_acc, height_scan's miss_value, apply_body_impulse (a "step" event),
randomize_terrain and reset_root_state_from_flat_patches."""

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv, mdp
from mjlab.managers import EventTermCfg, RewardTermCfg, SceneEntityCfg
from mjlab.tasks import load_env_cfg
from mjlab.terrains import (
    FlatPatchSamplingCfg,
    PyramidSlopedTerrainCfg,
    TerrainEntityCfg,
    TerrainGeneratorCfg,
)
from mjlab.utils.math import quat_apply

TRUNK = SceneEntityCfg("robot", body_names=("trunk",))


@pytest.fixture(scope="module")
def env():
    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
    cfg.scene.num_envs = 3
    cfg.rewards["posture"] = RewardTermCfg(
        func=mdp.posture,
        weight=1.0,
        params={"std": {".*_hip_joint": 0.2, ".*_(thigh|calf)_joint": 0.5}},
    )
    cfg.rewards["power"] = RewardTermCfg(func=mdp.electrical_power_cost, weight=-1e-3)
    # 0.1 s impulses after 0.2 s of quiet: with step_dt 0.02 s, 10 quiet steps, 5 pushed.
    cfg.events["impulse"] = EventTermCfg(
        func=mdp.apply_body_impulse,
        mode="step",
        params={
            "force_range": (30.0, 40.0),
            "torque_range": (0.0, 0.0),
            "duration_s": (0.1, 0.1),
            "cooldown_s": (0.2, 0.2),
            "asset_cfg": TRUNK,
            "body_point_offset": (0.0, 0.0, 0.1),
        },
    )
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    yield env
    env.close()


def _reward_term(env, name):
    return env.reward_manager.cfg[name].func


def test_posture_is_one_at_the_default_pose_and_uses_each_joints_std(env):
    term = _reward_term(env, "posture")
    robot = env.scene["robot"]
    data = robot.data
    all_joints = SceneEntityCfg("robot")
    all_joints.resolve(env.scene)
    robot.write_joint_state_to_sim(data.default_joint_pos.clone(), data.default_joint_vel)
    env.sim.forward()
    torch.testing.assert_close(term(env, None, all_joints), torch.ones(3))
    # Env 1: every hip joint 0.2 rad off (std 0.2): mean over 12 joints of 4 x 1 = 1/3.
    pos = data.default_joint_pos.clone()
    hips = [i for i, n in enumerate(robot.joint_names) if n.endswith("_hip_joint")]
    pos[1, hips] += 0.2
    # Env 2: every calf joint 0.5 rad off (std 0.5), the same 1/3.
    calves = [i for i, n in enumerate(robot.joint_names) if n.endswith("_calf_joint")]
    pos[2, calves] -= 0.5
    robot.write_joint_state_to_sim(pos, data.default_joint_vel)
    env.sim.forward()
    value = term(env, None, all_joints)
    expected = torch.exp(torch.tensor(-4.0 / 12.0))
    torch.testing.assert_close(value, torch.stack([torch.tensor(1.0), expected, expected]))


def test_posture_refuses_a_joint_without_std(env):
    cfg = RewardTermCfg(func=mdp.posture, weight=1.0, params={"std": {".*_hip_joint": 0.2}})
    cfg.params["asset_cfg"] = SceneEntityCfg("robot")
    cfg.params["asset_cfg"].resolve(env.scene)
    with pytest.raises(ValueError, match="thigh"):
        mdp.posture(cfg, env)


def test_electrical_power_counts_only_positive_mechanical_power(env):
    term = _reward_term(env, "power")
    all_joints = SceneEntityCfg("robot")
    all_joints.resolve(env.scene)
    torch.manual_seed(0)
    for _ in range(5):
        env.step(torch.rand(3, env.action_manager.total_action_dim) * 2 - 1)
    robot = env.scene["robot"]
    tau, qd = robot.data.actuator_force, robot.data.joint_vel
    power = tau * qd
    assert (power < 0).any() and (power > 0).any()  # the check below could fail
    torch.testing.assert_close(term(env, all_joints), power.clamp(min=0).sum(dim=1))
    braking = (power < 0).any(dim=1)
    assert (term(env, all_joints) < power.abs().sum(dim=1))[braking].all()


def test_mean_action_acc_is_the_mean_absolute_second_difference(env):
    am = env.action_manager
    a0 = torch.zeros(3, am.total_action_dim)
    a1 = torch.full_like(a0, 0.5)
    a2 = torch.linspace(-1, 1, am.total_action_dim).expand(3, -1).clone()
    for a in (a0, a1, a2):
        env.step(a)
    assert not env.reset_buf.any()
    expected = (a2.clamp(-100, 100) - 2 * a1 + a0).abs().mean(dim=1)
    torch.testing.assert_close(mdp.mean_action_acc(env), expected)


def test_body_impulse_pushes_in_cycles_and_a_reset_stops_it(env):
    env.reset(seed=1)
    robot = env.scene["robot"]
    trunk = robot.body_names.index("trunk")
    gid = robot.body_ids_global[trunk]
    xfrc = env.sim.data.xfrc_applied
    term = env.event_manager.cfg["impulse"].func
    action = torch.zeros(3, env.action_manager.total_action_dim)
    pushed = []
    for _ in range(32):
        env.step(action)
        pushed.append((xfrc[:, gid, :3].abs().sum(dim=1) > 0).clone())
    on = torch.stack(pushed).T  # (envs, steps)
    # 0.2 s quiet (10 steps of 0.02 s, counted from the reset), then 0.1 s pushed (5 steps),
    # then quiet again: the same in every env, since the ranges are single values.
    first = int(on[0].to(torch.int).argmax())
    assert 8 <= first <= 10 and not on[:, :first].any()
    assert on[:, first : first + 5].all() and not on[:, first + 5 : first + 15].any()
    assert on[:, first + 15 : first + 20].all() and not on[:, first + 20 :].any()
    while not term.active.all():
        env.step(action)
    force = xfrc[:, gid].float()
    assert ((force[:, :3] >= 30) & (force[:, :3] <= 40)).all()
    # The off-centre point adds offset_w x force to a zero torque draw.
    quat = robot.data.body_link_quat_w[:, trunk]
    offset_w = quat_apply(quat, torch.tensor([0.0, 0.0, 0.1]).expand(3, 3))
    expected = torch.cross(offset_w, force[:, :3], dim=-1)
    torch.testing.assert_close(force[:, 3:], expected, atol=1e-4, rtol=0)
    env.reset(env_ids=torch.tensor([0, 2]))
    assert (xfrc[[0, 2], gid] == 0).all() and (xfrc[1, gid, :3] != 0).all()
    assert term.active.tolist() == [False, True, False]


def test_step_mode_is_checked_like_the_others():
    with pytest.raises(ValueError, match="'step'"):
        EventTermCfg(func=mdp.randomize_terrain, mode="every_step")


@pytest.fixture(scope="module")
def patch_env():
    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
    cfg.scene.num_envs = 4
    slope = PyramidSlopedTerrainCfg(
        slope_range=(0.2, 0.2),
        platform_width=1.0,
        flat_patch_sampling={
            "spawn": FlatPatchSamplingCfg(num_patches=5, patch_radius=0.3, max_height_diff=0.01)
        },
    )
    cfg.scene.terrain = TerrainEntityCfg(
        terrain_type="generator",
        terrain_generator=TerrainGeneratorCfg(
            size=(4.0, 4.0), num_rows=2, num_cols=2, border_width=1.0, sub_terrains={"s": slope}
        ),
    )
    cfg.events.pop("push_robot", None)
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    yield env
    env.close()


def test_reset_on_flat_patches_puts_the_root_on_a_patch_of_its_sub_terrain(patch_env):
    env = patch_env
    terrain = env.scene.terrain
    robot = env.scene["robot"]
    ids = torch.arange(4)
    mdp.reset_root_state_from_flat_patches(env, ids, "spawn", pose_range={"yaw": (-3.0, 3.0)})
    pos = robot.data.root_link_pos_w
    patches = terrain.flat_patches["spawn"][terrain.terrain_levels, terrain.terrain_types]
    gap = (patches[:, :, :2] - pos[:, None, :2]).norm(dim=-1).min(dim=1).values
    assert (gap < 1e-5).all()
    nearest = (patches[:, :, :2] - pos[:, None, :2]).norm(dim=-1).argmin(dim=1)
    height = patches[ids, nearest, 2] + robot.data.default_root_state[:, 2]
    torch.testing.assert_close(pos[:, 2], height)
    # The patches lie on the flat top, so the root is above the pyramid's platform.
    assert (patches[..., 2] > 0.2).all()
    # A patch name the terrain does not have is a mistake, not a reason to spawn elsewhere.
    with pytest.raises(ValueError, match=r"no flat patches named 'spwan'; it has \['spawn'\]"):
        mdp.reset_root_state_from_flat_patches(env, ids, "spwan")


def test_randomize_terrain_moves_envs_across_the_grid(patch_env):
    env = patch_env
    terrain = env.scene.terrain
    seen = set()
    for _ in range(12):
        mdp.randomize_terrain(env, None)
        seen |= set(
            zip(terrain.terrain_levels.tolist(), terrain.terrain_types.tolist(), strict=True)
        )
        expected = terrain.terrain_origins[terrain.terrain_levels, terrain.terrain_types]
        torch.testing.assert_close(env.scene.env_origins, expected)
    assert len(seen) == 4


def test_height_scan_miss_value_replaces_misses_only():
    cfg = load_env_cfg("Mjlab-Velocity-Rough-Unitree-Go1")
    cfg.scene.num_envs = 1
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    name = next(n for n, s in env.scene.sensors.items() if hasattr(s, "hit"))
    sensor = env.scene[name]
    plain = mdp.height_scan(env, name)
    assert sensor.hit.all()
    torch.testing.assert_close(mdp.height_scan(env, name, miss_value=-9.0), plain)
    # Lift the robot far above the map: every ray misses.
    state = env.scene["robot"].data.default_root_state.clone()
    state[:, 2] = 100.0
    env.scene["robot"].write_root_state_to_sim(state)
    env.sim.forward()
    env.scene.update(env.step_dt)
    assert not sensor.hit.any()
    assert (mdp.height_scan(env, name, miss_value=-9.0) == -9.0).all()
    env.close()


def test_height_scan_reads_mjlabs_ray_cast_sensor():
    from mjlab.sensor import GridPatternCfg, ObjRef, RayCastSensorCfg

    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
    cfg.scene.num_envs = 2
    scan = RayCastSensorCfg(
        name="terrain_scan",
        frame=ObjRef(type="body", name="trunk", entity="robot"),
        pattern=GridPatternCfg(size=(0.4, 0.2), resolution=0.2),
        ray_alignment="yaw",
        max_distance=2.0,
        include_geom_groups=(0,),  # the terrain's group: the legs do not block the rays
    )
    cfg.scene.sensors = (*cfg.scene.sensors, scan)
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    trunk_z = env.scene["robot"].data.root_link_pos_w[:, 2]
    heights = mdp.height_scan(env, "terrain_scan", offset=0.0)
    assert heights.shape == (2, 3 * 2)
    # Flat ground at z = 0: every ray sees the trunk's own height.
    torch.testing.assert_close(heights, trunk_z[:, None].expand(2, 6), atol=1e-4, rtol=0)
    torch.testing.assert_close(mdp.height_scan(env, "terrain_scan"), heights - 0.5)
    state = env.scene["robot"].data.default_root_state.clone()
    state[:, 2] = 10.0  # beyond max_distance: misses
    env.scene["robot"].write_root_state_to_sim(state)
    env.sim.forward()
    env.scene.update(env.step_dt)
    assert (mdp.height_scan(env, "terrain_scan", offset=0.0) == 2.0).all()
    assert (mdp.height_scan(env, "terrain_scan", miss_value=-1.0) == -1.0).all()
    env.close()


def test_a_wrong_sensor_name_in_a_term_names_the_term():
    from mjlab.scene.scene import SceneLookupError

    cfg = load_env_cfg("Mjlab-Velocity-Rough-Unitree-Go1")
    cfg.scene.num_envs = 1
    cfg.observations["critic"].terms["height_scan"].params["sensor_name"] = "scann"
    with pytest.raises(KeyError) as err:
        ManagerBasedRlEnv(cfg)
    assert isinstance(err.value, SceneLookupError)
    assert str(err.value).startswith(
        "Observation term 'critic/height_scan': Scene has no entity or sensor 'scann'."
    )


def test_flat_patch_reset_on_a_plane_is_the_uniform_reset(env):
    ids = torch.arange(3)
    mdp.reset_root_state_from_flat_patches(env, ids, "spawn")
    robot = env.scene["robot"]
    torch.testing.assert_close(
        robot.data.root_link_pos_w, env.scene.env_origins + robot.data.default_root_state[:, :3]
    )

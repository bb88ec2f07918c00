"""Left/right mirror of the velocity tasks (`mjlab.tasks.velocity.symmetry`) for rsl-rl's
symmetry augmentation: the mirror of an observation is what the real env observes in the
mirrored state."""

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv, mdp
from mjlab.managers import ObservationTermCfg
from mjlab.tasks import load_env_cfg
from mjlab.tasks.velocity.symmetry import (
    VelocityMirror,
    joint_mirror,
    mirror_name,
    mirror_observations_and_actions,
    velocity_mirror,
)
from mjlab.utils.math import quat_from_angle_axis, quat_mul

G1_FLAT = "Mjlab-Velocity-Flat-Unitree-G1"
GO1_FLAT = "Mjlab-Velocity-Flat-Unitree-Go1"
G1_ROUGH = "Mjlab-Velocity-Rough-Unitree-G1"
GO1_ROUGH = "Mjlab-Velocity-Rough-Unitree-Go1"


def _cfg(task: str, num_envs: int = 2):
    cfg = load_env_cfg(task)
    cfg.scene.num_envs = num_envs
    cfg.observations["actor"].enable_corruption = False
    generator = cfg.scene.terrain.terrain_generator
    if generator is not None:  # two tiles are enough to build the rough task's terrain
        generator.num_rows, generator.num_cols = 1, 2
    return cfg


@pytest.fixture(scope="module")
def envs():
    built: dict[str, ManagerBasedRlEnv] = {}

    def get(task: str) -> ManagerBasedRlEnv:
        if task not in built:
            built[task] = ManagerBasedRlEnv(_cfg(task))
            built[task].reset()
        return built[task]

    return get


def _obs(env: ManagerBasedRlEnv):
    """The env's observation groups as rsl-rl passes them (a TensorDict), or as a plain dict
    where only mjlab-core is installed (the mirror accepts both)."""
    try:
        from tensordict import TensorDict
    except ImportError:
        return dict(env.obs_buf)
    return TensorDict(dict(env.obs_buf), batch_size=[env.num_envs])


def _rows(obs, start: int):
    """Rows `start:` of every group, as the same mapping type."""
    if hasattr(obs, "batch_size"):
        return obs[start:]
    return {key: value[start:] for key, value in obs.items()}


def test_mirror_names_swap_sides_of_humanoid_and_quadruped_parts():
    assert mirror_name("left_hip_roll_joint") == "right_hip_roll_joint"
    assert mirror_name("right_wrist_yaw_joint") == "left_wrist_yaw_joint"
    assert mirror_name("FL_calf_joint") == "FR_calf_joint"
    assert mirror_name("RL_hip_joint") == "RR_hip_joint"
    assert mirror_name("RR") == "RL"
    assert mirror_name("waist_yaw_joint") == "waist_yaw_joint"
    assert mirror_name("trunk") == "trunk"


def test_joint_partners_and_signs_come_from_the_model(envs):
    g1 = joint_mirror(envs(G1_FLAT))
    sign = dict(zip(g1.names, g1.sign, strict=True))
    partner = {g1.names[i]: g1.names[p] for i, p in enumerate(g1.partner)}
    # Hinges about the lateral axis keep their sign, roll and yaw hinges flip.
    assert sign["left_hip_pitch_joint"] == sign["left_knee_joint"] == 1
    assert sign["left_hip_roll_joint"] == sign["left_hip_yaw_joint"] == -1
    assert sign["waist_yaw_joint"] == sign["waist_roll_joint"] == -1
    assert sign["waist_pitch_joint"] == 1
    assert partner["left_elbow_joint"] == "right_elbow_joint"
    assert partner["waist_roll_joint"] == "waist_roll_joint"
    go1 = joint_mirror(envs(GO1_FLAT))
    sign = dict(zip(go1.names, go1.sign, strict=True))
    partner = {go1.names[i]: go1.names[p] for i, p in enumerate(go1.partner)}
    assert partner["FL_hip_joint"] == "FR_hip_joint" and partner["RR_calf_joint"] == "RL_calf_joint"
    assert sign["FL_hip_joint"] == -1 and sign["FL_thigh_joint"] == sign["RL_calf_joint"] == 1


@pytest.mark.parametrize(
    "task",
    [G1_FLAT, GO1_FLAT, pytest.param(G1_ROUGH, marks=pytest.mark.slow), GO1_ROUGH],
)
def test_mirroring_twice_gives_the_batch_back(envs, task):
    env = envs(task)
    obs = _obs(env)
    actions = torch.randn(env.num_envs, env.action_manager.total_action_dim)
    once, once_actions = mirror_observations_and_actions(env, obs, actions)
    n = env.num_envs
    assert type(once) is type(obs)
    assert all(value.shape[0] == 2 * n for value in once.values())
    assert once_actions.shape == (2 * n, actions.shape[1])
    assert set(once.keys()) == {"actor", "critic"}
    twice, twice_actions = mirror_observations_and_actions(env, _rows(once, n), once_actions[n:])
    for group in ("actor", "critic"):
        assert torch.equal(once[group][:n], obs[group])
        assert not torch.equal(once[group][n:], obs[group]), group
        assert torch.equal(twice[group][n:], obs[group]), group
    assert not torch.equal(once_actions[n:], actions)
    assert torch.equal(twice_actions[n:], actions)
    # rsl-rl's mirror loss calls with one of the two only.
    assert mirror_observations_and_actions(env, None, actions)[0] is None
    assert mirror_observations_and_actions(env, obs, None)[1] is None


def test_rough_height_scan_is_mirrored_across_the_base_x_axis(envs):
    env = envs(GO1_ROUGH)
    mirror = velocity_mirror(env)
    pattern = env.scene["height_scan"].pattern_b[:, :2]
    om = env.observation_manager
    start = 0
    for name, dim in om.term_dims["critic"].items():
        if name == "height_scan":
            break
        start += dim[0]
    rays = mirror.groups["critic"].index[start : start + pattern.shape[0]] - start
    assert torch.allclose(pattern[rays], pattern * torch.tensor([1.0, -1.0]), atol=1e-6)
    assert not torch.equal(rays, torch.arange(pattern.shape[0]))


def _axis_angle(axis, angle) -> torch.Tensor:
    return quat_from_angle_axis(torch.tensor(angle), torch.tensor(axis))


@pytest.mark.parametrize("task", [G1_FLAT, GO1_FLAT])
def test_the_mirrored_observation_is_what_the_env_sees_in_the_mirrored_state(envs, task):
    """Env 0 gets an arbitrary state, env 1 its mirror image across the x-z plane; the env's
    own observation of env 1 must be the mirror of its observation of env 0."""
    env = envs(task)
    robot = env.scene["robot"]
    jm = joint_mirror(env)
    partner, sign = torch.tensor(jm.partner), torch.tensor(jm.sign)
    gen = torch.Generator().manual_seed(0)
    origins = env.scene.env_origins

    rel = torch.tensor([0.3, 0.2, robot.data.root_link_pos_w[0, 2].item()])
    quat = quat_mul(_axis_angle((0.0, 0.0, 1.0), 0.7), _axis_angle((0.3, 1.0, 0.2), 0.25))
    lin = torch.tensor([0.4, -0.3, 0.1])
    ang = torch.tensor([0.5, -0.2, 0.8])
    reflect = torch.tensor([1.0, -1.0, 1.0])
    root = torch.stack(
        [
            torch.cat([origins[0] + rel, quat, lin, ang]),
            torch.cat(
                [
                    origins[1] + rel * reflect,
                    quat * torch.tensor([1.0, -1.0, 1.0, -1.0]),  # M R M for M = diag(1,-1,1)
                    lin * reflect,
                    -ang * reflect,  # a pseudovector
                ]
            ),
        ]
    )
    robot.write_root_state_to_sim(root)
    default = robot.data.default_joint_pos[0]
    q = default + 0.3 * torch.randn(default.shape, generator=gen)
    qd = torch.randn(default.shape, generator=gen)
    robot.write_joint_state_to_sim(
        torch.stack([q, sign * q[partner]]), torch.stack([qd, sign * qd[partner]])
    )
    command = env.command_manager.get_term("twist")
    command.vel_command_b[0] = torch.tensor([0.6, 0.25, -0.4])
    command.vel_command_b[1] = torch.tensor([0.6, -0.25, 0.4])
    actions = torch.randn(env.action_manager.total_action_dim, generator=gen)
    env.action_manager.action[0] = actions
    env.action_manager.action[1] = velocity_mirror(env).actions(actions[None])[0]
    env.sim.forward()
    obs = env.observation_manager.compute(update_history=True)

    mirror = velocity_mirror(env)
    for group in ("actor", "critic"):
        x = obs[group]
        assert x[0].abs().max() > 0.1
        torch.testing.assert_close(mirror.mirror_group(group, x[:1])[0], x[1], atol=1e-4, rtol=0)
        # Without the signs (a plain left/right swap) the mirror would not match.
        swapped = x[:1, mirror.groups[group].index][0]
        assert not torch.allclose(swapped, x[1], atol=1e-3)


def test_a_term_the_mirror_does_not_know_is_named():
    cfg = _cfg(GO1_FLAT, num_envs=1)
    cfg.observations["actor"].terms["base_height"] = ObservationTermCfg(func=mdp.root_pos_w)
    env = ManagerBasedRlEnv(cfg)
    with pytest.raises(ValueError, match=r"'actor/base_height'.*unknown to the velocity mirror"):
        VelocityMirror(env)

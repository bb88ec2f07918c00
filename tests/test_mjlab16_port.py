"""A task written against mjlab 1.6's public API (examples/mjlab16_port/go1_velocity.py: a
`make_velocity_env_cfg` factory edited by name per robot, only the robot asset swapped) builds
on rough and flat ground, steps, registers, and trains with rsl-rl PPO here."""

import importlib.util
from pathlib import Path

import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.rl import MjlabOnPolicyRunner, RslRlVecEnvWrapper
from mjlab.rl.config import to_rsl_rl_train_cfg
from mjlab.tasks import load_env_cfg, load_rl_cfg

_EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "mjlab16_port" / "go1_velocity.py"


@pytest.fixture(scope="module")
def port():
    spec = importlib.util.spec_from_file_location("go1_velocity", _EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _small(cfg, num_envs):
    cfg.scene.num_envs = num_envs
    gen = cfg.scene.terrain.terrain_generator
    if gen is not None:
        gen.num_rows, gen.num_cols = 2, 4
    return cfg


def test_the_rough_port_builds_with_its_terrain_sensors_and_terms(port):
    cfg = _small(port.unitree_go1_rough_env_cfg(), 4)
    env = ManagerBasedRlEnv(cfg)
    try:
        obs, _ = env.reset(seed=0)
        kinds = set(env.scene.terrain.generator.sub_terrain_names.ravel())
        assert kinds == {"flat_noise", "slopes", "stairs", "grid"}
        assert env.scene.terrain.generator.boxes  # the box kinds made geoms
        scan = env.scene["terrain_scan"]
        assert obs["actor"].shape[1] == 3 + 3 + 3 + 12 + 12 + 12 + scan.num_rays
        for _ in range(25):
            obs, reward, terminated, _, _ = env.step(
                torch.zeros(4, env.action_manager.total_action_dim)
            )
        assert torch.isfinite(obs["actor"]).all() and torch.isfinite(reward).all()
        # The robot stands on its sub-terrain: the foot sensor sees four feet near the ground,
        # and the contact sensor finds them touching it, on the box kinds too.
        feet = env.scene["foot_height_scan"].data.heights
        assert feet.shape == (4, 4) and (feet.abs() < 0.1).all()
        kind = env.scene.terrain.generator.sub_terrain_names
        types = env.scene.terrain.terrain_types.tolist()
        levels = env.scene.terrain.terrain_levels.tolist()
        assert {kind[r, c] for r, c in zip(levels, types, strict=True)} == set(kinds)
        assert (env.scene["feet_ground_contact"].data.found > 0).any(dim=1).all()
        assert not terminated.any()
    finally:
        env.close()


@pytest.mark.slow
def test_the_flat_port_registers_and_trains(port, tmp_path):
    port.register()
    cfg = load_env_cfg("Port-Velocity-Flat-Unitree-Go1")
    assert cfg.scene.terrain.terrain_type == "plane"
    assert "height_scan" not in cfg.observations["actor"].terms
    play = load_env_cfg("Port-Velocity-Flat-Unitree-Go1", play=True)
    assert "push_robot" not in play.events and not play.observations["actor"].enable_corruption
    cfg.scene.num_envs = 64
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
    agent = load_rl_cfg("Port-Velocity-Flat-Unitree-Go1")
    agent.max_iterations = 3
    agent.num_steps_per_env = 16
    runner = MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(agent), str(tmp_path))
    try:
        runner.learn(num_learning_iterations=3)
    finally:
        env.close()
    saved = sorted(tmp_path.glob("model_*.pt"), key=lambda p: int(p.stem.split("_")[1]))
    first, last = (torch.load(p, weights_only=True) for p in (saved[0], saved[-1]))
    assert len(saved) >= 2 and first["iter"] < last["iter"]
    changed = [
        key
        for key, value in first["actor_state_dict"].items()
        if value.is_floating_point() and not torch.equal(value, last["actor_state_dict"][key])
    ]
    assert changed, "PPO updates changed no actor weight"
    assert all(torch.isfinite(v).all() for v in last["actor_state_dict"].values())

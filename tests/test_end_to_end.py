"""Train -> export -> deploy across the packages, on real MuJoCo, rsl-rl and onnxruntime."""

import numpy as np
import pytest
import torch

from mjlab.deploy import OnnxPolicy
from mjlab.envs import ManagerBasedRlEnv
from mjlab.tasks import load_env_cfg


def _term_values(env, group="actor") -> dict:
    """The raw value of every term of an observation group, by name (what a robot's state
    estimator would hand to OnnxPolicy.build_observation)."""
    om = env.observation_manager
    return {
        name: term.func(env, **term.params)[0].cpu().numpy()
        for name, term in om.group_terms[group].items()
    }


@pytest.mark.slow
def test_cartpole_trained_by_the_train_command_balances_through_mjlab_deploy(cartpole_train_run):
    # `train Mjlab-Cartpole-Balance` with its defaults (150 iterations), run once per session.
    run = cartpole_train_run
    policy = OnnxPolicy(run / "policy.onnx")
    assert policy.metadata.task_id == "Mjlab-Cartpole-Balance"

    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 1
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=3)
    scale, offset = policy.action_scale, policy.action_offset
    assert policy.metadata.action_type == "joint_effort"
    for step in range(env.max_episode_length):
        obs = policy.build_observation(_term_values(env))
        action = policy(obs)
        # The env applies offset + scale * action itself; check the metadata agrees with it.
        term = env.action_manager.get_term("effort")
        np.testing.assert_allclose(scale, term.scale.numpy())
        np.testing.assert_allclose(offset, term.offset[0].numpy())
        _, _, terminated, truncated, _ = env.step(torch.as_tensor(action).unsqueeze(0))
        assert not terminated.any(), f"the pole fell at step {step}"
    assert truncated.all(), "the episode ran to its time limit"


@pytest.mark.slow
def test_go1_export_matches_torch_and_sim2sim_reproduces_the_env_observations(tmp_path):
    from mjlab.deploy.sim2sim import Sim2Sim
    from mjlab.export import check_onnx_parity
    from mjlab.rl import MjlabOnPolicyRunner, RslRlVecEnvWrapper, to_rsl_rl_train_cfg
    from mjlab.tasks import load_rl_cfg

    task = "Mjlab-Velocity-Flat-Unitree-Go1"
    cfg = load_env_cfg(task, play=True)
    cfg.scene.num_envs = 1
    cfg.commands["twist"].heading_command = False
    cfg.commands["twist"].rel_standing_envs = 1.0  # zero command
    cfg.events["reset_base"] = None
    cfg.events["reset_joints"] = None
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg))
    runner = MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(load_rl_cfg(task)), None)
    # Record observations of a rollout; they also give the normalizer non-trivial statistics.
    recorded = []
    torch_policy = runner.get_inference_policy()
    obs = env.get_observations()
    with torch.inference_mode():
        for _ in range(40):
            recorded.append(obs.clone())
            obs, *_ = env.step(torch_policy(obs))
    actor = runner.alg.get_policy()
    actor.train()
    actor.update_normalization(torch.cat(recorded))
    actor.eval()
    runner.cfg["task_id"] = task
    runner.export_policy_to_onnx(str(tmp_path))
    policy = OnnxPolicy(tmp_path / "policy.onnx")
    assert policy.metadata.robot.menagerie_name == "unitree_go1"

    # ONNX vs torch on the recorded observations.
    onnx_actor = actor.as_onnx(verbose=False).eval()
    diff = check_onnx_parity(
        onnx_actor, tmp_path / "policy.onnx", torch.cat([o["actor"] for o in recorded])
    )
    assert diff <= 1e-5
    print(f"onnxruntime vs torch on 40 recorded observations: max abs diff {diff:.2e}")

    # sim2sim from the env's initial state: the same observation vector for the first second.
    sim = Sim2Sim(policy)
    worst = 0.0
    with torch.inference_mode():  # the env's buffers were made in inference mode above
        env.reset()
        sim.reset(
            qpos=env.unwrapped.sim.data.qpos[0].numpy(), qvel=env.unwrapped.sim.data.qvel[0].numpy()
        )
        obs = env.get_observations()
        for _ in range(50):  # 1 s at 50 Hz
            sim_obs = sim.step(np.zeros(3))
            worst = max(worst, float(np.abs(sim_obs - obs["actor"][0].numpy()).max()))
            action = torch.as_tensor(policy(sim_obs)).unsqueeze(0)
            obs, *_ = env.step(action)
    # Same model, options, gains and contact parameters: only float32 rounding of the
    # observations differs (measured ~4e-7).
    assert worst < 1e-5, worst
    print(f"sim2sim vs env actor observation, max abs diff over 1 s: {worst:.2e}")

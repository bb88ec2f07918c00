"""The deployment contract: fed the raw term values, the robot-side runtime computes exactly the
env's actor observation, and from the same actions exactly the env's processed actions.

Every registered task, plus variants with delay and history; what the runtime cannot reproduce is
refused at export with an error naming the term. Real MuJoCo, real onnxruntime.
"""

import numpy as np
import pytest
import torch

from mjlab.deploy import OnnxPolicy
from mjlab.envs import ManagerBasedRlEnv
from mjlab.export import ExportError, metadata_from_env
from mjlab.rl import MjlabOnPolicyRunner, RslRlVecEnvWrapper, to_rsl_rl_train_cfg
from mjlab.tasks import list_tasks, load_env_cfg, load_rl_cfg

# mjlab.rl (rsl-rl -> tensordict -> triton) is imported at collection on purpose: triton's
# native library segfaults when it is first loaded after Mesa's EGL (a video rendered earlier in
# the same process, e.g. by the sim2sim video test).

NUM_ENVS = 3
EPISODE_STEPS = 9
"""Episode length of the test (time_out); 30 steps give every env at least three episodes."""
STEPS = 30


def _short_cfg(task: str):
    cfg = load_env_cfg(task)
    cfg.scene.num_envs = NUM_ENVS
    cfg.observations["actor"].enable_corruption = False  # noise is training-only
    cfg.episode_length_s = EPISODE_STEPS * cfg.decimation * cfg.sim.mujoco.timestep
    return cfg


def _delay_and_history(cfg):
    terms = cfg.observations["actor"].terms
    first, second, *_ = [k for k, v in terms.items() if v is not None]
    terms[first].delay = 2
    terms[first].history_length = 3
    terms[second].delay = 1
    last = [k for k, v in terms.items() if v is not None][-1]
    terms[last].history_length = 2
    return cfg


def _group_history(cfg):
    cfg.observations["actor"].history_length = 4
    return cfg


VARIANTS = {"as_registered": lambda cfg: cfg, "delay_history": _delay_and_history}


def _check_contract(env: ManagerBasedRlEnv, tmp_path, task: str, write_policy) -> dict:
    meta = metadata_from_env(env, task_id=task)
    path = write_policy(tmp_path / "policy.onnx", meta)
    # One runtime per env: each is one robot.
    runtimes = [OnnxPolicy(path) for _ in range(NUM_ENVS)]
    term = next(iter(env.action_manager.terms.values()))
    gen = torch.Generator().manual_seed(0)
    obs, _ = env.reset(seed=1)
    episodes = np.zeros(NUM_ENVS, dtype=int)
    worst_obs = worst_act = 0.0
    for _ in range(STEPS):
        raw = env.observation_manager.raw_terms("actor")
        for i, runtime in enumerate(runtimes):
            got = runtime.build_observation({k: v[i].cpu().numpy() for k, v in raw.items()})
            want = obs["actor"][i].cpu().numpy()
            assert got.shape == want.shape
            worst_obs = max(worst_obs, float(np.abs(got - want).max()))
        action = 2.0 * torch.rand(NUM_ENVS, env.action_manager.total_action_dim, generator=gen) - 1
        obs, _, terminated, truncated, _ = env.step(action)
        for i, runtime in enumerate(runtimes):
            processed = runtime.process_actions(action[i].numpy())
            want = term.processed_actions[i].cpu().numpy()
            worst_act = max(worst_act, float(np.abs(processed - want).max()))
        done = (terminated | truncated).cpu().numpy()
        episodes += done
        for i in np.nonzero(done)[0]:
            runtimes[i].reset()
    # Exactly: the runtime does the env's float32 arithmetic in the same order.
    assert worst_obs == 0.0, f"observation differs by {worst_obs}"
    assert worst_act == 0.0, f"processed action differs by {worst_act}"
    # Joint order and gains: every per-joint value belongs to the joint it is listed with.
    entity = term.entity
    gains = entity.data.nominal_gains
    for k, name in enumerate(meta.joint_names):
        j = entity.joint_names.index(name)
        assert meta.stiffness[k] == gains["stiffness"][j]
        assert meta.damping[k] == gains["damping"][j]
        assert meta.effort_limit[k] == gains["effort_limit"][j]
        assert meta.default_joint_pos[k] == float(entity.data.default_joint_pos[0, j])
        assert meta.joint_vel_limit[k] == gains["velocity_limit"][j]
    if "Cartpole" not in task:  # every shipped robot carries its motors' speed limits
        assert np.isfinite(meta.joint_vel_limit).all() and min(meta.joint_vel_limit) > 0
    assert (episodes >= 2).all(), f"every env must run through resets; episodes ended: {episodes}"
    return {"meta": meta, "worst_obs": worst_obs, "worst_act": worst_act}


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("task", list_tasks())
def test_runtime_reproduces_the_env_observation_and_actions(
    task, variant, tmp_path, linear_policy_file
):
    env = ManagerBasedRlEnv(VARIANTS[variant](_short_cfg(task)))
    result = _check_contract(env, tmp_path, task, linear_policy_file)
    if task.startswith("Mjlab-Velocity"):
        (twist,) = result["meta"].commands
        assert twist.components == ["lin_vel_x", "lin_vel_y", "ang_vel_z"]
    if variant == "delay_history":
        delays = [t.delay for t in result["meta"].observations]
        assert delays[:2] == [2, 1], "delays are exported"
        assert result["meta"].observations[0].history_length == 3


def test_group_history_is_exported_per_term(tmp_path, linear_policy_file):
    env = ManagerBasedRlEnv(_group_history(_short_cfg("Mjlab-Velocity-Flat-Unitree-Go1")))
    result = _check_contract(env, tmp_path, "Mjlab-Velocity-Flat-Unitree-Go1", linear_policy_file)
    assert {t.history_length for t in result["meta"].observations} == {4}
    assert result["meta"].obs_dim == 4 * 48


def test_action_clip_is_exported_and_reproduced(tmp_path, linear_policy_file):
    cfg = _short_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
    (name,) = cfg.actions
    cfg.actions[name].clip = (-0.5, 0.5)
    env = ManagerBasedRlEnv(cfg)
    result = _check_contract(env, tmp_path, "Mjlab-Velocity-Flat-Unitree-Go1", linear_policy_file)
    assert result["meta"].action_clip == [-0.5, 0.5]


def test_an_unconcatenated_group_is_refused_at_export():
    cfg = _short_cfg("Mjlab-Cartpole-Balance")
    terms = cfg.observations["actor"].terms
    name = next(iter(terms))
    terms[name].history_length = 2
    terms[name].flatten_history_dim = False
    cfg.observations["critic"] = None  # an unflattened term cannot be concatenated with others
    cfg.observations["actor"].concatenate_terms = False
    env = ManagerBasedRlEnv(cfg)
    with pytest.raises(ExportError, match="concatenate_terms=False"):
        metadata_from_env(env)


def test_a_term_with_an_unflattened_history_is_refused_naming_it():
    cfg = _short_cfg("Mjlab-Cartpole-Balance")
    terms = cfg.observations["actor"].terms
    kept = next(iter(terms))
    for other in list(terms)[1:]:
        terms[other] = None
    terms[kept].history_length = 2
    terms[kept].flatten_history_dim = False
    env = ManagerBasedRlEnv(cfg)
    with pytest.raises(ExportError, match=rf"'actor/{kept}'.*flatten_history_dim=True"):
        metadata_from_env(env)


def test_a_missing_group_is_refused_with_the_groups_listed():
    env = ManagerBasedRlEnv(_short_cfg("Mjlab-Cartpole-Balance"))
    with pytest.raises(ExportError, match=r"No observation group 'policy'.*actor"):
        metadata_from_env(env, actor_group="policy")


def test_the_training_wrappers_action_clip_is_exported(tmp_path):
    task = "Mjlab-Cartpole-Balance"
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(_short_cfg(task)), clip_actions=0.3)
    runner = MjlabOnPolicyRunner(env, to_rsl_rl_train_cfg(load_rl_cfg(task)), None)
    runner.cfg["upload_model"] = False
    runner.export_policy_to_onnx(str(tmp_path))
    policy = OnnxPolicy(tmp_path / "policy.onnx")
    assert policy.metadata.clip_actions == 0.3
    assert np.abs(policy(100.0 * np.ones(policy.obs_dim, np.float32))).max() <= 0.3


def test_export_refuses_joints_without_a_speed_limit_unless_the_user_states_one():
    cfg = _short_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.entities["cartpole"].joint_vel_limit = None
    env = ManagerBasedRlEnv(cfg)
    with pytest.raises(
        ExportError, match=r"No speed limit for joints \['slider'\].*joint_vel_limit"
    ):
        metadata_from_env(env)
    assert metadata_from_env(env, joint_vel_limit={"slider": 4.0}).joint_vel_limit == [4.0]
    assert metadata_from_env(env, joint_vel_limit=float("inf")).joint_vel_limit == [float("inf")]
    with pytest.raises(ExportError, match="not action joints"):
        metadata_from_env(env, joint_vel_limit={"hinge": 4.0})


def test_explicit_pd_actuator_gains_reach_the_exported_metadata(tmp_path, linear_policy_file):
    from mjlab.actuator import IdealPdActuatorCfg

    task = "Mjlab-Velocity-Flat-Unitree-Go1"
    cfg = _short_cfg(task)
    robot = cfg.scene.entities["robot"]
    (pos,) = robot.articulation.actuators
    robot.articulation.actuators = (
        IdealPdActuatorCfg(
            target_names_expr=(".*",),
            stiffness=pos.stiffness,
            damping=pos.damping,
            effort_limit=pos.effort_limit,
            armature=pos.armature,
        ),
    )
    env = ManagerBasedRlEnv(cfg)
    result = _check_contract(env, tmp_path, task, linear_policy_file)
    meta = result["meta"]
    assert min(meta.stiffness) > 0 and min(meta.damping) > 0, "explicit PD gains are exported"
    assert np.isfinite(meta.effort_limit).all()
    assert env.sim.mj_model.actuator_biastype.tolist() == [0] * 12  # motors in the model

"""The public surface: the seed's names and signatures, the data types, the configs."""

import inspect
import pickle

import gymnasium as gym
import pydantic
import pytest
import torch
from tensordict import TensorDict

from rlightning.policy import BasePolicy, PolicyConfig, PolicyRole, TrainConfig
from rlightning.policy.rsl_rl_policy import RSLRLPolicy, RSLRLVecEnvMeta, env_meta_from_vec_env
from rlightning.policy.rsl_rl_policy import rsl_rl_policy as seed_module
from rlightning.types import EnvMeta, EnvRet, PolicyResponse

_EMPTY = inspect.Parameter.empty


def _params(func):
    return [(p.name, p.kind.name, p.default) for p in inspect.signature(func).parameters.values()]


def test_seed_module_path_and_names():
    assert seed_module.RSLRLPolicy is RSLRLPolicy
    assert seed_module.RSLRLVecEnvMeta is RSLRLVecEnvMeta
    assert issubclass(RSLRLPolicy, BasePolicy) and issubclass(RSLRLPolicy, torch.nn.Module)
    assert issubclass(RSLRLVecEnvMeta, EnvMeta)
    assert {"algo", "algo_cls"} <= set(RSLRLPolicy.__annotations__)
    assert {"num_actions", "get_observations"} <= set(RSLRLVecEnvMeta.__annotations__)


def test_seed_signatures_of_rsl_rl_policy():
    pos = "POSITIONAL_OR_KEYWORD"
    expected = {
        "__init__": [("self", pos, _EMPTY), ("config", pos, _EMPTY), ("role_type", pos, _EMPTY)],
        "construct_network": [
            ("self", pos, _EMPTY),
            ("model_config", pos, None),
            ("env_meta", pos, None),
            ("args", "VAR_POSITIONAL", _EMPTY),
            ("kwargs", "VAR_KEYWORD", _EMPTY),
        ],
        "get_trainable_parameters": [("self", pos, _EMPTY)],
        "init_eval": [("self", pos, _EMPTY), ("eval_config", pos, None), ("env_meta", pos, None)],
        "init_train": [
            ("self", pos, _EMPTY),
            ("train_config", pos, _EMPTY),
            ("env_meta", pos, None),
        ],
        "load_state_dict": [("self", pos, _EMPTY), ("state_dict", pos, _EMPTY)],
        "postprocess": [
            ("self", pos, _EMPTY),
            ("env_ret", pos, _EMPTY),
            ("policy_resp", pos, _EMPTY),
        ],
        "rollout_step": [("self", pos, _EMPTY), ("env_ret", pos, _EMPTY)],
        "setup_optimizer": [("self", pos, _EMPTY), ("optim_cfg", pos, _EMPTY)],
        "train": [("self", pos, _EMPTY)],
        "update_dataset": [("self", pos, _EMPTY), ("data", pos, _EMPTY)],
    }
    for name, params in expected.items():
        assert _params(getattr(RSLRLPolicy, name)) == params, name
        assert name in RSLRLPolicy.__dict__, f"RSLRLPolicy must define {name} itself"


def test_seed_signature_of_rsl_rl_vec_env_meta():
    names = ["env_id", "action_space", "observation_space", "num_envs", "num_actions"]
    names.append("get_observations")
    params = _params(RSLRLVecEnvMeta)
    assert [p[0] for p in params] == names
    assert all(kind == "POSITIONAL_OR_KEYWORD" and default is None for _, kind, default in params)
    with pytest.raises(ValueError, match="num_actions"):
        RSLRLVecEnvMeta(num_actions=0)
    with pytest.raises(ValueError, match="num_envs"):
        EnvMeta(num_envs=-1)


def test_base_policy_is_abstract_over_the_contract():
    abstract = {
        "construct_network",
        "setup_optimizer",
        "rollout_step",
        "postprocess",
        "update_dataset",
        "train",
        "get_trainable_parameters",
        "load_state_dict",
    }
    assert BasePolicy.__abstractmethods__ == abstract
    with pytest.raises(TypeError):
        BasePolicy(PolicyConfig(), PolicyRole.TRAIN)


def test_policy_role_is_a_string_enum():
    assert PolicyRole.TRAIN == "train" and PolicyRole.EVAL == "eval"
    assert str(PolicyRole.EVAL) == "eval" and f"{PolicyRole.TRAIN}" == "train"
    assert PolicyRole("eval") is PolicyRole.EVAL
    with pytest.raises(ValueError, match="role_type"):
        RSLRLPolicy(PolicyConfig(), "serve")


def test_configs_reject_typos_and_bad_values_naming_the_field():
    with pytest.raises(pydantic.ValidationError, match="train_cfg lacks"):
        PolicyConfig(train_cfg={"actor": {}})
    with pytest.raises(pydantic.ValidationError, match="optim"):
        PolicyConfig(optim={"learning_rate": 1e-3})
    with pytest.raises(pydantic.ValidationError, match="rollout_mode"):
        PolicyConfig(rollout_mode="async")
    with pytest.raises(pydantic.ValidationError, match="max_iterations"):
        TrainConfig(max_iterations=0)
    assert TrainConfig().max_iterations == 300 and PolicyConfig().weight_update_thread


def test_a_misspelt_config_attribute_is_refused_at_assignment_naming_the_field_meant():
    from rlightning.policy.config import UnknownFieldError

    train = TrainConfig()
    with pytest.raises(UnknownFieldError, match="did you mean 'max_iterations'"):
        train.max_iteration = 5
    with pytest.raises(ValueError, match="PolicyConfig has no field 'optim'"):  # as pydantic's
        PolicyConfig().optim = {}
    train.max_iterations = 5  # a declared field is set as before
    assert pickle.loads(pickle.dumps(train)).max_iterations == 5


def test_env_ret_and_policy_response_move_and_round_trip():
    obs = TensorDict({"actor": torch.ones(3, 2)}, batch_size=[3])
    env_ret = EnvRet("env_0", obs, torch.zeros(3), torch.zeros(3, dtype=torch.bool))
    env_ret.info["log"] = {"x": torch.ones(1)}
    moved = env_ret.to("cpu")
    assert moved is not env_ret and moved.to_dict().keys() == env_ret.to_dict().keys()
    assert env_ret.cpu().info["log"]["x"].device.type == "cpu"
    assert env_ret.last_done is None  # no truncation flags given
    response = PolicyResponse("env_0", actions=torch.zeros(3, 1), nested={"a": torch.ones(2)})
    assert response.env_id == "env_0" and response.actions.shape == (3, 1)
    assert response["nested"]["a"].sum() == 2 and "actions" in response
    assert response.keys() == ["actions", "nested"]
    assert response.to_dict()["env_id"] == "env_0"
    restored = pickle.loads(pickle.dumps(response.cpu()))
    assert torch.equal(restored.actions, response.actions)
    with pytest.raises(AttributeError, match="values"):
        _ = response.values
    with pytest.raises(ValueError, match="underscore"):
        PolicyResponse("env_0", _hidden=1)


def test_env_meta_from_vec_env_is_picklable_and_describes_the_env(pm):
    env = pm.PointMassEnv(num_envs=5)
    meta = env_meta_from_vec_env(env, "env_7")
    assert (meta.env_id, meta.num_envs, meta.num_actions) == ("env_7", 5, 1)
    assert meta.action_space == gym.spaces.Box(-1.0, 1.0, shape=(1,))
    assert meta.observation_space["critic"].shape == (4,)
    restored = pickle.loads(pickle.dumps(meta))
    observations = restored.get_observations()
    assert observations.batch_size == torch.Size([5])
    assert torch.equal(observations["actor"], env.get_observations()["actor"])

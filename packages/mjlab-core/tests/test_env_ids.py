"""One rule for env-id arguments: integer ids in range, or a boolean mask of the right length."""

import numpy as np
import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.tasks import load_env_cfg
from mjlab.utils.env_ids import resolve_env_ids


@pytest.fixture(scope="module")
def env():
    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    cfg.scene.num_envs = 4
    env = ManagerBasedRlEnv(cfg)
    env.reset()
    yield env
    env.close()


@pytest.mark.parametrize(
    ("given", "ids"),
    [
        (torch.tensor([0, 2]), [0, 2]),
        (np.array([3, 1]), [3, 1]),
        ([1], [1]),
        (2, [2]),
        (range(1, 3), [1, 2]),
        (torch.tensor([True, False, True, False]), [0, 2]),
        (np.array([False, True, False, True]), [1, 3]),
        ([True, True, False, False], [0, 1]),
        ([], []),
        (None, [0, 1, 2, 3]),
    ],
    ids=[
        "tensor",
        "numpy",
        "list",
        "int",
        "range",
        "mask",
        "numpy-mask",
        "list-mask",
        "empty",
        "all",
    ],
)
def test_integer_ids_and_boolean_masks_select_the_envs_they_name(given, ids):
    assert resolve_env_ids(given, 4, "cpu").tolist() == ids


@pytest.mark.parametrize(
    ("given", "error", "message"),
    [
        (torch.tensor([0.7, 2.9]), TypeError, "float32 tensor [0.7"),
        (np.array([0.0, 2.0]), TypeError, "numpy float64"),
        ([0.5], TypeError, "float64"),
        (1.0, TypeError, "float"),
        (True, TypeError, "bool"),
        ("0", TypeError, "str"),
        (torch.tensor([0, 4]), ValueError, "[4] outside [0, 4)"),
        ([-1], ValueError, "[-1] outside"),
        (torch.tensor([True, False, True]), ValueError, "mask of length 3"),
        (torch.zeros(2, 2, dtype=torch.long), ValueError, "1-D"),
    ],
    ids=[
        "float-tensor",
        "float-numpy",
        "float-list",
        "float",
        "bool",
        "str",
        "too-large",
        "negative",
        "short-mask",
        "2-d",
    ],
)
def test_any_other_env_ids_are_refused_naming_the_argument(given, error, message):
    with pytest.raises(error, match="env_ids") as err:
        resolve_env_ids(given, 4, "cpu")
    assert message in str(err.value)


@pytest.mark.parametrize(
    "done",
    [torch.tensor([1, 0, 1, 1], dtype=torch.uint8), np.array([1, 0, 1, 1], dtype=np.uint8)],
    ids=["tensor", "numpy"],
)
def test_a_uint8_mask_is_refused_not_read_as_ids(done):
    # uint8 was torch's mask dtype: [1, 0, 1, 1] must not quietly reset envs 1 and 0.
    with pytest.raises(TypeError, match=r"env_ids is a uint8 (tensor|array) \[1, 0, 1, 1\]"):
        resolve_env_ids(done, 4, "cpu")
    assert resolve_env_ids(torch.as_tensor(done).bool(), 4, "cpu").tolist() == [0, 2, 3]


def test_env_reset_with_float_ids_resets_nothing_and_raises(env):
    env.step(torch.zeros(4, env.action_manager.total_action_dim))
    before = env.episode_length_buf.clone()
    with pytest.raises(TypeError, match=r"env_ids .* float32 tensor"):
        env.reset(env_ids=torch.tensor([0.7, 2.9]))
    assert torch.equal(env.episode_length_buf, before)


def test_env_reset_with_a_done_mask_resets_the_true_rows(env):
    for _ in range(2):
        env.step(torch.zeros(4, env.action_manager.total_action_dim))
    assert (env.episode_length_buf > 0).all()
    env.reset(env_ids=torch.tensor([True, False, True, False]))
    assert (env.episode_length_buf == 0).tolist() == [True, False, True, False]


@pytest.mark.parametrize(
    "part", ["reward_manager", "observation_manager", "scene", "sim", "sensor"]
)
def test_managers_scene_sim_and_sensors_refuse_out_of_range_ids(env, part):
    target = {
        "reward_manager": env.reward_manager,
        "observation_manager": env.observation_manager,
        "scene": env.scene,
        "sim": env.sim,
        "sensor": next(iter(env.scene.sensors.values()), env.scene),
    }[part]
    with pytest.raises(ValueError, match=r"env_ids \[7\] outside \[0, 4\)"):
        target.reset(torch.tensor([1, 7]))
    with pytest.raises(TypeError, match="env_ids"):
        target.reset(torch.tensor([1.0]))


def test_checked_ids_edited_in_place_are_checked_again():
    ids = resolve_env_ids(torch.tensor([0, 1]), 4, "cpu")
    assert resolve_env_ids(ids, 4, "cpu") is ids  # no second check (no sync) below the boundary
    ids[1] = 9
    with pytest.raises(ValueError, match=r"\[9\] outside"):
        resolve_env_ids(ids, 4, "cpu")

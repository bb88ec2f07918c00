"""A config refuses what it does not declare, a built env's config is read-only, a zero-weight
reward term is never evaluated, and loading a task's config loads no robot model."""

import copy
import dataclasses
import pickle
import time

import mujoco
import pytest
import torch
import tyro

from mjlab.entity import EntityCfg
from mjlab.envs import ManagerBasedRlEnv
from mjlab.managers import RewardTermCfg, SceneEntityCfg
from mjlab.sim import MujocoCfg, SimulationCfg
from mjlab.tasks import list_tasks, load_env_cfg
from mjlab.utils.config import (
    Config,
    ConfigError,
    FrozenConfigError,
    UnknownFieldError,
    is_frozen,
)

TASK = "Mjlab-Cartpole-Balance"


def _small_cfg():
    cfg = load_env_cfg(TASK)
    cfg.scene.num_envs = 2
    return cfg


# -- undeclared attributes --------------------------------------------------------------------
def test_a_misspelt_field_is_refused_naming_the_class_and_the_field_meant():
    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
    before = cfg.episode_length_s
    with pytest.raises(UnknownFieldError) as err:
        cfg.episode_lenght_s = 5
    message = str(err.value)
    assert "ManagerBasedRlEnvCfg" in message
    assert "'episode_lenght_s'" in message
    assert "did you mean 'episode_length_s'?" in message
    assert isinstance(err.value, AttributeError)
    assert cfg.episode_length_s == before
    assert "episode_lenght_s" not in vars(cfg)


@pytest.mark.parametrize(
    ("path", "name", "value"),
    [
        ("sim.mujoco", "ccd_iterations", 50),
        ("sim", "contact_sensor_maxmatch", 64),
        ("viewer", "body_name", "torso_link"),
    ],
)
def test_an_mjlab_1_6_setting_is_refused_or_is_a_real_field(path, name, value):
    cfg = load_env_cfg("Mjlab-Velocity-Flat-Unitree-G1")
    target = cfg
    for part in path.split("."):
        target = getattr(target, part)
    declared = {f.name for f in dataclasses.fields(target)}
    if name in declared:  # added by a later version: then it must be a working field
        setattr(target, name, value)
        assert getattr(target, name) == value
        return
    with pytest.raises(UnknownFieldError, match=rf"{type(target).__name__} has no field '{name}'"):
        setattr(target, name, value)
    assert name not in vars(target)


def test_every_config_of_a_loaded_task_refuses_an_undeclared_attribute():
    """Every config object reachable from every task's config (terms, sensors, entities,
    actuators, terrain, noise, SceneEntityCfgs in params) refuses `not_a_field`."""
    for task in list_tasks():
        seen: set[int] = set()
        for path, obj in _configs(load_env_cfg(task), "cfg", seen):
            with pytest.raises(UnknownFieldError, match=type(obj).__name__):
                obj.not_a_field = 1
            assert not hasattr(obj, "not_a_field"), f"{task}: {path}"


def _configs(value, path, seen):
    if id(value) in seen:
        return
    seen.add(id(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        assert isinstance(value, Config), f"{path}: {type(value).__name__} is not a Config"
        yield path, value
        for f in dataclasses.fields(value):
            yield from _configs(getattr(value, f.name), f"{path}.{f.name}", seen)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _configs(v, f"{path}[{k!r}]", seen)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _configs(v, f"{path}[{i}]", seen)


def test_declared_fields_copies_pickling_replace_tyro_and_subclasses_work_as_before():
    cfg = _small_cfg()
    cfg.decimation = 3
    cfg.sim.mujoco.timestep = 0.004
    cfg.rewards["alive"].weight = 2.0
    assert (cfg.decimation, cfg.sim.mujoco.timestep, cfg.rewards["alive"].weight) == (3, 0.004, 2.0)

    # Copies are configs as strict as the original and equal to it.
    for clone in (copy.copy(cfg), copy.deepcopy(cfg)):
        assert clone == cfg
        with pytest.raises(UnknownFieldError):
            clone.decimaton = 4
    # (The cartpole's spec_fn is a lambda: Ray ships whole configs with cloudpickle, which the
    # workspace's tests check; plain pickle takes the parts made of module-level functions.)
    for part in (cfg.sim, cfg.rewards, cfg.observations, SimulationCfg(nthread=2)):
        assert pickle.loads(pickle.dumps(part)) == part
    assert dataclasses.replace(cfg, decimation=5).decimation == 5

    # tyro builds configs through their constructors.
    parsed = tyro.cli(MujocoCfg, args=["--timestep", "0.004", "--iterations", "7"])
    assert (parsed.timestep, parsed.iterations) == (0.004, 7)

    # A subclass's own fields are declared fields; anything else is still refused.
    @dataclasses.dataclass(kw_only=True)
    class ScaledRewardCfg(RewardTermCfg):
        scale: float = 1.0

    term = ScaledRewardCfg(func=lambda env: env.reward_buf, weight=1.0)
    term.scale = 2.0
    term.weight = 0.5
    with pytest.raises(UnknownFieldError, match="did you mean 'scale'"):
        term.scalee = 3.0


# -- a built env's config ---------------------------------------------------------------------
def test_a_built_envs_config_is_read_only_and_the_callers_stays_editable():
    cfg = _small_cfg()
    before = copy.deepcopy(cfg)
    env = ManagerBasedRlEnv(cfg)
    step_dt = env.step_dt
    edits = {
        "env.cfg.decimation": lambda c: setattr(c, "decimation", 8),
        "env.cfg.decimation ": lambda c: setattr(c, "decimation", 0),
        "env.cfg.episode_length_s": lambda c: setattr(c, "episode_length_s", 1.0),
        "env.cfg.sim.mujoco.timestep": lambda c: setattr(c.sim.mujoco, "timestep", 0.001),
        "env.cfg.rewards['alive'].weight": lambda c: setattr(c.rewards["alive"], "weight", 0.0),
        "env.cfg.rewards['alive']": lambda c: c.rewards.__setitem__("alive", None),
        "env.cfg.events['reset_joints'].params": lambda c: c.events["reset_joints"].params.update(
            position_range=(0.0, 0.0)
        ),
    }
    for path, edit in edits.items():
        with pytest.raises(FrozenConfigError) as err:
            edit(env.cfg)
        message = str(err.value)
        assert message.startswith(path.strip()), message
        assert "build a new env" in message
        assert isinstance(err.value, AttributeError)
    with pytest.raises(FrozenConfigError):
        del env.cfg.seed

    # Nothing half-applied: the env steps with the settings it was built with.
    env.reset(seed=0)
    env.step(torch.zeros(env.action_space.shape))
    assert env.step_dt == step_dt and env.cfg.decimation == before.decimation

    # The caller's config is unchanged by the build and still editable; so is a copy of
    # env.cfg, which builds a new env with the change.
    assert cfg == before
    cfg.decimation = 8
    edited = copy.deepcopy(env.cfg)
    assert is_frozen(env.cfg) and is_frozen(env.cfg.sim.mujoco) and not is_frozen(edited)
    edited.decimation = 4
    edited.rewards["alive"] = None
    again = ManagerBasedRlEnv(edited)
    assert again.step_dt == pytest.approx(2 * step_dt)
    assert "alive" not in again.reward_manager.active_terms
    # A misspelt name on a built env's config still says what was meant.
    with pytest.raises(UnknownFieldError, match="did you mean 'decimation'"):
        env.cfg.decimaton = 8


def test_zero_decimation_is_refused_at_build_naming_the_field():
    cfg = _small_cfg()
    cfg.decimation = 0
    with pytest.raises(ConfigError, match=r"ManagerBasedRlEnvCfg\.decimation must be an integer"):
        ManagerBasedRlEnv(cfg)


# -- zero-weight reward terms -----------------------------------------------------------------
def _broken_term(env, sensor_cfg):
    raise AssertionError("a zero-weight reward term was evaluated")


def test_a_zero_weight_reward_term_is_never_evaluated_and_keeps_its_log_column():
    cfg = _small_cfg()
    cfg.episode_length_s = 0.1  # 5 steps: the loop below sees resets
    # Its function raises and its sensor does not exist in this task: weight 0 builds anyway.
    cfg.rewards["broken"] = RewardTermCfg(
        func=_broken_term, weight=0.0, params={"sensor_cfg": SceneEntityCfg("feet_contact")}
    )
    env = ManagerBasedRlEnv(cfg)
    assert "broken" not in env.reward_manager.active_terms
    env.reset(seed=0)
    logs = []
    for _ in range(8):
        *_, extras = env.step(torch.zeros(env.action_space.shape))
        logs.append(dict(extras["log"]))
    reset_logs = [log for log in logs if "Episode_Reward/broken" in log]
    assert reset_logs, "no reset logged the zero-weight term's column"
    for log in reset_logs:
        assert float(log["Episode_Reward/broken"]) == 0.0
        assert float(log["Episode_Reward/alive"]) != 0.0
    # The columns keep the config's order.
    names = [k.split("/", 1)[1] for k in reset_logs[0] if k.startswith("Episode_Reward/")]
    assert names == [k for k, v in cfg.rewards.items() if v is not None]

    # With a non-zero weight the same term is evaluated (and fails, naming what it lacks).
    cfg.rewards["broken"].weight = 1.0
    with pytest.raises(ValueError, match="broken"):
        ManagerBasedRlEnv(cfg)


# -- loading a task's config ------------------------------------------------------------------
def test_loading_every_tasks_config_is_quick_and_loads_no_robot_model():
    list_tasks()  # registry discovery (imports the task modules) is not part of a load
    slow = {}
    for task in list_tasks():
        for play in (False, True):
            start = time.perf_counter()
            cfg = load_env_cfg(task, play=play)
            seconds = time.perf_counter() - start
            if seconds > 0.5:  # generous: the machine may be shared; a load takes ~1 ms
                slow[(task, play)] = seconds
            # Structural: the robot models are still files and functions, read when the env
            # (its scene) is built; the config holds no parsed model.
            entities = list(cfg.scene.entities.values())
            assert entities, task
            for entity in entities:
                assert isinstance(entity, EntityCfg) and callable(entity.spec_fn), task
            for path, value in _leaves(cfg, "cfg", set()):
                assert not isinstance(value, (mujoco.MjSpec, mujoco.MjModel)), f"{task}: {path}"
    assert not slow, f"load_env_cfg took > 0.5 s: {slow}"


def _leaves(value, path, seen):
    if id(value) in seen:
        return
    seen.add(id(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _leaves(getattr(value, f.name), f"{path}.{f.name}", seen)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}[{k!r}]", seen)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]", seen)
    else:
        yield path, value


_FRESH_LOAD = """
import json, sys, time
import mujoco, torch  # what any use of mjlab loads anyway
start = time.perf_counter()
from mjlab.tasks import list_tasks, load_env_cfg
first = {}
for task in list_tasks():
    t = time.perf_counter()
    load_env_cfg(task)
    first[task] = time.perf_counter() - t
print(json.dumps({
    "total": time.perf_counter() - start,
    "first": first,
    "heavy": [m for m in ("scipy.interpolate", "gymnasium") if m in sys.modules],
}))
"""


@pytest.mark.slow
def test_a_fresh_process_loads_a_tasks_config_without_heavy_imports():
    """The first `load_env_cfg` of a process imports the task modules: they import what a
    config needs, not what building an env or a rough terrain needs (scipy.interpolate took
    ~1 s, gymnasium ~0.1 s)."""
    import json
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _FRESH_LOAD], capture_output=True, text=True, check=True
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["heavy"] == [], report
    assert report["total"] < 1.0, report  # ~0.15 s; generous for a shared machine


def test_only_a_deep_copy_of_a_frozen_config_is_editable_throughout():
    from mjlab.tasks import load_env_cfg
    from mjlab.utils.config import FrozenConfigError, copy_config, freeze_config

    cfg = freeze_config(load_env_cfg("Mjlab-Cartpole-Balance"))
    shallow = dataclasses.replace(cfg, decimation=5)
    assert shallow.decimation == 5
    with pytest.raises(FrozenConfigError):
        shallow.sim.njmax = 7  # as documented: shared with the frozen original
    for deep in (copy.deepcopy(cfg), copy_config(cfg)):
        deep.sim.njmax = 7
        assert deep.sim.njmax == 7


# -- term params against the term's signature --------------------------------------------------
def test_a_misspelt_or_missing_term_param_is_refused_at_build_naming_the_term():
    from mjlab.envs.mdp import dr
    from mjlab.managers import EventTermCfg

    # An event runs later (here: every reset), so without the check its typo would surface
    # only then, as a bare TypeError.
    cfg = _small_cfg()
    cfg.events["pole_mass"] = EventTermCfg(
        func=dr.body_mass,
        mode="reset",
        params={"range": (0.9, 1.1), "asset_cfg": SceneEntityCfg("cartpole", body_names=("pole",))},
    )
    with pytest.raises(ValueError) as err:
        ManagerBasedRlEnv(cfg)
    message = str(err.value)
    assert "Event term 'pole_mass': params has 'range'" in message
    assert "did you mean 'ranges'?" in message

    cfg.events["pole_mass"].params["ranges"] = cfg.events["pole_mass"].params.pop("range")
    del cfg.events["pole_mass"].params["ranges"]
    with pytest.raises(ValueError, match=r"Event term 'pole_mass': body_mass\(\) needs 'ranges'"):
        ManagerBasedRlEnv(cfg)

    # A reward term: the same check, the manager's own leading argument (env) not counted.
    cfg = _small_cfg()
    name, term = next(iter(cfg.rewards.items()))
    term.params["wieght"] = 1.0
    with pytest.raises(ValueError, match=rf"Reward term '{name}': params has 'wieght'"):
        ManagerBasedRlEnv(cfg)


def test_an_event_terms_own_error_names_the_term_and_its_mode():
    from mjlab.envs.mdp import dr
    from mjlab.managers import EventTermCfg

    cfg = _small_cfg()
    cfg.events["pole_mass"] = EventTermCfg(
        func=dr.body_mass,
        mode="reset",
        params={
            "ranges": (0.9, 1.1),
            "asset_cfg": SceneEntityCfg("cartpole", body_names=("pole",)),
            "distribution": "normal",
        },
    )
    env = ManagerBasedRlEnv(cfg)
    try:
        with pytest.raises(ValueError, match=r"Event term 'pole_mass' \(reset\): Unknown distr"):
            env.reset()
    finally:
        env.close()


def test_a_misspelt_keyword_at_construction_names_the_closest_field():
    from mjlab.actuator import IdealPdActuatorCfg

    with pytest.raises(TypeError, match=r"IdealPdActuatorCfg\(\) got an unexpected keyword "
                       r"argument 'stifness'; did you mean 'stiffness'\?"):  # fmt: skip
        IdealPdActuatorCfg(target_names_expr=(".*",), stifness=80.0, damping=2.0)
    with pytest.raises(TypeError, match=r"RewardTermCfg\(\) .* 'wieght'; did you mean 'weight'"):
        RewardTermCfg(func=lambda env: env, wieght=1.0)
    cfg = IdealPdActuatorCfg(target_names_expr=(".*",), stiffness=80.0, damping=2.0)
    assert cfg.stiffness == 80.0 and pickle.loads(pickle.dumps(cfg)) == cfg

"""Every config class of the four packages refuses an attribute it does not declare.

The classes are found in the packages' sources (every `@dataclass` and pydantic model), so a
config class added later is checked without anyone listing it; a data record that is not a
config is named in `RECORDS` with what it is.
"""

import ast
import dataclasses
import importlib
from pathlib import Path

import cloudpickle
import pydantic
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [
    ROOT / "packages" / package / "src"
    for package in ("mjlab-core", "mjlab-rl", "mjlab-export", "rlightning-policy")
]

RECORDS = {
    "mjlab.tasks.registry._TaskSpec": "the registry's entry for a task",
    "mjlab.rl.scripts.play._Watch": "play's open viewer",
    "mjlab.deploy.control.RobotState": "one reading of the robot, made every control cycle",
    "mjlab.deploy.control.JointCommand": "one command to the robot, made every control cycle",
    "mjlab.deploy.control.Fault": "a fault the control loop saw",
    "mjlab.deploy.control.LoopStats": "the control loop's counters",
    "mjlab.deploy.sim2sim.Sim2SimReport": "a result",
    "mjlab.deploy.sim2sim.MotionReport": "a result",
    "mjlab.viewer.web.CommandSlider": "a slider of the web viewer",
    "mjlab.viewer.geometry.GeomMesh": "a mesh for the viewer",
    "mjlab.sensor.ray_cast.RayCastData": "a sensor reading",
    "mjlab.sensor.contact_sensor.ContactData": "a sensor reading",
    "mjlab.sensor.camera_sensor.CameraSensorData": "a sensor reading",
    "mjlab.sensor.terrain_height.TerrainHeightData": "a sensor reading",
    "rlightning.types.env_meta.EnvMeta": "rlightning's env description (its contract's type)",
    "rlightning.types.env_ret.EnvRet": "one env step's result (rlightning's contract)",
    "rlightning.policy.rsl_rl_policy.rsl_rl_policy.RSLRLVecEnvMeta": "an EnvMeta",
    "rlightning.engine.report.RolloutStats": "a result",
    "rlightning.engine.report.IterationReport": "a result",
}
"""Dataclasses that are data records, not configs (a frozen dataclass needs no entry: it
refuses every assignment)."""

NESTED = {
    "PlayCfg": lambda: importlib.import_module("mjlab.rl.scripts.play")._cfg_type(),
    "ExportCfg": lambda: importlib.import_module("mjlab.rl.scripts.export_onnx")._cfg_type(),
    "TrainRlightningCfg": lambda: importlib.import_module(
        "rlightning.engine.mjlab_train"
    )._cfg_types(),
}
"""Config classes defined inside a function (their field types import heavy modules); classes
nested in a class are found as its attributes."""


def _is_config_class(node: ast.ClassDef) -> bool:
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if ast.unparse(target) in ("dataclass", "dataclasses.dataclass"):
            return True
    return any(ast.unparse(base) in ("BaseModel", "_StrictModel") for base in node.bases)


def _classes():
    """(qualified name, class) of every dataclass and pydantic model in the sources."""
    found = []
    for src in SOURCES:
        for path in sorted(src.rglob("*.py")):
            module = ".".join(path.relative_to(src).with_suffix("").parts)
            module = module.removesuffix(".__init__")
            tree = ast.parse(path.read_text())
            top = {id(n) for n in tree.body}
            # Classes nested in a top-level class (e.g. `RingPatternCfg.Ring`): by attribute.
            inner = {
                id(child): (outer.name, child.name)
                for outer in tree.body
                if isinstance(outer, ast.ClassDef)
                for child in outer.body
                if isinstance(child, ast.ClassDef)
            }
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and _is_config_class(node):
                    if id(node) in top:
                        name = node.name
                        cls = getattr(importlib.import_module(module), name)
                    elif id(node) in inner:
                        outer, name = inner[id(node)]
                        cls = getattr(getattr(importlib.import_module(module), outer), name)
                        name = f"{outer}.{name}"
                    else:
                        name = node.name
                        cls = NESTED[node.name]()
                    found.append((f"{module}.{name}", cls))
    return found


CLASSES = _classes()


def test_the_search_finds_the_config_classes_of_all_four_packages():
    names = {name.rsplit(".", 1)[1] for name, _ in CLASSES}
    expected = {"ManagerBasedRlEnvCfg", "MujocoCfg", "RslRlOnPolicyRunnerCfg", "SafetyCfg"}
    assert expected | {"PolicyConfig", "TrainRlightningCfg", "DeploymentMetadata"} <= names
    assert len(CLASSES) > 80
    assert set(RECORDS) <= {name for name, _ in CLASSES}, "a record listed here no longer exists"


CONFIGS = [c for c in CLASSES if c[0] not in RECORDS]


@pytest.mark.parametrize(("name", "cls"), CONFIGS, ids=[name for name, _ in CONFIGS])
def test_every_config_class_refuses_an_undeclared_attribute(name, cls):
    # A bare instance: the check is the class's, whatever its required fields.
    obj = cls.model_construct() if issubclass(cls, pydantic.BaseModel) else object.__new__(cls)
    with pytest.raises(AttributeError) as err:
        obj.not_a_field = 1
    frozen = dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    if not frozen:
        assert cls.__name__ in str(err.value) and "'not_a_field'" in str(err.value), err.value
    assert "not_a_field" not in vars(obj)
    # A declared field is still set as usual.
    fields = (
        list(cls.model_fields)
        if issubclass(cls, pydantic.BaseModel)
        else [f.name for f in dataclasses.fields(cls)]
    )
    if fields and not frozen:
        setattr(obj, fields[0], None)
        assert getattr(obj, fields[0]) is None


def test_a_task_config_shipped_to_a_ray_worker_stays_strict_and_editable():
    from mjlab.envs import ManagerBasedRlEnv
    from mjlab.tasks import load_env_cfg
    from mjlab.utils.config import UnknownFieldError

    cfg = load_env_cfg("Mjlab-Cartpole-Balance")
    shipped = cloudpickle.loads(cloudpickle.dumps(cfg))
    assert shipped.rewards == cfg.rewards  # (the entity's spec_fn lambda is a copy)
    shipped.decimation = 4
    with pytest.raises(UnknownFieldError, match="did you mean 'decimation'"):
        shipped.decimaton = 4
    # A built env's (read-only) config ships as an editable one.
    cfg.scene.num_envs = 2
    env_cfg = cloudpickle.loads(cloudpickle.dumps(ManagerBasedRlEnv(cfg).cfg))
    env_cfg.decimation = 4
    env_cfg.rewards["alive"] = None

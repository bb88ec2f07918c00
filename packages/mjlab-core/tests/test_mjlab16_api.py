"""mjlab 1.6's public names, under its module paths, with its parameter and field names.

The table `data/mjlab16_api.md` lists mjlab 1.6.0's public names per module with the parameter
names of each function and the field names of each config dataclass. The modules and configs
covered so far are checked row by row: each name imports from the same module, a function takes
the listed parameters in the listed order, a dataclass has the listed fields.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import pytest

TABLE = Path(__file__).parent / "data" / "mjlab16_api.md"

# Whole modules offered under mjlab 1.6's path.
COVERED_MODULES = ("mjlab.envs.mdp.dr", "mjlab.actuator", "mjlab.utils.noise")
# Single config classes of other modules whose fields mjlab 1.6 has.
COVERED_NAMES = {
    ("mjlab.managers", "SceneEntityCfg"),
    ("mjlab.entity", "EntityCfg"),
    ("mjlab.scene", "SceneCfg"),
    ("mjlab.sim", "MujocoCfg"),
    ("mjlab.sim", "SimulationCfg"),
    ("mjlab.envs.mdp", "RewardCurriculumStage"),
    ("mjlab.envs.mdp", "TerminationCurriculumStage"),
    ("mjlab.envs.mdp", "reward_curriculum"),
    ("mjlab.envs.mdp", "termination_curriculum"),
    ("mjlab.envs.mdp", "resolve_env_ids"),
    ("mjlab.envs.mdp", "reset_scene_to_default"),
    ("mjlab.envs.mdp", "apply_external_force_torque"),
    ("mjlab.envs.mdp", "nan_detection"),
    ("mjlab.managers", "EventMode"),
    ("mjlab.managers", "EventTermCfg"),
    ("mjlab.managers", "ManagerBase"),
    ("mjlab.managers", "ManagerTermBase"),
    ("mjlab.managers", "NullCommandManager"),
    ("mjlab.managers", "NullCurriculumManager"),
    ("mjlab.managers", "NullMetricsManager"),
    ("mjlab.envs", "VecEnvObs"),
    ("mjlab.envs", "VecEnvStepReturn"),
    ("mjlab.envs.mdp", "JointVelocityActionCfg"),
    ("mjlab.tasks.registry", "load_env_cfg"),
    ("mjlab.tasks.registry", "load_rl_cfg"),
    ("mjlab.tasks.registry", "load_runner_cls"),
    ("mjlab.sensor", "ContactMatch"),
    ("mjlab.envs.mdp", "action_acc_l2"),
}


def _rows() -> list[tuple[str, str, str, tuple[str, ...]]]:
    rows, module = [], None
    for line in TABLE.read_text().splitlines():
        heading = re.match(r"^## (\S+)", line)
        if heading:
            module = heading.group(1)
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if module is None or len(cells) != 4 or not cells[0].startswith("`"):
            continue
        name, kind, params = cells[0].strip("`"), cells[1], cells[2]
        names = tuple(p.strip() for p in params.split(",") if p.strip())
        rows.append((module, name, kind, names))
    return rows


ROWS = _rows()
CHECKED = [r for r in ROWS if r[0] in COVERED_MODULES or (r[0], r[1]) in COVERED_NAMES]


def test_table_is_read():
    assert len(ROWS) == 264
    assert len([r for r in ROWS if r[0] == "mjlab.envs.mdp.dr"]) == 61
    assert len([r for r in ROWS if r[0] == "mjlab.actuator"]) == 29


@pytest.mark.parametrize(
    ("module", "name", "kind", "params"), CHECKED, ids=[f"{r[0]}.{r[1]}" for r in CHECKED]
)
def test_name_matches_mjlab16(module, name, kind, params):
    obj = getattr(importlib.import_module(module), name, None)
    assert obj is not None, f"{module}.{name} is missing"
    if kind == "function":
        got = list(inspect.signature(obj).parameters)
        assert got[: len(params)] == list(params), f"{module}.{name}{tuple(got)}"
    elif kind == "dataclass" and params:
        assert dataclasses.is_dataclass(obj), f"{module}.{name} is not a dataclass"
        fields = {f.name for f in dataclasses.fields(obj)}
        # A ClassVar (mjlab's `NoiseModelCfg.class_type`) is a class attribute, not a field.
        missing = [p for p in params if p not in fields and not hasattr(obj, p)]
        assert not missing, f"{module}.{name} lacks fields {missing}"
    elif kind == "class" and params:
        # A TypedDict (mjlab's stage schemas) declares its keys as annotations.
        keys = getattr(obj, "__annotations__", {})
        missing = [p for p in params if not hasattr(obj, p) and p not in keys]
        assert not missing, f"{module}.{name} lacks {missing}"

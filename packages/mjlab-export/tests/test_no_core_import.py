"""mjlab-export never imports mjlab-core: the contract points one way (core -> mjlab.deploy), so
the robot-side install and the exporter work without core's modules."""

import ast
from pathlib import Path

import mjlab.deploy

CORE = ("mjlab.sim", "mjlab.scene", "mjlab.entity", "mjlab.actuator", "mjlab.sensor",
        "mjlab.terrains", "mjlab.managers", "mjlab.envs", "mjlab.tasks", "mjlab.utils")  # fmt: skip


def test_no_module_of_mjlab_export_imports_mjlab_core():
    src = Path(mjlab.deploy.__file__).parents[1]  # .../mjlab (deploy, export, viewer)
    files = [p for d in ("deploy", "export", "viewer") for p in (src / d).rglob("*.py")]
    assert len(files) > 20
    found = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            found += [f"{path.name}: {n}" for n in names if n.startswith(CORE)]
    assert found == []

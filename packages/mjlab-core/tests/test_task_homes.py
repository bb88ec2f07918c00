"""One home per task: a built-in task's configs, PPO settings and registration sit in one folder
of `mjlab.tasks`, found through the `mjlab.tasks` entry point like any other project's tasks."""

import ast
import inspect
import subprocess
import sys
import textwrap
from importlib import metadata

import pytest

from mjlab.tasks import list_tasks, registry


def _folder(module: str) -> str:
    parts = module.split(".")
    assert parts[:2] == ["mjlab", "tasks"] and len(parts) > 3, module
    return parts[2]


def test_every_builtin_task_lives_in_one_folder():
    builtin = [t for t in list_tasks() if t.startswith("Mjlab-")]
    assert len(builtin) == 11
    for task_id in builtin:
        spec = registry._REGISTRY[task_id]
        folders = {
            _folder(inspect.getmodule(spec.env_cfg).__name__),
            _folder(inspect.getmodule(spec.play_env_cfg).__name__),
            _folder(spec.rl_cfg.partition(":")[0]),
        }
        assert len(folders) == 1, (task_id, folders)
        assert spec.rl_cfg.startswith(f"mjlab.tasks.{folders.pop()}.rl_cfg:"), task_id


def test_core_registers_its_tasks_through_the_public_entry_point():
    ours = [
        ep
        for ep in metadata.entry_points(group="mjlab.tasks")
        if ep.dist is not None and ep.dist.name == "mjlab-core"
    ]
    assert [(ep.name, ep.value) for ep in ours] == [("builtin", "mjlab.tasks.builtin")]
    # The registry names no task module, so it and the tasks do not import each other.
    tree = ast.parse(inspect.getsource(registry))
    imported = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    ] + [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert not [m for m in imported if m and m.startswith("mjlab.tasks")], imported
    assert '"mjlab.tasks.builtin"' not in inspect.getsource(registry)


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_listing_tasks_loads_no_rl_code_and_registry_import_loads_no_task():
    out = _run(
        """
        import sys
        import mjlab.tasks.registry as registry
        print(sorted(m for m in sys.modules if m.startswith("mjlab.tasks.") and "registry" not in m))
        registry.list_tasks()
        registry.load_env_cfg("Mjlab-Velocity-Flat-Unitree-Go1")
        print(sorted(m for m in sys.modules if m.startswith("mjlab.rl")))
        """
    )
    assert out.splitlines() == ["[]", "[]"]


def test_adding_a_builtin_task_is_adding_a_folder(tmp_path):
    # A new folder under mjlab/tasks with only a registration module: the registry finds it.
    folder = tmp_path / "mjlab" / "tasks" / "demo_reach"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    (folder / "registration.py").write_text(
        "from mjlab.tasks.registry import register_mjlab_task\n"
        "from mjlab.tasks.cartpole.cartpole_env_cfg import cartpole_balance_env_cfg\n"
        "register_mjlab_task('Demo-Reach', env_cfg=cartpole_balance_env_cfg,\n"
        "                    play_env_cfg=cartpole_balance_env_cfg,\n"
        "                    rl_cfg='mjlab.tasks.demo_reach.rl_cfg:ppo')\n"
    )
    out = _run(
        f"""
        import mjlab.tasks
        mjlab.tasks.__path__.append({str(tmp_path / "mjlab" / "tasks")!r})
        from mjlab.tasks import list_tasks
        print("Demo-Reach" in list_tasks(), "Mjlab-Cartpole-Balance" in list_tasks())
        """
    )
    assert out.split() == ["True", "True"]


def test_a_missing_core_entry_point_is_said_not_hidden(monkeypatch):
    # An install older than the source (no `builtin` entry point in its metadata).
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: [])
    monkeypatch.setattr(registry, "_DISCOVERED", False)
    monkeypatch.setattr(registry, "_BROKEN", {})
    monkeypatch.setattr(registry, "_REGISTRY", {})
    with pytest.warns(UserWarning, match="reinstall mjlab-core"):
        assert registry.list_tasks() == []
    with pytest.raises(KeyError, match=r"Not loaded: .*entry point .*not installed"):
        registry.load_env_cfg("Mjlab-Cartpole-Balance")

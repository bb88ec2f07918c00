"""Task registry: task ids -> env config, play env config, rl config, runner class.

Tasks come from the entry-point group `mjlab.tasks`: each entry point names a module whose
import registers its tasks with `register_mjlab_task`. mjlab-core's own tasks are found the same
way (its entry point `builtin`, `mjlab.tasks.builtin`), as are other projects'
(`examples/downstream` in the repository). An entry point whose module fails to import is
skipped with a warning naming its package and the error; the other tasks stay available, and
asking for an unknown task repeats what failed.

mjlab-core never imports mjlab-rl when it is imported (imports point down: rl -> core). A
task's rl config and runner class may therefore be given as an object, a zero-argument callable,
or a lazy reference "package.module:attribute" that is imported only when `load_rl_cfg` /
`load_runner_cls` is called. The built-in tasks reference their PPO configs in their own folder
that way (`mjlab.tasks.velocity.rl_cfg`, ...).
"""

from __future__ import annotations

import difflib
import importlib
import traceback
import warnings
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from mjlab.utils.config import copy_config

_REGISTRY: dict[str, _TaskSpec] = {}
_DISCOVERED = False
_BROKEN: dict[str, str] = {}
"""Entry points of the `mjlab.tasks` group that failed to import: name -> what happened."""


@dataclass
class _TaskSpec:
    env_cfg: Any
    play_env_cfg: Any
    rl_cfg: Any
    runner_cls: Any


def register_mjlab_task(
    task_id: str, env_cfg: Any, play_env_cfg: Any, rl_cfg: Any, runner_cls: Any = None
) -> None:
    """Register a task.

    Args:
        task_id: e.g. "Mjlab-Velocity-Flat-Unitree-Go1".
        env_cfg: a `ManagerBasedRlEnvCfg` or a zero-argument function returning one.
        play_env_cfg: the same for the play variant.
        rl_cfg: the mjlab-rl runner config, a function returning it, or "module:attribute".
        runner_cls: runner class (or "module:attribute"); None: mjlab-rl's default runner.

    Raises:
        ValueError: the id is already registered.
    """
    if task_id in _REGISTRY:
        raise ValueError(f"Task '{task_id}' is already registered.")
    _REGISTRY[task_id] = _TaskSpec(env_cfg, play_env_cfg, rl_cfg, runner_cls)


def _discover() -> None:
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    # mjlab-core's own tasks first, so that a project reusing a built-in id is the one refused.
    entry_points = sorted(
        metadata.entry_points(group="mjlab.tasks"),
        key=lambda ep: ep.dist is None or ep.dist.name != "mjlab-core",
    )
    if not any(ep.dist is not None and ep.dist.name == "mjlab-core" for ep in entry_points):
        # An install older than this source (e.g. an editable one not reinstalled since the
        # entry point was added) lists no built-in task: say so rather than list none.
        _BROKEN["mjlab-core"] = (
            "mjlab-core's own entry point (builtin = mjlab.tasks.builtin) is not installed, so "
            "its tasks are missing; reinstall mjlab-core (`uv sync`, or pip install mjlab-core)"
        )
        warnings.warn(f"mjlab.tasks: {_BROKEN['mjlab-core']}.", stacklevel=3)
    for ep in entry_points:
        try:
            importlib.import_module(ep.value)
        except Exception as err:
            # One broken project must not take every other task with it: its tasks are
            # missing, and the warning and an unknown-task error say which project and why.
            dist = ep.dist.name if ep.dist is not None else "an installed package"
            frames = traceback.extract_tb(err.__traceback__)
            where = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
            _BROKEN[ep.name] = (
                f"the entry point '{ep.name} = {ep.value}' of {dist} failed to import: "
                f"{type(err).__name__}: {err}{where}"
            )
            warnings.warn(f"mjlab.tasks: {_BROKEN[ep.name]}; its tasks are missing.", stacklevel=3)


def list_tasks() -> list[str]:
    """Ids of every registered task (built-in and from installed packages), sorted."""
    _discover()
    return sorted(_REGISTRY)


def _spec(task_id: str) -> _TaskSpec:
    _discover()
    if task_id not in _REGISTRY:
        close = difflib.get_close_matches(task_id, list(_REGISTRY), n=3, cutoff=0.4)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        broken = f" Not loaded: {'; '.join(_BROKEN.values())}." if _BROKEN else ""
        raise KeyError(
            f"Unknown task '{task_id}'.{hint} Registered tasks: {sorted(_REGISTRY)}.{broken}"
        )
    return _REGISTRY[task_id]


def _materialize(value: Any, what: str, task_id: str) -> Any:
    if isinstance(value, str) and ":" in value:
        module, _, attr = value.partition(":")
        try:
            value = getattr(importlib.import_module(module), attr)
        except ImportError as err:
            raise ImportError(
                f"Task '{task_id}': its {what} ('{module}') needs a package that is not "
                f"installed ({err}). Install mjlab-rl to train: pip install mjlab-rl."
            ) from err
    if callable(value) and not isinstance(value, type):
        value = value()
    # Fresh all the way down: no object of one loaded config is shared with another (a robot's
    # CollisionCfg, a module-level SceneEntityCfg), so editing one never changes the next.
    return copy_config(value)


def _task(task_name: str | None, task_id: str | None, where: str) -> str:
    """The task id given as `task_name` (mjlab 1.6's name) or `task_id` (ours): exactly one."""
    if (task_name is None) == (task_id is None):
        raise TypeError(
            f"{where}() takes the task as task_name (or its older name task_id): give exactly "
            f"one, e.g. {where}('Mjlab-Velocity-Flat-Unitree-Go1')."
        )
    return task_name if task_name is not None else task_id  # type: ignore[return-value]


def load_env_cfg(
    task_name: str | None = None, play: bool = False, *, task_id: str | None = None
) -> Any:
    """A fresh copy of the task's env config (the play variant with play=True).

    Args:
        task_name: the task id, e.g. "Mjlab-Velocity-Flat-Unitree-Go1" (mjlab's parameter name;
            `task_id=` is accepted too).
        play: the play variant.

    Raises:
        KeyError: an unknown task (with the closest ids). TypeError: no task or both names.
    """
    task_id = _task(task_name, task_id, "load_env_cfg")
    spec = _spec(task_id)
    return _materialize(spec.play_env_cfg if play else spec.env_cfg, "env config", task_id)


def load_rl_cfg(task_name: str | None = None, *, task_id: str | None = None) -> Any:
    """A fresh copy of the task's rl config (an mjlab-rl dataclass); the task as in
    `load_env_cfg`."""
    task_id = _task(task_name, task_id, "load_rl_cfg")
    return _materialize(_spec(task_id).rl_cfg, "rl config", task_id)


def load_runner_cls(task_name: str | None = None, *, task_id: str | None = None) -> Any:
    """The task's runner class, or None for the default; the task as in `load_env_cfg`."""
    task_id = _task(task_name, task_id, "load_runner_cls")
    value = _spec(task_id).runner_cls
    if isinstance(value, str):
        module, _, attr = value.partition(":")
        return getattr(importlib.import_module(module), attr)
    return value

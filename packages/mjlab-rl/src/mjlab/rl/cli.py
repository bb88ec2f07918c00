"""The one path every command (`train`, `play`, `train-rlightning`, a downstream project's own)
goes through: parse `PROG TASK [--env.* ...] [--agent.* ...]` into a config, choose the device,
make the run folder, dump the configs, find checkpoints."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import torch
import tyro
import yaml

T = TypeVar("T")


def choose_device(requested: str | None) -> str:
    """CUDA when available, else CPU; an explicit `requested` wins. The choice is printed."""
    if requested:
        device = requested
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise SystemExit(
                f"--device {device} was requested but no CUDA device is available; use --device cpu."
            )
    else:
        device = "cuda:0" if torch.cuda.is_available() else "cpu"
    print(f"[mjlab] device: {device}" + ("" if requested else " (auto; override with --device)"))
    return device


def task_from_argv(prog: str, argv: list[str]) -> tuple[str, list[str]]:
    """Split `prog TASK [options]` into the task id and the rest; print help and tasks if missing."""
    from mjlab.tasks import list_tasks

    if not argv or argv[0].startswith("-"):
        print(f"usage: {prog} TASK [--env.<field> VALUE ...] [--agent.<field> VALUE ...]\n")
        print("tasks:\n  " + "\n  ".join(list_tasks()))
        raise SystemExit(0 if argv and argv[0] in ("-h", "--help") else 2)
    return argv[0], argv[1:]


def parse_task_cli(
    prog: str, cfg_cls: type[T], argv: list[str] | None = None, *, play: bool = False
) -> tuple[str, T]:
    """Parse `prog TASK [--env.<field> VALUE ...] [--agent.<field> VALUE ...] [--<option> ...]`.

    Args:
        prog: the command's name, for help and errors.
        cfg_cls: a dataclass with `env` (the task's env config) and `agent` (its mjlab.rl runner
            config) fields plus the command's own options.
        argv: the arguments after `prog` (None: `sys.argv[1:]`).
        play: start from the task's play env config instead of its training one.

    Returns:
        (task id, `cfg_cls` instance holding the task's defaults with the overrides applied).

    Raises:
        SystemExit: no task given (prints the usage and the registered tasks), or tyro's
            message for an unknown option or a bad value.
    """
    from mjlab.tasks import load_env_cfg, load_rl_cfg

    task_id, rest = task_from_argv(prog, list(sys.argv[1:] if argv is None else argv))
    default = cfg_cls(env=load_env_cfg(task_id, play=play), agent=load_rl_cfg(task_id))  # type: ignore[call-arg]
    cfg = tyro.cli(
        cfg_cls,
        default=default,
        args=rest,
        prog=f"{prog} {task_id}",
        config=(tyro.conf.AvoidSubcommands,),
    )
    return task_id, cfg


def to_plain(value: Any) -> Any:
    """A YAML-safe view of a config: dataclasses as dicts, callables as 'module:qualname'."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if callable(value):
        return f"{getattr(value, '__module__', '?')}:{getattr(value, '__qualname__', repr(value))}"
    return repr(value)


def dump_params(log_dir: Path, env_cfg: Any, agent_cfg: Any) -> None:
    params = log_dir / "params"
    params.mkdir(parents=True, exist_ok=True)
    (params / "env.yaml").write_text(yaml.safe_dump(to_plain(env_cfg), sort_keys=False))
    (params / "agent.yaml").write_text(yaml.safe_dump(to_plain(agent_cfg), sort_keys=False))


def check_folder_name(value: str, field: str) -> None:
    """Raise ValueError unless `value` is usable as one folder name: not "." or "..", no path
    separator (an experiment name must not write outside the log root)."""
    if value in (".", "..") or "/" in value or "\\" in value or "\0" in value:
        raise ValueError(
            f"{field} {value!r} must be a plain folder name (no '/', '\\' or '..'), e.g. "
            "'go1_velocity'."
        )


def new_run_dir(log_root: Path, experiment: str, run_name: str) -> Path:
    """Create a new, empty run folder <log_root>/<experiment>/<timestamp>[_<run_name>] and
    return it. It is created exclusively (an atomic mkdir that fails if the folder exists), so
    two runs started in the same second get two folders (the second gets a suffix _1, _2, ...).

    Raises:
        ValueError: `experiment` is empty or not a plain folder name, or `run_name` is not one.
    """
    if not experiment:
        raise ValueError("agent.experiment_name must not be empty, e.g. 'go1_velocity'.")
    check_folder_name(experiment, "agent.experiment_name")
    if run_name:
        check_folder_name(run_name, "agent.run_name")
    stamp = datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    base = f"{stamp}_{run_name}" if run_name else stamp
    parent = log_root / experiment
    parent.mkdir(parents=True, exist_ok=True)
    for k in range(10_000):
        folder = parent / (base if k == 0 else f"{base}_{k}")
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        return folder
    raise FileExistsError(f"No free run folder name like {parent / base}.")


def remove_unused_run_dir(folder: Path) -> bool:
    """Remove a run folder that holds no checkpoint (a run that failed at start-up); returns
    whether it was removed. A folder with any `*.pt` file is kept."""
    if folder.is_dir() and not any(folder.rglob("*.pt")):
        shutil.rmtree(folder, ignore_errors=True)
        return True
    return False


def find_checkpoint(experiment_dir: Path, load_run: str, load_checkpoint: str) -> Path:
    """The newest run (by name: run folders start with their timestamp) that matches `load_run`
    and has a checkpoint matching `load_checkpoint`, and in it the latest such checkpoint
    (model_<iteration>.pt sorted by iteration). Runs without a matching checkpoint (the run
    being started, one that failed early) are skipped.

    Raises:
        FileNotFoundError: naming what was searched.
    """
    runs = sorted(
        (p for p in experiment_dir.glob("*") if p.is_dir() and re.fullmatch(load_run, p.name)),
        reverse=True,
    )
    if not runs:
        raise FileNotFoundError(f"No run folder in {experiment_dir} matches load_run='{load_run}'.")

    def order(p: Path) -> tuple:
        m = re.search(r"(\d+)", p.stem)
        return (int(m.group(1)) if m else -1, p.name)

    for run in runs:
        ckpts = sorted(
            (p for p in run.glob("*.pt") if re.fullmatch(load_checkpoint, p.name)), key=order
        )
        if ckpts:
            return ckpts[-1]
    raise FileNotFoundError(
        f"No run folder in {experiment_dir} matching load_run='{load_run}' has a checkpoint "
        f"matching load_checkpoint='{load_checkpoint}'."
    )


def configure_wandb(logger: str) -> None:
    """wandb runs offline, with a note, when no credentials are configured."""
    if logger != "wandb" or os.environ.get("WANDB_MODE"):
        return
    has_key = bool(os.environ.get("WANDB_API_KEY"))
    netrc = Path.home() / ".netrc"
    if not has_key and not (netrc.exists() and "api.wandb.ai" in netrc.read_text(errors="ignore")):
        os.environ["WANDB_MODE"] = "offline"
        print(
            "[mjlab] wandb: no credentials found, logging offline (run `wandb login` to sync).",
            file=sys.stderr,
        )

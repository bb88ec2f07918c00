"""The one path every command (`train`, `play`, `train-rlightning`, a downstream project's own)
goes through: parse `PROG TASK [--env.* ...] [--agent.* ...]` into a config, choose the device,
make the run folder, dump the configs, find checkpoints."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import itertools
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import torch
import tyro
import yaml

T = TypeVar("T")


def run_command(prog: str, main: Callable[[list[str]], T], argv: list[str] | None = None) -> T:
    """Run a command's `main(args)` so that a user's mistake is one line, not a traceback.

    A `mjlab.rl.errors.UserError` raised by `main` prints `PROG: error: MESSAGE` on stderr and
    exits with status 2; any other exception keeps its traceback. A command decides what is a
    mistake: it runs its set-up inside `mjlab.rl.errors.user_errors()` (a bad task id, config
    value, file, device or robot model becomes a `UserError`), and a training run inside
    `TrainingRun.user_errors()`, which stops doing so once learning began (an error then is a
    bug or a fault). `--debug` anywhere in the arguments is removed from them and raises the
    error a `UserError` stands for, with its traceback.
    """
    from mjlab.rl.errors import UserError

    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    try:
        return main(args)
    except UserError as err:
        if debug:
            if err.__cause__ is not None:
                raise err.__cause__ from None
            raise
        print(f"{prog}: error: {err} (--debug shows the traceback)", file=sys.stderr)
        raise SystemExit(2) from None


def choose_device(requested: str | None) -> str:
    """CUDA when available, else CPU; an explicit `requested` wins. The choice is printed.

    Raises:
        ValueError: `requested` is not a torch device name, or CUDA was requested and there is
            none.
    """
    if requested:
        device = requested
        try:
            torch.device(device)
        except RuntimeError:
            raise ValueError(
                f"--device {device!r} is not a device; use cpu, cuda or cuda:N."
            ) from None
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise ValueError(
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
    prog: str,
    cfg_cls: type[T],
    argv: list[str] | None = None,
    *,
    play: bool = False,
    common_options: tuple[tuple[str, str], ...] | None = None,
) -> tuple[str, T]:
    """Parse `prog TASK [--env.<field> VALUE ...] [--agent.<field> VALUE ...] [--<option> ...]`.

    Args:
        prog: the command's name, for help and errors.
        cfg_cls: a dataclass with `env` (the task's env config) and `agent` (its mjlab.rl runner
            config) fields plus the command's own options.
        argv: the arguments after `prog` (None: `sys.argv[1:]`).
        play: start from the task's play env config instead of its training one.
        common_options: (field path, what it does) rows `--help` shows with the task's values;
            None: `COMMON_OPTIONS` (a run's), () for a command that runs nothing.

    Returns:
        (task id, `cfg_cls` instance holding the task's defaults with the overrides applied).

    Raises:
        SystemExit: no task given (prints the usage and the registered tasks), or tyro's
            message for an unknown option or a bad value.
    """
    from mjlab.tasks import load_env_cfg, load_rl_cfg

    task_id, rest = task_from_argv(prog, list(sys.argv[1:] if argv is None else argv))
    default = cfg_cls(env=load_env_cfg(task_id, play=play), agent=load_rl_cfg(task_id))  # type: ignore[call-arg]
    if ("-h" in rest or "--help" in rest) and "--help-all" not in rest:
        print(short_help(prog, task_id, default, common_options))
        raise SystemExit(0)
    rest = ["--help" if a == "--help-all" else a for a in rest]
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):  # tyro's messages, squeezed below
            cfg = tyro.cli(
                cfg_cls,
                default=default,
                args=rest,
                prog=f"{prog} {task_id}",
                # Fields a task fixes (functions, term classes) are not options: --help-all
                # hides them.
                config=(tyro.conf.AvoidSubcommands, tyro.conf.SuppressFixed),
            )
    except SystemExit as stop:
        text = errors.getvalue()
        if stop.code in (0, None) or not text.strip():
            sys.stderr.write(text)
            raise
        # tyro's framed message, as one line.
        print(f"{prog}: error: {_one_line(text)}", file=sys.stderr)
        raise SystemExit(2) from None
    except BaseException:
        sys.stderr.write(errors.getvalue())  # warnings printed before another error
        raise
    sys.stderr.write(errors.getvalue())
    return task_id, cfg


def _one_line(text: str) -> str:
    """A framed, wrapped console message as one line (box drawing and rules removed)."""
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)  # colours, when tyro saw a terminal
    lines = text.strip().splitlines()
    if lines and "\u256d" in lines[0]:  # the top border carries only the box's title
        lines = lines[1:]
    words = re.sub(r"[\u2500-\u257f]+", " ", "\n".join(lines)).split()
    text = " ".join(words)
    text = re.sub(r"\.? For full helptext, (see|run)", "; see", text)
    # tyro lists an unknown option's value as an option too ("--env.x, 5"): keep the names.
    text = re.sub(
        r"Unrecognized options: (--[^\s,]+)(?:, [^-\s][^\s,]*)+", r"Unrecognized options: \1", text
    )
    return re.sub(r"(?<![.:]) Perhaps you meant", ". Perhaps you meant", text).strip()


COMMON_OPTIONS = (
    ("env.scene.num_envs", "parallel environments"),
    ("agent.max_iterations", "PPO iterations"),
    ("agent.seed", "seed of the run (env and networks)"),
    ("agent.logger", "tensorboard or wandb"),
    ("agent.resume", "continue the newest run of the experiment that has a checkpoint"),
    ("agent.load_run", "with --agent.resume: regex of the run folder"),
    ("agent.load_checkpoint", "with --agent.resume: regex of the checkpoint (highest iteration)"),
    ("agent.experiment_name", "folder under the log root"),
    ("agent.run_name", "suffix of the run folder"),
)
"""The options `PROG TASK --help` shows first (dotted config paths, a few words each)."""


def _field_docs(cls: type, whole: bool = False) -> dict[str, str]:
    """First line (`whole`: all, as one line) of each field's attribute docstring of a
    dataclass."""
    import ast
    import inspect
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return {}
    docs: dict[str, str] = {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    for node, after in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            text = after.value.value.strip()
            docs[node.target.id] = " ".join(text.split()) if whole else text.splitlines()[0]
    return docs


def short_help(
    prog: str, task_id: str, cfg: Any, common: tuple[tuple[str, str], ...] | None = None
) -> str:
    """`PROG TASK --help`: the common options (`common`, default `COMMON_OPTIONS`) with this
    task's values, the command's own options, and how to see every field (`--help-all`)."""
    common = COMMON_OPTIONS if common is None else common

    def value(path: str) -> Any:
        obj = cfg
        for part in path.split("."):
            obj = getattr(obj, part, None)
        return obj

    def option(path: str) -> str:
        return "--" + path.replace("_", "-")

    rows = [(option(p), f"{what} (now {value(p)!r})") for p, what in common if _has(cfg, p)]
    docs = _field_docs(type(cfg))
    own = [f.name for f in dataclasses.fields(cfg) if f.name not in ("env", "agent")]
    for n in own:
        flag = option(n)
        if getattr(cfg, n) is True:  # the flag that changes it (tyro's --no- form)
            flag = f"--no-{flag[2:]}"
        rows.append((flag, f"{docs.get(n, '')} (now {getattr(cfg, n)!r})"))
    width = max(len(r[0]) for r in rows) + 2
    lines = [f"usage: {prog} {task_id} [OPTIONS]", "", "common options:" if common else "options:"]
    lines += [f"  {name:<{width}}{text}" for name, text in rows]
    lines += [
        "",
        "Every field of the task's config is an option (--env.<field>, --agent.<field>): "
        f"`{prog} {task_id} --help-all` lists them.",
        "--debug shows the traceback of an error.",
    ]
    return "\n".join(lines)


def _has(cfg: Any, path: str) -> bool:
    obj = cfg
    for part in path.split("."):
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


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


def check_log_root(path: str | Path, option: str = "--log-root") -> Path:
    """The log root `path`, absolute, created when missing and checked writable by making
    (and removing) a folder in it: a file system's refusal shows before the env is built.

    Raises:
        ValueError: naming `option` and the path: it is a file, cannot be created, or cannot
            be written (read-only, no permission, a virtual file system like /sys).
    """
    root = Path(path).absolute()
    try:
        if root.exists() and not root.is_dir():
            raise ValueError(
                f"{option} {path} is a file, not a folder; give the folder that run folders go "
                "under (e.g. logs)."
            )
        root.mkdir(parents=True, exist_ok=True)
        # A real write: os.access says yes to root on read-only mounts and on /sys.
        os.rmdir(tempfile.mkdtemp(prefix=".mjlab-write-check-", dir=root))
    except OSError as err:
        where = f" ({err.filename})" if err.filename and str(err.filename) != str(root) else ""
        raise ValueError(
            f"{option} {path} cannot be used: {err.strerror or err}{where}; give a folder you can "
            "write to (e.g. logs)."
        ) from None
    return root.resolve()


def new_run_dir(log_root: Path, experiment: str, run_name: str) -> Path:
    """Create a new, empty run folder <log_root>/<experiment>/<timestamp>[_<run_name>] and
    return it. It is created exclusively (an atomic mkdir that fails if the folder exists), so
    two runs started in the same second get two folders (the second gets a suffix _1, _2, ...).

    Raises:
        ValueError: `experiment` is empty or not a plain folder name, or `run_name` is not one,
            or the experiment folder cannot be made (`check_log_root` checks the root first).
    """
    if not experiment:
        raise ValueError("agent.experiment_name must not be empty, e.g. 'go1_velocity'.")
    check_folder_name(experiment, "agent.experiment_name")
    if run_name:
        check_folder_name(run_name, "agent.run_name")
    stamp = datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    base = f"{stamp}_{run_name}" if run_name else stamp
    parent = log_root / experiment
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:  # e.g. a file of that name in the log root
        raise ValueError(
            f"The experiment folder {parent} cannot be made: {err.strerror or err}; choose "
            "another --agent.experiment-name or log root."
        ) from None
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
        present = sorted(p.name for p in experiment_dir.glob("*") if p.is_dir())
        fix = (
            f"runs there: {', '.join(present[-5:])} (--agent.load-run takes a regex of one)"
            if present
            else "train a run of this experiment first, or check --agent.experiment-name"
        )
        raise FileNotFoundError(
            f"No run folder in {experiment_dir} matches load_run='{load_run}'; {fix}."
        )

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
        f"matching load_checkpoint='{load_checkpoint}'; in the newest, {runs[0].name}: "
        f"{', '.join(sorted(p.name for p in runs[0].glob('*.pt'))[-5:]) or 'none'} "
        "(--agent.load-checkpoint takes a regex such as 'model_.*\\.pt')."
    )


def check_run_config(env_cfg: Any, agent_cfg: Any, update_envs: int | None = None) -> None:
    """The cross-field checks of a run, before anything is built: the whole env config
    (`mjlab.utils.config.validate_config`, paths from "env"), the PPO minibatch size
    (`mjlab.rl.config.check_minibatch`, recurrent actor/critic included; its small-size warning
    comes from the runner) and the symmetry function (`mjlab.rl.config.check_symmetry`).

    Args:
        env_cfg: the task's `ManagerBasedRlEnvCfg`.
        agent_cfg: the task's `RslRlOnPolicyRunnerCfg`.
        update_envs: envs whose rollouts feed one PPO update; None: `env_cfg.scene.num_envs`
            (several rollout workers: their sum).

    Raises:
        ValueError: the first problem, naming the field path (e.g. `env.actions['effort'].scale`).
    """
    import warnings

    from mjlab.rl.config import check_minibatch, check_symmetry, is_recurrent_model
    from mjlab.utils.config import validate_config

    validate_config(env_cfg, "env")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the runner warns once, when it is built
        check_minibatch(
            env_cfg.scene.num_envs if update_envs is None else update_envs,
            agent_cfg.num_steps_per_env,
            agent_cfg.algorithm.num_mini_batches,
            recurrent=any(
                is_recurrent_model(model.class_name)
                for model in (agent_cfg.actor, agent_cfg.critic)
            ),
        )
    check_symmetry(agent_cfg)


def check_input_files(env_cfg: Any) -> None:
    """Refuse a missing or unreadable input file named in the env config's terms (a field whose
    name ends in `_file`, such as the tracking command's `motion_file`) before anything is built.
    Values of the form "<kind>:<name>" (e.g. "synthetic:squat") name no file.

    Raises:
        FileNotFoundError, ValueError: naming the option (`--env.<group>.<term>.<field>`).
    """
    from mjlab.deploy.files import require_readable_file

    for option_path, term in _config_terms(env_cfg):
        for f in dataclasses.fields(term):
            value = getattr(term, f.name)
            if not f.name.endswith("_file") or not isinstance(value, (str, Path)):
                continue
            if isinstance(value, str) and re.fullmatch(r"[A-Za-z_]+:[^/\\]*", value):
                continue
            # tyro spells field names and dict keys with hyphens (its --help shows them so).
            option = f"--env.{option_path}.{f.name}".replace("_", "-")
            doc = _field_docs(type(term), whole=True).get(f.name, "an existing file")
            require_readable_file(value, option, doc[:1].lower() + doc[1:].rstrip("."))


def _config_terms(env_cfg: Any):
    """(option path, term config) of every manager term of an env config: e.g.
    ("commands.motion", ...) and, inside observation groups, ("observations.actor.terms.x", ...)."""
    for group in ("commands", "observations", "rewards", "events", "terminations", "actions"):
        terms = getattr(env_cfg, group, None)
        if not isinstance(terms, dict):
            continue
        for name, term in terms.items():
            if not dataclasses.is_dataclass(term):
                continue
            yield f"{group}.{name}", term
            inner = getattr(term, "terms", None)
            if isinstance(inner, dict):
                for key, sub in inner.items():
                    if dataclasses.is_dataclass(sub):
                        yield f"{group}.{name}.terms.{key}", sub


def configure_wandb(logger: str, verbose: bool = False) -> None:
    """wandb runs offline, with a note, when no credentials are configured; its own console
    chatter (banners, sync hints) is silenced unless `verbose` (WANDB_SILENT, when unset)."""
    if logger != "wandb":
        return
    if not verbose:
        os.environ.setdefault("WANDB_SILENT", "true")
    if os.environ.get("WANDB_MODE"):
        return
    has_key = bool(os.environ.get("WANDB_API_KEY"))
    netrc = Path.home() / ".netrc"
    if not has_key and not (netrc.exists() and "api.wandb.ai" in netrc.read_text(errors="ignore")):
        os.environ["WANDB_MODE"] = "offline"
        print(
            "[mjlab] wandb: no credentials found, logging offline (run `wandb login` to sync).",
            file=sys.stderr,
        )

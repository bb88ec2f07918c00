"""One training run, phase by phase: config -> run folder -> seeds -> env -> learner -> learn,
with policy.onnx written beside the checkpoints by one export callback (`PolicyExport`).

`train` (rsl-rl PPO: `mjlab.rl.ppo_learner.RslRlPpoLearner`) and `train-rlightning` (the
rlightning engines, in the rlightning-policy package) are the same `TrainingRun` with another
`Learner`; `play` builds its env and loads its checkpoint with the same pieces. A learner is
whatever builds, trains, saves and exports a policy: an off-policy one fits the same protocol.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from mjlab.envs import ManagerBasedRlEnv
from mjlab.rl.checkpoint import verify_checkpoint
from mjlab.rl.cli import (
    check_input_files,
    check_log_root,
    check_run_config,
    choose_device,
    dump_params,
    find_checkpoint,
    new_run_dir,
    remove_unused_run_dir,
)
from mjlab.rl.errors import user_errors
from mjlab.rl.seeding import RunSeeds, seed_run, write_seeds


class Learner(Protocol):
    """What a `TrainingRun` drives: it builds a policy and its algorithm, trains it, saves
    checkpoints and exports the policy. The run calls, in order: `check` (before anything is
    made), `applied_seeds` (after seeding), `build`, `load` (resuming only), `learn`, `close`.
    """

    prefix: str
    """Start of the run's console lines, e.g. "[mjlab]"."""
    builds_envs: bool
    """True: `build` makes its envs itself from `run.env_factory` (e.g. one per rollout worker);
    False: the run builds one in this process (`run.env`) before `build`."""
    resumable: bool
    """Whether `--agent.resume` applies: the run then finds the checkpoint and calls `load`."""
    data_parallel: bool
    """Whether a torchrun launch (WORLD_SIZE > 1) runs one copy per GPU, rank 0 writing."""

    def check(self, cfg: Any) -> int:
        """Check the learner's own options; returns how many envs feed one update.

        Raises:
            ValueError: an option out of range, naming it.
        """
        ...

    def applied_seeds(self, seeds: RunSeeds) -> RunSeeds:
        """`seeds` as this learner applies them (written to params/seed.yaml)."""
        ...

    def build(self, run: TrainingRun) -> None:
        """Build the algorithm (and the envs, when `builds_envs`) for `run`; checkpoints go to
        `run.log_dir`, and each one the learner wants exported goes to `run.export`."""
        ...

    def load(self, checkpoint: Path) -> str:
        """Resume from `checkpoint` (already verified); returns a note on what was restored."""
        ...

    def learn(self, run: TrainingRun) -> Any:
        """Train for `run.cfg.agent.max_iterations` iterations; returns what the command
        returns besides the run folder (e.g. per-iteration reports), or None."""
        ...

    def save(self, path: Path) -> None:
        """Write a checkpoint to `path`."""
        ...

    def export_policy(self, checkpoint: Path) -> Path:
        """Write the policy of `checkpoint` (the learner's current one when it is the newest)
        as policy.onnx beside it; returns its path.

        Raises:
            mjlab.export.ExportError: the task computes something the robot runtime cannot
                reproduce.
        """
        ...

    def close(self) -> None:
        """Release what `build` started (workers, threads); called once, also after a failure."""
        ...


class EnvFactory:
    """Picklable `() -> RslRlVecEnvWrapper` of one task config (each rollout worker of a
    distributed learner builds its own from a copy).

    Args:
        env_cfg: the task's `ManagerBasedRlEnvCfg` (not changed).
        device: torch device of the env, e.g. "cpu" or "cuda:0".
        clip_actions: the wrapper's action clip (`agent.clip_actions`); None: no clip.
        render_mode: "rgb_array" to render frames (`play --video`); None: no rendering.
    """

    def __init__(
        self,
        env_cfg: Any,
        device: str,
        clip_actions: float | None,
        render_mode: str | None = None,
    ) -> None:
        self.env_cfg, self.device, self.clip_actions = env_cfg, device, clip_actions
        self.render_mode = render_mode

    def __call__(self) -> Any:
        from mjlab.rl.vecenv_wrapper import RslRlVecEnvWrapper

        options = {} if self.render_mode is None else {"render_mode": self.render_mode}
        env = ManagerBasedRlEnv(self.env_cfg, device=self.device, **options)
        return RslRlVecEnvWrapper(env, clip_actions=self.clip_actions)


class PolicyExport:
    """The export callback: policy.onnx beside a checkpoint, through `learner.export_policy`.

    A task the robot runtime cannot reproduce (`mjlab.export.ExportError`) is said once on
    stderr and not exported again; any other failure is printed with its traceback. Training
    goes on either way: the checkpoints are what matters, and `export-onnx` can write the file
    later.

    Args:
        learner: the run's learner.
        enabled: False (`--no-export-onnx`): the callback does nothing.
        prefix: start of its console lines.
    """

    def __init__(self, learner: Learner, enabled: bool = True, prefix: str = "[mjlab]") -> None:
        self.learner, self.enabled, self.prefix = learner, enabled, prefix
        self.refused = False
        """True after an `ExportError`: the task cannot be exported."""
        self.written: Path | None = None
        """The last file written."""

    def __call__(self, checkpoint: Path) -> Path | None:
        """Export the policy of `checkpoint` beside it; returns the file, or None."""
        if not self.enabled or self.refused:
            return None
        from mjlab.export import ExportError

        try:
            self.written = self.learner.export_policy(Path(checkpoint))
        except ExportError as err:
            self.refused = True
            print(f"{self.prefix} policy.onnx not written: {err}", file=sys.stderr)
            return None
        except Exception:
            print(
                f"{self.prefix} ONNX export beside {checkpoint} FAILED:\n{traceback.format_exc()}",
                file=sys.stderr,
            )
            return None
        return self.written


def check_one_seed(cfg: Any) -> None:
    """Raise ValueError when the command's `env.seed` is set and is not `agent.seed`: a run
    has one seed, `--agent.seed`, which seeds the env too (`seed_command`)."""
    if cfg.env.seed is not None and cfg.env.seed != cfg.agent.seed:
        raise ValueError(
            f"--env.seed {cfg.env.seed} and --agent.seed {cfg.agent.seed} disagree: a run has "
            "one seed, --agent.seed, which seeds the env too. Drop --env.seed (or give the "
            "same value to both)."
        )


def seed_command(cfg: Any) -> RunSeeds:
    """The seeding every command that builds a task's env does first (`train`,
    `train-rlightning`, `play`): torch, numpy and Python from `cfg.agent.seed` (`seed_run`,
    with torch's deterministic algorithms when `cfg.deterministic`), the env's generators from
    the same seed (`cfg.env.seed`), and MuJoCo Warp's deterministic mode with `deterministic`.

    Args:
        cfg: the command's config, with `env`, `agent` and `deterministic`; its `env` is set.

    Raises:
        ValueError: a seed that is not an integer >= 0, or an `env.seed` that is not the run's
            (`--env.seed` and `--agent.seed` disagree: the run's one seed is `--agent.seed`).
    """
    check_one_seed(cfg)
    seeds = seed_run(cfg.agent.seed, cfg.deterministic)
    cfg.env.seed = seeds.env
    if cfg.deterministic:
        cfg.env.sim.deterministic = True
    return seeds


class TrainingRun:
    """One training run of a task with one learner, in explicit phases (`run` calls them in
    this order): `check_config`, `make_run_folder`, `seed`, `build_env`, `build_learner`,
    `learn`.

    A run that fails before learning began removes its run folder; once learning began, the
    folder and its logs stay whatever happens. `learning` tells which: `user_errors()` turns a
    set-up error into a one-line `UserError` only before it.

    Args:
        task_id: the registered task.
        cfg: the command's config: `env` (`ManagerBasedRlEnvCfg`), `agent`
            (`RslRlOnPolicyRunnerCfg`), `device` (None: auto), `log_root`, `deterministic`,
            `export_onnx` and `verbose`; the run sets `env.seed` (and with `deterministic`
            `env.sim.deterministic`) and, on rank r of a multi-GPU run, adds r to `agent.seed`.
        learner: the `Learner` that trains.
    """

    def __init__(self, task_id: str, cfg: Any, learner: Learner) -> None:
        self.task_id, self.cfg, self.learner = task_id, cfg, learner
        self.learning = False
        """True once `learn` began: from then on an error is a fault, not a mistake."""
        self.multi_gpu = learner.data_parallel and int(os.environ.get("WORLD_SIZE", "1")) > 1
        self.rank = int(os.environ.get("RANK", "0")) if self.multi_gpu else 0
        """This process's rank (0 unless multi-GPU); only rank 0 writes."""
        self.device = ""
        self.log_root: Path | None = None
        self.log_dir: Path | None = None
        """The run folder (None on ranks > 0)."""
        self.resume_path: Path | None = None
        self.seeds: RunSeeds | None = None
        self.env_factory: EnvFactory | None = None
        self.env: Any = None
        """The run's env (`RslRlVecEnvWrapper`) when the learner does not build its own."""
        self.export = PolicyExport(learner, cfg.export_onnx, learner.prefix)
        """The export callback; a learner calls it with each checkpoint to export."""
        self.started = time.time()
        """When building began (`build_env`): the "done in" time counts from it."""

    @contextlib.contextmanager
    def user_errors(self) -> Iterator[None]:
        """Inside: a set-up error (bad config, file, device, ...) raised before learning
        began becomes a `mjlab.rl.errors.UserError` (one line from `run_command`); after, errors
        keep their type and traceback."""
        try:
            yield
        except Exception:
            if self.learning:
                raise
            with user_errors():
                raise

    def run(self) -> Any:
        """All phases; returns what `learner.learn` returned.

        Raises:
            ValueError: an inconsistent run config (NaN/Inf or unordered ranges in the env
                config, PPO minibatches of 0 samples), named by its field path, or an unusable
                log root, before anything is built.
            FileNotFoundError: a missing input file, or no checkpoint to resume from.
        """
        self.check_config()
        self.make_run_folder()
        try:
            self.seed()
            self.build_env()
            self.build_learner()
            return self.learn()
        except BaseException:
            if not self.learning and self.log_dir is not None:
                remove_unused_run_dir(self.log_dir)
            raise
        finally:
            self.learner.close()

    def check_config(self) -> None:
        """What only reads: the env and agent configs, the learner's options, input files."""
        update_envs = self.learner.check(self.cfg)
        check_one_seed(self.cfg)
        check_run_config(self.cfg.env, self.cfg.agent, update_envs=update_envs)
        check_input_files(self.cfg.env)

    def make_run_folder(self) -> None:
        """Check the log root, choose the device, find the checkpoint to resume from, and make
        the run folder (rank 0 alone writes under the log root)."""
        cfg = self.cfg
        if self.rank == 0:
            self.log_root = check_log_root(cfg.log_root)
        else:
            self.log_root = Path(cfg.log_root).resolve()
        self.device = choose_device(cfg.device)
        if self.multi_gpu:
            self.device = f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"
        if cfg.agent.resume and self.learner.resumable:
            from mjlab.deploy.files import require_readable_file

            found = find_checkpoint(
                self.log_root / cfg.agent.experiment_name,
                cfg.agent.load_run,
                cfg.agent.load_checkpoint,
            )
            require_readable_file(found, "--agent.resume: checkpoint")
            self.resume_path = verify_checkpoint(found)
        if self.rank == 0:
            self.log_dir = new_run_dir(self.log_root, cfg.agent.experiment_name, cfg.agent.run_name)

    def seed(self) -> None:
        """Seed the command (`seed_command`) before anything draws, and write params/env.yaml,
        agent.yaml and seed.yaml."""
        cfg = self.cfg
        if self.multi_gpu:
            cfg.agent.seed += self.rank  # each process its own draws, also across nodes
        self.seeds = self.learner.applied_seeds(seed_command(cfg))
        prefix = self.learner.prefix
        print(f"{prefix} task: {self.task_id}  run folder: {self.log_dir or '(rank > 0: none)'}")
        if self.log_dir is not None:
            dump_params(self.log_dir, cfg.env, cfg.agent)
            write_seeds(self.log_dir, self.seeds)

    def build_env(self) -> None:
        """The env factory, and the env itself unless the learner builds its own."""
        cfg = self.cfg
        self.started = time.time()
        self.env_factory = EnvFactory(cfg.env, self.device, cfg.agent.clip_actions)
        if self.learner.builds_envs:
            return
        self.env = self.env_factory()
        env = self.env.unwrapped
        print(
            f"{self.learner.prefix} env: {env.num_envs} envs, physics {env.sim.backend} on "
            f"{env.device}, obs {dict(env.observation_manager.group_dims)}, "
            f"actions {env.action_manager.total_action_dim}, built in {time.time() - self.started:.1f} s"
        )

    def build_learner(self) -> None:
        """Build the learner; resume it from the checkpoint found by `make_run_folder`."""
        self.learner.build(self)
        if self.resume_path is not None:
            note = self.learner.load(self.resume_path)
            print(f"{self.learner.prefix} resumed from {self.resume_path}: {note}")

    def learn(self) -> Any:
        """Train (from here on an error is a fault with its traceback), then close the env."""
        self.learning = True
        result = self.learner.learn(self)
        if self.env is not None:
            self.env.close()
        prefix = self.learner.prefix
        if self.export.written is not None:
            print(f"{prefix} policy: {self.export.written}")
        print(f"{prefix} done in {time.time() - self.started:.0f} s; run folder: {self.log_dir}")
        return result

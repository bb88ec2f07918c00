"""`RslRlPpoLearner`: rsl-rl PPO (`MjlabOnPolicyRunner` or a task's subclass of it) as the
`mjlab.rl.run.Learner` of `train`, and the checkpoint loader of `play`."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mjlab.rl.run import TrainingRun
    from mjlab.rl.runner import MjlabOnPolicyRunner
    from mjlab.rl.seeding import RunSeeds


class RslRlPpoLearner:
    """rsl-rl-lib's PPO in this process, on the env the run builds; data-parallel under
    torchrun (rank 0 writes). Writes policy.onnx beside each checkpoint through the run's
    export callback (`MjlabOnPolicyRunner.on_save`).

    The runner class is the task's (`mjlab.tasks.load_runner_cls`, a subclass of
    `MjlabOnPolicyRunner`) or `MjlabOnPolicyRunner`. Its `train_cfg` is
    `to_rsl_rl_train_cfg(agent)` plus "task_id", "export_onnx", "verbose" and
    "save_env_state" from the command's config.
    """

    prefix = "[mjlab]"
    builds_envs = False
    resumable = True
    data_parallel = True

    def __init__(self) -> None:
        self.runner: MjlabOnPolicyRunner | None = None
        """The runner, once built."""

    @staticmethod
    def make_runner(
        env: Any,
        agent_cfg: Any,
        task_id: str,
        device: str,
        log_dir: Path | None = None,
        options: dict[str, Any] | None = None,
        quiet_small_minibatches: bool = False,
    ) -> MjlabOnPolicyRunner:
        """The task's runner on `env` (an `RslRlVecEnvWrapper`).

        Args:
            env: the wrapped env.
            agent_cfg: the task's `RslRlOnPolicyRunnerCfg`.
            task_id: the task (its runner class; the exported metadata names it).
            device: torch device of the networks.
            log_dir: the run folder; None writes nothing.
            options: more `train_cfg` entries (e.g. {"verbose": True, "upload_model": False}).
            quiet_small_minibatches: hide the small-minibatch warning (a runner that never
                updates: play, export).

        Raises:
            ValueError: PPO minibatches of 0 samples, or a task runner class that is not a
                subclass of `MjlabOnPolicyRunner` (it would neither save the run's state nor
                call `on_save`, so no policy.onnx).
        """
        from mjlab.rl.config import to_rsl_rl_train_cfg
        from mjlab.rl.runner import MjlabOnPolicyRunner
        from mjlab.tasks import load_runner_cls

        runner_cls = load_runner_cls(task_id) or MjlabOnPolicyRunner
        if not (isinstance(runner_cls, type) and issubclass(runner_cls, MjlabOnPolicyRunner)):
            raise ValueError(
                f"Task '{task_id}' registers the runner class {runner_cls!r}, which is not a "
                "subclass of mjlab.rl.MjlabOnPolicyRunner: derive it from MjlabOnPolicyRunner "
                "(register_mjlab_task(..., runner_cls=...))."
            )
        train_cfg = to_rsl_rl_train_cfg(agent_cfg)
        train_cfg["task_id"] = task_id
        train_cfg.update(options or {})
        with warnings.catch_warnings():
            if quiet_small_minibatches:
                warnings.filterwarnings("ignore", message="PPO minibatches", category=UserWarning)
            return runner_cls(env, train_cfg, None if log_dir is None else str(log_dir), device)

    def check(self, cfg: Any) -> int:
        """Nothing of its own to check; one update holds the run's envs."""
        return cfg.env.scene.num_envs

    def applied_seeds(self, seeds: RunSeeds) -> RunSeeds:
        """The run's seeds, as `seed_run` applied them."""
        return seeds

    def build(self, run: TrainingRun) -> None:
        """wandb's settings (offline without credentials, its files in the run folder), then the
        runner on `run.env`, exporting through `run.export` after each save."""
        from mjlab.rl.cli import configure_wandb

        cfg = run.cfg
        configure_wandb(cfg.agent.logger, cfg.verbose)
        if run.log_dir is not None and cfg.agent.logger == "wandb":
            # wandb writes its files under WANDB_DIR (default: ./wandb); keep them in the run.
            os.environ.setdefault("WANDB_DIR", str(run.log_dir))
        options = {
            "export_onnx": cfg.export_onnx,
            "verbose": cfg.verbose,
            "save_env_state": cfg.save_env_state,
        }
        self.runner = self.make_runner(
            run.env, cfg.agent, run.task_id, run.device, run.log_dir, options
        )
        self.runner.on_save = run.export

    def load(self, checkpoint: Path) -> str:
        """Resume the runner from `checkpoint` (verified by the run); returns its note."""
        self._runner().load(str(checkpoint), verify=False)
        return self._runner().resume_note

    def learn(self, run: TrainingRun) -> None:
        """rsl-rl's learning loop for `agent.max_iterations` iterations."""
        self._runner().learn(
            run.cfg.agent.max_iterations, init_at_random_ep_len=run.cfg.init_at_random_ep_len
        )

    def save(self, path: Path) -> None:
        """A checkpoint (`MjlabOnPolicyRunner.save`), then the export callback."""
        self._runner().save(str(path))

    def export_policy(self, checkpoint: Path) -> Path:
        """The runner's current policy as policy.onnx beside `checkpoint` (the one just
        saved), with the task's deployment metadata; returns its path."""
        folder = Path(checkpoint).parent
        self._runner().export_policy_to_onnx(str(folder))
        return folder / "policy.onnx"

    def close(self) -> None:
        """Nothing: the run closes its env."""

    def _runner(self) -> MjlabOnPolicyRunner:
        if self.runner is None:
            raise RuntimeError("RslRlPpoLearner.build() was not called.")
        return self.runner

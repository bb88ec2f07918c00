"""`train-rlightning TASK [--env.* ...] [--agent.* ...] [--engine local|ray]`: train an mjlab task
with the rlightning actor/learner engines (needs mjlab-rl: pip install 'rlightning-policy[mjlab]').

The same run as mjlab's `train` (`mjlab.rl.run.TrainingRun`: config checks, run folder, seeds and
`--deterministic`, params files, policy.onnx through the same export callback, one-line
mistakes), with `RlightningLearner` in place of rsl-rl's runner; the PPO settings come from the
task's mjlab.rl config converted with `to_rsl_rl_train_cfg`.
"""

import dataclasses
import logging
import sys
from pathlib import Path
from typing import Any, Literal


def __getattr__(name: str) -> Any:
    if name == "TaskEnvFactory":  # its name before it moved to mjlab.rl.run
        from mjlab.rl.run import EnvFactory

        return EnvFactory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _cfg_types():
    from mjlab.envs import ManagerBasedRlEnvCfg
    from mjlab.rl import RslRlOnPolicyRunnerCfg
    from mjlab.utils.config import Config

    @dataclasses.dataclass(kw_only=True)
    class TrainRlightningCfg(Config):
        """Training with the rlightning engines."""

        env: ManagerBasedRlEnvCfg
        """The task's environment config (per rollout worker with the Ray engine)."""
        agent: RslRlOnPolicyRunnerCfg
        """The task's PPO config."""
        engine: Literal["local", "ray"] = "local"
        """local: one process; ray: a learner actor and rollout actors on a (local) Ray cluster."""
        num_rollout_workers: int = 2
        """Ray engine: rollout actors, each with `env.scene.num_envs` envs."""
        device: str | None = None
        """Torch device; None: cuda:0 when available, else cpu."""
        ray_address: str | None = None
        """Ray engine: address of a running cluster; None starts a local instance on 127.0.0.1."""
        log_root: str = "logs/rlightning"
        """Checkpoints go to <log_root>/<experiment_name>/<timestamp>/."""
        export_onnx: bool = True
        """Write policy.onnx (the newest checkpoint's policy) into the run folder at the end."""
        deterministic: bool = False
        """Deterministic torch and MuJoCo Warp, as `train --deterministic` (`mjlab.rl.seeding`);
        with the Ray engine, torch's flags hold in this process only."""
        verbose: bool = False
        """Print every iteration's report instead of one progress line, rsl-rl's model
        printouts and Ray's start-up messages."""

    return TrainRlightningCfg


def run(task_id: str, cfg: Any) -> list:
    """Train (`mjlab.rl.run.TrainingRun` with `RlightningLearner`); returns the iteration
    reports (`rlightning.engine.IterationReport`, in order).

    Raises:
        ValueError: an inconsistent run config (NaN/Inf or unordered ranges in the env config,
            minibatches of 0 samples over all rollout workers, no rollout workers), named by
            its field path or option, or an unusable log root, before anything is built.
    """
    from mjlab.rl.run import TrainingRun

    return TrainingRun(task_id, cfg, RlightningLearner(cfg)).run()


class RlightningLearner:
    """The rlightning engines as the `mjlab.rl.run.Learner` of `train-rlightning`: the local
    engine (one process) or the Ray engine (rollout actors and a learner actor), each building
    its envs from the run's env factory. Checkpoints (`model_<it>.pt`, every
    `agent.save_interval` iterations and the last) go to the run folder; the newest one's
    policy is exported through the run's export callback when training ends.

    The engines seed torch with `agent.seed` itself in each process (the Ray actors too), so the
    seeds file records that seed for torch. There is no resume and no multi-GPU launch.

    Args:
        cfg: the `TrainRlightningCfg` (`engine`, `num_rollout_workers`, `ray_address`,
            `verbose`).
    """

    prefix = "[rlightning]"
    builds_envs = True
    resumable = False
    data_parallel = False

    def __init__(self, cfg: Any) -> None:
        self.engine_kind: str = cfg.engine
        self.num_rollout_workers: int = cfg.num_rollout_workers
        self.ray_address: str | None = cfg.ray_address
        self.verbose: bool = cfg.verbose
        self.engine: Any = None
        """The engine, once built."""
        self.train_cfg: dict | None = None
        """rsl-rl's train_cfg of the policy, once built."""
        self._task: tuple[str, Any, float | None] = ("", None, None)

    def check(self, cfg: Any) -> int:
        """No `--agent.resume` (not supported) and `--num-rollout-workers` >= 1 with the Ray
        engine; returns the envs of one update (the Ray learner concatenates every worker's
        envs).

        Raises:
            ValueError: `--agent.resume`, or fewer than 1 rollout worker.
        """
        from mjlab.utils.config import check_int

        if cfg.agent.resume:
            raise ValueError(
                "train-rlightning cannot resume a run (--agent.resume); `train TASK "
                "--agent.resume` resumes rsl-rl PPO runs."
            )
        workers = 1
        if self.engine_kind == "ray":
            check_int(self.num_rollout_workers, "--num-rollout-workers", 1, "Ray rollout actors")
            workers = self.num_rollout_workers
        return cfg.env.scene.num_envs * workers

    def applied_seeds(self, seeds: Any) -> Any:
        """`seeds` with torch's seed the run's seed itself (what the engines apply)."""
        return dataclasses.replace(seeds, torch=seeds.seed)

    def build(self, run: Any) -> None:
        """The engine on the run's env factory and device (Ray: started here when needed)."""
        from mjlab.rl import to_rsl_rl_train_cfg
        from rlightning.policy import TrainConfig

        cfg = run.cfg
        self._task = (run.task_id, cfg.env, cfg.agent.clip_actions)
        self.train_cfg = to_rsl_rl_train_cfg(cfg.agent)
        self.train_cfg["verbose"] = cfg.verbose  # rsl-rl's model printouts, here and in workers
        train_config = TrainConfig(
            max_iterations=cfg.agent.max_iterations,
            save_interval=cfg.agent.save_interval,
            save_dir=str(run.log_dir),
            seed=cfg.agent.seed,
            log_interval=1 if cfg.verbose else 0,  # else one progress line (`learn`)
        )
        print(f"{self.prefix} engine {self.engine_kind}")
        if self.engine_kind == "local":
            from rlightning.engine import LocalEngine

            self.engine = LocalEngine(
                run.env_factory, self.train_cfg, train_config, device=run.device
            )
            return
        self._start_ray()
        from rlightning.engine import RayEngine

        self.engine = RayEngine(
            run.env_factory,
            self.train_cfg,
            train_config,
            num_rollout_workers=self.num_rollout_workers,
            device=run.device,
        )
        nodes = {node for node, _ in self.engine.rollout_locations()}
        print(
            f"{self.prefix} {self.num_rollout_workers} rollout actors on {len(nodes)} Ray node(s)",
            flush=True,
        )

    def _start_ray(self) -> None:
        import os

        # Workers share this environment; Ray's `uv run` hook would rebuild it per worker.
        os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        if not self.ray_address:
            from rlightning.engine.ray_engine import loopback_only_ray

            loopback_only_ray()
        import ray

        if ray.is_initialized():
            return
        # Ray's INFO/WARNING lines at start-up (the local instance starting, its generated
        # auth token) say nothing a user acts on: --verbose shows them.
        quiet = {} if self.verbose else {"logging_level": logging.ERROR}
        if self.ray_address:
            ray.init(address=self.ray_address, **quiet)
        else:
            # One CPU slot per rollout worker plus the learner, even on a 2-core machine.
            slots = max(os.cpu_count() or 1, self.num_rollout_workers + 1)
            # address="local": a new instance, never a cluster left running on this host.
            ray.init(
                address="local",
                num_cpus=slots,
                include_dashboard=False,
                _node_ip_address="127.0.0.1",
                **quiet,
            )

    def load(self, checkpoint: Path) -> str:
        """Not supported (`resumable` is False; `check` refuses `--agent.resume`).

        Raises:
            ValueError: always.
        """
        raise ValueError("train-rlightning cannot resume a run (--agent.resume).")

    def learn(self, run: Any) -> list:
        """The engine's iterations with one progress line each, the training curve, then the
        newest checkpoint's policy through `run.export`; returns the reports."""
        from mjlab.rl.progress import TrainingProgress, write_training_curve

        cfg = run.cfg
        # The headline is the task's largest positive reward term (as `train` shows it).
        weights = {k: v.weight for k, v in (cfg.env.rewards or {}).items() if v is not None}
        headline = max((k for k in weights if weights[k] > 0), key=weights.get, default=None)
        progress = TrainingProgress(
            cfg.agent.max_iterations, headline, prefix=self.prefix, quiet=cfg.verbose
        )

        def show(report) -> None:
            terms = {
                k.split("/", 1)[1]: v
                for k, v in report.env_log.items()
                if k.startswith("Episode_Reward/")
            }
            progress.update(
                report.iteration,
                report.steps_per_second,
                report.mean_episode_reward,
                report.mean_episode_length,
                terms,
            )

        try:
            reports = self.engine.run(callback=show)
        finally:
            self.close()
            progress.close()
        png = write_training_curve(
            progress.records, run.log_dir, title=run.task_id, headline=headline
        )
        if png is not None:
            print(f"{self.prefix} training curve: {png}")
        newest = _newest_checkpoint(run.log_dir)
        if newest is not None:
            run.export(newest)
        elif run.export.enabled:
            print(
                f"{self.prefix} policy.onnx not written: no checkpoint in {run.log_dir}",
                file=sys.stderr,
            )
        return reports

    def save(self, path: Path) -> None:
        """A checkpoint of the learner's modules."""
        self.engine.save_checkpoint(path)

    def export_policy(self, checkpoint: Path) -> Path:
        """policy.onnx beside `checkpoint`, from a one-env copy of the task on the CPU."""
        if self.train_cfg is None:
            raise RuntimeError("RlightningLearner.build() was not called.")
        task_id, env_cfg, clip_actions = self._task
        return export_checkpoint(Path(checkpoint), task_id, env_cfg, self.train_cfg, clip_actions)

    def close(self) -> None:
        """Stop the engine (its threads; Ray: its actors); Ray itself keeps running."""
        if self.engine is not None:
            self.engine.close()
            self.engine = None


def _newest_checkpoint(run_dir: Path) -> Path | None:
    """The model_<it>.pt of `run_dir` with the highest iteration, or None."""
    import re

    checkpoints = sorted(
        run_dir.glob("model_*.pt"), key=lambda p: int(re.sub(r"\D", "", p.stem) or -1)
    )
    return checkpoints[-1] if checkpoints else None


def export_onnx(run_dir: Path, task_id: str, env_cfg: Any, train_cfg: dict, clip_actions) -> Path:
    """Write `run_dir/policy.onnx` (with the task's deployment metadata, as `train` does) from
    the run's newest checkpoint (`export_checkpoint`).

    Raises:
        FileNotFoundError: the run folder has no checkpoint.
        mjlab.export.ExportError: the task computes something the robot runtime cannot.
    """
    newest = _newest_checkpoint(Path(run_dir))
    if newest is None:
        raise FileNotFoundError(f"No model_*.pt checkpoint in {run_dir} to export.")
    return export_checkpoint(newest, task_id, env_cfg, train_cfg, clip_actions)


def export_checkpoint(
    checkpoint: Path, task_id: str, env_cfg: Any, train_cfg: dict, clip_actions
) -> Path:
    """Write the policy of an rlightning checkpoint as policy.onnx beside it, with the task's
    deployment metadata, using a one-env copy of the task on the CPU; returns its path.

    Args:
        checkpoint: a model_<it>.pt written by an rlightning engine (its CRCs are checked).
        task_id: the task (named in the metadata).
        env_cfg: the run's env config (copied, not changed).
        train_cfg: the rsl-rl train_cfg the policy was trained with.
        clip_actions: the wrapper's action clip (`agent.clip_actions`).

    Raises:
        ValueError: a damaged checkpoint (`mjlab.rl.checkpoint.CheckpointError`).
        mjlab.export.ExportError: the task computes something the robot runtime cannot.
    """
    import torch

    from mjlab.envs import ManagerBasedRlEnv
    from mjlab.export import export_policy, metadata_from_env
    from mjlab.rl import RslRlVecEnvWrapper
    from mjlab.rl.checkpoint import verify_checkpoint
    from mjlab.utils.config import copy_config
    from rlightning.policy import PolicyConfig, PolicyRole
    from rlightning.policy.rsl_rl_policy import RSLRLPolicy, env_meta_from_vec_env

    one = copy_config(env_cfg)
    one.scene.num_envs = 1
    env = ManagerBasedRlEnv(one, device="cpu")
    try:
        wrapped = RslRlVecEnvWrapper(env, clip_actions=clip_actions)
        policy = RSLRLPolicy(PolicyConfig(train_cfg=train_cfg, device="cpu"), PolicyRole.EVAL)
        policy.init_eval(env_meta=env_meta_from_vec_env(wrapped, "export"))
        policy.load_state_dict(torch.load(verify_checkpoint(checkpoint), weights_only=True))
        actor = policy.algo.get_policy().as_onnx(verbose=False)
        actor.to("cpu").eval()
        metadata = metadata_from_env(env, task_id=task_id, clip_actions=clip_actions)
        return export_policy(actor, Path(checkpoint).parent / "policy.onnx", metadata)
    finally:
        env.close()


def main(argv: list[str] | None = None) -> None:
    """`train-rlightning TASK [options]`; a mistake is one line on stderr (`--debug`: the
    traceback)."""
    from mjlab.rl.cli import parse_task_cli, run_command
    from mjlab.rl.errors import user_errors
    from mjlab.rl.run import TrainingRun

    def main_(args: list[str]) -> list:
        with user_errors():
            task_id, cfg = parse_task_cli("train-rlightning", _cfg_types(), args)
            training = TrainingRun(task_id, cfg, RlightningLearner(cfg))
        with training.user_errors():
            return training.run()

    run_command("train-rlightning", main_, argv)


if __name__ == "__main__":
    main()

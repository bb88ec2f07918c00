"""`train-rlightning TASK [--env.* ...] [--agent.* ...] [--engine local|ray]`: train an mjlab task
with the rlightning actor/learner engines (needs mjlab-rl: pip install 'rlightning-policy[mjlab]').

Mirrors mjlab's `train`: the same task configs, overrides and device choice; the PPO settings
come from the task's mjlab.rl config converted with `to_rsl_rl_train_cfg`.
"""

import dataclasses
import logging
import sys
import time
from pathlib import Path
from typing import Any, Literal


class TaskEnvFactory:
    """Picklable `() -> RslRlVecEnvWrapper` for one task config (each Ray worker builds its own)."""

    def __init__(self, env_cfg: Any, device: str, clip_actions: float | None):
        self.env_cfg, self.device, self.clip_actions = env_cfg, device, clip_actions

    def __call__(self):
        from mjlab.envs import ManagerBasedRlEnv
        from mjlab.rl import RslRlVecEnvWrapper

        return RslRlVecEnvWrapper(
            ManagerBasedRlEnv(self.env_cfg, device=self.device), clip_actions=self.clip_actions
        )


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
        verbose: bool = False
        """Print every iteration's report instead of one progress line, rsl-rl's model
        printouts and Ray's start-up messages."""

    return TrainRlightningCfg


def run(task_id: str, cfg: Any) -> list:
    from mjlab.rl import to_rsl_rl_train_cfg
    from mjlab.rl.cli import (
        check_input_files,
        check_log_root,
        check_run_config,
        choose_device,
        new_run_dir,
        remove_unused_run_dir,
    )

    # Before anything is built, here rather than as a traceback in each rollout worker. The
    # Ray learner concatenates every worker's envs into one PPO update.
    from mjlab.utils.config import check_int

    workers = 1
    if cfg.engine == "ray":
        check_int(cfg.num_rollout_workers, "--num-rollout-workers", 1, "Ray rollout actors")
        workers = cfg.num_rollout_workers
    check_run_config(cfg.env, cfg.agent, update_envs=cfg.env.scene.num_envs * workers)
    check_input_files(cfg.env)
    log_root = check_log_root(cfg.log_root)
    device = choose_device(cfg.device)
    cfg.env.seed = cfg.agent.seed
    train_cfg = to_rsl_rl_train_cfg(cfg.agent)
    train_cfg["verbose"] = cfg.verbose  # rsl-rl's model printouts, here and in each worker
    run_dir = new_run_dir(log_root, cfg.agent.experiment_name, cfg.agent.run_name)
    try:
        return _run(task_id, cfg, device, train_cfg, run_dir)
    except BaseException:
        # A run that failed before its first checkpoint leaves no folder behind.
        remove_unused_run_dir(run_dir)
        raise


def export_onnx(run_dir: Path, task_id: str, env_cfg: Any, train_cfg: dict, clip_actions) -> Path:
    """Write `run_dir/policy.onnx` (with the task's deployment metadata, as `train` does) from
    the run's newest checkpoint, using a one-env copy of the task on the CPU.

    Raises:
        FileNotFoundError: the run folder has no checkpoint.
        mjlab.export.ExportError: the task computes something the robot runtime cannot.
    """
    import re

    import torch

    from mjlab.envs import ManagerBasedRlEnv
    from mjlab.export import export_policy, metadata_from_env
    from mjlab.rl import RslRlVecEnvWrapper
    from mjlab.rl.checkpoint import verify_checkpoint
    from mjlab.utils.config import copy_config
    from rlightning.policy import PolicyConfig, PolicyRole
    from rlightning.policy.rsl_rl_policy import RSLRLPolicy, env_meta_from_vec_env

    checkpoints = sorted(
        run_dir.glob("model_*.pt"), key=lambda p: int(re.sub(r"\D", "", p.stem) or -1)
    )
    if not checkpoints:
        raise FileNotFoundError(f"No model_*.pt checkpoint in {run_dir} to export.")
    one = copy_config(env_cfg)
    one.scene.num_envs = 1
    env = ManagerBasedRlEnv(one, device="cpu")
    try:
        wrapped = RslRlVecEnvWrapper(env, clip_actions=clip_actions)
        policy = RSLRLPolicy(PolicyConfig(train_cfg=train_cfg, device="cpu"), PolicyRole.EVAL)
        policy.init_eval(env_meta=env_meta_from_vec_env(wrapped, "export"))
        policy.load_state_dict(torch.load(verify_checkpoint(checkpoints[-1]), weights_only=True))
        actor = policy.algo.get_policy().as_onnx(verbose=False)
        actor.to("cpu").eval()
        metadata = metadata_from_env(env, task_id=task_id, clip_actions=clip_actions)
        return export_policy(actor, run_dir / "policy.onnx", metadata)
    finally:
        env.close()


def _run(task_id: str, cfg: Any, device: str, train_cfg: dict, run_dir: Path) -> list:
    from mjlab.rl.cli import dump_params
    from rlightning.policy import TrainConfig

    dump_params(run_dir, cfg.env, cfg.agent)

    train_config = TrainConfig(
        max_iterations=cfg.agent.max_iterations,
        save_interval=cfg.agent.save_interval,
        save_dir=str(run_dir),
        seed=cfg.agent.seed,
        log_interval=1 if cfg.verbose else 0,  # else one progress line (below)
    )
    factory = TaskEnvFactory(cfg.env, device, cfg.agent.clip_actions)
    print(f"[rlightning] task {task_id}, engine {cfg.engine}, run folder {run_dir}")
    start = time.time()
    if cfg.engine == "local":
        from rlightning.engine import LocalEngine

        engine = LocalEngine(factory, train_cfg, train_config, device=device)
    else:
        import os

        # Workers share this environment; Ray's `uv run` hook would rebuild it per worker.
        os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        if not cfg.ray_address:
            from rlightning.engine.ray_engine import loopback_only_ray

            loopback_only_ray()
        import ray

        from rlightning.engine import RayEngine

        if not ray.is_initialized():
            # Ray's INFO/WARNING lines at start-up (the local instance starting, its generated
            # auth token) say nothing a user acts on: --verbose shows them.
            quiet = {} if cfg.verbose else {"logging_level": logging.ERROR}
            if cfg.ray_address:
                ray.init(address=cfg.ray_address, **quiet)
            else:
                # One CPU slot per rollout worker plus the learner, even on a 2-core machine.
                slots = max(os.cpu_count() or 1, cfg.num_rollout_workers + 1)
                # address="local": a new instance, never a cluster left running on this host.
                ray.init(
                    address="local",
                    num_cpus=slots,
                    include_dashboard=False,
                    _node_ip_address="127.0.0.1",
                    **quiet,
                )
        engine = RayEngine(
            factory,
            train_cfg,
            train_config,
            num_rollout_workers=cfg.num_rollout_workers,
            device=device,
        )
        nodes = {node for node, _ in engine.rollout_locations()}
        print(
            f"[rlightning] {cfg.num_rollout_workers} rollout actors on {len(nodes)} Ray node(s)",
            flush=True,
        )
    from mjlab.rl.progress import TrainingProgress, write_training_curve

    # The headline is the task's largest positive reward term (as `train` shows it).
    weights = {k: v.weight for k, v in (cfg.env.rewards or {}).items() if v is not None}
    headline = max((k for k in weights if weights[k] > 0), key=weights.get, default=None)
    progress = TrainingProgress(
        cfg.agent.max_iterations, headline, prefix="[rlightning]", quiet=cfg.verbose
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

    from mjlab.rl.cli import learning_started

    learning_started()  # from here an error is a fault with its traceback, not a mistake
    try:
        reports = engine.run(callback=show)
    finally:
        engine.close()
        progress.close()
    png = write_training_curve(progress.records, run_dir, title=task_id, headline=headline)
    if png is not None:
        print(f"[rlightning] training curve: {png}")
    try:
        onnx = export_onnx(run_dir, task_id, cfg.env, train_cfg, cfg.agent.clip_actions)
        print(f"[rlightning] policy: {onnx}")
    except Exception as err:  # the checkpoints are what matters; say why there is no file
        print(f"[rlightning] policy.onnx not written: {type(err).__name__}: {err}", file=sys.stderr)
    print(f"[rlightning] done in {time.time() - start:.0f} s; run folder: {run_dir}")
    return reports


def main(argv: list[str] | None = None) -> None:
    """`train-rlightning TASK [options]`; a mistake is one line on stderr (`--debug`: the
    traceback)."""
    from mjlab.rl.cli import parse_task_cli, run_command

    run_command(
        "train-rlightning",
        lambda args: run(*parse_task_cli("train-rlightning", _cfg_types(), args)),
        argv,
    )


if __name__ == "__main__":
    main()

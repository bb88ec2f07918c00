"""`train TASK [--env.* ...] [--agent.* ...]`: train a task with rsl-rl PPO.

Every config field can be overridden, e.g.
`train Mjlab-Velocity-Flat-Unitree-Go1 --env.scene.num-envs 4096 --agent.max-iterations 1000`.
Runs go to logs/rsl_rl/<experiment_name>/<timestamp>[_<run_name>]/ with params/env.yaml,
params/agent.yaml, model_<it>.pt checkpoints and policy.onnx beside them.
Multi-GPU: `torchrun --nproc-per-node N -m mjlab.rl.scripts.train TASK ...` (rsl-rl's data-parallel
mode: each rank simulates its own envs on cuda:<local_rank>).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import time
import traceback
from pathlib import Path

from mjlab.deploy.files import require_readable_file
from mjlab.envs import ManagerBasedRlEnv, ManagerBasedRlEnvCfg
from mjlab.rl.checkpoint import verify_checkpoint
from mjlab.rl.cli import (
    check_input_files,
    check_log_root,
    check_run_config,
    choose_device,
    configure_wandb,
    dump_params,
    find_checkpoint,
    learning_started,
    new_run_dir,
    parse_task_cli,
    remove_unused_run_dir,
    run_command,
)
from mjlab.rl.config import RslRlOnPolicyRunnerCfg, to_rsl_rl_train_cfg
from mjlab.rl.seeding import RunSeeds, seed_run, write_seeds
from mjlab.utils.config import Config


# rsl-rl's runner and wrapper import tensordict and with it torch's compiler stack (~10 s here):
# loaded when training starts, so `train`, `--help` and a mistake answer without waiting for it.
def __getattr__(name: str):
    if name == "MjlabOnPolicyRunner":  # the module's name for it, as before it was lazy
        from mjlab.rl.runner import MjlabOnPolicyRunner

        return MjlabOnPolicyRunner
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclasses.dataclass(kw_only=True)
class TrainCfg(Config):
    """Training run."""

    env: ManagerBasedRlEnvCfg
    """The task's environment config."""
    agent: RslRlOnPolicyRunnerCfg
    """The task's PPO runner config."""
    device: str | None = None
    """Torch device; None: cuda:0 when available, else cpu."""
    log_root: str = "logs/rsl_rl"
    """Root of the run folders."""
    init_at_random_ep_len: bool = True
    """Start envs at random episode times so resets spread out."""
    export_onnx: bool = True
    """Write policy.onnx beside each checkpoint."""
    verbose: bool = False
    """Show what is quiet by default: rsl-rl's full block every iteration instead of one
    progress line, the actor/critic modules, and wandb's own messages."""
    save_env_state: bool = True
    """Put the env's whole state in each checkpoint, for an exact `--agent.resume`.

    Go1 flat ~6 kB per env, G1 rough ~15 kB per env. False (`--no-save-env-state`): networks,
    optimizer and generators only; a resumed env then starts anew."""
    deterministic: bool = False
    """Deterministic torch and MuJoCo Warp (for CUDA; on CPU a seed fixes the run anyway).

    Torch's deterministic algorithms and MuJoCo Warp's deterministic mode
    (`env.sim.deterministic`). See `mjlab.rl.seeding`."""


@functools.cache
def _exporting_runner() -> type:
    from mjlab.rl.runner import MjlabOnPolicyRunner

    class _ExportingRunner(MjlabOnPolicyRunner):
        """Writes policy.onnx beside each checkpoint; an export error is reported, not hidden."""

        def save(self, path: str, infos: dict | None = None) -> None:
            super().save(path, infos)
            if self.cfg.get("export_onnx", True) and not getattr(self, "_export_refused", False):
                from mjlab.export import ExportError

                try:
                    self.export_policy_to_onnx(str(Path(path).parent))
                except ExportError as err:
                    # The task computes something the robot runtime cannot reproduce: say it once.
                    self._export_refused = True
                    print(f"[mjlab] policy.onnx not written: {err}", file=sys.stderr)
                except Exception:
                    print(
                        f"[mjlab] ONNX export beside {path} FAILED:\n{traceback.format_exc()}",
                        file=sys.stderr,
                    )

    return _ExportingRunner


def run(task_id: str, cfg: TrainCfg) -> Path | None:
    """Train; returns the run folder (None on the ranks > 0 of a multi-GPU run, which write
    nothing: rank 0 alone logs and saves).

    Raises:
        ValueError: an inconsistent run config (NaN/Inf or unordered ranges in the env config,
            PPO minibatches of 0 samples), named by its field path, or an unusable log root,
            before anything is built.
    """
    multi_gpu = int(os.environ.get("WORLD_SIZE", "1")) > 1
    rank = int(os.environ.get("RANK", "0")) if multi_gpu else 0
    # What only reads comes first; then rank 0, which alone writes under the log root, makes
    # and checks it, all before anything is built.
    check_run_config(cfg.env, cfg.agent)
    check_input_files(cfg.env)
    log_root = check_log_root(cfg.log_root) if rank == 0 else Path(cfg.log_root).resolve()
    device = choose_device(cfg.device)
    if multi_gpu:
        device = f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"
        cfg.agent.seed += rank  # each process its own draws, also across nodes
    seeds = seed_run(cfg.agent.seed, cfg.deterministic)  # before anything draws: env, networks
    cfg.env.seed = seeds.env
    if cfg.deterministic:
        cfg.env.sim.deterministic = True
    configure_wandb(cfg.agent.logger, cfg.verbose)
    resume_path = None
    if cfg.agent.resume:
        found = find_checkpoint(
            log_root / cfg.agent.experiment_name, cfg.agent.load_run, cfg.agent.load_checkpoint
        )
        require_readable_file(found, "--agent.resume: checkpoint")
        resume_path = verify_checkpoint(found)
    log_dir = (
        new_run_dir(log_root, cfg.agent.experiment_name, cfg.agent.run_name) if rank == 0 else None
    )
    if log_dir is not None and cfg.agent.logger == "wandb":
        # wandb writes its files under WANDB_DIR (default: ./wandb); keep them in the run.
        os.environ.setdefault("WANDB_DIR", str(log_dir))
    stage = {"learning": False}
    try:
        return _train(task_id, cfg, device, log_dir, resume_path, stage, seeds)
    except BaseException:
        # A run that failed while starting (env, runner, resume) leaves no folder behind; once
        # learning began, its logs are kept whatever happens.
        if not stage["learning"] and log_dir is not None:
            remove_unused_run_dir(log_dir)
        raise


def _train(
    task_id: str,
    cfg: TrainCfg,
    device: str,
    log_dir: Path | None,
    resume_path,
    stage: dict,
    seeds: RunSeeds,
) -> Path | None:
    print(f"[mjlab] task: {task_id}  run folder: {log_dir or '(rank > 0: none)'}")
    if log_dir is not None:
        dump_params(log_dir, cfg.env, cfg.agent)
        write_seeds(log_dir, seeds)

    start = time.time()
    from mjlab.rl.vecenv_wrapper import RslRlVecEnvWrapper

    env = ManagerBasedRlEnv(cfg.env, device=device)
    wrapped = RslRlVecEnvWrapper(env, clip_actions=cfg.agent.clip_actions)
    print(
        f"[mjlab] env: {env.num_envs} envs, physics {env.sim.backend} on {env.device}, "
        f"obs {dict(env.observation_manager.group_dims)}, "
        f"actions {env.action_manager.total_action_dim}, built in {time.time() - start:.1f} s"
    )
    train_cfg = to_rsl_rl_train_cfg(cfg.agent)
    train_cfg["task_id"] = task_id
    train_cfg["export_onnx"] = cfg.export_onnx
    train_cfg["verbose"] = cfg.verbose
    train_cfg["save_env_state"] = cfg.save_env_state
    from mjlab.rl.runner import MjlabOnPolicyRunner
    from mjlab.tasks import load_runner_cls

    exporting = _exporting_runner()
    base = load_runner_cls(task_id) or MjlabOnPolicyRunner
    runner_cls = (
        type("Runner", (exporting, base), {}) if base is not MjlabOnPolicyRunner else exporting
    )
    runner = runner_cls(
        wrapped, train_cfg, None if log_dir is None else str(log_dir), device=device
    )
    if resume_path is not None:
        runner.load(str(resume_path), verify=False)  # checked in `run`, before the env was built
        print(f"[mjlab] resumed from {resume_path}: {runner.resume_note}")
    stage["learning"] = True
    learning_started()
    runner.learn(cfg.agent.max_iterations, init_at_random_ep_len=cfg.init_at_random_ep_len)
    env.close()
    print(f"[mjlab] done in {time.time() - start:.0f} s; run folder: {log_dir}")
    return log_dir


def main(argv: list[str] | None = None) -> None:
    """`train TASK [options]`; a mistake is one line on stderr (`--debug`: the traceback)."""
    run_command("train", lambda args: run(*parse_task_cli("train", TrainCfg, args)), argv)


if __name__ == "__main__":
    main()

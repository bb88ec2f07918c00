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
from pathlib import Path

from mjlab.envs import ManagerBasedRlEnvCfg
from mjlab.rl.cli import parse_task_cli, run_command
from mjlab.rl.config import RslRlOnPolicyRunnerCfg
from mjlab.rl.errors import user_errors
from mjlab.rl.ppo_learner import RslRlPpoLearner
from mjlab.rl.run import TrainingRun
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


def run(task_id: str, cfg: TrainCfg) -> Path | None:
    """Train (`mjlab.rl.run.TrainingRun` with rsl-rl PPO); returns the run folder (None on the
    ranks > 0 of a multi-GPU run, which write nothing: rank 0 alone logs and saves).

    Raises:
        ValueError: an inconsistent run config (NaN/Inf or unordered ranges in the env config,
            PPO minibatches of 0 samples), named by its field path, or an unusable log root,
            before anything is built.
    """
    training = TrainingRun(task_id, cfg, RslRlPpoLearner())
    training.run()
    return training.log_dir


def _main(args: list[str]) -> Path | None:
    with user_errors():
        task_id, cfg = parse_task_cli("train", TrainCfg, args)
        training = TrainingRun(task_id, cfg, RslRlPpoLearner())
    with training.user_errors():
        training.run()
    return training.log_dir


def main(argv: list[str] | None = None) -> None:
    """`train TASK [options]`; a mistake is one line on stderr (`--debug`: the traceback)."""
    run_command("train", _main, argv)


if __name__ == "__main__":
    main()

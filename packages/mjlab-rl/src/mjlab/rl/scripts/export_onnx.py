"""`export-onnx TASK --checkpoint-file PATH [--output FILE]`: write one checkpoint's policy as ONNX.

`train` writes policy.onnx beside its checkpoints, each save replacing the last; this writes the
policy of any model_<it>.pt, e.g. the iteration to ship, with the same deployment metadata (built
from the task's training env, one env on the CPU). The observation normalizer is inside the graph.
A tracking task's reference motion is written beside the file as `<stem>_motion.npz` (as
`motion.npz` beside a file named policy.onnx, which is what `train` writes).

Give the `--env.*` options the run was trained with: the metadata (action scale, gains, default
pose, observation layout) is read from the env they build. A checkpoint stores its env config, and
a field whose value differs from it (other than the number of envs and the seed) is refused,
naming the field.
"""

import copy
import dataclasses
from pathlib import Path
from typing import Any


def _cfg_type() -> Any:
    """The `ExportCfg` dataclass (built on first use: its field types import mujoco)."""
    from mjlab.envs import ManagerBasedRlEnvCfg
    from mjlab.rl.config import RslRlOnPolicyRunnerCfg
    from mjlab.utils.config import Config

    @dataclasses.dataclass(kw_only=True)
    class ExportCfg(Config):
        """Exporting a checkpoint's policy to ONNX."""

        env: ManagerBasedRlEnvCfg
        """The task's training environment config (the metadata is read from it)."""
        agent: RslRlOnPolicyRunnerCfg
        """The task's runner config (network shapes for loading the checkpoint)."""
        checkpoint_file: Path | None = None
        """The model_<it>.pt checkpoint to export (required). Give the run's --env options too."""
        output: Path | None = None
        """The ONNX file to write (default: model_<it>.onnx beside the checkpoint). A tracking
        task's motion goes beside it as <stem>_motion.npz."""

    return ExportCfg


def output_path(cfg: Any) -> Path:
    """--output, else the checkpoint's name with the suffix .onnx, beside it."""
    if cfg.output is not None:
        return cfg.output
    return cfg.checkpoint_file.with_suffix(".onnx")


def run(task_id: str, cfg: Any) -> Path:
    """Export; returns the path written.

    Raises:
        ValueError: no --checkpoint-file, an --output that does not end in .onnx, an env
            config that differs from the one the checkpoint was trained with, or
            (`mjlab.rl.runner.CheckpointMismatchError`) a checkpoint that does not fit the
            task's networks.
        FileNotFoundError: an unreadable checkpoint.
        mjlab.export.ExportError: the task computes something the robot runtime cannot
            reproduce.
    """
    from mjlab.deploy.files import require_readable_file
    from mjlab.envs import ManagerBasedRlEnv
    from mjlab.rl.checkpoint import verify_checkpoint
    from mjlab.rl.cli import check_input_files
    from mjlab.rl.ppo_learner import RslRlPpoLearner
    from mjlab.rl.runner import config_fields, motion_file_name
    from mjlab.rl.vecenv_wrapper import RslRlVecEnvWrapper

    if cfg.checkpoint_file is None:
        raise ValueError("export-onnx needs --checkpoint-file PATH (a model_<it>.pt).")
    require_readable_file(
        cfg.checkpoint_file,
        "--checkpoint-file",
        "a model_<it>.pt from a run folder, e.g. logs/rsl_rl/<experiment>/<run>/model_<it>.pt",
    )
    out = output_path(cfg)
    if out.suffix != ".onnx":
        raise ValueError(f"--output must end in .onnx, got '{out}'.")
    check_input_files(cfg.env)
    verify_checkpoint(cfg.checkpoint_file)  # a damaged file is refused before the env is built
    env_cfg = copy.deepcopy(cfg.env)  # the given config stays as it was
    env_cfg.scene.num_envs = 1
    env = ManagerBasedRlEnv(env_cfg, device="cpu")
    try:
        wrapped = RslRlVecEnvWrapper(env, clip_actions=cfg.agent.clip_actions)
        # Nothing is updated here: the small-minibatch warning would be noise.
        runner = RslRlPpoLearner.make_runner(
            wrapped,
            cfg.agent,
            task_id,
            "cpu",
            options={"upload_model": False},
            quiet_small_minibatches=True,
        )
        infos = runner.load(
            str(cfg.checkpoint_file),
            load_cfg={"actor": True},
            strict=True,
            map_location="cpu",
            verify=False,  # checked above
        )
        _check_trained_config(infos, config_fields(env_cfg))
        out.parent.mkdir(parents=True, exist_ok=True)
        runner.export_policy_to_onnx(str(out.parent), out.name)
        tracking = any(
            callable(getattr(term, "deployment_motion", None))
            for term in env.command_manager.terms.values()
        )
    finally:
        env.close()
    print(f"[mjlab] wrote {out}")
    if tracking:
        print(f"[mjlab] its motion: {out.parent / motion_file_name(out.name)}")
    return out


_IGNORED = ("scene.num_envs", "seed")
"""Env config fields that do not reach the exported file."""


def _check_trained_config(infos: Any, now: dict[str, str]) -> None:
    """Refuse an env config whose fields differ from the checkpoint's stored one (fields that
    only one of them has, from another code version, are left alone)."""
    state = infos.get("env_state") if isinstance(infos, dict) else None
    saved = state.get("config") if isinstance(state, dict) else None
    if not isinstance(saved, dict):
        return
    changed = [k for k in sorted(set(saved) & set(now)) if k not in _IGNORED and saved[k] != now[k]]
    if changed:
        shown = "; ".join(f"{k} {saved[k]} (trained) -> {now[k]} (here)" for k in changed[:3])
        more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
        raise ValueError(
            f"the env config differs from the one the checkpoint was trained with: {shown}{more}. "
            "Give the run's --env options again (its params/env.yaml has them), e.g. "
            f"--env.{changed[0].replace('_', '-')} {saved[changed[0]]}."
        )


def main(argv: list[str] | None = None) -> None:
    """`export-onnx TASK [options]`; a mistake is one line on stderr (`--debug`: the traceback)."""
    from mjlab.rl.cli import parse_task_cli, run_command
    from mjlab.rl.errors import user_errors

    def main_(args: list[str]) -> Path:
        with user_errors():  # export-onnx only sets up: every mistake is the user's
            # --help shows the command's own options: a run's (envs, iterations, resume) do not
            # apply.
            return run(*parse_task_cli("export-onnx", _cfg_type(), args, common_options=()))

    run_command("export-onnx", main_, argv)


if __name__ == "__main__":
    main()

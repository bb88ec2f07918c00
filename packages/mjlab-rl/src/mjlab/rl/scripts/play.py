"""`play TASK --checkpoint-file PATH | --agent zero|random [--video]`: run a policy in the play
variant of a task and report episode statistics; with --video, render env 0 to an mp4, headless
with nothing set (MuJoCo's EGL backend, else OSMesa, chosen before mujoco is imported:
`mjlab.deploy.headless.choose_gl_backend`)."""

import dataclasses
from pathlib import Path
from typing import Any, Literal


def _cfg_type() -> Any:
    """The `PlayCfg` dataclass (built on first use: its field types import mujoco)."""
    from mjlab.envs import ManagerBasedRlEnvCfg
    from mjlab.rl.config import RslRlOnPolicyRunnerCfg

    @dataclasses.dataclass(kw_only=True)
    class PlayCfg:
        """Playing a policy."""

        env: ManagerBasedRlEnvCfg
        """The task's play environment config."""
        agent: RslRlOnPolicyRunnerCfg
        """The task's runner config (network shapes for loading the checkpoint)."""
        checkpoint_file: Path | None = None
        """A model_<it>.pt checkpoint to play."""
        policy: Literal["trained", "zero", "random"] = "trained"
        """"zero" or "random" actions instead of a checkpoint (alias: --agent zero|random)."""
        steps: int = 500
        """Env steps to run."""
        video: bool = False
        """Render env 0 to an mp4."""
        video_file: Path | None = None
        """Where to write the video (default: videos/play.mp4 beside the checkpoint, or
        ./videos)."""
        device: str | None = None
        """Torch device; None: cuda:0 when available, else cpu."""

    return PlayCfg


def run(task_id: str, cfg: Any) -> dict:
    """Play; returns {"mean_episode_length", "mean_reward", "video"}."""
    import torch

    from mjlab.envs import ManagerBasedRlEnv
    from mjlab.rl.cli import choose_device
    from mjlab.rl.config import to_rsl_rl_train_cfg
    from mjlab.rl.runner import MjlabOnPolicyRunner
    from mjlab.rl.vecenv_wrapper import RslRlVecEnvWrapper

    device = choose_device(cfg.device)
    env = ManagerBasedRlEnv(cfg.env, device=device, render_mode="rgb_array" if cfg.video else None)
    wrapped = RslRlVecEnvWrapper(env, clip_actions=cfg.agent.clip_actions)
    if cfg.policy == "trained":
        if cfg.checkpoint_file is None:
            raise ValueError("play needs --checkpoint-file PATH (or --agent zero|random).")
        runner = MjlabOnPolicyRunner(wrapped, to_rsl_rl_train_cfg(cfg.agent), None, device=device)
        runner.load(
            str(cfg.checkpoint_file), load_cfg={"actor": True}, strict=True, map_location=device
        )
        policy = runner.get_inference_policy(device=device)
    elif cfg.policy == "zero":
        policy = lambda obs: torch.zeros(env.num_envs, wrapped.num_actions, device=device)  # noqa: E731
    else:
        policy = lambda obs: 2 * torch.rand(env.num_envs, wrapped.num_actions, device=device) - 1  # noqa: E731
    obs = wrapped.get_observations()
    frames, lengths, returns = [], [], []
    ep_return = torch.zeros(env.num_envs, device=device)
    ep_length = torch.zeros(env.num_envs, dtype=torch.long, device=device)
    with torch.inference_mode():
        for _ in range(cfg.steps):
            obs, rew, dones, _ = wrapped.step(policy(obs))
            ep_return += rew
            ep_length += 1
            done = dones.bool()
            if done.any():
                lengths += ep_length[done].tolist()
                returns += ep_return[done].tolist()
                ep_return[done] = 0
                ep_length[done] = 0
            if cfg.video:
                frames.append(env.render())
    # Episodes still running count with what they reached.
    lengths += ep_length[ep_length > 0].tolist()
    returns += ep_return[ep_length > 0].tolist()
    result = {
        "mean_episode_length": float(sum(lengths) / max(len(lengths), 1)),
        "mean_reward": float(sum(returns) / max(len(returns), 1)),
        "video": None,
    }
    if cfg.video:
        import imageio.v2 as imageio

        out = cfg.video_file or (
            (cfg.checkpoint_file.parent if cfg.checkpoint_file else Path.cwd())
            / "videos"
            / "play.mp4"
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        imageio.mimwrite(out, frames, fps=round(1.0 / env.step_dt), macro_block_size=1)
        result["video"] = str(out)
        print(f"[mjlab] video: {out} ({len(frames)} frames)")
    env.close()
    print(
        f"[mjlab] mean episode length {result['mean_episode_length']:.1f} steps, mean return {result['mean_reward']:.3f}"
    )
    return result


def main(argv: list[str] | None = None) -> None:
    """`play TASK [options]`; a mistake is one line on stderr (`--debug`: the traceback)."""
    from mjlab.rl.cli import run_command

    run_command("play", _main, argv)


def _main(args: list[str]) -> None:
    # `--agent zero|random` is accepted as an alias of --policy.
    if "--agent" in args:
        i = args.index("--agent")
        if i + 1 < len(args) and args[i + 1] in ("zero", "random"):
            args[i : i + 2] = ["--policy", args[i + 1]]
    if "--video" in args:
        from mjlab.deploy.headless import choose_gl_backend

        choose_gl_backend()  # before anything imports mujoco
    from mjlab.rl.cli import parse_task_cli

    run(*parse_task_cli("play", _cfg_type(), args, play=True))


if __name__ == "__main__":
    main()

"""`play TASK --checkpoint-file PATH | --onnx-file FILE | --agent zero|random [--video]
[--viewer web|native]`: run a policy in the play variant of a task and report episode statistics;
an exported ONNX file (e.g. one shipped in docs/results/policies) is run torch-free by the robot-side
runtime (`mjlab.deploy.OnnxPolicy`) on the env's raw observation terms; with --video, render env 0 to
an mp4, headless with nothing set (MuJoCo's EGL backend, else OSMesa, chosen before mujoco is
imported: `mjlab.deploy.headless.choose_gl_backend`); with --viewer web, watch it live in a
browser (`mjlab.viewer.WebViewer`, 127.0.0.1:8080 by default)."""

import contextlib
import dataclasses
import math
from pathlib import Path
from typing import Any, Literal


def _cfg_type() -> Any:
    """The `PlayCfg` dataclass (built on first use: its field types import mujoco)."""
    from mjlab.envs import ManagerBasedRlEnvCfg
    from mjlab.rl.config import RslRlOnPolicyRunnerCfg
    from mjlab.utils.config import Config

    @dataclasses.dataclass(kw_only=True)
    class PlayCfg(Config):
        """Playing a policy."""

        env: ManagerBasedRlEnvCfg
        """The task's play environment config."""
        agent: RslRlOnPolicyRunnerCfg
        """The task's runner config (network shapes for loading the checkpoint)."""
        checkpoint_file: Path | None = None
        """A model_<it>.pt checkpoint to play."""
        onnx_file: Path | None = None
        """An exported policy (.onnx from train or export-onnx) to play instead of a
        checkpoint: the robot-side runtime (`mjlab.deploy.OnnxPolicy`) builds the observation
        from the env's raw terms as on a robot; its actions go through the env's action term.
        Refused unless its metadata (joints, gains, action scale, observation layout, timing,
        motion) is what this env's would be: give the --env options it was trained with."""
        policy: Literal["trained", "zero", "random"] = "trained"
        """"zero" or "random" actions instead of a checkpoint (alias: --agent zero|random)."""
        steps: int | None = None
        """Env steps to run (default: 500; with a viewer, until Ctrl-C or the window closes)."""
        seconds: float | None = None
        """Simulated time to run, s, as `deploy sim2sim --seconds` (rounded up to whole env
        steps); instead of --steps."""
        video: bool = False
        """Render env 0 to an mp4."""
        video_file: Path | None = None
        """Where to write the video (default: videos/play.mp4 beside the checkpoint; without
        one: logs/videos/play_<task>_<policy or ONNX file stem>.mp4)."""
        viewer: Literal["none", "web", "native"] = "none"
        """Watch live: "web" (a page in any browser) or "native" (MuJoCo's window).
        "web" serves the scene with viser and prints the address; on a remote machine forward
        the port (ssh -L 8080:127.0.0.1:8080 HOST). "native" needs a display."""
        viewer_host: str = "127.0.0.1"
        """Interface the web viewer listens on (0.0.0.0: every interface)."""
        viewer_port: int = 8080
        """Port of the web viewer (the next free one when taken)."""
        device: str | None = None
        """Torch device; None: cuda:0 when available, else cpu."""
        deterministic: bool = False
        """Deterministic torch and MuJoCo Warp, as `train --deterministic`: with
        `--agent.seed` (the env's resets and the random policy are seeded as in training),
        a play repeats exactly."""
        verbose: bool = False
        """Also print what is quiet by default (rsl-rl's actor/critic modules)."""

    return PlayCfg


def check_inputs(cfg: Any) -> None:
    """Refuse what would fail later, before the env is built: no or an unreadable checkpoint,
    a bad length.

    Raises:
        ValueError, FileNotFoundError: naming the option and the fix.
    """
    from mjlab.deploy.files import require_readable_file
    from mjlab.rl.cli import check_input_files

    check_input_files(cfg.env)
    if cfg.onnx_file is not None:
        if cfg.checkpoint_file is not None or cfg.policy != "trained":
            raise ValueError(
                "give one policy: --onnx-file, --checkpoint-file or --agent zero|random."
            )
        require_readable_file(
            cfg.onnx_file,
            "--onnx-file",
            "an exported policy, e.g. a run's policy.onnx or docs/results/policies/<name>.onnx",
        )
    elif cfg.policy == "trained":
        if cfg.checkpoint_file is None:
            raise ValueError(
                "play needs --checkpoint-file PATH or --onnx-file FILE (or --agent zero|random)."
            )
        require_readable_file(
            cfg.checkpoint_file,
            "--checkpoint-file",
            "a model_<it>.pt from a run folder, e.g. logs/rsl_rl/<experiment>/<run>/model_<it>.pt",
        )
    if cfg.steps is not None and cfg.seconds is not None:
        raise ValueError("give --steps or --seconds, not both.")
    if cfg.steps is not None and cfg.steps < 1:
        raise ValueError(f"--steps must be >= 1, got {cfg.steps}.")
    if cfg.seconds is not None and not cfg.seconds > 0:
        raise ValueError(f"--seconds must be > 0, got {cfg.seconds}.")
    if cfg.video and cfg.viewer != "none" and cfg.steps is None and cfg.seconds is None:
        raise ValueError(
            "--video with --viewer needs --steps or --seconds (the frames are kept in memory)."
        )


def step_limit(cfg: Any, step_dt: float, viewer: bool) -> int | None:
    """Env steps to run: --steps, or --seconds of simulated time rounded up to whole steps;
    by default 500, or none (until Ctrl-C) with a viewer."""
    if cfg.steps is not None:
        return cfg.steps
    if cfg.seconds is not None:
        return max(1, math.ceil(cfg.seconds / step_dt - 1e-9))
    return None if viewer else 500


def video_path(cfg: Any, task_id: str) -> Path:
    """--video-file, else videos/play.mp4 in the checkpoint's run folder, else (an ONNX file,
    zero or random actions: no run folder) logs/videos/play_<task>_<file stem or policy>.mp4."""
    if cfg.video_file is not None:
        return cfg.video_file
    if cfg.onnx_file is not None:
        return Path("logs") / "videos" / f"play_{task_id}_{cfg.onnx_file.stem}.mp4"
    if cfg.checkpoint_file is not None and cfg.policy == "trained":
        return cfg.checkpoint_file.parent / "videos" / "play.mp4"
    return Path("logs") / "videos" / f"play_{task_id}_{cfg.policy}.mp4"


def run(task_id: str, cfg: Any) -> dict:
    """Play; returns {"mean_episode_length", "mean_reward", "video"}."""
    import torch

    from mjlab.rl.cli import choose_device
    from mjlab.rl.ppo_learner import RslRlPpoLearner
    from mjlab.rl.run import EnvFactory, check_one_seed, seed_command

    check_inputs(cfg)
    check_one_seed(cfg)
    onnx = load_onnx_policy(cfg.onnx_file, task_id) if cfg.onnx_file is not None else None
    if onnx is None and cfg.policy == "trained" and cfg.checkpoint_file is not None:
        from mjlab.rl.checkpoint import verify_checkpoint

        verify_checkpoint(cfg.checkpoint_file)  # a damaged file is refused before the env is built
    device = choose_device(cfg.device)
    seed_command(cfg)  # as train seeds: the same --agent.seed gives the same resets
    render_mode = "rgb_array" if cfg.video else None
    wrapped = EnvFactory(cfg.env, device, cfg.agent.clip_actions, render_mode)()
    env = wrapped.unwrapped
    if onnx is not None:
        try:
            check_onnx_fits_env(onnx, env, task_id)
        except ValueError:
            env.close()
            raise
    if onnx is not None:
        policy = onnx_actor(onnx, env)
    elif cfg.policy == "trained":
        # Play never updates: the small-minibatch warning would be noise.
        runner = RslRlPpoLearner.make_runner(
            wrapped,
            cfg.agent,
            task_id,
            device,
            options={"verbose": cfg.verbose},
            quiet_small_minibatches=True,
        )
        runner.load(
            str(cfg.checkpoint_file),
            load_cfg={"actor": True},
            strict=True,
            map_location=device,
            verify=False,  # checked above, before the env was built
        )
        policy = runner.get_inference_policy(device=device)
    elif cfg.policy == "zero":
        policy = lambda obs: torch.zeros(env.num_envs, wrapped.num_actions, device=device)  # noqa: E731
    else:
        policy = lambda obs: 2 * torch.rand(env.num_envs, wrapped.num_actions, device=device) - 1  # noqa: E731
    watch = _open_viewer(cfg, env, task_id) if cfg.viewer != "none" else None
    viewer = watch.viewer if watch is not None else None
    limit = step_limit(cfg, env.step_dt, viewer is not None)
    obs = wrapped.get_observations()
    frames, lengths, returns = [], [], []
    ep_return = torch.zeros(env.num_envs, device=device)
    ep_length = torch.zeros(env.num_envs, dtype=torch.long, device=device)
    step = 0
    interrupted: list[bool] = []
    try:
        with contextlib.ExitStack() as stack:
            if viewer is not None:
                from mjlab.viewer import stop_on_interrupt

                interrupted = stack.enter_context(stop_on_interrupt(viewer))
            stack.enter_context(torch.inference_mode())
            while limit is None or step < limit:
                if watch is not None:
                    if not watch.viewer.running:
                        break
                    watch.viewer.wait()
                    obs = _apply_viewer_inputs(watch, env, wrapped, obs, ep_return, ep_length, onnx)
                obs, rew, dones, _ = wrapped.step(policy(obs))
                step += 1
                ep_return += rew
                ep_length += 1
                done = dones.bool()
                if done.any():
                    lengths += ep_length[done].tolist()
                    returns += ep_return[done].tolist()
                    ep_return[done] = 0
                    ep_length[done] = 0
                    if onnx is not None:  # those robots start a new episode
                        onnx.reset(done.cpu().numpy())
                if cfg.video:
                    frames.append(env.render())
                if viewer is not None:
                    _update_viewer(viewer, env, ep_length, ep_return)
    finally:
        if viewer is not None:
            viewer.close()
    if interrupted:
        print(f"\n[mjlab] stopped after {step} steps")
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

        out = video_path(cfg, task_id)
        out.parent.mkdir(parents=True, exist_ok=True)
        imageio.mimwrite(out, frames, fps=round(1.0 / env.step_dt), macro_block_size=1)
        result["video"] = str(out)
        print(f"[mjlab] video: {out} ({len(frames)} frames)")
    env.close()
    print(
        f"[mjlab] mean episode length {result['mean_episode_length']:.1f} steps, mean return {result['mean_reward']:.3f}"
    )
    return result


def load_onnx_policy(path: Path, task_id: str) -> Any:
    """The exported file as a batched `mjlab.deploy.OnnxPolicy` (its digest checked on load).

    Raises:
        ValueError: a damaged file, one without mjlab's deployment metadata, one exported from
            another task (naming it), or a camera policy (play it from its checkpoint).
    """
    from mjlab.deploy import OnnxPolicy

    policy = OnnxPolicy(path, allow_missing_metadata=True)  # refused below, in CLI words
    meta = policy.metadata
    if meta is None:
        raise ValueError(
            f"--onnx-file {path} carries no mjlab deployment metadata; play runs files written "
            "by train or export-onnx."
        )
    if meta.task_id != task_id:
        raise ValueError(
            f"--onnx-file {path} was exported from {meta.task_id or 'an unnamed task'}, not "
            f"{task_id}: play {meta.task_id or '<its task>'} --onnx-file {path}"
        )
    if policy.image_inputs:
        raise ValueError(
            f"--onnx-file {path} reads camera images; play it from its checkpoint "
            "(--checkpoint-file)."
        )
    return policy


FITTED_METADATA = (
    "joint_names", "default_joint_pos", "action_scale", "action_offset", "action_clip",
    "action_type", "stiffness", "damping", "effort_limit", "armature", "step_dt", "decimation",
    "observations", "motion",
)  # fmt: skip
"""Metadata fields in which an exported file must agree with the env that plays it (the
command ranges, training-only settings and package versions may differ)."""


def check_onnx_fits_env(policy: Any, env: Any, task_id: str) -> None:
    """Refuse a file exported from another version of the env: one whose `FITTED_METADATA`
    differs from what `mjlab.export.metadata_from_env` says of `env` (compared as the file's
    JSON).

    Raises:
        ValueError: naming the first field that differs and the fix.
    """
    import json

    from mjlab.export import metadata_from_env

    here = json.loads(metadata_from_env(env, task_id=task_id).to_json())
    file = json.loads(policy.metadata.to_json())
    for name in FITTED_METADATA:
        if file.get(name) != here.get(name):
            raise ValueError(
                f"--onnx-file {policy.path} does not fit this env: its {name} differs from the "
                "env's; give the --env options it was trained with (its run's params/env.yaml), "
                "or export it again with export-onnx."
            )


def onnx_actor(policy: Any, env: Any) -> Any:
    """policy(obs) for the play loop: the file's actions, (num_envs, num_actions) on the env's
    device, computed from the env's raw actor terms by `policy.build_observation` (clip, scale,
    delay and history as in training) rather than from the env's finished observation."""
    import torch

    def act(_obs: Any) -> torch.Tensor:
        raw = env.observation_manager.raw_terms("actor")
        obs = policy.build_observation({k: v.cpu().numpy() for k, v in raw.items()})
        return torch.from_numpy(policy(obs)).to(env.device)

    return act


def _command_sliders(env: Any) -> tuple[Any, list] | None:
    """The first command term whose components all have sampling ranges in its config (the
    velocity command: lin_vel_x, lin_vel_y, ang_vel_z), with a slider per component over its
    training range (a fixed value v gets [v - 0.5, v + 0.5])."""
    from mjlab.viewer import CommandSlider

    for term in env.command_manager.terms.values():
        ranges = getattr(term.cfg, "ranges", None)
        if not term.components or not all(hasattr(ranges, c) for c in term.components):
            continue
        sliders = []
        for name in term.components:
            lo, hi = (float(v) for v in getattr(ranges, name))
            if lo >= hi:
                lo, hi = lo - 0.5, hi + 0.5
            sliders.append(CommandSlider(name, lo, hi, value=min(max(0.0, lo), hi)))
        return term, sliders
    return None


@dataclasses.dataclass
class _Watch:
    """A viewer on the env, with the command term its sliders drive."""

    viewer: Any
    term: Any = None
    held: tuple | None = None
    """(env index, values) held now, or None."""


def _open_viewer(cfg: Any, env: Any, task_id: str) -> _Watch:
    """The viewer `cfg.viewer` asks for, over world 0 of `env` (the user can pick another)."""
    from mjlab.viewer import open_viewer

    options: dict[str, Any] = {}
    commands = _command_sliders(env) if cfg.viewer == "web" else None
    if cfg.viewer == "web":
        options = {
            "num_envs": env.num_envs,
            "commands": commands[1] if commands else (),
            "command_toggle": True,
            "reward_terms": env.reward_manager.active_terms,
            "title": task_id,
        }
        view = env.cfg.viewer  # the task's framing, as for --video
        if view.camera is None:
            options["camera"] = (view.distance, view.elevation, view.azimuth)
    viewer = open_viewer(
        cfg.viewer,
        env.sim.mj_model,
        step_dt=env.step_dt,
        host=cfg.viewer_host,
        port=cfg.viewer_port,
        **options,
    )
    return _Watch(viewer, commands[0] if commands else None)


def _apply_viewer_inputs(watch: _Watch, env, wrapped, obs, ep_return, ep_length, onnx=None):
    """Before a step: the reset button resets the watched env; the command sliders (while "set
    command" is on) hold that env's command. Returns the observations to act on."""
    import torch

    viewer = watch.viewer
    index = min(viewer.env_index, env.num_envs - 1)
    if viewer.take_reset():
        env.reset(env_ids=torch.tensor([index], device=env.device))
        ep_return[index] = 0
        ep_length[index] = 0
        if onnx is not None:
            onnx.reset([index])
        obs = wrapped.get_observations()
    if watch.term is not None:
        value = viewer.command
        held = None if value is None else (index, tuple(value))
        if held != watch.held:
            watch.term.release()
            if value is not None:
                watch.term.hold([index], value)
            watch.held = held
    return obs


def _update_viewer(viewer, env, ep_length, ep_return) -> None:
    """After a step: the watched env's poses, reward terms and a status line (read only while a
    browser is connected)."""
    index = min(viewer.env_index, env.num_envs - 1)
    data, rewards = env.sim.data, env.reward_manager

    def status() -> str:
        return (
            f"env {index}: episode step {int(ep_length[index])}, "
            f"return {float(ep_return[index]):.2f}"
        )

    viewer.update(
        lambda name: getattr(data, name)[index].cpu().numpy(),
        rewards=lambda: dict(
            zip(rewards.active_terms, rewards.step_reward[index].tolist(), strict=True)
        ),
        status=status,
    )


def main(argv: list[str] | None = None) -> None:
    """`play TASK [options]`; a mistake is one line on stderr (`--debug`: the traceback)."""
    from mjlab.rl.cli import run_command
    from mjlab.rl.errors import user_errors

    def main_(args: list[str]) -> None:
        with user_errors():  # play only sets up and runs: every mistake is the user's
            _main(args)

    run_command("play", main_, argv)


def _main(args: list[str]) -> None:
    # `--agent zero|random` is accepted as an alias of --policy.
    if "--agent" in args:
        i = args.index("--agent")
        if i + 1 < len(args) and args[i + 1] in ("zero", "random"):
            args[i : i + 2] = ["--policy", args[i + 1]]
    if "--video" in args and "native" not in args:  # MuJoCo's window needs GLFW
        from mjlab.deploy.headless import choose_gl_backend

        choose_gl_backend()  # before anything imports mujoco
    from mjlab.rl.cli import parse_task_cli

    run(*parse_task_cli("play", _cfg_type(), args, play=True))


if __name__ == "__main__":
    main()

"""`deploy inspect|bench|sim2sim|run policy.onnx`: look at, time, try and run an exported policy.

`inspect` and `bench` need only the robot-side install (onnxruntime + numpy); `sim2sim` and
`run --robot mujoco` need mjlab-export[sim] (mujoco, mujoco-menagerie, imageio[ffmpeg]).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import tyro

from mjlab.deploy.control import DEFERRED_SIGNALS
from mjlab.deploy.files import require_readable_file
from mjlab.deploy.policy import OnnxPolicy
from mjlab.deploy.strict import Config


def parse_command(text: str) -> tuple[float, ...]:
    """ "0.5,0,-0.2" -> (0.5, 0.0, -0.2).

    Raises:
        ValueError: an empty or non-numeric component ("nan" and "inf" parse; `check_command`
            refuses them).
    """
    try:
        return tuple(float(v) for v in text.split(","))
    except ValueError as err:
        raise ValueError(
            f"--command must be comma-separated numbers such as 0.5,0,0; got {text!r}."
        ) from err


def check_video_path(path: Path) -> Path:
    """`path` if an mp4 can be written there (checked before a run, which may be long).

    Raises:
        ValueError: not ending in .mp4, a folder, or in a folder that is a file or cannot be
            written (the message names --video).
    """
    if path.suffix.lower() != ".mp4":
        raise ValueError(f"--video {path}: the file must end in .mp4.")
    if path.is_dir():
        raise ValueError(f"--video {path} is a folder; give a file name ending in .mp4.")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # the folders that do not exist yet are made
    if not folder.is_dir():
        raise ValueError(f"--video {path}: {folder} is a file, not a folder.")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"--video {path}: no permission to write there.")
    return path


_CommandArg = Annotated[
    tuple[float, ...],
    tyro.constructors.PrimitiveConstructorSpec(
        nargs=1,
        metavar="VX,VY,WZ",
        instance_from_str=lambda args: parse_command(args[0]),
        is_instance=lambda value: isinstance(value, tuple),
        str_from_instance=lambda value: [",".join(repr(float(v)) for v in value)],
    ),
]


@dataclasses.dataclass
class Inspect(Config):
    """Print the policy's deployment metadata as tables."""

    policy: tyro.conf.Positional[Path]
    """The .onnx file."""


@dataclasses.dataclass
class Bench(Config):
    """Time single-observation inference on one onnxruntime thread (p50/p99)."""

    policy: tyro.conf.Positional[Path]
    """The .onnx file (metadata not required)."""
    iterations: int = 2000
    """Timed calls (after 100 warm-up calls)."""


@dataclasses.dataclass
class Sim2sim(Config):
    """Run the policy in plain MuJoCo on its mujoco-menagerie robot (needs mjlab-export[sim])."""

    policy: tyro.conf.Positional[Path]
    """The .onnx file."""
    command: _CommandArg = (0.5, 0.0, 0.0)
    """Command vector, comma-separated; for velocity tasks vx m/s, vy m/s, wz rad/s (base frame)."""
    seconds: float | None = None
    """Simulated time, s (default: 10; with a viewer, until Ctrl-C or the window closes)."""
    video: Path | None = None
    """Write an mp4 of the run to this path; `--video` alone: videos/sim2sim.mp4 beside the
    policy (MuJoCo renderer; headless: EGL, else OSMesa, chosen itself)."""
    viewer: Literal["none", "web", "native"] = "none"
    """Watch live: "web" serves a viser page with command sliders (needs mjlab-export[viewer];
    remote machine: ssh -L 8080:127.0.0.1:8080 HOST), "native" opens MuJoCo's window."""
    viewer_host: str = "127.0.0.1"
    """Interface the web viewer listens on (0.0.0.0: every interface)."""
    viewer_port: int = 8080
    """Port of the web viewer (the next free one when taken)."""
    motion: Path | None = None
    """A tracking policy's motion file (.npz): play it once from its first frame and report
    how closely the robot follows it (--command is not used)."""


@dataclasses.dataclass
class Run(Config):
    """Run the policy in the robot-side control loop (fixed rate, soft start, faults -> damping)
    on a robot; `mujoco` is the policy's robot in plain MuJoCo (needs mjlab-export[sim])."""

    policy: tyro.conf.Positional[Path]
    """The .onnx file."""
    robot: Literal["mujoco"] = "mujoco"
    """The robot to drive."""
    command: _CommandArg = (0.5, 0.0, 0.0)
    """Command vector, comma-separated; for velocity tasks vx m/s, vy m/s, wz rad/s (base frame)."""
    seconds: float = 10.0
    """Run time including the soft start, s."""
    soft_start_s: float = 2.0
    """Time to move from the measured pose to the default pose before the policy acts, s."""
    realtime: bool = True
    """Keep the wall-clock control period (False: as fast as the simulation runs)."""
    motion: Path | None = None
    """A tracking policy's motion file (.npz): the loop plays it, one frame per cycle from the
    moment the policy takes over (after the soft start), then holds its last frame."""
    joint_vel_limit: float | None = None
    """Speed limit of every joint, rad/s, instead of the file's (needed for a file exported
    before speed limits were recorded; inf: no speed check)."""


@contextlib.contextmanager
def stop_on_signals() -> Iterator[list[int]]:
    """While inside, SIGINT (Ctrl-C) and SIGTERM do not raise: the first is recorded in the
    yielded list (a loop checks it and ends, in damping, with its summary) and every later
    one is ignored at the OS level, so the twin that `uv run` forwards cannot cut the damping
    or the summary short. On leaving (after the summary, also on `sys.exit`), the handlers in
    place before are restored. Main thread only (elsewhere it changes nothing)."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def handler(signum: int, frame: object) -> None:
        received.append(signum)
        for other in DEFERRED_SIGNALS:
            signal.signal(other, signal.SIG_IGN)

    previous = {signum: signal.signal(signum, handler) for signum in DEFERRED_SIGNALS}
    try:
        yield received
    finally:
        for signum, old in previous.items():
            signal.signal(signum, signal.SIG_DFL if old is None else old)


def _loaded(policy: Path | OnnxPolicy) -> OnnxPolicy:
    """The policy itself, or loaded from its file (hashing the file and building an onnxruntime
    session is done once per command: the subcommands pass the loaded policy on)."""
    return policy if isinstance(policy, OnnxPolicy) else OnnxPolicy(policy)


def run(
    policy_path: Path | OnnxPolicy,
    robot: str,
    command,
    seconds: float,
    soft_start_s: float,
    realtime: bool,
    motion: Path | None = None,
    should_stop: Callable[[], bool] | None = None,
    joint_vel_limit: float | None = None,
):
    """Drive `robot` with `policy_path` (a file, or the policy loaded from it) through a
    real-time (or lockstep) `ControlLoop` until `seconds` pass, the robot falls or
    `should_stop()` is true (checked after every cycle); the robot ends in damping. Returns (`LoopStats`, the `MujocoRobot`, the loop).

    Raises:
        ValueError: an unknown robot, or see `MujocoRobot` and `ControlLoop`.
    """
    from mjlab.deploy.control import ControlLoop, SafetyCfg

    if robot != "mujoco":
        raise ValueError(f"Unknown robot {robot!r}; available: mujoco.")
    from mjlab.deploy.mujoco_robot import MujocoRobot

    policy = _loaded(policy_path)
    path = policy.path
    sim = MujocoRobot(policy, motion=motion)
    if sim.motion is None:
        sim.set_command(command)
    if joint_vel_limit is None and not (policy.metadata and policy.metadata.joint_vel_limit):
        raise ValueError(
            f"{path} has no joint_vel_limit (exported before speed limits were "
            "recorded): re-export the policy, or pass --joint-vel-limit RAD_PER_S (inf: no "
            "speed check)."
        )
    safety = SafetyCfg(soft_start_s=soft_start_s, joint_vel_limit=joint_vel_limit)
    loop = ControlLoop(policy, sim, safety, realtime=realtime)

    def on_cycle(loop: ControlLoop) -> bool:
        sim.after_cycle(loop)  # a motion advances with each policy cycle
        return sim.fallen() or (should_stop is not None and should_stop())

    print(
        f"deploy run: {path} on {robot} for {seconds:g} s (Ctrl-C: damping, then stop)",
        flush=True,
    )
    stats = loop.run(seconds=seconds, on_cycle=on_cycle)
    return stats, sim, loop


def inspect(policy_path: Path) -> str:
    """The metadata of `policy_path` as text tables.

    Raises:
        ValueError: the file has no or malformed metadata.
    """
    policy = OnnxPolicy(policy_path)
    m = policy.metadata
    assert m is not None  # OnnxPolicy refuses files without metadata by default
    robot = m.robot
    lines = [
        f"policy        {policy_path}",
        f"schema        mjlab.deployment v{m.schema_version}",
        f"task          {m.task_id or '-'}",
        "robot         "
        + (
            f"{robot.menagerie_name}/{robot.entry} (oid {robot.oid})"
            if robot.menagerie_name
            else "(not a mujoco-menagerie robot: sim2sim and run --robot mujoco need one)"
        ),
        f"spawn         pos {robot.init_pos} m, rot (wxyz) {robot.init_rot}",
        f"control       step_dt {m.step_dt} s = {m.decimation} x physics_dt {m.physics_dt} s; "
        f"action {m.action_type}"
        + ("" if m.action_clip is None else f" clipped to {m.action_clip}"),
        f"observation   {policy.obs_dim} values; actions {policy.action_dim}",
        "",
        f"{'joint':<28}{'kp':>9}{'kd':>8}{'effort':>9}{'armature':>10}{'default':>9}{'scale':>8}"
        f"{'offset':>9}  range",
    ]
    for i, name in enumerate(m.joint_names):
        limits = m.joint_pos_limits[i] if m.joint_pos_limits else None
        span = "-" if limits is None else f"[{limits[0]:.3f}, {limits[1]:.3f}]"
        lines.append(
            f"{name:<28}{m.stiffness[i]:>9.3f}{m.damping[i]:>8.3f}{m.effort_limit[i]:>9.2f}"
            f"{m.armature[i]:>10.5f}{m.default_joint_pos[i]:>9.3f}{m.action_scale[i]:>8.3f}"
            f"{m.action_offset[i]:>9.3f}  {span}"
        )
    lines += [
        "",
        f"{'observation term':<22}{'func':<22}{'dim':>5}{'history':>9}{'delay':>7}{'values':>8}"
        "  scale / clip",
    ]
    for t in m.observations:
        lines.append(
            f"{t.name:<22}{t.func:<22}{t.dim:>5}{t.history_length:>9}{t.delay:>7}{t.total_dim:>8}  "
            f"{t.scale} / {t.clip}"
        )
    for image in m.images:
        cam = image.camera
        depth = f", depth clipped to {image.max_depth} m" if image.data_type == "depth" else ""
        lines.append(
            f"image input   {image.name}: {image.data_type} {image.raw_shape} from the robot -> "
            f"(batch, {', '.join(map(str, image.shape))}) float32{depth}; training camera "
            + ", ".join(f"{k} {v}" for k, v in cam.items() if v is not None)
        )
    if m.commands:
        lines.append("")
    for c in m.commands:
        ranges = ", ".join(f"{k} {v}" for k, v in c.ranges.items())
        parts = f" ({', '.join(c.components)})" if c.components else ""
        lines.append(
            f"command {c.name} ({c.dim}): "
            + (ranges or f"no training ranges recorded{parts}; the robot supplies its values")
        )
    if m.mujoco_options:
        lines += ["", "mujoco: " + ", ".join(f"{k} {v}" for k, v in m.mujoco_options.items())]
    if m.package_versions:
        lines.append(
            "versions: " + ", ".join(f"{k} {v}" for k, v in sorted(m.package_versions.items()))
        )
    return "\n".join(lines)


def bench(policy_path: Path, iterations: int = 2000) -> dict[str, float]:
    """Single-observation latency on one onnxruntime thread, microseconds.

    Returns:
        {"p50_us", "p99_us", "mean_us"}.

    Raises:
        ValueError: iterations < 1.
    """
    if iterations < 1:
        raise ValueError(f"iterations must be >= 1, got {iterations}.")
    policy = OnnxPolicy(policy_path, allow_missing_metadata=True)
    rng = np.random.default_rng(0)
    obs = rng.standard_normal(policy.obs_dim).astype(np.float32)
    # An image policy's camera frames, as the robot gives them (included in the timing: the
    # runtime normalizes them on every call).
    images = {
        i.name: rng.integers(0, 256, i.raw_shape, dtype=np.uint8)
        if i.data_type == "rgb"
        else rng.uniform(0.0, i.max_depth or 1.0, i.raw_shape).astype(np.float32)
        for i in policy.image_inputs
    } or None
    for _ in range(100):
        policy(obs, images)
    times = np.empty(iterations)
    for i in range(iterations):
        t0 = time.perf_counter()
        policy(obs, images)
        times[i] = time.perf_counter() - t0
    us = times * 1e6
    return {
        "p50_us": float(np.percentile(us, 50)),
        "p99_us": float(np.percentile(us, 99)),
        "mean_us": float(us.mean()),
    }


def sim2sim(
    policy_path: Path | OnnxPolicy,
    command,
    seconds: float | None,
    video: Path | None,
    viewer: str = "none",
    viewer_host: str = "127.0.0.1",
    viewer_port: int = 8080,
):
    """Run `policy_path` (a file, or the policy loaded from it) in plain MuJoCo; returns the
    `Sim2SimReport`. With a video, MuJoCo's headless OpenGL backend is chosen first
    (`mjlab.deploy.headless.choose_gl_backend`). With a viewer ("web" or "native") the run lasts until Ctrl-C unless `seconds` is given; Ctrl-C
    ends it with the report of what ran.

    Raises:
        mjlab.deploy.headless.HeadlessGLError: a video was asked for and nothing renders here,
            or a native viewer without a display.
        ValueError: `seconds` <= 0, `video` with a viewer but no `seconds`, or see
            `mjlab.viewer.open_viewer`.
    """
    if seconds is not None and seconds <= 0:
        raise ValueError(f"--seconds must be > 0, got {seconds}.")
    if video is not None and viewer != "native":
        from mjlab.deploy.headless import choose_gl_backend

        choose_gl_backend()
    from mjlab.deploy.sim2sim import Sim2Sim, sim2sim_viewer

    sim = Sim2Sim(_loaded(policy_path))
    if viewer == "none":
        return sim.run(
            seconds=10.0 if seconds is None else seconds, command=tuple(command), video=video
        )
    if video is not None and seconds is None:
        raise ValueError("--video with --viewer needs --seconds (the frames are kept in memory).")
    from mjlab.viewer import stop_on_interrupt

    watch = sim2sim_viewer(sim, viewer, tuple(command), viewer_host, viewer_port)
    try:
        with stop_on_interrupt(watch) as interrupted:
            report = sim.run(seconds=seconds, command=tuple(command), video=video, viewer=watch)
        report.interrupted = report.interrupted or bool(interrupted)
        return report
    finally:
        watch.close()


def sim2sim_motion(policy_path: Path | OnnxPolicy, motion: Path, video: Path | None = None):
    """Play a tracking policy's motion once in plain MuJoCo; returns the `MotionReport`.

    Raises:
        ValueError: not a tracking policy, or not its motion (see `MotionPlayer`).
        mjlab.deploy.headless.HeadlessGLError: a video was asked for and nothing renders here.
    """
    if video is not None:
        from mjlab.deploy.headless import choose_gl_backend

        choose_gl_backend()
    from mjlab.deploy.sim2sim import Sim2Sim

    return Sim2Sim(_loaded(policy_path), motion=motion).run_motion(video=video)


def check_command(policy: OnnxPolicy, command: tuple[float, ...]) -> list[str]:
    """Notes on `command` against the policy's first command: one per component outside the
    training range (the policy never saw it).

    Raises:
        ValueError: a value that is not finite (nan, inf), or not exactly as many values as
            the policy's command has.
    """
    if not all(math.isfinite(v) for v in command):
        shown = ",".join(str(v) for v in command)
        raise ValueError(f"--command values must be finite numbers such as 0.5,0,0; got {shown}.")
    commands = policy.commands or []
    if not commands or (policy.metadata is not None and policy.metadata.motion is not None):
        return []  # a tracking policy's command comes from its motion file
    spec = commands[0]
    if len(command) != spec.dim:
        names = f" ({', '.join(spec.components)})" if spec.components else ""
        raise ValueError(
            f"--command has {len(command)} values; the policy's command '{spec.name}' has "
            f"{spec.dim}{names}."
        )
    notes = []
    for value, name in zip(command, spec.components, strict=False):
        if name in spec.ranges:
            lo, hi = spec.ranges[name]
            if not lo <= value <= hi:
                notes.append(
                    f"note: {name} {value:g} is outside the trained range [{lo:g}, {hi:g}]"
                )
    return notes


def _needs_sim(err: ImportError) -> str:
    if err.name == "viser":
        return f"{err}. --viewer web needs viser: pip install 'mjlab-export[viewer]'"
    return (
        f"{err}. `deploy sim2sim` and `deploy run --robot mujoco` need MuJoCo: "
        "pip install 'mjlab-export[sim]'"
    )


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `deploy` command; exits 1 when sim2sim saw a fall, or `run` saw a fall
    or a fault, and 2 with one line on stderr for a mistake (a missing or invalid file, a bad
    value, MuJoCo not installed); `--debug` shows the traceback instead."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    args = [a for a in args if a != "--debug"]
    from mjlab.deploy.headless import HeadlessGLError

    try:
        _dispatch(args)
    except (FileNotFoundError, ValueError, ImportError, HeadlessGLError) as err:
        sim_missing = isinstance(err, ImportError) and err.name in (
            "mujoco",
            "mujoco_menagerie",
            "viser",
        )
        if debug or (isinstance(err, ImportError) and not sim_missing):
            raise
        message = _needs_sim(err) if isinstance(err, ImportError) else str(err)
        print(f"deploy: error: {message}", file=sys.stderr)
        sys.exit(2)


_BESIDE_POLICY = "<beside the policy>"
"""What a bare `--video` stands for until the policy's path is known."""


def _bare_video_flag(args: list[str]) -> list[str]:
    """`--video` with no path after it (last, or followed by another option) gets a placeholder
    that `_check_inputs` turns into videos/sim2sim.mp4 beside the policy."""
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--video" and (i + 1 == len(out) or out[i + 1].startswith("--")):
            out.insert(i + 1, _BESIDE_POLICY)
            break
    return out


def _check_inputs(cmd: Inspect | Bench | Sim2sim | Run) -> None:
    """Refuse a missing or unreadable policy or motion file before anything is built, and place
    a bare `--video` beside the policy."""
    require_readable_file(cmd.policy, "policy", "the path of an exported policy.onnx")
    motion = getattr(cmd, "motion", None)
    if motion is not None:
        require_readable_file(
            motion,
            "--motion",
            "the .npz motion file the policy was trained on (motion.npz beside a policy.onnx, "
            "<stem>_motion.npz beside a file export-onnx wrote)",
        )
    if isinstance(cmd, Sim2sim) and cmd.video == Path(_BESIDE_POLICY):
        cmd.video = cmd.policy.parent / "videos" / "sim2sim.mp4"


def require_menagerie_robot(policy: OnnxPolicy, command: str) -> None:
    """Refuse, naming the command to use instead, a policy whose robot is not a
    mujoco-menagerie model (`sim2sim` and `run --robot mujoco` load the robot from Menagerie).

    Raises:
        ValueError: the policy's metadata names no Menagerie model.
    """
    meta = policy.metadata
    if meta is None or meta.robot.menagerie_name:
        return
    task = meta.task_id or "TASK"
    raise ValueError(
        f"`deploy {command}` runs a mujoco-menagerie robot, and this policy's task ({task}) "
        f"has none. Watch it in its own env instead: `play {task} --checkpoint-file "
        "<run folder>/model_<it>.pt` (add --video or --viewer web)."
    )


def _dispatch(args: list[str]) -> None:
    args = _bare_video_flag(args)
    cmd = tyro.cli(
        Annotated[Inspect, tyro.conf.subcommand("inspect")]
        | Annotated[Bench, tyro.conf.subcommand("bench")]
        | Annotated[Sim2sim, tyro.conf.subcommand("sim2sim")]
        | Annotated[Run, tyro.conf.subcommand("run")],
        args=args,
        prog="deploy",
        description="Look at, time, try and run an exported mjlab policy (--debug: tracebacks).",
    )
    _check_inputs(cmd)
    policy = None
    if isinstance(cmd, (Sim2sim, Run)):
        policy = OnnxPolicy(cmd.policy)
        require_menagerie_robot(policy, "run" if isinstance(cmd, Run) else "sim2sim")
    if isinstance(cmd, Inspect):
        print(inspect(cmd.policy))
    elif isinstance(cmd, Bench):
        r = bench(cmd.policy, cmd.iterations)
        print(
            f"latency over {cmd.iterations} calls, 1 thread: p50 {r['p50_us']:.1f} us, "
            f"p99 {r['p99_us']:.1f} us, mean {r['mean_us']:.1f} us"
        )
    elif isinstance(cmd, Run):
        assert policy is not None
        for note in check_command(policy, cmd.command):
            print(note)
        with stop_on_signals() as received:
            stats, robot, loop = run(
                policy,
                cmd.robot,
                cmd.command,
                cmd.seconds,
                cmd.soft_start_s,
                cmd.realtime,
                cmd.motion,
                should_stop=lambda: bool(received),
                joint_vel_limit=cmd.joint_vel_limit,
            )
            print(stats.summary())
            fell = robot.fallen()
            print(
                f"robot {cmd.robot}: walked {robot.walked():.2f} m in "
                f"{stats.cycles * loop.step_dt:.1f} s{', FELL' if fell else ''}; ended in "
                f"{loop.mode}"
                + (f" (stopped by {signal.Signals(received[0]).name})" if received else "")
            )
            for fault in list(stats.faults)[:5]:
                print(f"fault at cycle {fault.cycle} ({fault.kind}): {fault.message}")
            sys.stdout.flush()
            if received:  # the shell's convention for a command ended by a signal
                sys.exit(128 + received[0])
            if fell or stats.fault_counts():
                sys.exit(1)
    elif cmd.motion is not None:
        if cmd.video is not None:
            check_video_path(cmd.video)
        if cmd.viewer != "none" or cmd.seconds is not None:
            raise ValueError(
                "--motion plays the clip once, start to end: leave out --viewer and --seconds."
            )
        assert policy is not None
        motion_report = sim2sim_motion(policy, cmd.motion, cmd.video)
        print(motion_report.summary())
        if cmd.video is not None:
            print(f"video: {cmd.video}")
        if not motion_report.completed:
            sys.exit(1)
    else:
        if cmd.video is not None:
            check_video_path(cmd.video)
        assert policy is not None
        for note in check_command(policy, cmd.command):
            print(note)
        report = sim2sim(
            policy,
            cmd.command,
            cmd.seconds,
            cmd.video,
            cmd.viewer,
            cmd.viewer_host,
            cmd.viewer_port,
        )
        print(report.summary())
        if cmd.video is not None:
            print(f"video: {cmd.video}")
        if report.falls:
            sys.exit(1)


if __name__ == "__main__":
    main()

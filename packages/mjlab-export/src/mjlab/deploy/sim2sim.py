"""sim2sim: run an exported policy in plain MuJoCo using only its metadata (numpy + mujoco;
no torch, no mjlab-core). `Sim2Sim` is a `MujocoRobot` driven by the same `ControlLoop` a real
robot runs (lockstep, no soft start by default), so the safety layer is exercised too."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from mjlab.deploy.control import ControlLoop, SafetyCfg
from mjlab.deploy.mujoco_robot import MujocoRobot
from mjlab.deploy.policy import OnnxPolicy


@dataclass
class Sim2SimReport:
    """What a sim2sim run measured."""

    seconds: float
    """Simulated time, s."""
    command: tuple[float, ...]
    """The command at the end of the run (held throughout, unless a viewer's sliders changed
    it: the errors are against the command of each step); for velocity tasks (vx m/s, vy m/s,
    wz rad/s), base frame."""
    lin_vel_error: float
    """Mean |v_xy command - v_xy| over the run, m/s (base frame)."""
    ang_vel_error: float
    """Mean |wz command - wz|, rad/s (0 when the command has fewer than 3 values)."""
    mean_lin_vel: tuple[float, float]
    """Mean base-frame (vx, vy), m/s."""
    falls: int
    """Times the robot fell (projected gravity z > -0.5, i.e. tilted more than 60 deg, or base
    below `fall_height`); it is reset after each."""
    distance: float
    """Horizontal distance walked: summed over attempts, start to end of each, m."""
    faults: dict[str, int] = field(default_factory=dict)
    """Faulty cycles of the control loop per kind (see `mjlab.deploy.control.Fault`)."""
    clamped_cycles: int = 0
    """Cycles in which the loop's joint-range or effort clamp changed a policy target (training
    has no such clamp: many of them mean sim2sim differs from training there)."""
    frames: list = field(default_factory=list, repr=False)
    """Rendered RGB frames (height, width, 3) uint8, when rendering was asked for."""
    interrupted: bool = False
    """Stopped early with Ctrl-C while watching in a viewer (the figures cover what ran)."""

    def summary(self) -> str:
        """One line for a terminal."""
        command = ", ".join(f"{c:+.2f}" for c in self.command)
        return (
            f"sim2sim {self.seconds:.1f} s, command ({command}): mean v=({self.mean_lin_vel[0]:+.3f}, "
            f"{self.mean_lin_vel[1]:+.3f}) m/s, tracking error {self.lin_vel_error:.3f} m/s / "
            f"{self.ang_vel_error:.3f} rad/s, falls {self.falls}, distance {self.distance:.2f} m, "
            f"clamped cycles {self.clamped_cycles}, faults "
            + (", ".join(f"{k} {v}" for k, v in self.faults.items()) or "none")
            + (" (stopped with Ctrl-C)" if self.interrupted else "")
        )


@dataclass
class MotionReport:
    """What a sim2sim run of a tracking policy through its whole motion measured."""

    frames: int
    """Control steps played: a whole clip of T frames is T - 1 steps (the policy acts on frames
    0..T-2; the episode ends on the last frame, as in training)."""
    num_frames: int
    """Frames in the motion."""
    fell: bool
    """The robot left the motion before its last frame (`MujocoRobot.left_motion`), or the
    control loop fell back to damping."""
    mean_body_pos_error: float
    """Mean over steps and tracked bodies of |reference - robot| body position, m: as the
    task's `error_body_pos`, the state after each step against the frame the policy acted on,
    the reference moved to the robot anchor's x, y and heading."""
    max_body_pos_error: float
    """The largest per-frame mean body position error, m."""
    mean_joint_pos_error: float
    """Mean |reference - robot| joint position, rad."""
    faults: dict[str, int] = field(default_factory=dict)
    """Faulty cycles of the control loop per kind."""
    clamped_cycles: int = 0
    """Cycles in which the loop's clamps changed a policy target."""
    frames_rgb: list = field(default_factory=list, repr=False)
    """Rendered frames, when rendering was asked for."""

    @property
    def completed(self) -> bool:
        """The whole motion was played without a fall."""
        return not self.fell and self.frames >= self.num_frames - 1

    def summary(self) -> str:
        """One line for a terminal."""
        return (
            f"sim2sim motion: {self.frames}/{self.num_frames - 1} frames"
            f"{', FELL' if self.fell else ''}, mean body position error "
            f"{100 * self.mean_body_pos_error:.1f} cm (worst frame {100 * self.max_body_pos_error:.1f} cm), "
            f"mean joint error {self.mean_joint_pos_error:.3f} rad, clamped cycles "
            f"{self.clamped_cycles}, faults "
            + (", ".join(f"{k} {v}" for k, v in self.faults.items()) or "none")
        )


class Sim2Sim(MujocoRobot):
    """The robot of `policy.metadata` in plain MuJoCo (`MujocoRobot`), driven by the policy
    through a lockstep `ControlLoop`: each `step()` observes, acts and holds the targets for
    `decimation` physics steps.

    Args:
        policy: the exported policy (an `OnnxPolicy` or a path to the .onnx file).
        model: a compiled model to use instead of the Menagerie one (it is modified).
        fall_height: base height below which the robot counts as fallen, m; None: half the
            spawn height `robot.init_pos[2]`.
        safety: the loop's limits; by default `SafetyCfg(soft_start_s=0)` (the policy acts
            from the first step, as in training; no speed check for a file without
            `joint_vel_limit`); a soft start, if given, runs after every reset.
        motion: a tracking policy's motion file (see `MujocoRobot`); `run_motion` plays it.

    Raises:
        ValueError: see `MujocoRobot`.
    """

    def __init__(
        self,
        policy: OnnxPolicy | str | os.PathLike,
        model: mujoco.MjModel | None = None,
        fall_height: float | None = None,
        safety: SafetyCfg | None = None,
        motion: str | os.PathLike | None = None,
    ):
        if not isinstance(policy, OnnxPolicy):
            policy = OnnxPolicy(policy)
        self.policy = policy
        super().__init__(policy, model=model, fall_height=fall_height, motion=motion)
        if safety is None:
            # A file without speed limits still runs in simulation (no motor to protect).
            unknown = not (policy.metadata is not None and policy.metadata.joint_vel_limit)
            safety = SafetyCfg(soft_start_s=0.0, joint_vel_limit=math.inf if unknown else None)
        self.loop: ControlLoop = ControlLoop(policy, self, safety, realtime=False)
        self.loop.start()

    @property
    def last_action(self) -> np.ndarray:
        """(num_joints,) the previous raw action (the loop's; zeros after `reset`)."""
        return self.loop.last_action

    def reset(self, qpos: np.ndarray | None = None, qvel: np.ndarray | None = None) -> None:
        """`MujocoRobot.reset`, and a new policy episode (history, delay and last action
        cleared)."""
        super().reset(qpos, qvel)
        loop = getattr(self, "loop", None)  # None while MujocoRobot.__init__ resets
        if loop is not None:
            loop.restart()

    def observe(self) -> dict[str, np.ndarray]:
        """Every actor observation term, raw (before clip/scale), by term name: the robot's
        terms and the loop's (`last_action`)."""
        terms = self.observe_terms()
        for name in self.loop.loop_terms:
            terms[name] = self.last_action.copy()
        return terms

    def step(self, command: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
        """One control cycle of the loop: observe, act, hold the targets for `decimation`
        physics steps.

        Args:
            command: the command vector (e.g. (vx, vy, wz)); None keeps the previous one.

        Returns:
            (obs_dim,) float32, the observation vector the policy acted on; None when this
            cycle did not run the policy (a soft start, a fault: `loop.stats.faults` says which,
            or damping).

        Raises:
            ValueError: the command has more values than the policy's command.
        """
        if command is not None:
            self.set_command(command)
        self.loop.step()
        self.after_cycle(self.loop)
        return self.loop.last_observation

    def run(
        self,
        seconds: float | None = 10.0,
        command: Sequence[float] = (0.5, 0.0, 0.0),
        render: Callable[[mujoco.MjModel, mujoco.MjData], np.ndarray] | None = None,
        render_every: int = 1,
        video: str | os.PathLike | None = None,
        viewer: Any = None,
    ) -> Sim2SimReport:
        """Run the control loop for `seconds` at a fixed command from the spawn pose; reset
        after a fall (and count it).

        Args:
            seconds: simulated time, s; None: until the viewer is closed (or Ctrl-C).
            command: the command vector; the tracking errors read it as (vx m/s, vy m/s, wz rad/s).
            render: called every `render_every` control steps; its frames go into the report.
            render_every: control steps between frames.
            video: write the frames to this .mp4 (a tracking-camera renderer is made when
                `render` is None; needs imageio[ffmpeg], i.e. mjlab-export[sim]).
            viewer: a `mjlab.viewer` viewer to watch the run in (`sim2sim_viewer`): it paces the
                loop while someone watches, can pause, step and reset it, and its command
                sliders replace `command` (the errors are measured against them). Ctrl-C then
                ends the run with a report of what ran (`interrupted`).

        Returns:
            A `Sim2SimReport`.

        Raises:
            ValueError: `seconds` is None without a viewer, or with a video (its frames are
                kept in memory until the end).
        """
        cmd = np.asarray(command, dtype=np.float64).reshape(-1)
        if seconds is None and viewer is None:
            raise ValueError("seconds=None (run until stopped) needs a viewer.")
        if seconds is None and (video is not None or render is not None):
            raise ValueError(
                "A video while watching needs a length (--seconds): its frames are kept in "
                "memory until the run ends."
            )
        if video is not None and render is None:
            render = self.make_renderer()
        steps = None if seconds is None else round(seconds / self.meta.step_dt)
        lin_err, ang_err, vels, frames, falls, distance = [], [], [], [], 0, 0.0
        self.reset()
        self.loop.start()  # this run's statistics
        i = 0
        interrupted = False
        try:
            while steps is None or i < steps:
                if viewer is not None:
                    if not viewer.running:
                        break
                    viewer.wait()
                    if viewer.take_reset():
                        distance += self.walked()
                        self.reset()
                    if viewer.command is not None:
                        cmd = np.asarray(viewer.command, dtype=np.float64)
                self.step(cmd)
                lin, ang = self.base_velocity()
                target = np.zeros(3)
                target[: min(3, cmd.shape[0])] = cmd[:3]
                lin_err.append(float(np.linalg.norm(target[:2] - lin[:2])))
                ang_err.append(float(abs(target[2] - ang[2])) if cmd.shape[0] > 2 else 0.0)
                vels.append(lin[:2])
                if render is not None and i % render_every == 0:
                    frames.append(render(self.model, self.data))
                if self.fallen():
                    falls += 1
                    distance += self.walked()
                    self.reset()
                if viewer is not None:
                    viewer.update(
                        lambda name: getattr(self.data, name),
                        status=lambda lin=lin, ang=ang, falls=falls: (
                            f"t {self.data.time:.1f} s, v ({lin[0]:+.2f}, {lin[1]:+.2f}) m/s, "
                            f"wz {ang[2]:+.2f} rad/s, falls {falls}"
                        ),
                    )
                i += 1
        except KeyboardInterrupt:  # Ctrl-C while watching: report what ran
            if viewer is None:
                raise
            interrupted = True
        distance += self.walked()
        mean_v = np.mean(vels, axis=0) if vels else np.zeros(2)
        report = Sim2SimReport(
            seconds=i * self.meta.step_dt,
            command=tuple(float(c) for c in cmd),
            lin_vel_error=float(np.mean(lin_err)) if lin_err else 0.0,
            ang_vel_error=float(np.mean(ang_err)) if ang_err else 0.0,
            mean_lin_vel=(float(mean_v[0]), float(mean_v[1])),
            falls=falls,
            distance=distance,
            faults=self.loop.stats.fault_counts(),
            clamped_cycles=self.loop.stats.clamped_cycles,
            frames=frames,
            interrupted=interrupted,
        )
        if video is not None:
            write_video(video, frames, fps=1.0 / (self.meta.step_dt * render_every))
        return report

    def run_motion(
        self,
        render: Callable[[mujoco.MjModel, mujoco.MjData], np.ndarray] | None = None,
        video: str | os.PathLike | None = None,
    ) -> MotionReport:
        """Play a tracking policy's whole motion once from its first frame (the robot starts
        on the reference state) and measure how closely the robot follows it; stops when the
        robot leaves the motion (`left_motion`: the task's failure terminations) or the loop
        falls back to damping.

        Raises:
            ValueError: the policy tracks no motion.
        """
        if self.motion is None:
            raise ValueError("run_motion needs a tracking policy and its motion file.")
        if video is not None and render is None:
            render = self.make_renderer()
        self.reset()
        self.loop.start()
        body_errors, joint_errors, frames_rgb = [], [], []
        fell = False
        while not self.motion.done and self.loop.mode != "damping":
            policy_cycles = self.loop.stats.policy_cycles
            self.loop.step()
            if render is not None:
                frames_rgb.append(render(self.model, self.data))
            if self.loop.stats.policy_cycles > policy_cycles:
                # As the task measures it: the state after the step against the frame the
                # policy acted on, before the motion moves on.
                body, joint = self.tracking_errors()
                body_errors.append(body)
                joint_errors.append(joint)
                if self.left_motion():
                    fell = True
                    break
            self.after_cycle(self.loop)
        fell = fell or self.loop.mode == "damping"
        report = MotionReport(
            frames=self.motion.frame,
            num_frames=self.motion.num_frames,
            fell=fell,
            mean_body_pos_error=float(np.mean(body_errors)) if body_errors else float("nan"),
            max_body_pos_error=float(np.max(body_errors)) if body_errors else float("nan"),
            mean_joint_pos_error=float(np.mean(joint_errors)) if joint_errors else float("nan"),
            faults=self.loop.stats.fault_counts(),
            clamped_cycles=self.loop.stats.clamped_cycles,
            frames_rgb=frames_rgb,
        )
        if video is not None:
            write_video(video, frames_rgb, fps=1.0 / self.meta.step_dt)
        return report


def sim2sim_viewer(
    sim: Sim2Sim,
    kind: str,
    command: Sequence[float],
    host: str = "127.0.0.1",
    port: int = 8080,
) -> Any:
    """A `mjlab.viewer` viewer of `sim` (kind "web" or "native"); the web page gets a slider
    per component of the policy's command over its training range, starting at `command`.

    Raises:
        ImportError: viser is missing (pip install 'mjlab-export[viewer]').
        ValueError, mjlab.viewer.native.NoDisplayError: see `mjlab.viewer.open_viewer`.
    """
    from mjlab.viewer import CommandSlider, open_viewer

    options: dict[str, Any] = {}
    if kind == "web":
        sliders = []
        spec = (sim.policy.commands or [None])[0]
        if spec is not None:
            for k, name in enumerate(spec.components):
                lo, hi = spec.ranges.get(name, (-1.0, 1.0))
                value = float(command[k]) if k < len(command) else 0.0
                lo, hi = min(lo, value), max(hi, value)
                if lo >= hi:
                    lo, hi = lo - 0.5, hi + 0.5
                sliders.append(CommandSlider(name, float(lo), float(hi), value))
        options = {"commands": sliders, "title": sim.meta.task_id or "sim2sim"}
    return open_viewer(kind, sim.model, step_dt=sim.meta.step_dt, host=host, port=port, **options)


def write_video(path: str | os.PathLike, frames: list[np.ndarray], fps: float) -> Path:
    """Write RGB frames (height, width, 3) uint8 to an mp4 at `fps` frames per second.

    Raises:
        ValueError: no frames.
        ImportError: imageio is not installed (pip install 'mjlab-export[sim]').
    """
    import imageio.v2 as imageio

    if not frames:
        raise ValueError("No frames to write; run at least one control step.")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    images: list[Any] = list(frames)
    imageio.mimwrite(path, images, fps=fps, macro_block_size=1)
    return path

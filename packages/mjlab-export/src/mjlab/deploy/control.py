"""A fixed-rate, fault-tolerant control loop for an exported policy (onnxruntime + numpy only).

The robot side is the small `Robot` protocol: `read()` returns a `RobotState` (joint state in the
file's joint order and the raw observation terms), `send()` takes a `JointCommand` (PD targets and
gains per joint). `ControlLoop` runs the policy against it at the file's `step_dt`:

    soft start (measured pose -> default pose) -> policy -> damping (after a persistent fault,
    and always at `stop()`)

Every cycle is checked: a state with NaN/Inf, a joint outside its range or above its speed
limit, a stamp that does not advance with the loop's clock (repeated, backwards, jumping ahead or
falling behind: see `SafetyCfg.stamp_tolerance_s`), an observation the policy refuses, NaN or
out-of-range actions, or inference slower than allowed is a fault. On a fault the loop holds
the last safe command for up to `SafetyCfg.max_fault_cycles` faulty cycles in a row; the next one
switches to damping (kp = 0), which stays until `start()`. Targets are kept inside the joint range and inside the torque
the file's effort limits allow at the measured state.

An adapter for a real robot is one small class; a commented skeleton (the SDK calls are
placeholders for e.g. Unitree SDK2's low-level state/command or a ROS 2 node's topics):

    import numpy as np
    from mjlab.deploy import JointCommand, OnnxPolicy, RobotState
    from mjlab.deploy.control import LOOP_TERMS
    from mjlab.deploy.frames import projected_gravity

    class MyRobot:                                   # satisfies mjlab.deploy.control.Robot
        def __init__(self, policy: OnnxPolicy, sdk):
            self.meta, self.sdk = policy.metadata, sdk
            self.default = np.asarray(self.meta.default_joint_pos)
            # Motor index of each joint, in the file's joint order (never assume the order).
            self.index = [sdk.motor_index(name) for name in self.meta.joint_names]
            self.command = np.zeros(3)               # vx, vy, wz, e.g. from a joystick

        def read(self) -> RobotState:
            low = self.sdk.latest_state()            # must not block; the loop checks staleness
            q = np.array([low.motor[i].q for i in self.index])
            qd = np.array([low.motor[i].dq for i in self.index])
            values = {                               # raw terms by the file's func names
                # base_lin_vel, if the policy reads it, comes from your state estimator
                # (training saw the true velocity): e.g. self.estimator.velocity_base_frame()
                "joint_pos_rel": q - self.default,
                "joint_vel_rel": qd,
                "base_ang_vel": np.asarray(low.imu.gyroscope),         # base frame, rad/s
                "projected_gravity": projected_gravity(low.imu.quaternion_wxyz),
                "generated_commands": self.command,
            }
            terms = {t.name: values[t.func] for t in self.meta.observations
                     if t.func not in LOOP_TERMS}
            # Seconds on the robot's clock (Unitree's tick counts milliseconds).
            return RobotState(joint_pos=q, joint_vel=qd, terms=terms, stamp=low.tick * 1e-3)

        def send(self, command: JointCommand) -> None:
            for k, i in enumerate(self.index):
                self.sdk.set_motor(i, q=command.q_target[k], dq=0.0, kp=command.kp[k],
                                   kd=command.kd[k], tau=0.0)
            self.sdk.publish()

`mjlab.deploy.mujoco_robot.MujocoRobot` is the first implementation (plain MuJoCo).
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from mjlab.deploy.policy import OnnxPolicy
from mjlab.deploy.strict import Config

LOOP_TERMS = ("last_action",)
"""Observation funcs the loop computes itself (the previous raw action; zeros at takeover);
a robot's `read()` leaves these out."""
MODES = ("idle", "soft_start", "policy", "damping")
"""Modes of `ControlLoop.mode`, in the order a run goes through them."""


@dataclass
class RobotState:
    """One measurement of the robot.

    Arrays are in the policy file's joint order (`OnnxPolicy.joint_names`).
    """

    joint_pos: np.ndarray
    """(num_joints,) joint positions, rad."""
    joint_vel: np.ndarray
    """(num_joints,) joint velocities, rad/s."""
    terms: Mapping[str, np.ndarray]
    """Raw observation terms by the file's term names (every term whose func is not in
    `LOOP_TERMS`), in the units of training, commands included."""
    stamp: float
    """Measurement time on the robot's own monotonic clock, s (convert a tick counter, e.g.
    Unitree's `tick` in ms, to seconds). Each read must carry a newer measurement: the stamp
    must increase by about the loop time since the previous read (see
    `SafetyCfg.stamp_tolerance_s`); a repeated, backwards or jumping stamp is a fault."""


@dataclass
class JointCommand:
    """PD command per joint, in the file's joint order: tau = kp (q_target - q) - kd qd."""

    q_target: np.ndarray
    """(num_joints,) target positions, rad."""
    kp: np.ndarray
    """(num_joints,) position gains, N m/rad."""
    kd: np.ndarray
    """(num_joints,) velocity gains, N m s/rad."""


@runtime_checkable
class Robot(Protocol):
    """What `ControlLoop` needs from a robot (real or simulated)."""

    def read(self) -> RobotState:
        """The latest state; must not block for long (the loop runs at `step_dt`). May raise:
        the loop counts it as a fault."""
        ...

    def send(self, command: JointCommand) -> None:
        """Apply a PD command to every joint (held until the next one)."""
        ...


@dataclass
class SafetyCfg(Config):
    """Limits and timings of `ControlLoop`. Per-joint values are one number or one per joint."""

    soft_start_s: float = 2.0
    """Time to move from the measured pose to the default pose (file gains) before the policy
    takes over, s; 0 starts the policy at once."""
    max_fault_cycles: int = 3
    """Faulty cycles in a row during which the last safe command is held; the next faulty
    cycle in a row switches to damping for good."""
    state_timeout_s: float | None = None
    """A state whose stamp falls this far behind the loop's clock is stale (a fault), s: between
    two reads the stamp must advance by at least the loop time elapsed minus this; None: 3
    control periods. (A stamp that does not advance at all is stale at once.)"""
    stamp_tolerance_s: float | None = None
    """Between two reads the stamp may advance by at most the loop time elapsed plus this, s;
    more is a jump (a clock glitch, a reset robot, a stamp in the wrong unit) and a fault.
    None: one control period, the most a state sampled at or above the control rate can
    gain on the loop's clock between two reads."""
    joint_pos_margin: float = 0.1
    """A measured joint further than this outside its range (`joint_pos_limits`) is a fault, rad."""
    joint_vel_limit: float | Sequence[float] | None = None
    """Measured speeds above this are a fault, rad/s (math.inf: no speed check); None: the
    file's `joint_vel_limit` (`ControlLoop` refuses a file without one)."""
    max_abs_action: float = 100.0
    """A raw policy action with a larger magnitude is a fault (a broken network or input);
    mjlab's PPO policies act within a few units."""
    max_inference_s: float | None = None
    """Inference slower than this is a fault (its late action is not sent), s; None: half a
    control period. Real-time loops only: a lockstep simulation has no deadline."""
    damping_kd: float | Sequence[float] | None = None
    """kd of the damping mode, N m s/rad; None: the file's damping."""
    clamp_to_joint_limits: bool = True
    """Keep every target inside the joint range."""
    clamp_to_effort_limits: bool = True
    """Keep every target where the PD torque at the measured state is within the file's effort
    limit: q - (limit - kd qd) / kp <= q_target <= q + (limit + kd qd) / kp (applied after the
    range, so the torque limit wins)."""

    def __post_init__(self) -> None:
        if not self.soft_start_s >= 0:
            raise ValueError(f"SafetyCfg.soft_start_s must be >= 0 s, got {self.soft_start_s}.")
        if isinstance(self.max_fault_cycles, bool) or not isinstance(self.max_fault_cycles, int):
            raise ValueError(
                f"SafetyCfg.max_fault_cycles must be an integer >= 0, got {self.max_fault_cycles!r}."
            )
        if self.max_fault_cycles < 0:
            raise ValueError(
                f"SafetyCfg.max_fault_cycles must be >= 0, got {self.max_fault_cycles}."
            )
        for name in ("state_timeout_s", "stamp_tolerance_s", "max_inference_s"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"SafetyCfg.{name} must be > 0 s or None, got {value}.")
        if not self.joint_pos_margin >= 0:
            raise ValueError(
                f"SafetyCfg.joint_pos_margin must be >= 0 rad, got {self.joint_pos_margin}."
            )
        if not self.max_abs_action > 0:
            raise ValueError(f"SafetyCfg.max_abs_action must be > 0, got {self.max_abs_action}.")


@dataclass
class Fault:
    """One faulty cycle."""

    cycle: int
    """Cycle index (0 = the first cycle after `start()`)."""
    kind: str
    """"state" (read failed, NaN, a missing term, limit breach), "stale" (the stamp repeated or
    fell behind the loop's clock), "stamp" (the stamp went backwards or jumped ahead),
    "observation" (the policy refused the observation), "action" (NaN or out of range) or
    "inference" (too slow)."""
    message: str
    """What was wrong, with the joint or term named."""


STATS_WINDOW = 100_000
"""Most recent cycles whose timings `LoopStats` keeps (33 min at 50 Hz); older ones are dropped
so a long run uses bounded memory. Counters cover the whole run."""
FAULT_LOG = 1000
"""Most recent faults `LoopStats.faults` keeps; `fault_counts()` covers the whole run."""


@dataclass
class LoopStats:
    """What a run measured. Times are seconds; percentiles over the last `STATS_WINDOW` cycles."""

    cycles: int = 0
    """Cycles run."""
    policy_cycles: int = 0
    """Cycles in which the policy's command was sent."""
    clamped_cycles: int = 0
    """Policy or soft-start cycles in which a joint-range or effort clamp changed a target."""
    overruns: int = 0
    """Cycles that took longer than a control period (the next one started late)."""
    faults: deque = field(default_factory=lambda: deque(maxlen=FAULT_LOG))
    """The most recent faulty cycles (`Fault`), in order."""
    periods: deque = field(default_factory=lambda: deque(maxlen=STATS_WINDOW))
    """Time between consecutive cycle starts (real-time runs only)."""
    inference: deque = field(default_factory=lambda: deque(maxlen=STATS_WINDOW))
    """Inference latency of each policy cycle."""
    overhead: deque = field(default_factory=lambda: deque(maxlen=STATS_WINDOW))
    """Time of each cycle spent in the loop itself: everything but `read`, `send` and
    inference."""
    step_dt: float = 0.0
    """The control period."""
    _counts: Counter = field(default_factory=Counter, repr=False)

    def add_fault(self, fault: Fault) -> None:
        """Record a faulty cycle (kept in `faults`, counted in `fault_counts()`)."""
        self.faults.append(fault)
        self._counts[fault.kind] += 1

    def percentile(self, name: str, q: float) -> float:
        """`q`-th percentile of `periods`, `inference`, `overhead` or `jitter` (|period -
        step_dt|); nan when nothing was recorded."""
        values = np.asarray(
            np.abs(np.asarray(self.periods) - self.step_dt)
            if name == "jitter"
            else getattr(self, name)
        )
        return float(np.percentile(values, q)) if values.size else math.nan

    def fault_counts(self) -> dict[str, int]:
        """Faulty cycles per kind over the whole run."""
        return dict(self._counts)

    def summary(self) -> str:
        """One line for a terminal."""

        def fmt(name: str, q: float, unit: float) -> str:
            value = self.percentile(name, q)
            return "-" if math.isnan(value) else f"{value * unit:.{2 if unit == 1e3 else 0}f}"

        faults = ", ".join(f"{k} {v}" for k, v in self.fault_counts().items()) or "none"
        return (
            f"loop {self.cycles} cycles at {1 / self.step_dt:.0f} Hz ({self.policy_cycles} policy, "
            f"{self.clamped_cycles} clamped): period jitter p50 {fmt('jitter', 50, 1e3)} / p99 "
            f"{fmt('jitter', 99, 1e3)} ms, overruns {self.overruns}, inference p50 "
            f"{fmt('inference', 50, 1e6)} / p99 {fmt('inference', 99, 1e6)} us, loop overhead "
            f"p99 {fmt('overhead', 99, 1e6)} us, faults: {faults}"
        )


class ControlLoop:
    """Runs `policy` on `robot` at `policy.step_dt` with a soft start, fault handling and damping.

    Args:
        policy: the exported policy (joint position actions).
        robot: anything with `read() -> RobotState` and `send(JointCommand)`.
        safety: limits and timings.
        realtime: True: `run` keeps the wall-clock period (sleeping until each deadline) and
            records jitter and overruns. False: cycles run back to back and the loop's clock
            advances by `step_dt` per cycle (a lockstep simulation such as sim2sim).
        clock: monotonic clock in seconds (`time.perf_counter` by default).
        sleep: sleep function in seconds (`time.sleep` by default).
        spin_s: in real time, the last part of each wait that is spent polling the clock
            instead of sleeping (an OS sleep overshoots by up to a millisecond or more), s.

    Raises:
        ValueError: a policy without metadata or whose actions are not joint position targets,
            a file without `joint_vel_limit` when `SafetyCfg.joint_vel_limit` is None, or
            per-joint safety values of the wrong length.
    """

    def __init__(
        self,
        policy: OnnxPolicy,
        robot: Robot,
        safety: SafetyCfg | None = None,
        *,
        realtime: bool = True,
        clock: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], None] = time.sleep,
        spin_s: float = 0.0005,
    ):
        meta = policy._require_metadata()
        if meta.action_type != "joint_position":
            raise ValueError(
                f"ControlLoop sends joint position targets; this policy's actions are "
                f"'{meta.action_type}'."
            )
        self.policy, self.robot, self.meta = policy, robot, meta
        self.safety = SafetyCfg() if safety is None else safety
        self.realtime = realtime
        self.clock, self.sleep, self.spin_s = clock, sleep, spin_s
        self.step_dt = float(meta.step_dt)
        n = meta.num_joints
        self.kp = np.asarray(meta.stiffness, dtype=np.float64)
        self.kd = np.asarray(meta.damping, dtype=np.float64)
        self.effort_limit = np.asarray(meta.effort_limit, dtype=np.float64)
        self.default_joint_pos = np.asarray(meta.default_joint_pos, dtype=np.float64)
        limits = np.asarray(meta.joint_pos_limits, dtype=np.float64).reshape(-1, 2)
        if limits.shape[0] == 0:
            limits = np.tile([-np.inf, np.inf], (n, 1))
        self.joint_pos_limits = limits
        s = self.safety
        if s.joint_vel_limit is None and not meta.joint_vel_limit:
            raise ValueError(
                f"{policy.path} has no joint_vel_limit (a file exported before speed limits "
                "were recorded, or by hand): without one a runaway joint is never a fault. "
                "Re-export the policy, or give SafetyCfg.joint_vel_limit in rad/s "
                "(math.inf turns the speed check off)."
            )
        vel = s.joint_vel_limit if s.joint_vel_limit is not None else meta.joint_vel_limit
        where = (
            "the file's joint_vel_limit"
            if s.joint_vel_limit is None
            else "SafetyCfg.joint_vel_limit"
        )
        self.joint_vel_limit = _per_joint(vel, n, where, positive=True)
        self.damping_kd = _per_joint(
            self.kd if s.damping_kd is None else s.damping_kd,
            n,
            "the file's damping" if s.damping_kd is None else "SafetyCfg.damping_kd",
        )
        self.state_timeout_s = 3 * self.step_dt if s.state_timeout_s is None else s.state_timeout_s
        self.stamp_tolerance_s = (
            self.step_dt if s.stamp_tolerance_s is None else s.stamp_tolerance_s
        )
        self.max_inference_s = (
            0.5 * self.step_dt if s.max_inference_s is None else s.max_inference_s
        )
        self.loop_terms = [t.name for t in meta.observations if t.func in LOOP_TERMS]
        """Names of the observation terms the loop fills itself (func in `LOOP_TERMS`)."""
        self._robot_terms = {t.name: t.dim for t in meta.observations if t.func not in LOOP_TERMS}
        self.last_action = np.zeros(n)
        """The previous raw action the policy saw as `last_action` (zeros at takeover)."""
        self.mode = "idle"
        """One of `MODES`."""
        self.stats = LoopStats(step_dt=self.step_dt)
        self.last_state: RobotState | None = None
        self.last_command: JointCommand | None = None
        self.last_observation: np.ndarray | None = None
        """(obs_dim,) float32 observation the policy acted on in the last cycle; None when
        that cycle did not run the policy (soft start, fault, damping)."""
        self._safe: JointCommand | None = None
        self._consecutive_faults = 0
        self._time = 0.0
        self._fresh_at = 0.0
        self._stamp: float | None = None
        self._soft_from: np.ndarray | None = None
        self._soft_k = 0
        self.stopped = False

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> None:
        """Begin a run (statistics cleared): the soft start, or the policy at once with
        `soft_start_s` 0.

        The pose the soft start moves from is the first valid measurement; until one arrives
        the cycles are faults (and lead to damping like any other).
        """
        self.stats = LoopStats(step_dt=self.step_dt)
        self.last_state = self.last_command = self.last_observation = None
        self._time = self.clock() if self.realtime else 0.0
        self.stopped = False
        self.restart()

    def restart(self) -> None:
        """Begin again from the current pose, keeping the statistics: the soft start (or the
        policy at once with `soft_start_s` 0), a new policy episode (history, delay and last
        action cleared), no held command, the watchdog re-armed; damping mode is left. For
        simulation resets (sim2sim after a fall); a real robot restarts with `start()`."""
        self._consecutive_faults = 0
        self._safe = None
        self._soft_from = None
        self._soft_k = 0
        self._stamp = None
        self._fresh_at = self.clock() if self.realtime else self._time
        self.mode = "soft_start" if self.safety.soft_start_s > 0 else "policy"
        self._takeover()

    def _takeover(self) -> None:
        self.policy.reset()
        self.last_action[:] = 0.0

    def stop(self) -> None:
        """End in damping: send the damping command (kp 0, `damping_kd`) at the last measured
        pose, whatever state the loop is in. Safe to call more than once.

        The send cannot be interrupted: SIGINT and SIGTERM that arrive meanwhile are held
        (`deferred_signals`) and delivered once the damping command has been sent, so a second
        Ctrl-C (`uv run` forwards the terminal's, so one key press is two signals) cannot leave
        the robot on the policy's gains."""
        with deferred_signals():
            self.mode = "damping"
            self.stopped = True
            state = self.last_state
            finite = state is not None and np.isfinite(state.joint_pos).all()
            q = state.joint_pos if state is not None and finite else None
            self.robot.send(self._damping(q))

    # -- one cycle ---------------------------------------------------------------------------------
    def step(self) -> JointCommand:
        """Run one control cycle (read, check, act, send) without any timing; returns the
        command sent.

        Raises:
            RuntimeError: called before `start()` or after `stop()`.
        """
        if self.mode == "idle" or self.stopped:
            raise RuntimeError("ControlLoop.step() needs start() first (and no stop() since).")
        stats = self.stats
        t_begin = time.perf_counter()
        io = 0.0
        now = self.clock() if self.realtime else self._time
        t0 = time.perf_counter()
        state: RobotState | None = None
        fault: Fault | None
        try:
            state = self.robot.read()
            fault = self._check_state(state, now)
        except Exception as err:  # any failure of the robot's read is a fault
            state, fault = None, Fault(stats.cycles, "state", f"read() failed: {err!r}")
        io += time.perf_counter() - t0
        if state is not None and fault is None:
            self.last_state = state
        policy_cycle = self.mode == "policy"
        self.last_observation = None
        inference = 0.0
        command = None
        if fault is None and state is not None and self.mode == "soft_start":
            command = self._soft_start_command(state)
        elif fault is None and state is not None and self.mode == "policy":
            command, fault, inference = self._policy_command(state)
        if fault is not None:
            stats.add_fault(fault)
            self._consecutive_faults += 1
            if self.mode != "damping" and self._consecutive_faults > self.safety.max_fault_cycles:
                self.mode = "damping"
        else:
            self._consecutive_faults = 0
        if self.mode == "damping":
            q = self.last_state.joint_pos if self.last_state is not None else None
            command = self._damping(q)
        elif command is None:  # a held fault
            command = (
                self._safe
                if self._safe is not None
                else self._damping(
                    self.last_state.joint_pos if self.last_state is not None else None
                )
            )
        else:
            self._safe = command
            if policy_cycle:
                stats.policy_cycles += 1
        t0 = time.perf_counter()
        self.robot.send(command)
        io += time.perf_counter() - t0
        self.last_command = command
        stats.cycles += 1
        if not self.realtime:
            self._time += self.step_dt
        stats.overhead.append(time.perf_counter() - t_begin - io - inference)
        return command

    def _check_state(self, state: RobotState, now: float) -> Fault | None:
        cycle, n = self.stats.cycles, self.meta.num_joints
        q = np.asarray(state.joint_pos, dtype=np.float64)
        qd = np.asarray(state.joint_vel, dtype=np.float64)
        if q.shape != (n,) or qd.shape != (n,):
            return Fault(
                cycle,
                "state",
                f"joint_pos/joint_vel have shapes {q.shape}/{qd.shape}; expected ({n},)",
            )
        stamp = state.stamp
        if (
            isinstance(stamp, bool)
            or not isinstance(stamp, (int, float, np.number))
            or not (math.isfinite(stamp))
        ):
            return Fault(cycle, "state", f"stamp must be a finite number, got {stamp!r}")
        missing = [name for name in self._robot_terms if name not in state.terms]
        if missing:
            return Fault(cycle, "state", f"observation terms {missing} missing from the state")
        for name, dim in self._robot_terms.items():
            shape = np.shape(state.terms[name])
            if shape != (dim,):
                return Fault(
                    cycle,
                    "state",
                    f"observation term '{name}' has shape {shape}, expected ({dim},)",
                )
        fault = self._check_stamp(float(stamp), now)
        if fault is not None:
            return fault
        names = self.meta.joint_names
        bad = ~(np.isfinite(q) & np.isfinite(qd))
        if bad.any():
            return Fault(cycle, "state", f"NaN/Inf joint state at {_named(names, bad)}")
        for name in self._robot_terms:
            if not np.isfinite(np.asarray(state.terms[name], dtype=np.float64)).all():
                return Fault(cycle, "state", f"NaN/Inf in observation term '{name}'")
        lo, hi = self.joint_pos_limits[:, 0], self.joint_pos_limits[:, 1]
        margin = self.safety.joint_pos_margin
        out = (q < lo - margin) | (q > hi + margin)
        if out.any():
            return Fault(
                cycle, "state", f"joint position outside its range at {_named(names, out)}"
            )
        fast = np.abs(qd) > self.joint_vel_limit
        if fast.any():
            return Fault(cycle, "state", f"joint speed above its limit at {_named(names, fast)}")
        return None

    def _check_stamp(self, stamp: float, now: float) -> Fault | None:
        """The stamp against the previous accepted one and the loop time between the reads:
        it must advance by the loop time elapsed, within -state_timeout_s and
        +stamp_tolerance_s. A stamp that went backwards or jumped is not accepted (the robot's
        clock is not trusted again until it is back in line with the last good one)."""
        cycle = self.stats.cycles
        if self._stamp is None:  # the first read after start()/restart()
            self._stamp, self._fresh_at = stamp, now
            return None
        advance, elapsed = stamp - self._stamp, now - self._fresh_at
        slack = 1e-9  # float sums of step_dt on both clocks
        if advance == 0:
            return Fault(
                cycle,
                "stale",
                f"state stamp {stamp} repeated ({elapsed:.3f} s since it was new): the robot "
                "sent no new measurement",
            )
        if advance < 0:
            return Fault(
                cycle, "stamp", f"state stamp went backwards from {self._stamp} to {stamp}"
            )
        if advance > elapsed + self.stamp_tolerance_s + slack:
            return Fault(
                cycle,
                "stamp",
                f"state stamp jumped ahead by {advance:.6g} s in {elapsed:.3f} s of loop time "
                f"(tolerance {self.stamp_tolerance_s:.3f} s)",
            )
        if advance < elapsed - self.state_timeout_s - slack:
            # Newer, only late: the next stamp is measured from this one (one fault per lag).
            self._stamp, self._fresh_at = stamp, now
            return Fault(
                cycle,
                "stale",
                f"state stamp advanced {advance:.6g} s in {elapsed:.3f} s of loop time: more "
                f"than {self.state_timeout_s:.3f} s behind",
            )
        self._stamp, self._fresh_at = stamp, now
        return None

    def _soft_start_command(self, state: RobotState) -> JointCommand:
        if self._soft_from is None:
            self._soft_from = np.asarray(state.joint_pos, dtype=np.float64).copy()
            self._soft_k = 0
        # Counted in whole cycles: a float sum of step_dt would add a cycle now and then.
        self._soft_k += 1
        alpha = min(1.0, self._soft_k / max(1, round(self.safety.soft_start_s / self.step_dt)))
        target = self._soft_from + alpha * (self.default_joint_pos - self._soft_from)
        command = self._limited(target, state)
        if alpha >= 1.0:
            self.mode = "policy"
            self._takeover()
        return command

    def _policy_command(self, state: RobotState) -> tuple[JointCommand | None, Fault | None, float]:
        cycle = self.stats.cycles
        terms = {name: state.terms[name] for name in self._robot_terms}  # extras are ignored
        for name in self.loop_terms:
            terms[name] = self.last_action
        try:
            obs = self.policy.build_observation(terms)
        except ValueError as err:
            return None, Fault(cycle, "observation", str(err)), 0.0
        t0 = time.perf_counter()
        try:
            action = self.policy(obs)
        except ValueError as err:  # the network refused the observation
            return None, Fault(cycle, "observation", str(err)), time.perf_counter() - t0
        except RuntimeError as err:  # NaN/Inf actions
            return None, Fault(cycle, "action", str(err)), time.perf_counter() - t0
        latency = time.perf_counter() - t0
        self.stats.inference.append(latency)
        self.last_observation = obs
        if self.realtime and latency > self.max_inference_s:
            message = (
                f"inference took {latency * 1e3:.2f} ms (> {self.max_inference_s * 1e3:.2f} ms)"
            )
            return None, Fault(cycle, "inference", message), latency
        big = np.abs(action) > self.safety.max_abs_action
        if big.any():
            return (
                None,
                Fault(
                    cycle,
                    "action",
                    f"|action| > {self.safety.max_abs_action} at {_named(self.meta.joint_names, big)}",
                ),
                latency,
            )
        self.last_action[:] = action
        target = self.policy.process_actions(action)
        return self._limited(target, state), None, latency

    def _limited(self, target: np.ndarray, state: RobotState) -> JointCommand:
        """The PD command for `target` within the joint range and effort limits."""
        wanted = np.asarray(target, dtype=np.float64)
        target = wanted.copy()
        s = self.safety
        if s.clamp_to_joint_limits:
            target = np.clip(target, self.joint_pos_limits[:, 0], self.joint_pos_limits[:, 1])
        if s.clamp_to_effort_limits:  # last: the torque limit wins over the range
            q = np.asarray(state.joint_pos, dtype=np.float64)
            qd = np.asarray(state.joint_vel, dtype=np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                reach_lo = q + (-self.effort_limit + self.kd * qd) / self.kp
                reach_hi = q + (self.effort_limit + self.kd * qd) / self.kp
            ok = (self.kp > 0) & np.isfinite(self.effort_limit)
            target = np.where(ok, np.clip(target, reach_lo, reach_hi), target)
        if not np.array_equal(target, wanted):
            self.stats.clamped_cycles += 1
        return JointCommand(q_target=target, kp=self.kp.copy(), kd=self.kd.copy())

    def _damping(self, q: np.ndarray | None) -> JointCommand:
        n = self.meta.num_joints
        target = self.default_joint_pos.copy() if q is None else np.asarray(q, np.float64).copy()
        return JointCommand(q_target=target, kp=np.zeros(n), kd=self.damping_kd.copy())

    # -- fixed-rate run ------------------------------------------------------------------------------
    def run(
        self,
        seconds: float | None = None,
        cycles: int | None = None,
        on_cycle: Callable[[ControlLoop], bool | None] | None = None,
    ) -> LoopStats:
        """Start, run cycles at `step_dt` until `seconds` of loop time or `cycles` have passed
        (or `on_cycle` returns True), then `stop()`: the robot is always left in damping, also
        after an exception or a signal.

        Signals (main thread only; elsewhere Python delivers none to this thread): from start
        to the end of `stop()`, SIGINT (Ctrl-C) and SIGTERM do not interrupt anything. The
        first one ends the loop after the cycle under way, the loop ends in damping, and later
        ones (`uv run` forwards the terminal's Ctrl-C, so one key press is two SIGINTs) are held
        too. Then the handlers in place before `run` are restored and each signal received is
        delivered to them once, in order: with Python's defaults a SIGINT raises
        KeyboardInterrupt from `run` (after damping was sent) and a SIGTERM ends the process
        (with its default action, no cleanup). A signal whose handler was SIG_IGN is left
        ignored. A `robot.read()` or `send()` that blocks is not cut short by a signal.

        In real time each cycle starts on its deadline (sleeping until it); a cycle that ends
        after the next deadline is an overrun, and the schedule restarts from now instead of
        bursting to catch up.

        Args:
            seconds: loop time to run, s.
            cycles: cycles to run (with `seconds`, whichever comes first).
            on_cycle: called after every cycle with the loop (e.g. to check for a fall).

        Returns:
            `stats`.

        Raises:
            ValueError: neither `seconds` nor `cycles` given.
        """
        if seconds is None and cycles is None:
            raise ValueError("ControlLoop.run needs seconds= or cycles=.")
        limit = math.inf if cycles is None else cycles
        if seconds is not None:
            limit = min(limit, round(seconds / self.step_dt))
        with deferred_signals(keep_ignored=True) as received:
            return self._run(limit, on_cycle, received)

    def _run(
        self,
        limit: float,
        on_cycle: Callable[[ControlLoop], bool | None] | None,
        received: list[int],
    ) -> LoopStats:
        self.start()
        deadline = self.clock()
        last_start = None
        try:
            done = 0
            while done < limit and not received:
                if self.realtime:
                    remaining = deadline - self.clock()
                    if remaining > self.spin_s:
                        self.sleep(remaining - self.spin_s)
                    while self.clock() < deadline:
                        pass
                    start = self.clock()
                    if last_start is not None:
                        self.stats.periods.append(start - last_start)
                    last_start = start
                self.step()
                done += 1
                if on_cycle is not None and on_cycle(self):
                    break
                if self.realtime:
                    deadline += self.step_dt
                    if self.clock() > deadline:
                        self.stats.overruns += 1
                        deadline = self.clock()
        finally:
            self.stop()
        return self.stats


DEFERRED_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name)
)
"""Signals `deferred_signals` holds: Ctrl-C and a polite kill."""


@contextlib.contextmanager
def deferred_signals(keep_ignored: bool = False) -> Iterator[list[int]]:
    """Hold `DEFERRED_SIGNALS` while inside; on leaving, restore their handlers and deliver
    each signal that arrived (once, in the order received), e.g. a SIGINT then raises
    KeyboardInterrupt after the block instead of inside it. Yields the list of the signals held
    (grows as they arrive: a loop inside can check it to end early).

    Args:
        keep_ignored: leave a signal whose handler is SIG_IGN ignored (not held, not listed).

    Python runs signal handlers in the main thread only: elsewhere nothing can interrupt the
    block with a signal, and this changes nothing.
    """
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def hold(signum: int, frame: object) -> None:
        received.append(signum)

    previous = {}
    try:
        for signum in DEFERRED_SIGNALS:
            if keep_ignored and signal.getsignal(signum) is signal.SIG_IGN:
                continue
            previous[signum] = signal.signal(signum, hold)
        yield received
    finally:
        for signum, handler in previous.items():
            # None: a handler installed outside Python; the default is the closest.
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        for signum in dict.fromkeys(received):
            signal.raise_signal(signum)


def _per_joint(
    value: float | Sequence[float] | np.ndarray, n: int, name: str, positive: bool = False
) -> np.ndarray:
    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 0:
        array = np.full(n, float(array))
    if array.shape != (n,):
        raise ValueError(f"{name} must be one number or {n} (one per joint), got {array.shape}.")
    if np.isnan(array).any() or (array <= 0 if positive else array < 0).any():
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{name} must be {bound} for every joint, got {array.tolist()}.")
    return array


def _named(names: Sequence[str], mask: np.ndarray) -> str:
    bad = [names[int(i)] for i in np.nonzero(mask)[0]]
    return ", ".join(bad[:6]) + (f" (+{len(bad) - 6} more)" if len(bad) > 6 else "")

"""Whole-body motion tracking terms (BeyondMimic-style: Liao et al., "BeyondMimic: From Motion
Tracking to Versatile Humanoid Control via Guided Diffusion", 2025).

`MotionCommand` plays a reference motion (`mjlab.tasks.tracking.motion.Motion`) in every env, one
frame per env step, from a start frame sampled where episodes have been failing. The observation,
reward and termination functions below read it by command name.

Frames: `_w` world (reference positions are placed at each env's origin), `_b` the robot's
anchor body frame. The "relative" reference bodies are the reference's bodies moved so that the
reference anchor sits at the robot anchor's x, y (keeping the reference height) and turned by the
yaw between the two anchors: the tracking of body poses does not punish a drift of the whole
body over the ground, the anchor terms do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F

from mjlab.managers.command_manager import CommandTerm
from mjlab.managers.manager_term_config import CommandTermCfg
from mjlab.tasks.tracking.motion import Motion, check_joint_ranges, check_plausible
from mjlab.tasks.tracking.synthetic import entity_synthetic_motion
from mjlab.utils.math import (
    matrix_from_quat,
    quat_apply,
    quat_apply_inverse,
    quat_error_magnitude,
    quat_from_euler_xyz,
    quat_inv,
    quat_mul,
    rand,
    sample_uniform,
    subtract_frame_transforms,
    yaw_quat,
)
from mjlab.utils.string import resolve_matching_names

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

_POSE_KEYS = ("x", "y", "z", "roll", "pitch", "yaw")


class MotionCommand(CommandTerm):
    """`command`: (num_envs, 2 * num_joints) = reference joint positions (rad) then velocities
    (rad/s) at each env's current frame, in the robot's joint order.

    Each env step advances every env by one frame (the motion's fps must be 1 / step_dt). A
    reset samples a start frame (see `MotionCommandCfg` for the adaptive sampling), writes the
    reference root and joint state there with noise into the simulation and runs a forward
    pass for those envs, so the first observation sees the reference pose. The task's
    `motion_ended` termination ends the episode at the last frame.

    Metrics (episode means): `error_anchor_pos` m, `error_anchor_rot` rad, `error_body_pos` m
    (mean over tracked bodies, relative reference), `error_body_rot` rad, `error_joint_pos` rad
    and `error_joint_vel` rad/s (norms over joints). The reset log adds `sampling_entropy`, the
    normalised entropy of the start-frame distribution (1: uniform).

    Raises (at construction):
        ValueError: the motion's joints are not the robot's, its fps is not the control rate, or
            a body name is missing from it (the message names the fix).
    """

    cfg: MotionCommandCfg
    # The motion's tensors are constants read from the motion file, not env state: a restored
    # snapshot keeps the file of its own config, never a copy of an older one.
    _snapshot_exclude = (
        *CommandTerm._snapshot_exclude,
        "motion",
        "_joint_pos",
        "_joint_vel",
        "_body_pos",
        "_body_quat",
        "_body_lin_vel",
        "_body_ang_vel",
        "_anchor_pos",
        "_anchor_quat",
        "_root_state",
        "_kernel",
        "_down",
        "_subsets",
    )

    def __init__(self, cfg: MotionCommandCfg, env):
        super().__init__(cfg, env)
        self.robot = env.scene[cfg.asset_name]
        motion = load_motion(cfg, self.robot, env.step_dt)
        what = f"entity '{cfg.asset_name}'"
        motion.check_joints(self.robot.joint_names, what)
        if not cfg.motion_file.startswith("synthetic:"):
            # What a wrong conversion (degrees, quaternion order, units) makes is refused here,
            # not found later as episodes that end at their first step.
            label = f"motion file {cfg.motion_file}"
            limits = self.robot.data.joint_pos_limits[0].cpu().numpy()
            check_joint_ranges(motion.joint_pos, motion.joint_names, limits, label)
            check_plausible(motion, label)
        if abs(motion.fps * env.step_dt - 1.0) > 1e-6:
            raise ValueError(
                f"The motion has {motion.fps:g} frames per second but the env steps at "
                f"{1.0 / env.step_dt:g} Hz (step_dt {env.step_dt:g} s). Resample it: "
                f"mjlab-motion from-csv ... --output-fps {1.0 / env.step_dt:g}."
            )
        self.motion = motion
        self.motion_hash = motion.content_hash()
        body_ids, self.body_names = self.robot.find_bodies(cfg.body_names)
        anchor_ids, anchor = self.robot.find_bodies(cfg.anchor_body_name)
        if len(anchor_ids) != 1:
            raise ValueError(
                f"MotionCommandCfg.anchor_body_name '{cfg.anchor_body_name}' must name one body "
                f"of {what}; it matches {anchor}."
            )
        self.anchor_body_name = anchor[0]
        self._robot_body_ids = torch.tensor(body_ids, device=self.device)
        self._robot_anchor_id = anchor_ids[0]
        index = {name: i for i, name in enumerate(motion.body_names)}
        missing = [n for n in (*self.body_names, self.anchor_body_name) if n not in index]
        if missing:
            raise ValueError(f"The motion has no bodies {missing}; it has {list(index)}.")
        tracked = [index[n] for n in self.body_names]
        root = index[self.robot.body_names[0]] if self.robot.body_names else 0

        def tensor(array: np.ndarray) -> torch.Tensor:
            return torch.as_tensor(array, dtype=torch.float32, device=self.device)

        self.num_frames = motion.num_frames
        self._joint_pos = tensor(motion.joint_pos)
        self._joint_vel = tensor(motion.joint_vel)
        self._body_pos = tensor(motion.body_pos_w[:, tracked])
        self._body_quat = tensor(motion.body_quat_w[:, tracked])
        self._body_lin_vel = tensor(motion.body_lin_vel_w[:, tracked])
        self._body_ang_vel = tensor(motion.body_ang_vel_w[:, tracked])
        a = index[self.anchor_body_name]
        self._anchor_pos = tensor(motion.body_pos_w[:, a])
        self._anchor_quat = tensor(motion.body_quat_w[:, a])
        self._root_state = tensor(
            np.concatenate(
                [
                    motion.body_pos_w[:, root],
                    motion.body_quat_w[:, root],
                    motion.body_lin_vel_w[:, root],
                    motion.body_ang_vel_w[:, root],
                ],
                axis=-1,
            )
        )
        n, b = self.num_envs, len(tracked)
        self.time_steps = torch.zeros(n, dtype=torch.long, device=self.device)
        """(num_envs,) int64 current frame of each env."""
        self._command = torch.zeros(n, 2 * self._joint_pos.shape[1], device=self.device)
        self.body_pos_relative_w = torch.zeros(n, b, 3, device=self.device)
        """(num_envs, num_bodies, 3) relative reference body positions, world, m."""
        self.body_quat_relative_w = torch.zeros(n, b, 4, device=self.device)
        """(num_envs, num_bodies, 4) relative reference body orientations, world, wxyz."""
        self.body_quat_relative_w[..., 0] = 1.0
        # Adaptive start-frame sampling over bins of `adaptive_bin_s` seconds.
        self.num_bins = max(1, math.ceil(self.num_frames * env.step_dt / cfg.adaptive_bin_s))
        self._bin_failed = torch.zeros(self.num_bins, device=self.device)
        self._current_failed = torch.zeros(self.num_bins, device=self.device)
        k = cfg.adaptive_kernel_size
        self._kernel = torch.tensor(
            [cfg.adaptive_lambda**i for i in range(k)], device=self.device
        ).reshape(1, 1, k)
        for name in (
            "error_anchor_pos",
            "error_anchor_rot",
            "error_body_pos",
            "error_body_rot",
            "error_joint_pos",
            "error_joint_vel",
        ):
            self.metrics[name] = torch.zeros(n, device=self.device)
        self._subsets: dict[tuple[str, ...], torch.Tensor] = {}
        self._down = torch.tensor([0.0, 0.0, -1.0], device=self.device).expand(n, 3)

    # -- reference at the current frame ---------------------------------------------------------
    @property
    def command(self) -> torch.Tensor:
        return self._command

    @property
    def joint_pos(self) -> torch.Tensor:
        """(num_envs, num_joints) reference joint positions, rad."""
        return self._joint_pos[self.time_steps]

    @property
    def joint_vel(self) -> torch.Tensor:
        """(num_envs, num_joints) reference joint velocities, rad/s."""
        return self._joint_vel[self.time_steps]

    @property
    def body_pos_w(self) -> torch.Tensor:
        """(num_envs, num_bodies, 3) reference body positions, world (at the env origin), m."""
        return self._body_pos[self.time_steps] + self.env.scene.env_origins[:, None, :]

    @property
    def body_quat_w(self) -> torch.Tensor:
        """(num_envs, num_bodies, 4) reference body orientations, world, wxyz."""
        return self._body_quat[self.time_steps]

    @property
    def body_lin_vel_w(self) -> torch.Tensor:
        """(num_envs, num_bodies, 3) reference body linear velocities, world, m/s."""
        return self._body_lin_vel[self.time_steps]

    @property
    def body_ang_vel_w(self) -> torch.Tensor:
        """(num_envs, num_bodies, 3) reference body angular velocities, world, rad/s."""
        return self._body_ang_vel[self.time_steps]

    @property
    def anchor_pos_w(self) -> torch.Tensor:
        """(num_envs, 3) reference anchor position, world, m."""
        return self._anchor_pos[self.time_steps] + self.env.scene.env_origins

    @property
    def anchor_quat_w(self) -> torch.Tensor:
        """(num_envs, 4) reference anchor orientation, world, wxyz."""
        return self._anchor_quat[self.time_steps]

    # -- the robot ------------------------------------------------------------------------------
    @property
    def robot_anchor_pos_w(self) -> torch.Tensor:
        """(num_envs, 3) the robot's anchor body position, world, m."""
        return self.robot.data.body_link_pos_w[:, self._robot_anchor_id]

    @property
    def robot_anchor_quat_w(self) -> torch.Tensor:
        """(num_envs, 4) the robot's anchor body orientation, world, wxyz."""
        return self.robot.data.body_link_quat_w[:, self._robot_anchor_id]

    @property
    def robot_body_pos_w(self) -> torch.Tensor:
        """(num_envs, num_bodies, 3) the robot's tracked body positions, world, m."""
        return self.robot.data.body_link_pos_w[:, self._robot_body_ids]

    @property
    def robot_body_quat_w(self) -> torch.Tensor:
        """(num_envs, num_bodies, 4) the robot's tracked body orientations, world, wxyz."""
        return self.robot.data.body_link_quat_w[:, self._robot_body_ids]

    @property
    def robot_body_lin_vel_w(self) -> torch.Tensor:
        """(num_envs, num_bodies, 3) the robot's tracked body origin velocities, world, m/s."""
        return self.robot.data.body_link_lin_vel_w[:, self._robot_body_ids]

    @property
    def robot_body_ang_vel_w(self) -> torch.Tensor:
        """(num_envs, num_bodies, 3) the robot's tracked body angular velocities, world, rad/s."""
        return self.robot.data.body_link_ang_vel_w[:, self._robot_body_ids]

    def body_subset(self, names: tuple[str, ...] | None) -> torch.Tensor | slice:
        """Indices (into the tracked bodies) of the bodies matching `names` (regexes, full
        match); None: all of them."""
        if names is None:
            return slice(None)
        key = tuple(names)
        if key not in self._subsets:
            ids, _ = resolve_matching_names(
                key, self.body_names, what="tracked body", owner=f"command '{type(self).__name__}'"
            )
            self._subsets[key] = torch.tensor(ids, device=self.device)
        return self._subsets[key]

    def deployment_motion(self) -> dict:
        """What an exported policy records of its motion (`mjlab.deploy.metadata.MotionSpec`
        without the command name): anchor and tracked bodies, fps, frames, content hash."""
        return {
            "anchor_body": self.anchor_body_name,
            "body_names": list(self.body_names),
            "fps": float(self.motion.fps),
            "num_frames": int(self.num_frames),
            "content_hash": self.motion_hash,
            "source": self.motion.source,
        }

    # -- the command term's steps ---------------------------------------------------------------
    def compute(self, dt: float) -> None:
        """One env step: metrics, the failure statistics, one frame forward (not for envs reset
        in this step: they start at their sampled frame), then the relative reference."""
        self.metric_steps += 1
        self._update_metrics()
        alpha = self.cfg.adaptive_alpha
        self._bin_failed.mul_(1.0 - alpha).add_(alpha * self._current_failed)
        self._current_failed.zero_()
        advance = (self.env.episode_length_buf > 0).long()
        self.time_steps = (self.time_steps + advance).clamp_(max=self.num_frames - 1)
        self._update_command()

    def reset(self, env_ids: torch.Tensor) -> dict[str, float | torch.Tensor]:
        # Count the envs that failed (terminated, not timed out) in the bin of their frame.
        failed = self.env.termination_manager.terminated[env_ids].float()
        bins = (self.time_steps[env_ids] * self.num_bins) // self.num_frames
        self._current_failed += torch.bincount(bins, weights=failed, minlength=self.num_bins)
        log = super().reset(env_ids)
        p = self.sampling_probabilities()
        log["sampling_entropy"] = -(p * p.clamp_min(1e-12).log()).sum() / math.log(
            max(self.num_bins, 2)
        )
        self._update_command()
        return log

    def sampling_probabilities(self) -> torch.Tensor:
        """(num_bins,) start-bin probabilities: the failure rates smoothed towards earlier bins
        (p_i from sum_k lambda^k fail_(i+k): a fall is caused before it happens), mixed with a
        uniform share `adaptive_uniform_ratio`; uniform while nothing has failed."""
        k = self.cfg.adaptive_kernel_size
        padded = F.pad(self._bin_failed.reshape(1, 1, -1), (0, k - 1))
        smoothed = F.conv1d(padded, self._kernel).reshape(-1)
        total = smoothed.sum()
        uniform = torch.full_like(smoothed, 1.0 / self.num_bins)
        u = self.cfg.adaptive_uniform_ratio
        adaptive = u * uniform + (1.0 - u) * smoothed / total.clamp_min(1e-12)
        return torch.where(total > 0, adaptive, uniform)

    def _resample(self, env_ids: torch.Tensor) -> None:
        n, rng = len(env_ids), self.env.rng
        if self.cfg.start_at_first_frame:
            frames = torch.zeros(n, dtype=torch.long, device=self.device)
        else:
            # Drawn on the generator's device (the env's may be a CPU generator on CUDA).
            probs = self.sampling_probabilities()
            probs = probs.to(rng.device) if rng is not None else probs
            bins = torch.multinomial(probs, n, True, generator=rng).to(self.device)
            offset = rand((n,), self.device, rng)
            frames = ((bins + offset) * self.num_frames / self.num_bins).long()
            frames = frames.clamp_(max=self.num_frames - 1)
        self.time_steps[env_ids] = frames
        self._write_reference_state(env_ids, frames)

    def _write_reference_state(self, env_ids: torch.Tensor, frames: torch.Tensor) -> None:
        """Put the robot at the reference state of `frames`, with the configured noise."""
        n, rng, dev = len(env_ids), self.env.rng, self.device
        state = self._root_state[frames].clone()
        pose = [
            sample_uniform(*self.cfg.pose_range.get(k, (0.0, 0.0)), n, dev, rng) for k in _POSE_KEYS
        ]
        vel = [
            sample_uniform(*self.cfg.velocity_range.get(k, (0.0, 0.0)), n, dev, rng)
            for k in _POSE_KEYS
        ]
        state[:, :3] += torch.stack(pose[:3], dim=-1) + self.env.scene.env_origins[env_ids]
        state[:, 3:7] = quat_mul(quat_from_euler_xyz(*pose[3:]), state[:, 3:7])
        state[:, 7:] += torch.stack(vel, dim=-1)
        self.robot.write_root_state_to_sim(state, env_ids)
        data = self.robot.data
        lo, hi = self.cfg.joint_position_range
        joint_pos = self._joint_pos[frames] + sample_uniform(
            lo, hi, (n, self._joint_pos.shape[1]), dev, rng
        )
        limits = data.soft_joint_pos_limits[env_ids]
        joint_pos = joint_pos.clamp(limits[..., 0], limits[..., 1])
        self.robot.write_joint_state_to_sim(joint_pos, self._joint_vel[frames], env_ids=env_ids)
        self.env.sim.forward(env_ids)

    def _update_command(self) -> None:
        self._command.copy_(torch.cat([self.joint_pos, self.joint_vel], dim=-1))
        anchor_pos, anchor_quat = self.anchor_pos_w, self.anchor_quat_w
        robot_pos, robot_quat = self.robot_anchor_pos_w, self.robot_anchor_quat_w
        # Reference anchor at the robot anchor's x, y (the reference's own height), turned by
        # the yaw between the two anchors.
        delta_pos = torch.cat([robot_pos[:, :2], anchor_pos[:, 2:]], dim=-1)
        delta_quat = yaw_quat(quat_mul(robot_quat, quat_inv(anchor_quat)))
        b = self._body_pos.shape[1]
        delta_quat_b = delta_quat[:, None, :].expand(-1, b, 4)
        offset = self.body_pos_w - anchor_pos[:, None, :]
        self.body_pos_relative_w = delta_pos[:, None, :] + quat_apply(delta_quat_b, offset)
        self.body_quat_relative_w = quat_mul(delta_quat_b, self.body_quat_w)

    def _update_metrics(self) -> None:
        data = self.robot.data
        anchor_err = (self.anchor_pos_w - self.robot_anchor_pos_w).norm(dim=-1)
        anchor_rot = quat_error_magnitude(self.anchor_quat_w, self.robot_anchor_quat_w)
        body_err = (self.body_pos_relative_w - self.robot_body_pos_w).norm(dim=-1).mean(dim=-1)
        body_rot = quat_error_magnitude(self.body_quat_relative_w, self.robot_body_quat_w)
        self._accumulate_episode_mean("error_anchor_pos", anchor_err)
        self._accumulate_episode_mean("error_anchor_rot", anchor_rot)
        self._accumulate_episode_mean("error_body_pos", body_err)
        self._accumulate_episode_mean("error_body_rot", body_rot.mean(dim=-1))
        self._accumulate_episode_mean(
            "error_joint_pos", (self.joint_pos - data.joint_pos).norm(dim=-1)
        )
        self._accumulate_episode_mean(
            "error_joint_vel", (self.joint_vel - data.joint_vel).norm(dim=-1)
        )


def load_motion(cfg: MotionCommandCfg, robot, step_dt: float) -> Motion:
    """The motion of `cfg.motion_file`: a `.npz` path, or "synthetic:<clip>" for a clip made from
    the robot's own model about its default pose (`mjlab.tasks.tracking.synthetic`)."""
    if cfg.motion_file.startswith("synthetic:"):
        clip = cfg.motion_file.partition(":")[2]
        return entity_synthetic_motion(robot.cfg, clip, 1.0 / step_dt, cfg.synthetic_foot_bodies)
    return Motion.load(cfg.motion_file)


@dataclass(kw_only=True)
class MotionCommandCfg(CommandTermCfg):
    """Config of `MotionCommand`."""

    class_type: type = MotionCommand
    """The command term class."""
    resampling_time_range: tuple[float, float] = (1.0e9, 1.0e9)
    """Unused: a motion command draws its start frame only at a reset."""
    asset_name: str = "robot"
    """Entity that tracks the motion."""
    motion_file: str = "synthetic:squat"
    """A motion `.npz` (`mjlab.tasks.tracking.motion`), or "synthetic:squat" /
    "synthetic:arm_swing" for a clip generated from the robot's model."""
    anchor_body_name: str = "torso_link"
    """The body whose pose anchors the relative reference (one body, full-match regex)."""
    body_names: tuple[str, ...] = (".*",)
    """Tracked bodies (full-match regexes over the robot's bodies; model order)."""
    synthetic_foot_bodies: tuple[str, ...] = (".*_ankle_roll_link",)
    """Feet kept on the ground by a synthetic clip."""
    start_at_first_frame: bool = False
    """Start every episode at frame 0 (play, evaluation) instead of sampling."""
    pose_range: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Uniform noise on the reset root pose: keys x, y, z (m), roll, pitch, yaw (rad)."""
    velocity_range: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Uniform noise on the reset root velocity (world): x, y, z (m/s), roll, pitch, yaw (rad/s)."""
    joint_position_range: tuple[float, float] = (0.0, 0.0)
    """Uniform noise on the reset joint positions, rad (then clipped to the soft limits)."""
    adaptive_bin_s: float = 1.0
    """Width of a start-frame sampling bin, s of motion."""
    adaptive_kernel_size: int = 1
    """Bins a failure raises the probability of (itself and the ones before it)."""
    adaptive_lambda: float = 0.8
    """Decay of that raise per bin back."""
    adaptive_uniform_ratio: float = 0.1
    """Share of the start-frame probability spread uniformly over all bins."""
    adaptive_alpha: float = 0.001
    """Per-step weight of new failures in the failure-rate moving average."""

    def validate(self) -> None:
        super().validate()
        for key in (*self.pose_range, *self.velocity_range):
            if key not in _POSE_KEYS:
                raise ValueError(
                    f"MotionCommandCfg.pose_range/velocity_range key '{key}' is not one of "
                    f"{list(_POSE_KEYS)}."
                )
        if self.adaptive_kernel_size < 1 or self.adaptive_bin_s <= 0:
            raise ValueError(
                "MotionCommandCfg.adaptive_kernel_size must be >= 1 and adaptive_bin_s > 0."
            )
        for name in ("adaptive_uniform_ratio", "adaptive_alpha", "adaptive_lambda"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(
                    f"MotionCommandCfg.{name} must be in [0, 1], got {getattr(self, name)!r}."
                )


# --------------------------------------------------------------------------------------------
# Observations: (env, command_name) -> (num_envs, dim) float32.
# --------------------------------------------------------------------------------------------


def _command(env: ManagerBasedRlEnv, command_name: str) -> MotionCommand:
    term = env.command_manager.get_term(command_name)
    if not isinstance(term, MotionCommand):
        raise TypeError(
            f"Command '{command_name}' is a {type(term).__name__}, not a MotionCommand."
        )
    return term


def _two_columns(quat: torch.Tensor) -> torch.Tensor:
    """The first two columns of the rotation matrices of (..., 4) quaternions, (..., 6) =
    (R00, R01, R10, R11, R20, R21)."""
    return matrix_from_quat(quat)[..., :2].reshape(*quat.shape[:-1], 6)


def motion_anchor_pos_b(env: ManagerBasedRlEnv, command_name: str = "motion") -> torch.Tensor:
    """Reference anchor position in the robot anchor's frame. Returns: (num_envs, 3) m."""
    cmd = _command(env, command_name)
    pos, _ = subtract_frame_transforms(
        cmd.robot_anchor_pos_w, cmd.robot_anchor_quat_w, cmd.anchor_pos_w
    )
    return pos


def motion_anchor_ori_b(env: ManagerBasedRlEnv, command_name: str = "motion") -> torch.Tensor:
    """Reference anchor orientation in the robot anchor's frame, as the first two columns of its
    rotation matrix (a continuous 6D representation, Zhou et al. 2019). Returns: (num_envs, 6)."""
    cmd = _command(env, command_name)
    rel = quat_mul(quat_inv(cmd.robot_anchor_quat_w), cmd.anchor_quat_w)
    return _two_columns(rel)


def robot_body_pos_b(env: ManagerBasedRlEnv, command_name: str = "motion") -> torch.Tensor:
    """The robot's tracked bodies in its anchor frame. Returns: (num_envs, 3 * num_bodies) m."""
    cmd = _command(env, command_name)
    b = cmd.robot_body_pos_w.shape[1]
    pos, _ = subtract_frame_transforms(
        cmd.robot_anchor_pos_w[:, None].expand(-1, b, 3),
        cmd.robot_anchor_quat_w[:, None].expand(-1, b, 4),
        cmd.robot_body_pos_w,
    )
    return pos.reshape(env.num_envs, -1)


def robot_body_ori_b(env: ManagerBasedRlEnv, command_name: str = "motion") -> torch.Tensor:
    """The robot's tracked body orientations in its anchor frame (6D each).
    Returns: (num_envs, 6 * num_bodies)."""
    cmd = _command(env, command_name)
    b = cmd.robot_body_quat_w.shape[1]
    rel = quat_mul(
        quat_inv(cmd.robot_anchor_quat_w)[:, None].expand(-1, b, 4), cmd.robot_body_quat_w
    )
    return _two_columns(rel).reshape(env.num_envs, -1)


# --------------------------------------------------------------------------------------------
# Rewards: exp(-mean squared error / std^2), (num_envs,) in (0, 1].
# --------------------------------------------------------------------------------------------


def _body_error_exp(reference: torch.Tensor, actual: torch.Tensor, std: float) -> torch.Tensor:
    """exp(-mean over bodies |reference - actual|^2 / std^2) of (num_envs, bodies, 3) vectors:
    (num_envs,)."""
    err = (reference - actual).square().sum(dim=-1)
    return torch.exp(-err.mean(dim=-1) / std**2)


def motion_global_anchor_position_error_exp(
    env: ManagerBasedRlEnv, std: float, command_name: str = "motion"
) -> torch.Tensor:
    """exp(-|p_anchor_ref - p_anchor|^2 / std^2), world positions, std in m."""
    cmd = _command(env, command_name)
    err = (cmd.anchor_pos_w - cmd.robot_anchor_pos_w).square().sum(dim=-1)
    return torch.exp(-err / std**2)


def motion_global_anchor_orientation_error_exp(
    env: ManagerBasedRlEnv, std: float, command_name: str = "motion"
) -> torch.Tensor:
    """exp(-angle(q_anchor_ref, q_anchor)^2 / std^2), std in rad."""
    cmd = _command(env, command_name)
    err = quat_error_magnitude(cmd.anchor_quat_w, cmd.robot_anchor_quat_w).square()
    return torch.exp(-err / std**2)


def motion_relative_body_position_error_exp(
    env: ManagerBasedRlEnv,
    std: float,
    command_name: str = "motion",
    body_names: tuple[str, ...] | None = None,
) -> torch.Tensor:
    """exp(-mean over bodies |p_rel_ref - p|^2 / std^2), std in m."""
    cmd = _command(env, command_name)
    ids = cmd.body_subset(body_names)
    return _body_error_exp(cmd.body_pos_relative_w[:, ids], cmd.robot_body_pos_w[:, ids], std)


def motion_relative_body_orientation_error_exp(
    env: ManagerBasedRlEnv,
    std: float,
    command_name: str = "motion",
    body_names: tuple[str, ...] | None = None,
) -> torch.Tensor:
    """exp(-mean over bodies angle(q_rel_ref, q)^2 / std^2), std in rad."""
    cmd = _command(env, command_name)
    ids = cmd.body_subset(body_names)
    err = quat_error_magnitude(cmd.body_quat_relative_w[:, ids], cmd.robot_body_quat_w[:, ids])
    return torch.exp(-err.square().mean(dim=-1) / std**2)


def motion_global_body_linear_velocity_error_exp(
    env: ManagerBasedRlEnv,
    std: float,
    command_name: str = "motion",
    body_names: tuple[str, ...] | None = None,
) -> torch.Tensor:
    """exp(-mean over bodies |v_ref - v|^2 / std^2), world velocities, std in m/s."""
    cmd = _command(env, command_name)
    ids = cmd.body_subset(body_names)
    return _body_error_exp(cmd.body_lin_vel_w[:, ids], cmd.robot_body_lin_vel_w[:, ids], std)


def motion_global_body_angular_velocity_error_exp(
    env: ManagerBasedRlEnv,
    std: float,
    command_name: str = "motion",
    body_names: tuple[str, ...] | None = None,
) -> torch.Tensor:
    """exp(-mean over bodies |w_ref - w|^2 / std^2), world, std in rad/s."""
    cmd = _command(env, command_name)
    ids = cmd.body_subset(body_names)
    return _body_error_exp(cmd.body_ang_vel_w[:, ids], cmd.robot_body_ang_vel_w[:, ids], std)


# --------------------------------------------------------------------------------------------
# Terminations: (num_envs,) bool.
# --------------------------------------------------------------------------------------------


def motion_ended(env: ManagerBasedRlEnv, command_name: str = "motion") -> torch.Tensor:
    """The env has played the motion's last frame (use with time_out=True)."""
    cmd = _command(env, command_name)
    return cmd.time_steps >= cmd.num_frames - 1


def bad_anchor_height(
    env: ManagerBasedRlEnv, threshold: float, command_name: str = "motion"
) -> torch.Tensor:
    """|z_anchor_ref - z_anchor| > threshold m (the height only: drift over the ground is allowed)."""
    cmd = _command(env, command_name)
    return (cmd.anchor_pos_w[:, 2] - cmd.robot_anchor_pos_w[:, 2]).abs() > threshold


def bad_anchor_orientation(
    env: ManagerBasedRlEnv, threshold: float, command_name: str = "motion"
) -> torch.Tensor:
    """The z components of gravity in the reference and robot anchor frames differ by more than
    `threshold` (0..2; a tilt measure that ignores yaw)."""
    cmd = _command(env, command_name)
    g_ref = quat_apply_inverse(cmd.anchor_quat_w, cmd._down)
    g_robot = quat_apply_inverse(cmd.robot_anchor_quat_w, cmd._down)
    return (g_ref[:, 2] - g_robot[:, 2]).abs() > threshold


def bad_body_height(
    env: ManagerBasedRlEnv,
    threshold: float,
    body_names: tuple[str, ...],
    command_name: str = "motion",
) -> torch.Tensor:
    """Any of `body_names` (e.g. the feet and hands) is more than `threshold` m above or below
    its relative reference height."""
    cmd = _command(env, command_name)
    ids = cmd.body_subset(body_names)
    dz = cmd.body_pos_relative_w[:, ids, 2] - cmd.robot_body_pos_w[:, ids, 2]
    return (dz.abs() > threshold).any(dim=-1)

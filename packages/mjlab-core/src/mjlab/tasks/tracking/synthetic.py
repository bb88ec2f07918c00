"""Synthetic reference motions made from the robot model itself, for tests and the demo.

No motion-capture data can be downloaded where CI runs, so these clips stand in for it. Each is
a smooth joint trajectory about the robot's standing pose; the root is then placed, frame by
frame, so that both feet stay exactly where they stood (flat, on the ground), and the whole clip
is run through `motion_from_qpos`. The squat keeps the feet flat because hip, knee and ankle
pitch move as (-a, 2a, -a): the foot's pitch is the sum of the three. The clips are labelled
"synthetic: <name>" in the file's `source`.

The generation is deterministic: the same model and arguments give the same content hash.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import mujoco
import numpy as np

from mjlab.entity import EntityCfg
from mjlab.tasks.tracking.motion import (
    Motion,
    model_body_names,
    model_joint_names,
    motion_from_qpos,
)

CLIPS = ("squat", "arm_swing")
"""Names accepted by `synthetic_motion`."""


def _smoothstep(x: np.ndarray) -> np.ndarray:
    """0 -> 1 with zero slope at both ends (the cosine ramp)."""
    x = np.clip(x, 0.0, 1.0)
    return 0.5 - 0.5 * np.cos(math.pi * x)


def _joint_index(names: tuple[str, ...], pattern: str) -> list[int]:
    ids = [i for i, n in enumerate(names) if re.fullmatch(pattern, n)]
    if not ids:
        raise ValueError(f"No joint of the model matches '{pattern}'.")
    return ids


def _foot_bottom(model: mujoco.MjModel, data: mujoco.MjData, foot_bodies: list[int]) -> float:
    """Lowest point (world z, m) of the foot bodies' sphere/capsule/box geoms that can touch
    the ground (contype/conaffinity set, or paired with a world geom)."""
    world = model.geom_bodyid == 0
    on_ground = {
        int(b if world[a] else a)
        for a, b in zip(model.pair_geom1, model.pair_geom2, strict=True)
        if world[a] != world[b]
    }
    low = math.inf
    for g in range(model.ngeom):
        collides = model.geom_contype[g] or model.geom_conaffinity[g] or g in on_ground
        if model.geom_bodyid[g] not in foot_bodies or not collides:
            continue
        center, axes, size = data.geom_xpos[g], data.geom_xmat[g].reshape(3, 3), model.geom_size[g]
        kind = model.geom_type[g]
        if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
            z = center[2] - size[0]
        elif kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
            z = center[2] - size[0] - abs(axes[2, 2]) * size[1]
        elif kind == mujoco.mjtGeom.mjGEOM_BOX:
            z = center[2] - float(np.abs(axes[2]) @ size)
        else:
            continue
        low = min(low, z)
    if not math.isfinite(low):
        raise ValueError("The foot bodies have no sphere, capsule or box geoms that collide.")
    return low


def feet_on_ground_qpos(
    model: mujoco.MjModel, joint_pos: np.ndarray, foot_bodies: tuple[str, ...]
) -> np.ndarray:
    """qpos (T, nq) of a joint trajectory (T, J) with an upright root placed in every frame so
    that the mean position of the foot bodies (full-match regexes) stays where it is in frame 0,
    and frame 0's lowest foot collision point is on the ground (z = 0)."""
    from mjlab.utils.string import resolve_matching_names

    data = mujoco.MjData(model)
    ids, _ = resolve_matching_names(
        foot_bodies, model_body_names(model), what="body", owner="model"
    )
    feet = [i + 1 for i in ids]  # model_body_names leaves out the world body
    t = joint_pos.shape[0]
    qpos = np.zeros((t, model.nq))
    qpos[:, 3] = 1.0
    qpos[:, 7:] = joint_pos
    target = None
    for k in range(t):  # offline generation, a few hundred frames
        data.qpos[:] = qpos[k]
        mujoco.mj_kinematics(model, data)
        mean_foot = data.xpos[feet].mean(axis=0)
        if target is None:
            target = mean_foot.copy()
            target[2] = mean_foot[2] - _foot_bottom(model, data, feet)
        qpos[k, :3] = target - mean_foot
    return qpos


def _squat(names: tuple[str, ...], base: np.ndarray, fps: float, depth: float) -> np.ndarray:
    # 1 s standing, 3 s down and up again, 1 s standing.
    time = np.arange(round(5.0 * fps) + 1) / fps
    s = _smoothstep((time - 1.0) / 1.5) - _smoothstep((time - 2.5) / 1.5)
    q = np.repeat(base[None], len(time), axis=0)
    for pattern, gain in (
        (".*_hip_pitch_joint", -depth),
        (".*_knee_joint", 2.0 * depth),
        (".*_ankle_pitch_joint", -depth),
        # Arms forward as the hips go back, as a person does to stay balanced.
        (".*_shoulder_pitch_joint", -1.5 * depth),
    ):
        for i in _joint_index(names, pattern):
            q[:, i] += gain * s
    return q


def _arm_swing(names: tuple[str, ...], base: np.ndarray, fps: float, depth: float) -> np.ndarray:
    # 0.5 s standing, two 1.5 s swings of the arms in antiphase (0 -> +-depth rad), 0.5 s standing.
    time = np.arange(round(4.0 * fps) + 1) / fps
    envelope = _smoothstep((time - 0.0) / 0.5) * (1.0 - _smoothstep((time - 3.5) / 0.5))
    swing = envelope * np.sin(2.0 * math.pi * np.clip(time - 0.5, 0.0, 3.0) / 1.5)
    q = np.repeat(base[None], len(time), axis=0)
    for side, sign in (("left", 1.0), ("right", -1.0)):
        for i in _joint_index(names, f"{side}_shoulder_pitch_joint"):
            q[:, i] += sign * depth * swing
        for i in _joint_index(names, f"{side}_elbow_joint"):
            q[:, i] -= 0.3 * depth * np.abs(swing)
    return q


_CLIP_FUNCS: dict[str, tuple[Callable, float]] = {
    "squat": (_squat, 0.4),
    "arm_swing": (_arm_swing, 0.8),
}


def synthetic_motion(
    model: mujoco.MjModel,
    default_joint_pos: np.ndarray,
    foot_bodies: tuple[str, ...],
    clip: str = "squat",
    fps: float = 50.0,
    depth: float | None = None,
) -> Motion:
    """A synthetic clip for a humanoid whose joints follow the G1's naming (`.*_hip_pitch_joint`,
    `.*_knee_joint`, `.*_ankle_pitch_joint`, `.*_shoulder_pitch_joint`, `.*_elbow_joint`).

    Args:
        model: the robot (floating base first).
        default_joint_pos: (J,) standing pose, rad, in model joint order.
        foot_bodies: the foot bodies kept on the ground (full-match regexes).
        clip: "squat" (5 s: stand, knees down by 2 * depth and back, stand) or "arm_swing"
            (4 s: the arms swing forward and back in antiphase by +-depth).
        fps: frames per second (the task's control rate, 50, needs no resampling).
        depth: amplitude, rad; None: 0.4 for the squat, 0.8 for the arm swing.

    Raises:
        ValueError: an unknown clip, or a model without the joints the clip moves.
    """
    if clip not in _CLIP_FUNCS:
        raise ValueError(f"Unknown synthetic clip '{clip}'; choose one of {list(CLIPS)}.")
    func, default_depth = _CLIP_FUNCS[clip]
    names = model_joint_names(model)
    base = np.asarray(default_joint_pos, dtype=np.float64)
    if base.shape != (len(names),):
        raise ValueError(
            f"default_joint_pos has shape {base.shape}; the model has {len(names)} joints."
        )
    depth = default_depth if depth is None else depth
    joint_pos = func(names, base, fps, depth)
    hinge = [i for i in range(model.njnt) if model.joint(i).name in names]
    lo, hi = model.jnt_range[hinge].T
    limited = model.jnt_limited[hinge].astype(bool)
    outside = limited & ((joint_pos < lo - 1e-9) | (joint_pos > hi + 1e-9)).any(axis=0)
    if outside.any():
        raise ValueError(
            f"The '{clip}' clip at depth {depth} leaves the range of "
            f"{[names[i] for i in np.flatnonzero(outside)]}; use a smaller depth."
        )
    qpos = feet_on_ground_qpos(model, joint_pos, foot_bodies)
    return motion_from_qpos(model, qpos, fps, source=f"synthetic: {clip}")


def entity_synthetic_motion(
    entity_cfg: EntityCfg,
    clip: str = "squat",
    fps: float = 50.0,
    foot_bodies: tuple[str, ...] = (".*_ankle_roll_link",),
    depth: float | None = None,
) -> Motion:
    """`synthetic_motion` on an entity's own model (`spec_fn`) about its initial joint pose
    (`init_state.joint_pos`): what the tracking tasks' "synthetic:<clip>" motions are."""
    from mjlab.utils.string import resolve_matching_values

    model = entity_cfg.spec_fn().compile()
    names = list(model_joint_names(model))
    default = resolve_matching_values(
        dict(entity_cfg.init_state.joint_pos), names, what="joint", owner="init_state"
    )
    return synthetic_motion(model, np.asarray(default), foot_bodies, clip, fps, depth)


def g1_synthetic_motion(
    clip: str = "squat", fps: float = 50.0, depth: float | None = None
) -> Motion:
    """`synthetic_motion` on the Menagerie G1 (`unitree_g1/scene_mjx`) about its standing pose:
    the motion of the G1 tracking tasks' default `motion_file` "synthetic:squat"."""
    from mjlab.tasks.robots.g1 import G1

    return entity_synthetic_motion(G1.entity_cfg(), clip, fps, G1.foot_bodies, depth)

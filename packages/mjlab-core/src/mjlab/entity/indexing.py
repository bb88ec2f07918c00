"""mjlab 1.6's `EntityIndexing`: where an entity's elements are in its spec and in the compiled
scene model."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import torch

__all__ = ["EntityIndexing"]


@dataclass(frozen=True)
class EntityIndexing:
    """An entity's elements: its `mujoco.MjSpec` elements (in spec order; once the scene has
    attached the entity their names carry its prefix, "robot/trunk") and their ids and
    addresses in the compiled scene model (`Entity.initialize`
    builds it; `entity.indexing`). Id tensors are int64 on the entity's device, in the entity's
    order of each kind (the order `find_*` and `EntityData` use).
    """

    bodies: tuple[mujoco.MjsBody, ...]
    """The entity's bodies (its world body excluded)."""
    joints: tuple[mujoco.MjsJoint, ...]
    """Its joints other than a free joint."""
    geoms: tuple[mujoco.MjsGeom, ...]
    sites: tuple[mujoco.MjsSite, ...]
    tendons: tuple[mujoco.MjsTendon, ...]
    cameras: tuple[mujoco.MjsCamera, ...]
    lights: tuple[mujoco.MjsLight, ...]
    materials: tuple[mujoco.MjsMaterial, ...]
    textures: tuple[mujoco.MjsTexture, ...]
    pairs: tuple[mujoco.MjsPair, ...]
    actuators: tuple[mujoco.MjsActuator, ...]
    body_ids: torch.Tensor
    """(num_bodies,) compiled body ids."""
    geom_ids: torch.Tensor
    site_ids: torch.Tensor
    tendon_ids: torch.Tensor
    cam_ids: torch.Tensor
    light_ids: torch.Tensor
    mat_ids: torch.Tensor
    tex_ids: torch.Tensor
    pair_ids: torch.Tensor
    ctrl_ids: torch.Tensor
    """(num_actuators,) compiled actuator id (ctrl column) of each of `actuators`, in the same
    order (-1 for an unnamed actuator). The column each actuated joint's target goes to is
    `Entity.joint_actuator_ids`."""
    joint_ids: torch.Tensor
    """(num_joints,) compiled joint ids (free joint excluded)."""
    mocap_id: int | None
    """The root body's mocap index, or None when it is not a mocap body."""
    joint_q_adr: torch.Tensor
    """(num_joints,) qpos addresses of the joints."""
    joint_v_adr: torch.Tensor
    """(num_joints,) qvel (dof) addresses of the joints."""
    free_joint_q_adr: torch.Tensor
    """(7,) qpos addresses of the free joint (position, quaternion wxyz); empty when fixed."""
    free_joint_v_adr: torch.Tensor
    """(6,) qvel addresses of the free joint (linear, angular); empty when fixed."""

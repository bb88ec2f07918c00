"""Unitree Go1 (mujoco-menagerie `unitree_go1`, entry `go1`): everything the task and the
exporter need to know about the robot."""

from __future__ import annotations

import mujoco

from mjlab.actuator import PositionActuatorCfg
from mjlab.entity import CollisionCfg, EntityArticulationInfoCfg, EntityCfg, InitialStateCfg
from mjlab.tasks.velocity.robots import pd_gains

MENAGERIE_ROBOT = "unitree_go1"
MENAGERIE_ENTRY = "go1"

JOINT_NAMES = tuple(
    f"{leg}_{part}_joint" for leg in ("FR", "FL", "RR", "RL") for part in ("hip", "thigh", "calf")
)
"""Control order = MJCF joint order."""
FOOT_GEOMS = ("FR", "FL", "RR", "RL")
"""Foot collision geoms (spheres at the calf tips)."""

# Reflected inertia: Menagerie's MJCF gives every Go1 joint armature 0.01 kg m^2.
ARMATURE = {".*_hip_joint": 0.01, ".*_thigh_joint": 0.01, ".*_calf_joint": 0.01}
# Torque limits of the Go1 motors: 23.7 N m (hip, thigh) and 35.55 N m (knee, 1.5x gearing),
# as in Menagerie's forcerange.
EFFORT_LIMIT = {".*_hip_joint": 23.7, ".*_thigh_joint": 23.7, ".*_calf_joint": 35.55}
STIFFNESS = {k: pd_gains(v)[0] for k, v in ARMATURE.items()}
DAMPING = {k: pd_gains(v)[1] for k, v in ARMATURE.items()}
ACTION_SCALE = {k: 0.25 * EFFORT_LIMIT[k] / STIFFNESS[k] for k in ARMATURE}
"""rad of target per unit action."""

DEFAULT_JOINT_POS = {".*_hip_joint": 0.0, ".*_thigh_joint": 0.9, ".*_calf_joint": -1.8}
"""Standing pose, rad (Menagerie's `home` keyframe)."""
INIT_POS = (0.0, 0.0, 0.3)
"""Spawn height of the trunk, m (feet ~3 cm above the ground)."""


def spec() -> mujoco.MjSpec:
    import mujoco_menagerie

    return mujoco_menagerie.get(MENAGERIE_ROBOT).spec(MENAGERIE_ENTRY)


def entity_cfg() -> EntityCfg:
    return EntityCfg(
        spec_fn=spec,
        menagerie=(MENAGERIE_ROBOT, MENAGERIE_ENTRY),
        init_state=InitialStateCfg(pos=INIT_POS, joint_pos=dict(DEFAULT_JOINT_POS)),
        articulation=EntityArticulationInfoCfg(
            actuators=(
                PositionActuatorCfg(
                    joint_names_expr=(".*",),
                    stiffness=STIFFNESS,
                    damping=DAMPING,
                    effort_limit=EFFORT_LIMIT,
                    armature=ARMATURE,
                ),
            ),
            soft_joint_pos_limit_factor=0.9,
        ),
        collisions=(
            CollisionCfg(geom_names_expr=FOOT_GEOMS, condim=3, friction=(0.8,), priority=1),
        ),
    )

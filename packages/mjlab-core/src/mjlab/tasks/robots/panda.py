"""Franka Emika Panda (mujoco-menagerie `franka_emika_panda`, entry `mjx_panda`): the arm the
manipulation tasks use, as a fixed-base scene entity.

The MJX variant has position servos on the seven arm joints (kp 1000/750/300 N m/rad, as in
Menagerie) and one position servo on `finger_joint1` (kp 350 N/m, ctrlrange 0-0.04 m) that an
equality constraint mirrors onto `finger_joint2`. Its link collision meshes collide with
nothing (contype = conaffinity = 0); what touches the world is the hand capsule (against the
table) and the fingertip pads (against the table and the cube), Menagerie's MJX contact model.
"""

from __future__ import annotations

from mjlab.entity import EntityCfg, InitialStateCfg
from mjlab.tasks.robots import menagerie_spec

ARM_JOINTS = tuple(f"joint{i}" for i in range(1, 8))
"""The seven arm joints, in model order."""
FINGER_JOINTS = ("finger_joint1", "finger_joint2")
"""The two finger slides, m (0 closed, 0.04 open); `finger_joint2` follows `finger_joint1`."""
HOME_JOINT_POS = {
    "joint1": 0.0,
    "joint2": 0.3,
    "joint3": 0.0,
    "joint4": -1.57079,
    "joint5": 0.0,
    "joint6": 2.0,
    "joint7": -0.7853,
    "finger_joint.*": 0.04,
}
"""Menagerie's `home` keyframe: the hand over the table, 0.5 m in front of the base, fingers
open. rad for the arm, m for the fingers."""
GRIPPER_SITE = "gripper"
"""The site between the fingertips (the tool centre point), 0.1 m beyond the hand frame."""
HAND_BODY = "hand"
FINGER_OPEN = 0.04
"""Finger slide travel, m."""
VELOCITY_LIMIT = {"joint[1-4]": 2.175, "joint[5-7]": 2.61, "finger_joint.*": 0.2}
"""Joint speed limits: rad/s for the arm (Franka's data sheet for the Panda: 2.175 rad/s on
joints 1-4, 2.61 rad/s on 5-7), m/s for the finger slides (0.2 m/s, franka_description's
hand); Menagerie's MJCF carries none."""


def panda_entity_cfg() -> EntityCfg:
    """The Panda on its base at the env origin, starting at `HOME_JOINT_POS`, with Menagerie's
    own actuators (`articulation=None` keeps the MJCF's position servos and their gains)."""
    return EntityCfg(
        spec_fn=lambda: menagerie_spec("franka_emika_panda", "mjx_panda"),
        menagerie=("franka_emika_panda", "mjx_panda"),
        init_state=InitialStateCfg(joint_pos=dict(HOME_JOINT_POS)),
        joint_vel_limit=dict(VELOCITY_LIMIT),
    )

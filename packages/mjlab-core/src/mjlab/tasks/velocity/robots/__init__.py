"""Robot constants of the velocity tasks: one module per robot.

PD gains follow from each joint's reflected inertia (MuJoCo armature, kg m^2) and a chosen
closed-loop natural frequency w and damping ratio z of the joint as a second-order system
I qdd + kd qd + kp q = 0 (I = armature, link inertia neglected):

    kp = I w^2,   kd = 2 z I w

The action scale is 0.25 * effort_limit / kp: a unit action asks for a quarter of the
motor's torque at zero velocity, so exploration noise stays within what the motors can do.
"""

import math

NATURAL_FREQ = 10.0 * 2.0 * math.pi
"""w, rad/s (10 Hz)."""
DAMPING_RATIO = 2.0
"""z (overdamped: no oscillation about the target)."""


def pd_gains(armature: float) -> tuple[float, float]:
    """(kp N m/rad, kd N m s/rad) for a joint of reflected inertia `armature` kg m^2."""
    return armature * NATURAL_FREQ**2, 2.0 * DAMPING_RATIO * armature * NATURAL_FREQ


def menagerie_pd_entity_cfg(module, collisions: tuple = (), ground_geoms: tuple[str, ...] = ()):
    """EntityCfg of a robot constants module (MENAGERIE_ROBOT/ENTRY, ARMATURE, STIFFNESS,
    DAMPING, EFFORT_LIMIT, DEFAULT_JOINT_POS, INIT_POS): every joint gets a PD position actuator
    with those per-joint values, soft joint limits at 90 % of the range. `ground_geoms`: the
    entry's own floor, whose contact pairs move to the scene's terrain (`EntityCfg.ground_geoms`).
    """
    import mujoco_menagerie

    from mjlab.actuator import PositionActuatorCfg
    from mjlab.entity import EntityArticulationInfoCfg, EntityCfg, InitialStateCfg

    robot, entry = module.MENAGERIE_ROBOT, module.MENAGERIE_ENTRY
    return EntityCfg(
        spec_fn=lambda: mujoco_menagerie.get(robot).spec(entry),
        menagerie=(robot, entry),
        init_state=InitialStateCfg(pos=module.INIT_POS, joint_pos=dict(module.DEFAULT_JOINT_POS)),
        articulation=EntityArticulationInfoCfg(
            actuators=(
                PositionActuatorCfg(
                    joint_names_expr=(".*",),
                    stiffness=module.STIFFNESS,
                    damping=module.DAMPING,
                    effort_limit=module.EFFORT_LIMIT,
                    armature=module.ARMATURE,
                ),
            ),
            soft_joint_pos_limit_factor=0.9,
        ),
        collisions=collisions,
        ground_geoms=ground_geoms,
    )

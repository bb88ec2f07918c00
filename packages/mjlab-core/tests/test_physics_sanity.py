"""Physics sanity of every registered task on the C MuJoCo backend: with zero actions from the
reset state (the default pose held by the PD actuators), a legged robot lands on its terrain,
touches it with its feet, does not sink into it and keeps its base up; Cartpole's cart stays on
its rail. A robot whose collision model was lost in scene composition (the G1 MJX model collides
only through explicit `<pair>`s) fails here within a few steps."""

import math

import mujoco
import numpy as np
import pytest
import torch

from mjlab.envs import ManagerBasedRlEnv
from mjlab.tasks import list_tasks, load_env_cfg
from mjlab.terrains.terrain_importer import TERRAIN_NAME

NUM_ENVS = 4
STAND_S = 0.5
"""A legged robot keeps its base up for at least this long with zero actions, s."""
MIN_BASE_HEIGHT = {"Go1": 0.22, "G1": 0.65}
"""...above this height over the env origin, m (standing: Go1 trunk ~0.26 m, G1 pelvis ~0.78 m;
a G1 without ground contact is at 0.46 m after 14 steps)."""
MAX_PENETRATION = 0.01
"""Deepest robot-terrain penetration once landed, m."""
MAX_LANDING_PENETRATION = 0.02
"""Deepest penetration during the first TOUCHDOWN_STEPS, m: the robot spawns above the ground
(so that no reset pose starts inside it) and lands at up to ~1 m/s; MuJoCo's soft contact with
a 0.02 s time constant absorbs that over ~1.5 cm."""
TOUCHDOWN_STEPS = 10
"""Every foot of every env has touched the terrain within this many env steps."""


def _terrain_contacts(env, world: int) -> tuple[int, float]:
    """(number of robot-terrain contacts, smallest contact distance m) in one world."""
    model = env.sim.mj_model
    terrain = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, TERRAIN_NAME)
    robot_geoms = set(env.scene["robot"].geom_ids_global)
    data = env.sim.get_data(world)
    n, deepest = 0, math.inf
    for c in data.contact[: data.ncon]:
        pair = {int(c.geom1), int(c.geom2)}
        if terrain in pair and pair & robot_geoms:
            n += 1
            deepest = min(deepest, float(c.dist))
    return n, deepest


def _zero_action_rollout(task_id: str):
    cfg = load_env_cfg(task_id)
    cfg.scene.num_envs = NUM_ENVS
    env = ManagerBasedRlEnv(cfg)
    env.reset(seed=0)
    steps = math.ceil(STAND_S / env.step_dt) + 1
    zeros = torch.zeros(env.action_space.shape)
    return env, steps, zeros


@pytest.mark.parametrize("task_id", [t for t in list_tasks() if "Velocity" in t])
def test_legged_robot_stands_on_its_terrain_with_zero_actions(task_id):
    env, steps, zeros = _zero_action_rollout(task_id)
    robot = env.scene["robot"]
    feet = env.scene["feet_contact"]
    origin_z = env.scene.env_origins[:, 2].clone()
    robot_name = task_id.rsplit("-", 1)[-1]
    if robot_name not in MIN_BASE_HEIGHT:
        pytest.skip(f"{task_id}: no standing height stated for robot '{robot_name}'")
    min_height = MIN_BASE_HEIGHT[robot_name]
    feet_touched = torch.zeros(NUM_ENVS, feet.num_slots, dtype=torch.bool)
    deepest = landing = math.inf
    for step in range(steps):
        _, _, terminated, truncated, _ = env.step(zeros)
        assert not (terminated | truncated).any(), (
            f"{task_id}: an episode ended at step {step} with zero actions"
        )
        height = robot.data.root_link_pos_w[:, 2] - origin_z
        assert (height >= min_height).all(), (
            f"{task_id}: base fell to {height.min():.3f} m (< {min_height} m) at step {step} "
            f"({(step + 1) * env.step_dt:.2f} s)"
        )
        feet_touched |= feet.found
        for world in range(NUM_ENVS):
            n, dist = _terrain_contacts(env, world)
            if step == TOUCHDOWN_STEPS - 1:
                assert n > 0, f"{task_id}: world {world} has no contact with the terrain"
            if step < TOUCHDOWN_STEPS:
                landing = min(landing, dist)
            else:
                deepest = min(deepest, dist)
        if step == TOUCHDOWN_STEPS - 1:
            assert feet_touched.all(), (
                f"{task_id}: foot contact sensor slots {feet.slot_names} never reported contact "
                f"in {TOUCHDOWN_STEPS} steps: {feet_touched.tolist()}"
            )
    assert landing >= -MAX_LANDING_PENETRATION, (
        f"{task_id}: penetrated the terrain by {-landing:.4f} m while landing"
    )
    assert deepest >= -MAX_PENETRATION, f"{task_id}: penetrated the terrain by {-deepest:.4f} m"
    # Standing: feet are still on the ground at the end.
    assert feet.found.any(dim=1).all(), f"{task_id}: a robot has no foot on the ground at the end"
    env.close()


@pytest.mark.parametrize("task_id", [t for t in list_tasks() if "Cartpole" in t])
def test_cartpole_cart_stays_on_its_rail(task_id):
    env, steps, zeros = _zero_action_rollout(task_id)
    cart = env.scene["cartpole"]
    body = cart.find_bodies("cart")[0][0]
    lo, hi = cart.data.soft_joint_pos_limits[0, 0].tolist()
    for _ in range(steps):
        env.step(zeros)
        pos = cart.data.body_link_pos_w[:, body]
        np.testing.assert_allclose(pos[:, 1:].numpy(), [[0.0, 1.0]] * NUM_ENVS, atol=1e-9)
        slider = cart.data.joint_pos[:, 0]
        assert ((slider >= lo - 1e-3) & (slider <= hi + 1e-3)).all()
    env.close()

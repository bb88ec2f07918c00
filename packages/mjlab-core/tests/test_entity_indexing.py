"""mjlab 1.6's EntityIndexing: an entity's spec elements and compiled ids and addresses."""

import mujoco
import torch

from mjlab.entity import EntityIndexing
from mjlab.scene import Scene, SceneCfg
from mjlab.sim import Simulation, SimulationCfg
from mjlab.tasks.robots.go1 import GO1
from mjlab.terrains import TerrainImporterCfg


def test_indexing_matches_the_compiled_model_and_the_entity_views():
    scene = Scene(
        SceneCfg(num_envs=2, entities={"robot": GO1.entity_cfg()}, terrain=TerrainImporterCfg())
    )
    sim = Simulation(2, SimulationCfg(nthread=1), scene.compile())
    scene.initialize(sim)
    sim.reset(forward=False)
    scene.reset(torch.arange(2))
    sim.forward()
    robot = scene["robot"]
    idx = robot.indexing
    assert isinstance(idx, EntityIndexing)
    model = sim.mj_model
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, int(b)) for b in idx.body_ids]
    assert names == [f"robot/{n}" for n in robot.body_names]
    assert [b.name for b in idx.bodies] == [f"robot/{n}" for n in robot.body_names]
    assert [j.name for j in idx.joints] == [f"robot/{n}" for n in robot.joint_names]
    assert idx.free_joint_q_adr.tolist() == list(range(7))
    assert idx.free_joint_v_adr.tolist() == list(range(6))
    assert idx.mocap_id is None
    # The addresses read the same state as the entity's views.
    qpos, qvel = sim.data.qpos.float(), sim.data.qvel.float()
    torch.testing.assert_close(qpos[:, idx.joint_q_adr], robot.data.joint_pos)
    torch.testing.assert_close(qvel[:, idx.joint_v_adr], robot.data.joint_vel)
    torch.testing.assert_close(qpos[:, idx.free_joint_q_adr[:3]], robot.data.root_link_pos_w)
    # ctrl_ids line up with the actuators: each id compiles from that spec actuator.
    assert len(idx.actuators) == len(idx.ctrl_ids) == 12
    for act, ctrl in zip(idx.actuators, idx.ctrl_ids.tolist(), strict=True):
        assert mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, ctrl) == act.name
    foot = robot.geom_names.index("FR")
    assert mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, int(idx.geom_ids[foot])) == "robot/FR"

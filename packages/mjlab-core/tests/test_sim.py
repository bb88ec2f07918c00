import mujoco
import numpy as np
import pytest
import torch

from mjlab.sim import MujocoCfg, Simulation, SimulationCfg

N = 6


def _make(model, **cfg) -> Simulation:
    sim = Simulation(N, SimulationCfg(nthread=2, **cfg), model)
    # Distinct initial states so that a world mixed up with another would show.
    sim.data.qpos[:, 1] = torch.linspace(-0.3, 0.3, N, dtype=torch.float64)
    sim.data.ctrl[:, 0] = torch.linspace(-2.0, 2.0, N, dtype=torch.float64)
    sim.forward()
    return sim


def test_views_have_batched_shapes_and_match_single_world_mjdata(cartpole_model):
    sim = _make(cartpole_model)
    sim.step(5)
    assert sim.backend == "mujoco"
    assert sim.data.qpos.shape == (N, cartpole_model.nq)
    assert sim.data.xpos.shape == (N, cartpole_model.nbody, 3)
    assert sim.data.xmat.shape == (N, cartpole_model.nbody, 3, 3)
    assert sim.data.cvel.shape == (N, cartpole_model.nbody, 6)
    data = mujoco.MjData(sim.mj_model)
    data.qpos[:] = [0.0, -0.3]
    data.ctrl[:] = [-2.0]
    mujoco.mj_forward(sim.mj_model, data)
    for _ in range(5):
        mujoco.mj_step(sim.mj_model, data)
    mujoco.mj_forward(sim.mj_model, data)  # kinematics at the new state, as after sim.step
    np.testing.assert_array_equal(sim.data.qpos[0].numpy(), data.qpos)
    np.testing.assert_allclose(sim.data.xpos[0].numpy(), data.xpos, atol=1e-12)
    np.testing.assert_allclose(sim.data.xquat[0].numpy(), data.xquat, atol=1e-12)


def test_mujoco_cfg_is_applied_to_the_compiled_model(cartpole_model):
    original_dt = cartpole_model.opt.timestep
    cfg = MujocoCfg(timestep=0.004, integrator="euler", iterations=7, disableflags=("warmstart",))
    sim = Simulation(2, SimulationCfg(mujoco=cfg), cartpole_model)
    assert sim.physics_dt == pytest.approx(0.004)
    assert sim.mj_model.opt.integrator == mujoco.mjtIntegrator.mjINT_EULER
    assert sim.mj_model.opt.iterations == 7
    assert sim.mj_model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_WARMSTART
    assert cartpole_model.opt.timestep == pytest.approx(original_dt), "caller's model was modified"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"timestep": 0.0}, "timestep"),
        ({"integrator": "verlet"}, "integrator"),
        ({"disableflags": ("warmstartt",)}, "warmstartt"),
    ],
)
def test_bad_mujoco_cfg_names_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MujocoCfg(**kwargs)


def test_mujoco_backend_on_cuda_device_is_rejected_with_the_fix(cartpole_model):
    with pytest.raises(ValueError, match="backend='warp'"):
        Simulation(2, SimulationCfg(backend="mujoco"), cartpole_model, device="cuda:0")


def test_writing_an_output_field_is_refused(cartpole_model):
    sim = _make(cartpole_model)
    with pytest.raises(AttributeError, match="output"):
        sim.data.xpos = torch.zeros_like(sim.data.xpos)


def test_write_to_a_subset_of_worlds_takes_effect_on_next_step_only_there(cartpole_model):
    ref, sim = _make(cartpole_model), _make(cartpole_model)
    sim.data.qvel[[1, 4], 0] = 1.5
    ref.step(3)
    sim.step(3)
    changed = (sim.data.qpos != ref.data.qpos).any(dim=1)
    assert changed.tolist() == [False, True, False, False, True, False]


def test_partial_reset_leaves_other_worlds_untouched(cartpole_model):
    ref, sim = _make(cartpole_model), _make(cartpole_model)
    ref.step(10)
    sim.step(10)
    sim.reset(torch.tensor([2, 3]), keyframe=0)
    assert torch.equal(sim.data.qpos[2:4], torch.zeros(2, 2, dtype=torch.float64))
    keep = [0, 1, 4, 5]
    assert torch.equal(sim.data.qpos[keep], ref.data.qpos[keep])
    ref.step(10)
    sim.step(10)
    assert torch.equal(sim.data.qpos[keep], ref.data.qpos[keep])
    assert torch.equal(sim.data.qvel[keep], ref.data.qvel[keep])


def test_per_world_model_field_changes_only_that_world(cartpole_model):
    ref, sim = _make(cartpole_model), _make(cartpole_model)
    mass = sim.expand_model_field("body_mass")
    assert mass.shape == (N, cartpole_model.nbody)
    mass[3, 1] = 5.0  # a heavier cart in world 3
    sim.set_const(np.array([3]))
    ref.step(20)
    sim.step(20)
    changed = (sim.data.qpos != ref.data.qpos).any(dim=1)
    assert changed.tolist() == [False, False, False, True, False, False]
    # Same push, five times the mass: the cart moved less.
    assert abs(sim.data.qpos[3, 0]) < abs(ref.data.qpos[3, 0])


def test_diverged_world_is_reported_and_others_are_bit_identical(cartpole_model):
    ref, sim = _make(cartpole_model), _make(cartpole_model)
    ref.step(4)
    sim.step(4)
    sim.data.qvel[2, 1] = float("nan")
    for _ in range(5):
        ref.step(4)
        sim.step(4)
    assert sim.diverged.tolist() == [False, False, True, False, False, False]
    assert not ref.diverged.any()
    keep = [0, 1, 3, 4, 5]
    assert torch.equal(sim.data.qpos[keep], ref.data.qpos[keep])
    assert torch.equal(sim.data.qvel[keep], ref.data.qvel[keep])
    assert torch.isfinite(sim.data.qpos).all()  # MuJoCo reset the bad world, it is not NaN
    sim.reset(torch.tensor([2]))
    assert not sim.diverged.any()


def test_diverged_world_is_reported_with_autoreset_disabled(cartpole_model):
    # MuJoCo then leaves the NaN state in place and the clock runs on: the state check sees it.
    sim = _make(cartpole_model, mujoco=MujocoCfg(disableflags=("autoreset",)))
    sim.step(2)
    sim.data.qvel[4, 0] = float("nan")
    sim.step(2)
    assert sim.diverged.tolist() == [False, False, False, False, True, False]
    assert not torch.isfinite(sim.data.qvel[4]).all()
    # Each step reports its own divergence: a world failing later is added to the flags.
    sim.data.qpos[1, 1] = float("inf")
    sim.step(1)
    assert sim.diverged.tolist() == [False, True, False, False, True, False]


def test_divergence_check_follows_per_world_timesteps_and_flags(cartpole_model):
    sim = _make(cartpole_model)
    dt = sim.expand_model_field("opt.timestep")
    dt[1] = dt[1] / 4  # a slower clock is not a reset
    dt[2] = dt[2] * 2
    sim.step(3)
    assert not sim.diverged.any()
    # Autoreset off in world 3 only: MuJoCo keeps its NaN state and its clock runs on.
    flags = sim.expand_model_field("opt.disableflags")
    flags[3] |= int(mujoco.mjtDisableBit.mjDSBL_AUTORESET)
    sim.data.qvel[3, 1] = float("nan")
    sim.data.qvel[4, 1] = float("nan")  # autoreset on: MuJoCo resets it, the clock rewinds
    sim.step(2)
    assert sim.diverged.tolist() == [False, False, False, True, True, False]
    assert not torch.isfinite(sim.data.qvel[3]).all() and torch.isfinite(sim.data.qvel[4]).all()


def test_blow_up_in_the_first_step_after_a_reset_is_flagged(cartpole_model):
    # MuJoCo resets the world inside the first substep and runs on from its defaults: its clock
    # ends at 4 dt like every other world's, yet the world is flagged.
    sim = _make(cartpole_model)
    sim.reset(torch.tensor([3]))
    sim.data.qfrc_applied[3, 0] = 1e30
    sim.step(4)
    assert sim.diverged.tolist() == [False, False, False, True, False, False]
    assert torch.isfinite(sim.data.qpos).all()
    sim.reset(torch.tensor([3]))
    sim.step(4)
    assert not sim.diverged.any()


def test_a_restored_state_is_not_flagged_for_the_blow_up_it_replaced(cartpole_model):
    sim = _make(cartpole_model)
    saved = sim.get_state()
    sim.data.qfrc_applied[2, 0] = 1e30
    sim.step(2)
    assert sim.diverged.tolist() == [False, False, True, False, False, False]
    sim.set_state(saved)
    sim.diverged.zero_()  # as an env's snapshot restores it
    sim.step(2)
    assert not sim.diverged.any()


def test_ray_down_hits_the_floor_at_the_known_distance(cartpole_model):
    sim = _make(cartpole_model)
    pnt = torch.tensor([2.0, 0.5, 2.0], dtype=torch.float64).expand(N, 1, 3)
    vec = torch.tensor([0.0, 0.0, -1.0], dtype=torch.float64).expand(N, 1, 3)
    dist, geomid = sim.ray(pnt, vec)
    floor = mujoco.mj_name2id(sim.mj_model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
    np.testing.assert_allclose(dist.numpy(), 2.1)  # floor plane at z = -0.1
    assert (geomid == floor).all()


def test_go1_from_menagerie_runs_with_position_actuators():
    import mujoco_menagerie

    spec = mujoco_menagerie.get("unitree_go1").spec("scene")
    sim = Simulation(4, SimulationCfg(nthread=2), spec)
    sim.reset(keyframe=0)
    sim.data.ctrl[:] = torch.from_numpy(sim.mj_model.key_ctrl[0])
    sim.step(200)  # 1 s holding the keyframe's pose
    assert sim.data.qpos.shape == (4, 19)
    assert not sim.diverged.any()
    # Trunk height stays near the standing height.
    assert (sim.data.qpos[:, 2] > 0.2).all()

"""MuJoCo Warp backend against C MuJoCo on the same model (Warp's CPU device here)."""

import pytest
import torch

from mjlab.sim import MujocoCfg, Simulation, SimulationCfg

pytestmark = [pytest.mark.slow, pytest.mark.warp]

N = 4


def _make(model, backend: str, device: str = "cpu") -> Simulation:
    cfg = SimulationCfg(backend=backend, mujoco=MujocoCfg(timestep=0.01))
    sim = Simulation(N, cfg, model, device=device)
    dtype = sim.data.qpos.dtype
    sim.data.qpos[:, 1] = torch.linspace(-0.2, 0.2, N, dtype=dtype)
    sim.data.ctrl[:, 0] = torch.linspace(-3.0, 3.0, N, dtype=dtype)
    sim.forward()
    return sim


def test_warp_backend_matches_c_mujoco_on_cartpole_for_50_steps(cartpole_model):
    warp = _make(cartpole_model, "warp")
    ref = _make(cartpole_model, "mujoco")
    assert warp.backend == "warp" and warp.data.qpos.dtype == torch.float32
    for _ in range(50):
        warp.step()
        ref.step()
    # Warp computes in float32 (eps 1.2e-7) and C MuJoCo in float64. Over 50 implicit steps of a
    # smooth, contact-free system the rounding differences grow roughly linearly; 1e-4 rad / m is
    # ~1000 eps per step of headroom, while a wrong stage, frame or reset would be off by >1e-2.
    torch.testing.assert_close(warp.data.qpos.double(), ref.data.qpos, atol=1e-4, rtol=0)
    torch.testing.assert_close(warp.data.qvel.double(), ref.data.qvel, atol=1e-3, rtol=0)
    # Kinematics are current at the new state on both backends.
    torch.testing.assert_close(warp.data.xquat.double(), ref.data.xquat, atol=1e-4, rtol=0)
    torch.testing.assert_close(warp.data.cvel.double(), ref.data.cvel, atol=1e-3, rtol=0)

    # Divergence, partial reset and rays behave as on the C backend.
    warp.data.qpos[1, 0] = float("nan")
    warp.step()
    assert warp.diverged.tolist() == [False, True, False, False]
    before = warp.data.qpos[[0, 2, 3]].clone()
    warp.reset(torch.tensor([1]))
    assert not warp.diverged.any()
    assert torch.equal(warp.data.qpos[1], torch.zeros(2))
    assert torch.equal(warp.data.qpos[[0, 2, 3]], before)
    # A blow-up in the first step after that reset is flagged too (MuJoCo Warp does not reset a
    # world itself: the state stays beyond mjMAXVAL or non-finite).
    warp.data.qfrc_applied[1, 0] = 1e30
    warp.step()
    assert warp.diverged.tolist() == [False, True, False, False]
    warp.reset(torch.tensor([1]))
    pnt = torch.tensor([2.0, 0.5, 2.0]).expand(N, 1, 3)
    vec = torch.tensor([0.0, 0.0, -1.0]).expand(N, 1, 3)
    dist, _ = warp.ray(pnt, vec)
    torch.testing.assert_close(dist, torch.full((N, 1), 2.1), atol=1e-5, rtol=0)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_warp_on_cuda_with_graphs_matches_c_mujoco(cartpole_model):
    warp = _make(cartpole_model, "auto", device="cuda:0")
    ref = _make(cartpole_model, "mujoco")
    assert warp.backend == "warp"
    for _ in range(50):
        warp.step()
        ref.step()
    torch.testing.assert_close(warp.data.qpos.cpu().double(), ref.data.qpos, atol=1e-4, rtol=0)

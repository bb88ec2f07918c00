"""mjlab 1.6's TorchArray / WarpBridge: zero-copy torch views of Warp arrays and structs."""

import mujoco
import numpy as np
import pytest
import torch
import warp as wp

from mjlab.sim import MujocoCfg, Simulation, SimulationCfg, TorchArray, WarpBridge


class _Inner:
    """A stand-in for a nested Warp struct (e.g. `Data.contact`)."""

    dist: wp.array

    def __init__(self):
        self.dist = wp.zeros(3, dtype=wp.float32, device="cpu")


class _Struct:
    qpos: wp.array
    pnt: wp.array
    nworld: int
    contact: _Inner

    def __init__(self):
        self.qpos = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), device="cpu")
        self.pnt = wp.zeros(2, dtype=wp.vec3, device="cpu")
        self.nworld = 2
        self.contact = _Inner()


def test_torch_array_shares_memory_and_acts_as_a_tensor():
    arr = wp.array(np.arange(6, dtype=np.float32).reshape(2, 3), device="cpu")
    view = TorchArray(arr)
    assert view.shape == (2, 3) and view.dtype == torch.float32
    assert torch.sum(view).item() == 15.0 and view.sum().item() == 15.0
    doubled = view * 2
    assert isinstance(doubled, torch.Tensor) and doubled[1, 2].item() == 10.0
    assert (1 + view)[0, 0].item() == 1.0 and (-view)[0, 1].item() == -1.0
    assert torch.equal(
        view == 4.0, arr.numpy() == 4.0 if False else torch.tensor(arr.numpy() == 4.0)
    )
    view[0, 0] = 7.0  # writes through to the Warp array
    assert arr.numpy()[0, 0] == 7.0
    view.tensor.mul_(0.5)
    assert arr.numpy()[1, 2] == 2.5
    assert np.asarray(view).shape == (2, 3)
    assert TorchArray(wp.zeros(2, dtype=wp.vec3, device="cpu")).shape == (2, 3)
    with pytest.raises(TypeError, match="warp array"):
        TorchArray(torch.zeros(3))


def test_warp_bridge_reads_views_and_writes_in_place():
    struct = _Struct()
    bridge = WarpBridge(struct)
    qpos = bridge.qpos
    assert isinstance(qpos, TorchArray) and bridge.nworld == 2
    assert isinstance(bridge.contact, WarpBridge) and isinstance(bridge.contact.dist, TorchArray)
    before = struct.qpos
    bridge.qpos = torch.ones(2, 3)
    assert struct.qpos is before and (struct.qpos.numpy() == 1.0).all()
    bridge.qpos = 3.0  # broadcast
    assert (struct.qpos.numpy() == 3.0).all()
    bridge.pnt = TorchArray(wp.array(np.full((2, 3), 0.5, dtype=np.float32), device="cpu"))
    assert (struct.pnt.numpy() == 0.5).all()
    bridge.contact.dist[1] = 0.25
    assert struct.contact.dist.numpy()[1] == 0.25
    bridge.nworld = 3
    assert struct.nworld == 3
    with pytest.raises(AttributeError):
        _ = bridge.qvel
    with pytest.raises(AttributeError):
        bridge.qvel = torch.zeros(2)


@pytest.mark.slow
@pytest.mark.warp
def test_warp_bridge_over_mujoco_warp_data_changes_the_simulation():
    model = mujoco.MjModel.from_xml_string(
        "<mujoco><worldbody><body><freejoint/><geom size='0.1'/></body></worldbody></mujoco>"
    )
    sim = Simulation(2, SimulationCfg(backend="warp", mujoco=MujocoCfg(timestep=0.01)), model)
    _, d = sim.warp_model_data
    data = WarpBridge(d)
    assert isinstance(data.qpos, TorchArray) and data.qpos.shape == (2, 7)
    data.qpos[1, 2] = 3.0
    assert sim.data.qpos[1, 2].item() == 3.0
    data.qvel = torch.zeros(2, 6)
    sim.step(1)
    assert sim.data.qvel[:, 2].max().item() < 0  # falling

"""Batched MuJoCo: `num_envs` worlds of one model, C MuJoCo on CPU or MuJoCo Warp on GPU."""

from mjlab.sim.sim_cfg import MujocoCfg, SimulationCfg
from mjlab.sim.simulation import STATE_FIELDS, SimData, Simulation
from mjlab.sim.warp_bridge import TorchArray, WarpBridge

__all__ = [
    "STATE_FIELDS",
    "MujocoCfg",
    "SimData",
    "Simulation",
    "SimulationCfg",
    "TorchArray",
    "WarpBridge",
]

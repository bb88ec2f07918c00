"""Batched MuJoCo: `num_envs` worlds of one model, C MuJoCo on CPU or MuJoCo Warp on GPU."""

from mjlab.sim.sim_cfg import MujocoCfg, SimulationCfg
from mjlab.sim.simulation import STATE_FIELDS, SimData, Simulation

__all__ = ["STATE_FIELDS", "MujocoCfg", "SimData", "Simulation", "SimulationCfg"]

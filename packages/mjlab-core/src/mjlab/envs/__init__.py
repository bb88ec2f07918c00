"""Manager-based RL environments and the ready MDP term library (`mjlab.envs.mdp`)."""

from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv, VecEnvObs, VecEnvStepReturn
from mjlab.envs.manager_based_rl_env_cfg import ManagerBasedRlEnvCfg, ViewerCfg

__all__ = [
    "ManagerBasedRlEnv",
    "ManagerBasedRlEnvCfg",
    "VecEnvObs",
    "VecEnvStepReturn",
    "ViewerCfg",
]

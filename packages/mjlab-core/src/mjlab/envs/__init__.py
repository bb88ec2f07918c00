"""Manager-based RL environments and the ready MDP term library (`mjlab.envs.mdp`)."""

from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv
from mjlab.envs.manager_based_rl_env_cfg import ManagerBasedRlEnvCfg

__all__ = ["ManagerBasedRlEnv", "ManagerBasedRlEnvCfg"]

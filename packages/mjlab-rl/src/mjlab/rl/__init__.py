"""rsl-rl-lib integration for mjlab: vec-env wrapper, runner, configs, train/play/list-envs."""

from mjlab.rl.config import (
    RslRlBaseRunnerCfg,
    RslRlModelCfg,
    RslRlOnPolicyRunnerCfg,
    RslRlPpoAlgorithmCfg,
    to_rsl_rl_train_cfg,
)
from mjlab.rl.runner import MjlabOnPolicyRunner, migrate_checkpoint
from mjlab.rl.vecenv_wrapper import RslRlVecEnvWrapper

__all__ = [
    "MjlabOnPolicyRunner",
    "RslRlBaseRunnerCfg",
    "RslRlModelCfg",
    "RslRlOnPolicyRunnerCfg",
    "RslRlPpoAlgorithmCfg",
    "RslRlVecEnvWrapper",
    "migrate_checkpoint",
    "to_rsl_rl_train_cfg",
]

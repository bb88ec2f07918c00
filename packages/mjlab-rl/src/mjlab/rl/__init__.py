"""rsl-rl-lib integration for mjlab: vec-env wrapper, runner, configs, train/play/list-envs.

The names below are loaded on first use (PEP 562), so that `import mjlab.rl.scripts.play` does
not import mujoco before a command has chosen MuJoCo's OpenGL backend.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "RslRlBaseRunnerCfg": "mjlab.rl.config",
    "RslRlModelCfg": "mjlab.rl.config",
    "RslRlOnPolicyRunnerCfg": "mjlab.rl.config",
    "RslRlPpoAlgorithmCfg": "mjlab.rl.config",
    "RslRlSymmetryCfg": "mjlab.rl.config",
    "to_rsl_rl_train_cfg": "mjlab.rl.config",
    "MjlabOnPolicyRunner": "mjlab.rl.runner",
    "migrate_checkpoint": "mjlab.rl.runner",
    "RslRlVecEnvWrapper": "mjlab.rl.vecenv_wrapper",
    "Learner": "mjlab.rl.run",
    "PolicyExport": "mjlab.rl.run",
    "RslRlPpoLearner": "mjlab.rl.ppo_learner",
    "TrainingRun": "mjlab.rl.run",
    "UserError": "mjlab.rl.errors",
}

__all__ = [
    "Learner",
    "MjlabOnPolicyRunner",
    "PolicyExport",
    "RslRlBaseRunnerCfg",
    "RslRlModelCfg",
    "RslRlOnPolicyRunnerCfg",
    "RslRlPpoAlgorithmCfg",
    "RslRlPpoLearner",
    "RslRlSymmetryCfg",
    "RslRlVecEnvWrapper",
    "TrainingRun",
    "UserError",
    "migrate_checkpoint",
    "to_rsl_rl_train_cfg",
]

if TYPE_CHECKING:
    from mjlab.rl.config import (
        RslRlBaseRunnerCfg,
        RslRlModelCfg,
        RslRlOnPolicyRunnerCfg,
        RslRlPpoAlgorithmCfg,
        RslRlSymmetryCfg,
        to_rsl_rl_train_cfg,
    )
    from mjlab.rl.errors import UserError
    from mjlab.rl.ppo_learner import RslRlPpoLearner
    from mjlab.rl.run import Learner, PolicyExport, TrainingRun
    from mjlab.rl.runner import MjlabOnPolicyRunner, migrate_checkpoint
    from mjlab.rl.vecenv_wrapper import RslRlVecEnvWrapper


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'mjlab.rl' has no attribute '{name}'")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})

"""Metric terms (`MetricsTermCfg`): `(env, **params) -> (num_envs,)`, logged per episode."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv


def mean_action_acc(env: ManagerBasedRlEnv) -> torch.Tensor:
    """Mean over action dimensions of ``|a_t - 2 a_{t-1} + a_{t-2}|``, the action's discrete
    second difference (mjlab 1.6's smoothness metric; lower is smoother). Actions before a
    reset count as 0, so the first two steps of an episode read high.

    Returns: (num_envs,) float32, action units per step^2.
    """
    am = env.action_manager
    return (am.action - 2.0 * am.prev_action + am.prev_prev_action).abs().mean(dim=1)

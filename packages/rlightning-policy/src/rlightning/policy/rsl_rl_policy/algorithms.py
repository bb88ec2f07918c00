"""The rsl-rl algorithm interface `RSLRLPolicy` drives (`RSLRLPolicy.algo: algorithms.Agent`).

rsl-rl-lib 5.x has no common base class for its algorithms, so `Agent` states, as a structural
type, what the policy uses of one: the models, the rollout storage, the return parameters and
the update. `rsl_rl.algorithms.PPO` and its subclasses satisfy it (the policy accepts those).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import torch


@runtime_checkable
class Agent(Protocol):
    """An rsl-rl on-policy algorithm as `RSLRLPolicy` uses it."""

    actor: torch.nn.Module
    """The policy model (observations -> action distribution)."""
    critic: torch.nn.Module
    """The value model."""
    storage: Any
    """`rsl_rl.storage.RolloutStorage` the update reads."""
    optimizer: torch.optim.Optimizer
    learning_rate: float
    gamma: float
    """Discount factor."""
    lam: float
    """GAE lambda."""
    normalize_advantage_per_mini_batch: bool

    def update(self) -> dict[str, float]:
        """One update over `storage`; returns the losses by name."""
        ...

    def train_mode(self) -> None: ...

    def eval_mode(self) -> None: ...

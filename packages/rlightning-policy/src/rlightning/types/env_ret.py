"""The environment-to-policy message."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import torch

from rlightning.types._tree import move_tree


@dataclass
class EnvRet:
    """One batch of environment output, addressed to a policy.

    After a reset the ``last_*`` fields are ``None`` (no action has been taken yet). After a step,
    they describe the step that just happened: ``last_reward[i]`` is the reward earned by the action
    the policy returned for env ``i`` in its previous response, and ``observation`` is the state the
    environment is in *now* (already the reset state for envs that just finished an episode).

    Shapes below use ``N`` for the number of vectorized sub-environments behind ``env_id``.
    """

    env_id: str
    """Name of the (vectorized) environment this batch comes from, e.g. ``"env_0"``."""

    observation: Any
    """Current observation: a ``TensorDict`` of observation groups with batch size ``(N,)``
    (e.g. ``"actor"``: ``(N, D_a)``, ``"critic"``: ``(N, D_c)``), or a plain ``(N, D)`` tensor."""

    last_reward: torch.Tensor | None = None
    """``(N,)`` float reward of the previous action; ``None`` right after a reset."""

    last_terminated: torch.Tensor | None = None
    """``(N,)`` bool, True where the previous action ended the episode in a terminal state."""

    last_truncated: torch.Tensor | None = None
    """``(N,)`` bool, True where the episode was cut by a time limit (not a terminal state)."""

    info: dict[str, Any] = field(default_factory=dict)
    """Extra environment output (e.g. rsl_rl's ``extras["log"]``); tensors inside are moved too."""

    def to(self, device: torch.device | str) -> EnvRet:
        """Return a copy whose tensors live on ``device`` (this object is not changed)."""
        return EnvRet(**{f.name: move_tree(getattr(self, f.name), device) for f in fields(self)})

    def cpu(self) -> EnvRet:
        """Return a copy whose tensors live on the CPU."""
        return self.to("cpu")

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a shallow ``{name: value}`` dict (tensors are not copied)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def last_done(self) -> torch.Tensor | None:
        """``(N,)`` bool, ``last_terminated | last_truncated``; ``None`` right after a reset."""
        if self.last_terminated is None or self.last_truncated is None:
            return None
        return self.last_terminated.bool() | self.last_truncated.bool()

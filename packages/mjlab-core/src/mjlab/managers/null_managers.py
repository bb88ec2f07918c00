"""Managers with no terms (mjlab 1.6's `Null*Manager`): stand-ins with the interface of a
manager for an env, or a tool, that has no commands, curriculum, metrics or recorders. Building a manager
from an empty config behaves the same; these need no env."""

from __future__ import annotations

from typing import Any

import torch


class _NullManager:
    kind = "term"

    @property
    def active_terms(self) -> list[str]:
        """No terms: []."""
        return []

    def reset(self, env_ids: Any = None) -> dict[str, float | torch.Tensor]:
        """Nothing to reset or log: {}."""
        return {}

    def __str__(self) -> str:
        return f"<{type(self).__name__}: no {self.kind}s>"


class NullCommandManager(_NullManager):
    """No commands: `compute` does nothing and `get_command` raises KeyError."""

    kind = "command"

    def compute(self, dt: float) -> None:
        """Nothing to resample."""

    def get_command(self, name: str) -> torch.Tensor:
        """Raises:
        KeyError: always (there are no commands)."""
        raise KeyError(f"No command '{name}': this env has no commands.")

    def get_term(self, name: str) -> Any:
        """Raises:
        KeyError: always."""
        raise KeyError(f"No command term '{name}': this env has no commands.")


class NullCurriculumManager(_NullManager):
    """No curriculum: `compute` does nothing."""

    kind = "curriculum term"

    def compute(self, env_ids: Any = None) -> None:
        """Nothing to adapt."""

    def after_set_state(self) -> None:
        """Nothing to write back."""


class NullMetricsManager(_NullManager):
    """No metrics: `compute` does nothing."""

    kind = "metric"

    def compute(self) -> None:
        """Nothing to accumulate."""


class NullRecorderManager(_NullManager):
    """No recorders (the env's `recorder_manager` when `cfg.recorders` is empty): every
    `record_*` hook and `close` return at once, without touching a tensor, so an env without
    recorders does no extra work in `step` or `reset`."""

    kind = "recorder term"
    cfg = None
    """No config (as mjlab's)."""

    def __repr__(self) -> str:
        return "NullRecorderManager()"

    def __contains__(self, name: object) -> bool:
        """False: no terms."""
        return False

    def get_term(self, name: str) -> Any:
        """Raises:
        KeyError: always (there are no recorder terms)."""
        raise KeyError(f"No recorder term '{name}': this env has no recorders.")

    def record_pre_reset(self, env_ids: torch.Tensor) -> None:
        """Nothing to record."""

    def record_post_reset(self, env_ids: torch.Tensor) -> None:
        """Nothing to record."""

    def record_post_step(self) -> None:
        """Nothing to record."""

    def close(self) -> None:
        """Nothing to close."""

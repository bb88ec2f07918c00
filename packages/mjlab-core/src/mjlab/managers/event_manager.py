"""Event manager: startup, reset and interval events (randomization, pushes)."""

from __future__ import annotations

import torch

from mjlab.managers.manager_base import ManagerBase
from mjlab.managers.manager_term_config import EventTermCfg
from mjlab.utils.math import sample_uniform


class EventManager(ManagerBase):
    """Calls `func(env, env_ids, **params)` per mode. Interval events keep per-env timers
    (or one global timer) drawn uniformly from `interval_range_s`."""

    kind = "Event term"

    def __init__(self, cfg: dict[str, EventTermCfg | None], env):
        super().__init__(cfg, env)
        self.mode_terms: dict[str, dict[str, EventTermCfg]] = {
            "startup": {},
            "reset": {},
            "interval": {},
        }
        self._time_left: dict[str, torch.Tensor] = {}
        for name, term in self.cfg.items():
            self.prepare_term(name, term)
            self.mode_terms[term.mode][name] = term
            if term.mode == "interval":
                size = 1 if term.is_global_time else env.num_envs
                self._time_left[name] = self._sample_interval(term, size)

    @property
    def active_terms(self) -> dict[str, list[str]]:
        return {m: list(t) for m, t in self.mode_terms.items()}

    def _sample_interval(self, term: EventTermCfg, size: int) -> torch.Tensor:
        lo, hi = term.interval_range_s
        return sample_uniform(lo, hi, size, self.env.device, self.env.rng)

    def apply(
        self, mode: str, env_ids: torch.Tensor | None = None, dt: float | None = None
    ) -> None:
        """Run the events of `mode`: startup/reset for `env_ids` (None: all), interval by `dt`."""
        all_ids = torch.arange(self.env.num_envs, device=self.env.device)
        for name, term in self.mode_terms[mode].items():
            if mode != "interval":
                term.func(self.env, all_ids if env_ids is None else env_ids, **term.params)
                continue
            left = self._time_left[name]
            left -= dt
            due = left <= 0
            if term.is_global_time:
                if bool(due.item()):
                    left[:] = self._sample_interval(term, 1)
                    term.func(self.env, all_ids, **term.params)
                continue
            ids = due.nonzero().flatten()
            if len(ids):
                left[ids] = self._sample_interval(term, len(ids))
                term.func(self.env, ids, **term.params)

    def reset(self, env_ids: torch.Tensor) -> dict[str, float]:
        for term in self.cfg.values():
            self.reset_term(term, env_ids)
        return {}

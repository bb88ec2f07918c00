"""Metrics manager: per-step diagnostics averaged over each episode, logged as `Metrics/`."""

from __future__ import annotations

import torch

from mjlab.managers.manager_base import ManagerBase
from mjlab.managers.manager_term_config import MetricsTermCfg
from mjlab.utils.env_ids import resolve_env_ids


class MetricsManager(ManagerBase):
    kind = "Metrics term"

    def __init__(self, cfg: dict[str, MetricsTermCfg | None], env):
        super().__init__(cfg, env)
        n = env.num_envs
        for name, term in self.cfg.items():
            self.prepare_term(name, term)
            value = term.func(env, **term.params)
            self.check_output(name, value, (n,), "float", "Reduce to one value per env.")
        self._sums = {k: torch.zeros(n, device=env.device) for k in self.cfg}
        self._steps = torch.zeros(n, device=env.device)

    @property
    def active_terms(self) -> list[str]:
        return list(self.cfg)

    def compute(self) -> None:
        self._steps += 1
        for name, term in self.cfg.items():
            self._sums[name] += term.func(self.env, **term.params)

    def reset(self, env_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        env_ids = resolve_env_ids(env_ids, self.env.num_envs, self.env.device)
        # Tensors, not numbers: no host sync inside step (loggers average them).
        log = {}
        steps = self._steps[env_ids].clamp(min=1)
        for name in self.cfg:
            log[f"Metrics/{name}"] = (self._sums[name][env_ids] / steps).mean()
            self._sums[name][env_ids] = 0.0
        self._steps[env_ids] = 0.0
        return log

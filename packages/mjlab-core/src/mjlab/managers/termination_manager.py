"""Termination manager: terminated (true ends) and truncated (`time_out` terms)."""

from __future__ import annotations

import torch

from mjlab.managers.manager_base import ManagerBase
from mjlab.managers.manager_term_config import TerminationTermCfg


class TerminationManager(ManagerBase):
    """`compute()` -> (num_envs,) bool "done"; `terminated` and `truncated` split it by the
    terms' `time_out` flag. Counts per term are logged on reset as `Episode_Termination/<term>`."""

    kind = "Termination term"

    def __init__(self, cfg: dict[str, TerminationTermCfg | None], env):
        super().__init__(cfg, env)
        n = env.num_envs
        for name, term in self.cfg.items():
            self.prepare_term(name, term)
            value = term.func(env, **term.params)
            self.check_output(
                name, value, (n,), "bool", "Return a (num_envs,) bool tensor, e.g. `x > limit`."
            )
        self.terms = self.cfg
        self._term_dones = {
            k: torch.zeros(n, dtype=torch.bool, device=env.device) for k in self.terms
        }
        self.terminated = torch.zeros(n, dtype=torch.bool, device=env.device)
        self.truncated = torch.zeros_like(self.terminated)

    @property
    def active_terms(self) -> list[str]:
        return list(self.terms)

    @property
    def dones(self) -> torch.Tensor:
        return self.terminated | self.truncated

    def compute(self) -> torch.Tensor:
        self.terminated.zero_()
        self.truncated.zero_()
        for name, term in self.terms.items():
            value = term.func(self.env, **term.params)
            self._term_dones[name] = value
            if term.time_out:
                self.truncated |= value
            else:
                self.terminated |= value
        # An episode that both ends and times out counts as ended (no bootstrap).
        self.truncated &= ~self.terminated
        return self.dones

    def get_term(self, name: str) -> torch.Tensor:
        return self._term_dones[name]

    def reset(self, env_ids: torch.Tensor) -> dict[str, float]:
        log = {}
        for name, term in self.terms.items():
            log[f"Episode_Termination/{name}"] = int(self._term_dones[name][env_ids].sum().item())
            self._term_dones[name][env_ids] = False
            self.reset_term(term, env_ids)
        return log

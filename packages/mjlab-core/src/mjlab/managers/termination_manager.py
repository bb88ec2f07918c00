"""Termination manager: terminated (true ends) and truncated (`time_out` terms)."""

from __future__ import annotations

import torch

from mjlab.managers.manager_base import ManagerBase
from mjlab.managers.manager_term_config import TerminationTermCfg
from mjlab.utils.env_ids import resolve_env_ids


class TerminationManager(ManagerBase):
    """`compute()` -> (num_envs,) bool "done"; `terminated` and `truncated` split it by the
    terms' `time_out` flag. Counts per term are logged on reset as `Episode_Termination/<term>`."""

    kind = "Termination term"

    def __init__(self, cfg: dict[str, TerminationTermCfg | None], env):
        super().__init__(cfg, env)
        n = env.num_envs
        for name, term in self.cfg.items():
            self.prepare_term(name, term)
            value = self.probe(name, term)
            self.check_output(
                name, value, (n,), "bool", "Return a (num_envs,) bool tensor, e.g. `x > limit`."
            )
        self.terms = self.cfg
        self.refresh_time_out()
        self._term_dones = torch.zeros(n, len(self.terms), dtype=torch.bool, device=env.device)
        """(num_envs, terms) each term's value of the last `compute`."""
        self._index = {name: i for i, name in enumerate(self.terms)}
        self.terminated = torch.zeros(n, dtype=torch.bool, device=env.device)
        self.truncated = torch.zeros_like(self.terminated)

    def refresh_time_out(self) -> None:
        """Read the terms' `time_out` flags again (after a curriculum changed one)."""
        self._is_time_out = torch.tensor(
            [bool(t.time_out) for t in self.terms.values()],
            dtype=torch.bool,
            device=self.env.device,
        )
        self._ends_episode = ~self._is_time_out

    @property
    def active_terms(self) -> list[str]:
        return list(self.terms)

    @property
    def dones(self) -> torch.Tensor:
        return self.terminated | self.truncated

    def compute(self) -> torch.Tensor:
        if not self.terms:
            self.terminated.zero_()
            self.truncated.zero_()
            return self.dones
        self._term_dones = torch.stack(
            [term.func(self.env, **term.params) for term in self.terms.values()], dim=1
        )
        self.terminated = (self._term_dones & self._ends_episode).any(dim=1)
        # An episode that both ends and times out counts as ended (no bootstrap).
        self.truncated = (self._term_dones & self._is_time_out).any(dim=1) & ~self.terminated
        return self.dones

    def get_term(self, name: str) -> torch.Tensor:
        """(num_envs,) bool: the term's value at the last `compute`."""
        return self._term_dones[:, self._index[name]]

    def reset(self, env_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        env_ids = resolve_env_ids(env_ids, self.env.num_envs, self.env.device)
        # Tensors, not numbers: no host sync inside step (loggers average them).
        counts = self._term_dones[env_ids].sum(dim=0).float()
        log = {f"Episode_Termination/{name}": counts[i] for i, name in enumerate(self.terms)}
        self._term_dones[env_ids] = False
        for term in self.terms.values():
            self.reset_term(term, env_ids)
        return log

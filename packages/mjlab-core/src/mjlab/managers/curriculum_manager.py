"""Curriculum manager: terms called on reset that adapt the task (terrain level, ranges)."""

from __future__ import annotations

import torch

from mjlab.managers.manager_base import ManagerBase
from mjlab.managers.manager_term_config import CurriculumTermCfg
from mjlab.utils.env_ids import resolve_env_ids


class CurriculumManager(ManagerBase):
    """`compute(env_ids)` calls each term as `func(env, env_ids, **params)` and keeps its
    returned value; `reset` logs them as `Curriculum/<term>` (dict values as
    `Curriculum/<term>/<key>`)."""

    kind = "Curriculum term"
    leading_args = ("env", "env_ids")

    def __init__(self, cfg: dict[str, CurriculumTermCfg | None], env):
        super().__init__(cfg, env)
        for name, term in self.cfg.items():
            self.prepare_term(name, term)
        self._state: dict[str, object] = {}

    @property
    def active_terms(self) -> list[str]:
        return list(self.cfg)

    def compute(self, env_ids: torch.Tensor) -> None:
        for name, term in self.cfg.items():
            self._state[name] = term.func(self.env, env_ids, **term.params)

    def after_set_state(self) -> None:
        """Let class terms with an `after_set_state()` (e.g. `mdp.reward_curriculum`) write
        what they changed in other managers' terms for the restored state."""
        for term in self.cfg.values():
            hook = getattr(term.func, "after_set_state", None)
            if callable(hook):
                hook()

    def reset(self, env_ids: torch.Tensor) -> dict[str, float | torch.Tensor]:
        env_ids = resolve_env_ids(env_ids, self.env.num_envs, self.env.device)
        # Tensor values stay tensors: no host sync inside step (loggers average them).
        log: dict[str, float | torch.Tensor] = {}
        for name, value in self._state.items():
            items = value.items() if isinstance(value, dict) else [(None, value)]
            for key, v in items:
                if v is None:
                    continue
                v = v.float().mean() if isinstance(v, torch.Tensor) else float(v)
                log[f"Curriculum/{name}" + (f"/{key}" if key is not None else "")] = v
        return log

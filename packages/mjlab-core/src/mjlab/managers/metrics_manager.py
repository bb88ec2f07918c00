"""Metrics manager: per-step diagnostics reduced over each episode, logged as `Metrics/`."""

from __future__ import annotations

import torch

from mjlab.managers.manager_base import ManagerBase
from mjlab.managers.manager_term_config import MetricsTermCfg
from mjlab.utils.env_ids import resolve_env_ids


class MetricsManager(ManagerBase):
    """Evaluates the metric terms once per env step (or after every physics substep, for a
    term with `per_substep`) and, when envs reset, logs each term's episode value
    (`MetricsTermCfg.reduce`) averaged over those envs as `Metrics/<term>`.

    Every buffer is a (num_envs,) tensor updated by tensor operations: no host sync in `step`.
    Per-substep terms run from a hook in `env.sim.pre_substep_hooks`, which makes the physics
    step substep by substep; the hook skips the call before the first substep (the state the
    previous env step ended in) and `compute` adds the state after the last substep, so a step
    averages the states after each of its substeps.
    """

    kind = "Metrics term"

    _snapshot_exclude = ("_substep_calls",)
    """Always 0 between env steps (`compute` clears it)."""

    def __init__(self, cfg: dict[str, MetricsTermCfg | None], env):
        super().__init__(cfg, env)
        n = env.num_envs
        for name, term in self.cfg.items():
            self.prepare_term(name, term)
            value = self.probe(name, term)
            self.check_output(name, value, (n,), "float", "Reduce to one value per env.")
        self._sums = {k: torch.zeros(n, device=env.device) for k in self.cfg}
        self._steps = torch.zeros(n, device=env.device)
        self._max = {
            k: torch.full((n,), -torch.inf, device=env.device)
            for k, t in self.cfg.items()
            if t.reduce == "max"
        }
        """Per-env largest step value of the episode, of the "max" terms."""
        self._last = {
            k: torch.zeros(n, device=env.device) for k, t in self.cfg.items() if t.reduce == "last"
        }
        """Per-env value of the episode's latest step, of the "last" terms."""
        self._substep_terms = [k for k, t in self.cfg.items() if t.per_substep]
        self._substep_sums = {k: torch.zeros(n, device=env.device) for k in self._substep_terms}
        """Per-env sum of the substep values of the current env step."""
        self._substep_calls = 0
        """Hook calls (physics substeps begun) in the current env step."""
        if self._substep_terms:
            env.sim.pre_substep_hooks.append(self._before_substep)

    @property
    def active_terms(self) -> list[str]:
        return list(self.cfg)

    def _before_substep(self) -> None:
        """Run by the simulation before every physics substep: evaluates the per-substep terms
        on the state the substep before left (none before the first one)."""
        if self._substep_calls > 0:
            # The state changed without the simulation's counter moving (it counts whole
            # `step` calls): bump it so values cached for the old state are not reused.
            self.env.sim.state_count += 1
            self._accumulate_substep()
        self._substep_calls += 1

    def _accumulate_substep(self) -> None:
        for name in self._substep_terms:
            term = self.cfg[name]
            self._substep_sums[name] += term.func(self.env, **term.params)

    def compute(self) -> None:
        """Fold this env step's values into the episode buffers (called once per env step,
        after the physics)."""
        self._steps += 1
        if self._substep_terms:
            self._accumulate_substep()  # the state after the last substep
            evaluations = max(self._substep_calls, 1)
            self._substep_calls = 0
        for name, term in self.cfg.items():
            if term.per_substep:
                value = self._substep_sums[name] / evaluations
                self._substep_sums[name].zero_()
            else:
                value = term.func(self.env, **term.params)
            self._sums[name] += value
            if term.reduce == "max":
                torch.maximum(self._max[name], value, out=self._max[name])
            elif term.reduce == "last":
                self._last[name].copy_(value)

    def reset(self, env_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        env_ids = resolve_env_ids(env_ids, self.env.num_envs, self.env.device)
        # Tensors, not numbers: no host sync inside step (loggers average them).
        log = {}
        steps = self._steps[env_ids].clamp(min=1)
        stepped = self._steps[env_ids] > 0
        for name, term in self.cfg.items():
            if term.reduce == "mean":
                value = self._sums[name][env_ids] / steps
            elif term.reduce == "sum":
                value = self._sums[name][env_ids]
            elif term.reduce == "max":
                value = torch.where(stepped, self._max[name][env_ids], 0.0)
                self._max[name][env_ids] = -torch.inf
            else:  # "last"
                value = torch.where(stepped, self._last[name][env_ids], 0.0)
                self._last[name][env_ids] = 0.0
            log[f"Metrics/{name}"] = value.mean()
            self._sums[name][env_ids] = 0.0
        for buf in self._substep_sums.values():
            buf[env_ids] = 0.0
        self._steps[env_ids] = 0.0
        for term in self.cfg.values():
            self.reset_term(term, env_ids)
        return log

"""Event manager: startup, reset, interval and step events (randomization, pushes)."""

from __future__ import annotations

import torch

from mjlab.managers.manager_base import ManagerBase
from mjlab.managers.manager_term_config import EventTermCfg
from mjlab.utils.env_ids import mark_checked, resolve_env_ids
from mjlab.utils.math import sample_duration_steps


class EventManager(ManagerBase):
    """Calls `func(env, env_ids, **params)` per mode.

    Interval events keep a timer per env (or one global timer) counted in whole env steps: each
    wait is a whole number of steps drawn uniformly within `interval_range_s`
    (`mjlab.utils.math.sample_duration_steps`). A per-env timer is redrawn when its
    env resets and does not count the step in which the reset happened, so an event never fires
    sooner than `interval_range_s[0]` into an episode, whether the env was reset by `step` or by
    `reset()` (Isaac Lab redraws them likewise).
    """

    kind = "Event term"
    leading_args = ("env", "env_ids")

    def __init__(self, cfg: dict[str, EventTermCfg | None], env):
        super().__init__(cfg, env)
        self.mode_terms: dict[str, dict[str, EventTermCfg]] = {
            "startup": {},
            "reset": {},
            "interval": {},
            "step": {},
        }
        self._steps_left: dict[str, torch.Tensor] = {}
        for name, term in self.cfg.items():
            self.prepare_term(name, term)
            self.mode_terms[term.mode][name] = term
            if term.mode == "interval":
                size = 1 if term.is_global_time else env.num_envs
                self._steps_left[name] = self._sample_interval(term, size)
        self._last_applied: dict[str, torch.Tensor] = {
            name: torch.full((env.num_envs,), -1, dtype=torch.long, device=env.device)
            for name, term in self.mode_terms["reset"].items()
            if term.min_step_count_between_reset > 0
        }
        """Per reset term with `min_step_count_between_reset`: (num_envs,) the env step at
        which it last applied to each env (-1: never)."""

    @property
    def active_terms(self) -> dict[str, list[str]]:
        return {m: list(t) for m, t in self.mode_terms.items()}

    def steps_left(self, name: str) -> torch.Tensor:
        """(num_envs,) int64 env steps until the interval event `name` fires next ((1,) for a
        global timer). A read-only copy."""
        return self._steps_left[name].clone()

    def _sample_interval(self, term: EventTermCfg, size: int) -> torch.Tensor:
        return sample_duration_steps(
            term.interval_range_s, self.env.step_dt, size, self.env.device, self.env.rng
        )

    def apply(
        self, mode: str, env_ids: torch.Tensor | None = None, dt: float | None = None
    ) -> None:
        """Run the events of `mode`: startup/reset for `env_ids` (None: all); step: every env
        (all ids); interval: advance every timer by one env step and call the events that are
        due (`dt` is accepted for Isaac Lab's signature; the timers count steps of
        `env.step_dt`)."""
        terms = self.mode_terms[mode]
        if not terms:
            return
        # A new index tensor per call (a term may edit its env_ids), made only when needed:
        # the per-env interval timers of every step never use it.
        # Ids made here are valid by construction: marked, so the calls below them (e.g.
        # `sim.set_const`) skip `resolve_env_ids`' range check, a host-device sync on CUDA.
        all_ids = lambda: mark_checked(torch.arange(self.env.num_envs, device=self.env.device))  # noqa: E731
        name = ""
        try:
            for name, term in terms.items():
                if mode != "interval":
                    ids = all_ids() if env_ids is None else env_ids
                    if name in self._last_applied:  # reset mode, spaced out
                        ids = self._due(
                            name, term, resolve_env_ids(ids, self.env.num_envs, self.env.device)
                        )
                        if not len(ids):
                            continue
                    term.func(self.env, ids, **term.params)
                    continue
                left = self._steps_left[name]
                if term.is_global_time:
                    left -= 1
                    if bool((left <= 0).item()):
                        left[:] = self._sample_interval(term, 1)
                        term.func(self.env, all_ids(), **term.params)
                    continue
                # An env reset in this step (episode length 0) starts counting with the next step.
                left -= self.env.episode_length_buf.clamp(max=1)  # 1, or 0 just reset
                ids = mark_checked((left <= 0).nonzero().flatten())
                if len(ids):
                    left[ids] = self._sample_interval(term, len(ids))
                    term.func(self.env, ids, **term.params)
        except ValueError as err:  # a term's own check, e.g. a dr axis name: say which term
            if str(err).startswith(f"{self.kind} '{name}'"):
                raise
            message = f"{self.kind} '{name}' ({mode}): {err}"
            try:  # keep the error's class (e.g. ConfigError) for callers that catch it
                named = type(err)(message)
            except Exception:
                named = ValueError(message)
            raise named from err

    def _due(self, name: str, term: EventTermCfg, ids: torch.Tensor) -> torch.Tensor:
        """The envs of `ids` the reset term `name` applies to now (never applied, or at least
        `min_step_count_between_reset` env steps ago), marked as applied."""
        last = self._last_applied[name]
        step = self.env.common_step_counter
        since = step - last[ids]
        due = ids[(last[ids] < 0) | (since >= term.min_step_count_between_reset)]
        last[due] = step
        return mark_checked(due)

    def reset(self, env_ids: torch.Tensor) -> dict[str, float | torch.Tensor]:
        env_ids = resolve_env_ids(env_ids, self.env.num_envs, self.env.device)
        for name, term in self.mode_terms["interval"].items():
            if not term.is_global_time and len(env_ids):
                self._steps_left[name][env_ids] = self._sample_interval(term, len(env_ids))
        for term in self.cfg.values():
            self.reset_term(term, env_ids)
        return {}

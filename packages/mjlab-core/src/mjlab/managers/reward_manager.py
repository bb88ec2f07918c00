"""Reward manager: weighted sum of terms, scaled by step_dt, with episode sums."""

from __future__ import annotations

import warnings

import torch

from mjlab.managers.manager_base import ManagerBase
from mjlab.managers.manager_term_config import RewardTermCfg
from mjlab.utils.env_ids import resolve_env_ids
from mjlab.utils.math import maybe_nonfinite, nonfinite_mask


class RewardManager(ManagerBase):
    """reward = sum_i weight_i * term_i * step_dt (`dt` = 1 with the env config's
    `scale_rewards_by_dt` False). Episode sums are logged on reset as
    `Episode_Reward/<term>`: the episode's sum divided by the max episode length in seconds
    (Isaac Lab's convention, so values are comparable across episode lengths).

    A term value that is NaN or Inf counts as 0 and is counted: the counts since the last reset
    are logged as `Metrics/nonfinite_reward/<term>` (only when not zero) and the first one of
    each term is warned about, naming it. With `cfg.nonfinite_rewards = "raise"` the step raises
    instead (one host sync per step: a debugging setting).

    A term whose weight is 0 when the env is built is off: it is neither prepared nor called
    (it need not be computable for this task, e.g. its sensor may be missing), and its
    `Episode_Reward/<term>` is logged as 0 so that curves keep their columns. Its weight cannot
    be raised later; give it a non-zero weight in the config to use it.
    """

    kind = "Reward term"
    # Derived from the weights and dt; a setting of this process, not env state.
    _snapshot_exclude = ("_weights_dt", "host_checks", "_zero")

    def __init__(self, cfg: dict[str, RewardTermCfg | None], env):
        super().__init__(cfg, env)
        n = env.num_envs
        for name, term in self.cfg.items():
            if term.weight is None:
                raise ValueError(
                    f"Reward term '{name}' has no weight: set RewardTermCfg(weight=...)."
                )
            if term.weight == 0.0:
                continue  # off: never prepared nor called (see the class docstring)
            self.prepare_term(name, term)
            value = self.probe(name, term)
            self.check_output(
                name, value, (n,), "float", "Reduce over the last dimension, e.g. .sum(dim=1)."
            )
        self.terms = {k: v for k, v in self.cfg.items() if v.weight != 0.0}
        active = list(self.terms)
        self._log_order = tuple(
            (name, active.index(name) if name in self.terms else None) for name in self.cfg
        )
        """(term name, its column in the active terms, or None for a zero-weight term), in
        config order: the order of the `Episode_Reward/*` log keys."""
        self._zero = torch.zeros((), device=env.device)
        t = len(self.terms)
        self._episode_sums = torch.zeros(n, t, device=env.device)
        """(num_envs, terms) each term's weighted reward summed over the episode so far."""
        self._step_reward = torch.zeros(n, t, device=env.device)
        self._reward_buf = torch.zeros(n, device=env.device)
        self._nonfinite = torch.zeros(t, dtype=torch.long, device=env.device)
        self._weights_dt: tuple[tuple[float, ...], torch.Tensor] | None = None
        self._warned: set[str] = set()
        self._raise = getattr(env.cfg, "nonfinite_rewards", "count") == "raise"
        self.host_checks: bool = torch.device(env.device).type == "cpu"
        """Read one count back per step to skip the NaN/Inf masking when there is none (the
        default on the CPU, where no device waits; a GPU env masks without reading back)."""

    @property
    def active_terms(self) -> list[str]:
        return list(self.terms)

    @property
    def step_reward(self) -> torch.Tensor:
        """(num_envs, len(active_terms)) each term's weighted value of the last step, per
        second (weight * term; the reward adds it times step_dt)."""
        return self._step_reward

    def compute(self, dt: float, ignore: torch.Tensor | None = None) -> torch.Tensor:
        """(num_envs,) reward of this step; non-finite term values count as 0 (and are
        counted per term).

        Args:
            dt: the env step, s.
            ignore: (num_envs,) bool, envs whose non-finite values are expected and not
                counted (worlds whose physics diverged this step: their reward is zeroed).

        Raises:
            FloatingPointError: with `nonfinite_rewards="raise"`, a term returned NaN/Inf (the
                term and the envs are named).
        """
        if not self.terms:
            return self._reward_buf
        # All terms as one (num_envs, terms) tensor: the same arithmetic as term by term, in a
        # few tensor operations whatever the number of terms (and no host sync on a GPU).
        values = torch.stack(
            [term.func(self.env, **term.params) for term in self.terms.values()], dim=1
        )
        if values.dtype != torch.float32:  # a no-op `.to` still costs a tensor operation
            values = values.to(torch.float32)
        # On the CPU one read tells whether any value is NaN/Inf (no device to stall): the
        # masking and counting below then run only in the rare step that needs them.
        if self.host_checks and not maybe_nonfinite(values):
            return self._add_terms(values, dt)
        bad = nonfinite_mask(values)
        counted = bad if ignore is None else bad & ~ignore[:, None]
        if self._raise and bool(counted.any()):
            column = int(counted.any(dim=0).nonzero()[0])
            name = list(self.terms)[column]
            envs = counted[:, column].nonzero().flatten().tolist()
            raise FloatingPointError(
                f"Reward term '{name}' returned NaN/Inf for envs {envs[:10]} "
                "(cfg.nonfinite_rewards='raise')."
            )
        self._nonfinite += counted.sum(dim=0)
        return self._add_terms(values.masked_fill_(bad, 0.0), dt)

    def _add_terms(self, values: torch.Tensor, dt: float) -> torch.Tensor:
        """The reward of finite (num_envs, terms) `values`; updates the step and episode sums.

        The arithmetic of adding the terms one by one, rounding included: each value times
        float32(weight * dt), added in term order in float32 (torch's sum and cumsum accumulate
        differently, and a training run is chaotic enough to follow the last bit)."""
        weighted = values.mul_(self._weights_times(dt))
        self._step_reward = weighted / dt
        self._episode_sums += weighted
        columns = weighted.unbind(dim=1)
        reward = columns[0] + columns[1] if len(columns) > 1 else columns[0].clone()
        for column in columns[2:]:
            reward += column
        self._reward_buf = reward
        return self._reward_buf

    def _weights_times(self, dt: float) -> torch.Tensor:
        """(terms,) float32(weight * dt), made again only when `dt` or a weight changes."""
        # Keyed on the weights too: a curriculum may change a term's weight while training.
        key = (dt, *(float(term.weight) for term in self.terms.values()))
        if self._weights_dt is None or self._weights_dt[0] != key:
            values = [w * dt for w in key[1:]]
            self._weights_dt = (key, torch.tensor(values, device=self.env.device))
        return self._weights_dt[1]

    def reset(self, env_ids: torch.Tensor) -> dict[str, float | torch.Tensor]:
        env_ids = resolve_env_ids(env_ids, self.env.num_envs, self.env.device)
        log: dict[str, float | torch.Tensor] = {}
        seconds = self.env.max_episode_length_s
        # The per-term counts are read here (one device-to-host copy in a step with resets):
        # the only value `step` reads back besides the reset indices.
        for name, count in zip(self.terms, self._nonfinite.tolist(), strict=True):
            if count:
                log[f"Metrics/nonfinite_reward/{name}"] = float(count)
                if name not in self._warned:
                    self._warned.add(name)
                    warnings.warn(
                        f"Reward term '{name}' returned NaN/Inf ({count} values so far); they "
                        "count as 0 and are logged as Metrics/nonfinite_reward/" + name + ". "
                        "Set cfg.nonfinite_rewards='raise' to stop at the first one.",
                        RuntimeWarning,
                        stacklevel=2,
                    )
        self._nonfinite.zero_()
        # Tensors, not floats: no host sync inside step (loggers average them).
        means = self._episode_sums[env_ids].mean(dim=0) / seconds
        for name, i in self._log_order:
            log[f"Episode_Reward/{name}"] = self._zero if i is None else means[i]
        self._episode_sums[env_ids] = 0.0
        for term in self.terms.values():
            self.reset_term(term, env_ids)
        return log

"""Observation manager: groups of terms, each with noise, clip, scale, delay and history."""

from __future__ import annotations

import inspect
import math
import warnings

import torch

from mjlab.deploy.metadata import ObservationTermSpec, observation_term_spec, require_concatenated
from mjlab.managers.description import (
    ObservationGroupDescription,
    ObservationTermDescription,
    func_name,
    plain_value,
)
from mjlab.managers.manager_base import ManagerBase
from mjlab.managers.manager_term_config import (
    GaussianNoiseCfg,
    ObservationGroupCfg,
    ObservationTermCfg,
    UniformNoiseCfg,
)
from mjlab.utils.env_ids import resolve_env_ids
from mjlab.utils.math import count_nonfinite, maybe_nonfinite, nonfinite_mask, rand, randn
from mjlab.utils.noise import NoiseModel, NoiseModelCfg


class _TermBuffer:
    """Delay line and history of one term, a (num_envs, slots, *dim) tensor, oldest first.

    Advanced only by `push` (once per env step); `reset(env_ids)` marks envs whose buffers
    are refilled with their next value. Tensor operations only (no host sync).
    """

    def __init__(self, num_envs: int, dim: tuple[int, ...], delay: int, history: int, device):
        self.delay, self.history = delay, history
        slots = delay + max(history, 1)
        self.buf = torch.zeros(num_envs, slots, *dim, device=device)
        self.needs_fill = torch.ones(num_envs, dtype=torch.bool, device=device)
        self._per_env = (num_envs,) + (1,) * (len(dim) + 1)  # a (num_envs,) mask, broadcast

    def push(self, value: torch.Tensor, env_mask: torch.Tensor | None = None) -> None:
        """Append `value` for all envs, or only where `env_mask` (others stay untouched)."""
        value = value.unsqueeze(1)
        shifted = torch.cat((self.buf[:, 1:], value), dim=1)
        fill = self.needs_fill.view(self._per_env)
        shifted = torch.where(fill, value, shifted)
        if env_mask is None:
            self.buf = shifted
            self.needs_fill = torch.zeros_like(self.needs_fill)
        else:
            self.buf = torch.where(env_mask.view(self._per_env), shifted, self.buf)
            self.needs_fill = self.needs_fill & ~env_mask

    def read(self) -> torch.Tensor:
        """(num_envs, history, dim) oldest first, or (num_envs, dim) without history."""
        end = self.buf.shape[1] - self.delay
        if self.history == 0:
            return self.buf[:, end - 1]
        return self.buf[:, end - self.history : end]

    def reset(self, env_ids: torch.Tensor) -> None:
        self.needs_fill[env_ids] = True


def _fixed_delay(term: ObservationTermCfg) -> int:
    """The constant latency of a term, env steps: `delay`, plus the simulated lag when its
    bounds are equal (a constant lag is the same delay line, without random draws)."""
    constant_lag = term.delay_max_lag if term.delay_max_lag == term.delay_min_lag else 0
    return term.delay + constant_lag


def _random_delay(term: ObservationTermCfg) -> bool:
    """Whether a term's simulated lag varies (mjlab's `DelayBuffer` with min < max)."""
    return term.delay_max_lag > term.delay_min_lag


def _buffered(term: ObservationTermCfg) -> bool:
    """Whether a term's values pass through a delay line or a history."""
    return term.delay > 0 or term.delay_max_lag > 0 or term.history_length > 0


class _RandomDelay:
    """A term's simulated sensor latency with a random lag per env (the `delay_*` fields of
    `ObservationTermCfg` with delay_min_lag < delay_max_lag), as mjlab's delay buffer.

    Each step (`push`), in this order: the new value enters the delay line, the lags of the
    envs whose refresh is due are redrawn (unless held), and `read` returns each env's value
    `base + lag` steps old. A line is filled with the first value of an episode, so a lag
    longer than the episode so far reads that first value. Tensor operations on fixed shapes
    only (no host sync, no per-env Python); the random numbers come from `env.rng`.
    """

    def __init__(self, num_envs: int, dim: tuple[int, ...], term: ObservationTermCfg, env):
        self.base = term.delay
        """The fixed part of the latency (`ObservationTermCfg.delay`)."""
        self.min_lag, self.max_lag = term.delay_min_lag, term.delay_max_lag
        self.per_env, self.hold_prob = term.delay_per_env, float(term.delay_hold_prob)
        self.period, self.per_env_phase = term.delay_update_period, term.delay_per_env_phase
        self.generator = env.rng
        device = env.device
        # The last `base + max_lag + 1` values, oldest first, refilled after a reset.
        self.line = _TermBuffer(num_envs, dim, 0, self.base + self.max_lag + 1, device)
        self.lag = torch.full((num_envs,), self.min_lag, dtype=torch.long, device=device)
        """(num_envs,) the current simulated lag of each env, steps."""
        self.steps = torch.zeros(num_envs, dtype=torch.long, device=device)
        """(num_envs,) values pushed in each env's episode (its refresh clock)."""
        self.phase = self._draw_phases(num_envs, device)
        """(num_envs,) each env's refresh offset within `period` (0 without staggering)."""
        self._rows = torch.arange(num_envs, device=device)

    def _draw_phases(self, n: int, device) -> torch.Tensor:
        if self.period > 0 and self.per_env_phase:
            u = rand(n, device, self.generator)
            return (u * self.period).long().clamp_(max=self.period - 1)
        return torch.zeros(n, dtype=torch.long, device=device)

    def _draw_lags(self, n: int, device) -> torch.Tensor:
        span = self.max_lag - self.min_lag + 1
        u = rand(n if self.per_env else 1, device, self.generator)
        lags = (u * span).long().clamp_(max=span - 1) + self.min_lag
        return lags if self.per_env else lags.expand(n)

    def push(self, value: torch.Tensor, env_mask: torch.Tensor | None) -> None:
        """Append `value` and refresh the lags (only the envs of `env_mask`, when given)."""
        self.line.push(value, env_mask)
        n, device = self.lag.shape[0], self.lag.device
        due = None
        if self.period > 0:
            due = torch.remainder(self.steps + self.phase, self.period) == 0
        candidates = self._draw_lags(n, device)
        if self.hold_prob > 0.0:
            take = rand(n, device, self.generator) >= self.hold_prob
            due = take if due is None else due & take
        if env_mask is not None:
            due = env_mask if due is None else due & env_mask
        self.lag = candidates.clone() if due is None else torch.where(due, candidates, self.lag)
        self.steps += 1 if env_mask is None else env_mask.long()

    def read(self) -> torch.Tensor:
        """(num_envs, *dim): each env's value `base + lag` steps old."""
        buf = self.line.buf
        return buf[self._rows, buf.shape[1] - 1 - self.base - self.lag]

    def reset(self, env_ids: torch.Tensor) -> None:
        """Start new episodes: the line refills with the next value, the lag restarts at
        `min_lag` and the refresh clock at 0, with a new phase when staggered."""
        self.line.reset(env_ids)
        self.lag[env_ids] = self.min_lag
        self.steps[env_ids] = 0
        if self.period > 0 and self.per_env_phase:
            phases = self._draw_phases(self.phase.shape[0], self.phase.device)
            self.phase[env_ids] = phases[env_ids]


class _NonfiniteWarnings:
    """The warnings of groups with `nan_policy="warn"`: which envs had NaN/Inf in which term.

    On the CPU a report is read at once. On a GPU it is not read in the step that makes it:
    the flags are accumulated on the device and copied to pinned host memory asynchronously;
    the warning is issued at a later step, once that copy has completed. A copy still on its
    way after `MAX_WAITS` steps is waited for (one device sync per `MAX_WAITS` steps at most,
    and only while a group's copy is late), and `flush` (run by `ManagerBasedRlEnv.close`)
    waits for the last ones, so no report is lost.
    """

    MAX_WAITS = 50
    """Steps a report may wait for its copy before the copy is waited for."""

    def __init__(self, device):
        self.deferred = torch.device(device).type == "cuda"
        self.pinned = self.deferred
        """Host copies in page-locked memory (what makes a copy from the GPU asynchronous)."""
        self.new_event = torch.cuda.Event
        """Makes the event that marks a copy's completion (`record`, `query`, `synchronize`)."""
        self.pending: dict[str, torch.Tensor] = {}
        """Group -> (terms, num_envs) bool flags not yet sent to the host."""
        self.host: dict[str, torch.Tensor] = {}
        self.events: dict[str, torch.cuda.Event] = {}
        self.labels: dict[str, list[str]] = {}
        self.waits: dict[str, int] = {}
        """Group -> steps its copy on the way has been waited on without completing."""

    def submit(self, group: str, labels: list[str], flags: torch.Tensor) -> None:
        """Report `flags` ((len(labels), num_envs) bool: the envs with NaN/Inf per label)."""
        self.labels[group] = labels
        if not self.deferred:
            self._warn(group, flags)
            return
        pending = self.pending.get(group)
        self.pending[group] = flags if pending is None else pending | flags
        event = self.events.get(group)
        if event is not None:
            if not event.query():  # the last copy is still on its way: send this one later
                self.waits[group] = self.waits.get(group, 0) + 1
                if self.waits[group] < self.MAX_WAITS:
                    return
                event.synchronize()
            self.waits[group] = 0
            self._warn(group, self.host[group])
        host = self.host.get(group)
        if host is None:
            host = torch.empty(flags.shape, dtype=torch.bool, pin_memory=self.pinned)
            self.host[group] = host
        host.copy_(self.pending.pop(group), non_blocking=True)
        event = self.events[group] = self.new_event()
        event.record()

    def flush(self) -> None:
        """Wait for the copies on their way and issue their warnings (a device sync)."""
        for group, event in list(self.events.items()):
            event.synchronize()
            self._warn(group, self.host[group])
            del self.events[group]
            pending = self.pending.pop(group, None)
            if pending is not None:
                self._warn(group, pending.cpu())

    def _warn(self, group: str, flags: torch.Tensor) -> None:
        """Warn about the flags of a host tensor (or a CPU env's)."""
        if not bool(flags.any()):
            return
        for label, row in zip(self.labels[group], flags, strict=True):
            ids = row.nonzero().flatten().tolist()
            if ids:
                more = " ..." if len(ids) > 10 else ""
                warnings.warn(
                    f"NaN/Inf in observation {label} of envs {ids[:10]}{more}; replaced by 0 "
                    "(nan_policy='warn').",
                    RuntimeWarning,
                    stacklevel=4,
                )


class _FusedGroup:
    """A concatenated group of (num_envs, d) terms processed as one (num_envs, D) tensor.

    The terms are written into a preallocated raw buffer (one copy each, float32), non-finite
    values are replaced in one pass, and noise, clip and scale are applied column-wise with
    per-column vectors, in the order of the term-by-term path (noise -> clip -> scale), in a
    handful of tensor operations for the whole group. The noise is drawn once for the group, so
    its random numbers differ from a draw per term. Noise, clip and scale are read from the
    config here, when the env is built. Terms with a delay or history keep their buffer; the
    others are read straight from the result.
    """

    _snapshot_exclude = ("shared", "shared_from", "shared_sources")  # views and configs

    def __init__(self, terms: dict[str, ObservationTermCfg], dims: dict[str, int], n, device):
        self.slices: dict[str, slice] = {}
        start = 0
        for name, d in dims.items():
            self.slices[name] = slice(start, start + d)
            start += d
        width = start
        self.raw = torch.zeros(n, width, device=device)
        self.views = {name: self.raw[:, sl] for name, sl in self.slices.items()}
        self.shared: list[tuple[str, torch.Tensor, torch.Tensor]] = []
        """Runs of terms an earlier group computes: (that group, view here, view there)."""
        self.shared_from: dict[str, ObservationTermCfg] = {}
        """Each shared term's source term (in an earlier group), by name."""
        self.shared_sources: set[str] = set()

        def column(values: dict[str, float], default: float) -> torch.Tensor:
            col = torch.full((width,), default)
            for name, v in values.items():
                col[self.slices[name]] = torch.as_tensor(v, dtype=torch.float32)
            return col.to(device)

        # The fused formulas are the "add" ones; other operations go through `apply`.
        uniform = {
            k: t.noise
            for k, t in terms.items()
            if type(t.noise) is UniformNoiseCfg and t.noise.operation == "add"
        }
        gauss = {
            k: t.noise
            for k, t in terms.items()
            if type(t.noise) is GaussianNoiseCfg and t.noise.operation == "add"
        }
        self.custom_noise = [
            (self.slices[k], t.noise)
            for k, t in terms.items()
            if t.noise is not None and k not in uniform and k not in gauss
        ]
        self.uniform = (
            (
                column({k: nz.n_min for k, nz in uniform.items()}, 0.0),
                column({k: nz.n_max - nz.n_min for k, nz in uniform.items()}, 0.0),
            )
            if uniform
            else None
        )
        self.gauss = (
            (
                column({k: nz.mean for k, nz in gauss.items()}, 0.0),
                column({k: nz.std for k, nz in gauss.items()}, 0.0),
            )
            if gauss
            else None
        )
        clipped = {k: t.clip for k, t in terms.items() if t.clip is not None}
        self.clip = (
            (
                column({k: c[0] for k, c in clipped.items()}, -math.inf),
                column({k: c[1] for k, c in clipped.items()}, math.inf),
            )
            if clipped
            else None
        )
        scaled = {k: t.scale for k, t in terms.items() if t.scale is not None}
        self.scale = column(scaled, 1.0) if scaled else None  # type: ignore[arg-type]
        self.buffered = {k for k, t in terms.items() if _buffered(t)}
        # The output's pieces: runs of unbuffered terms as one slice, buffered terms by name.
        self.pieces: list[slice | str] = []
        for name, sl in self.slices.items():
            if name in self.buffered:
                self.pieces.append(name)
            elif self.pieces and isinstance(self.pieces[-1], slice):
                self.pieces[-1] = slice(self.pieces[-1].start, sl.stop)
            else:
                self.pieces.append(sl)

    def process(self, corrupt: bool, gen: torch.Generator) -> torch.Tensor:
        """noise -> clip -> scale of the raw buffer: a new (num_envs, D) tensor."""
        obs = self.raw
        if corrupt and self.uniform is not None:
            low, span = self.uniform
            obs = torch.addcmul(obs + low, rand(obs.shape, obs.device, gen), span)
        if corrupt and self.gauss is not None:
            mean, std = self.gauss
            obs = torch.addcmul(obs + mean, randn(obs.shape, obs.device, gen), std)
        if corrupt and self.custom_noise:
            obs = obs.clone() if obs is self.raw else obs
            for sl, noise in self.custom_noise:
                obs[:, sl] = noise.apply(obs[:, sl], gen)
        if self.clip is not None:
            obs = torch.clamp(obs, self.clip[0], self.clip[1])
        if self.scale is not None:
            obs = obs * self.scale
        return obs.clone() if obs is self.raw else obs


class ObservationManager(ManagerBase):
    """Computes observation groups: `compute()` returns {group: (num_envs, D) tensor}.

    A concatenated group of image terms, each (num_envs, C, H, W) of one (H, W) (e.g.
    `mdp.camera_rgb`, `mdp.camera_depth`), is one (num_envs, sum C, H, W) tensor, the terms
    joined along the channel axis (a history of h values stacks as h * C channels): the layout
    rsl-rl's CNN takes. Images cannot share a group with vector terms.

    Buffers (delay, history) advance only in `compute(update_history=True)`, which the env
    calls exactly once per step and on reset; reading observations again never shifts them.
    A term's `delay` and a constant simulated lag (`delay_min_lag == delay_max_lag`) are one
    fixed delay line; a random lag (`delay_min_lag < delay_max_lag`) has its own line, whose
    per-env lags are redrawn in that same call (mjlab's delay buffer), and the term's history
    keeps its delayed outputs. All of them are env state (`env.get_state`).

    NaN/Inf values of the terms are replaced by 0 and counted in `nonfinite` in every group;
    a group's `nan_policy` "warn" or "error" also says which term and envs had them
    (`ObservationGroupCfg.nan_policy`, with the host reads each costs).

    In `compute`, a term that an earlier concatenated group also has (the same plain function
    with equal params, e.g. the critic's copy of an actor term) is copied from that group's
    raw values instead of being called again. Plain term functions must therefore be pure
    functions of the env's state, as every `mdp` term is: no random draws and no writes to the
    env (either would happen once instead of once per group). Class-based terms are always
    called, and so is a term whose function or params changed after the env was built.
    """

    kind = "Observation term"
    # A setting of this process and its pending warnings: not env state.
    _snapshot_exclude = ("host_checks", "_nan_warnings", "_concat_axis")

    def __init__(self, cfg: dict[str, ObservationGroupCfg | None], env):
        super().__init__(cfg, env)
        self.group_terms: dict[str, dict[str, ObservationTermCfg]] = {}
        self.group_dims: dict[str, tuple[int, ...]] = {}
        self.term_dims: dict[str, dict[str, tuple[int, ...]]] = {}
        self._buffers: dict[str, dict[str, _TermBuffer]] = {}
        self._delays: dict[str, dict[str, _RandomDelay]] = {}
        """The random simulated lags (`delay_min_lag` < `delay_max_lag`) by group and term."""
        self._concat_axis: dict[str, int] = {}
        """Concatenated groups: the axis of the (num_envs, ...) tensors the terms are joined
        along (negative: counted from the end)."""
        self._fused: dict[str, _FusedGroup] = {}
        self._image_groups: set[str] = set()
        """Concatenated groups of image terms (C, H, W): joined along the channel axis."""
        n = env.num_envs
        self.noise_models: dict[str, NoiseModel] = {}
        """The stateful noise models (`mjlab.utils.noise.NoiseModel`) by "group/term"."""
        for group_name, group in self.cfg.items():
            terms = {k: v for k, v in group.terms.items() if v is not None}
            if not terms:
                raise ValueError(f"Observation group '{group_name}' has no terms.")
            self.group_terms[group_name] = terms
            self.term_dims[group_name] = {}
            self._buffers[group_name] = {}
            self._delays[group_name] = {}
            for name, term in terms.items():
                if group.history_length is not None:
                    term.history_length = group.history_length
                    term.flatten_history_dim = group.flatten_history_dim
                self.prepare_term(f"{group_name}/{name}", term)
                value = self.probe(f"{group_name}/{name}", term)
                if not isinstance(value, torch.Tensor) or value.ndim < 2 or value.shape[0] != n:
                    shape = (
                        tuple(value.shape)
                        if isinstance(value, torch.Tensor)
                        else type(value).__name__
                    )
                    raise ValueError(
                        f"Observation term '{group_name}/{name}' returned shape {shape}; expected "
                        f"({n}, dim). Use .unsqueeze(-1) for a scalar per env."
                    )
                self.check_output(f"{group_name}/{name}", value, tuple(value.shape), "float", "")
                dim = tuple(value.shape[1:])
                if term.history_length > 0:
                    dim = (
                        (term.history_length * dim[0], *dim[1:])
                        if term.flatten_history_dim
                        else (term.history_length, *dim)
                    )
                self.term_dims[group_name][name] = dim
                if isinstance(term.noise, NoiseModelCfg):
                    # A stateful model per term (e.g. a per-episode bias), kept here so that
                    # the env state includes it; the term's copy of the config points at it.
                    model = self.noise_models[f"{group_name}/{name}"] = _noise_model(
                        term.noise, n, env.device, env.rng, value.shape[-1]
                    )
                    term.noise = model
                delay = _fixed_delay(term)
                if _random_delay(term):
                    # The random lag comes first; the history (if any) keeps its outputs.
                    self._delays[group_name][name] = _RandomDelay(
                        n, tuple(value.shape[1:]), term, env
                    )
                    delay = 0
                self._buffers[group_name][name] = _TermBuffer(
                    n, tuple(value.shape[1:]), delay, term.history_length, env.device
                )
            image_group = group.concatenate_terms and self._is_image_group(group_name)
            if image_group:
                self._image_groups.add(group_name)
            for name, term in terms.items():
                if term.history_length > 0 and term.flatten_history_dim and not image_group:
                    # `compute` flattens a non-image history to one axis: (history * D,).
                    raw = tuple(self._buffers[group_name][name].buf.shape[2:])
                    self.term_dims[group_name][name] = (term.history_length * math.prod(raw),)
            if group.concatenate_terms:
                self.group_dims[group_name] = self._concatenated_dims(group_name, group)
            raw_dims = {k: b.buf.shape[2:] for k, b in self._buffers[group_name].items()}
            if (
                group.concatenate_terms
                and all(len(d) == 1 for d in raw_dims.values())
                and all(t.history_length == 0 or t.flatten_history_dim for t in terms.values())
            ):
                self._fused[group_name] = _FusedGroup(
                    terms, {k: d[0] for k, d in raw_dims.items()}, n, env.device
                )
        self._link_shared_terms()
        self._computed: set[str] = set()  # groups computed so far in this `compute`
        self._last: dict[str, torch.Tensor | dict[str, torch.Tensor]] = {}
        self._raw: dict[str, dict[str, torch.Tensor]] = {g: {} for g in self.group_terms}
        self.host_checks: bool = torch.device(env.device).type == "cpu"
        """Read each group's NaN/Inf count back to skip replacing values when there is none (the
        default on the CPU, where no device waits; a GPU env replaces without reading back)."""
        self.nonfinite = torch.zeros((), dtype=torch.long, device=env.device)
        """Non-finite values replaced by 0 since the last `compute` (a tensor; a term that
        groups share counts once, except in a group with nan_policy "warn" or "error", which
        computes and counts its terms itself)."""
        self._nan_warnings = _NonfiniteWarnings(env.device)

    @property
    def active_terms(self) -> dict[str, list[str]]:
        return {g: list(t) for g, t in self.group_terms.items()}

    def compute(
        self, update_history: bool = True, env_ids: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor | dict[str, torch.Tensor]]:
        """Compute every group.

        Args:
            update_history: False returns the last computed observations (buffers untouched).
            env_ids: advance the buffers of these envs only (after a partial reset); the other
                envs' histories are left as they were.
        """
        if not update_history and self._last:
            return self._last
        self.nonfinite.zero_()
        mask = None
        if env_ids is not None:
            mask = torch.zeros(self.env.num_envs, dtype=torch.bool, device=self.env.device)
            mask[env_ids] = True
        out = {}
        try:
            for g in self.group_terms:
                out[g] = self.compute_group(g, mask)
                self._computed.add(g)
        finally:
            self._computed = set()
        self._last = out
        return out

    def compute_group(
        self, group_name: str, env_mask: torch.Tensor | None = None
    ) -> torch.Tensor | dict[str, torch.Tensor]:
        group = self.cfg[group_name]
        fused = self._fused.get(group_name)
        if fused is not None:
            return self._compute_fused(group_name, fused, env_mask)
        values: dict[str, torch.Tensor] = {}
        gen = self.env.rng
        checked = group.nan_policy in ("warn", "error")
        flags: list[torch.Tensor] = []  # per term: (num_envs,) envs with NaN/Inf
        for name, term in self.group_terms[group_name].items():
            obs = term.func(self.env, **term.params).float()
            # No NaN/Inf ever reaches the policy or its normalizer (a diverged world, a term
            # dividing by zero): replaced by 0 and counted in `nonfinite`.
            bad = nonfinite_mask(obs)
            self.nonfinite += bad.sum()
            if checked:
                flags.append(bad.reshape(bad.shape[0], -1).any(dim=1))
            obs = obs.masked_fill(bad, 0.0)
            self._raw[group_name][name] = obs
            if term.noise is not None and group.enable_corruption:
                obs = term.noise.apply(obs, gen)
            if term.clip is not None:
                obs = obs.clamp(term.clip[0], term.clip[1])
            if term.scale is not None:
                obs = obs * torch.as_tensor(term.scale, device=obs.device, dtype=obs.dtype)
            buf = self._buffers[group_name][name]
            self._check_shape(group_name, name, obs, (obs.shape[0], *buf.buf.shape[2:]))
            if _buffered(term):
                obs = self._advance(group_name, name, obs, env_mask)
                if term.history_length > 0 and term.flatten_history_dim:
                    # An image's history is stacked along its channels: (history * C, H, W).
                    image = group_name in self._image_groups
                    obs = obs.reshape(obs.shape[0], -1, *(obs.shape[3:] if image else ()))
            values[name] = obs
        if checked:
            self._check_nonfinite(group_name, group, list(values), flags)
        if group.concatenate_terms:
            return torch.cat(list(values.values()), dim=self._concat_axis[group_name])
        return values

    def _advance(
        self, group_name: str, name: str, value: torch.Tensor, env_mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Push a term's processed value through its delay and history; returns what the policy
        sees of it this step."""
        buf = self._buffers[group_name][name]
        delay = self._delays[group_name].get(name)
        if delay is not None:
            delay.push(value, env_mask)
            value = delay.read()
            if buf.history == 0:
                return value
        buf.push(value, env_mask)
        return buf.read()

    def _check_nonfinite(
        self, group_name: str, group: ObservationGroupCfg, names: list[str], flags
    ) -> None:
        """Act on a group's NaN/Inf flags ((num_envs,) per term, in `names` order) as its
        `nan_policy` ("warn" or "error") says."""
        if group.nan_check_per_term:
            labels = [f"'{group_name}/{name}'" for name in names]
            stacked = torch.stack(flags) if isinstance(flags, list) else flags
        else:
            labels = [f"group '{group_name}'"]
            any_term = torch.stack(flags).any(dim=0) if isinstance(flags, list) else flags
            stacked = any_term.reshape(1, -1)
        if group.nan_policy == "error":
            self._raise_nonfinite(labels, stacked)
        else:
            self._nan_warnings.submit(group_name, labels, stacked)

    @staticmethod
    def _raise_nonfinite(labels: list[str], flags: torch.Tensor) -> None:
        """Raise ValueError if any of `flags` ((len(labels), num_envs) bool) is set, naming the
        first label with a flag: one host read (the cost of nan_policy="error")."""
        if not bool(flags.any()):
            return
        for label, row in zip(labels, flags, strict=True):
            ids = row.nonzero().flatten().tolist()
            if ids:
                more = " ..." if len(ids) > 10 else ""
                raise ValueError(
                    f"NaN/Inf in observation {label} of envs {ids[:10]}{more} (the group's "
                    "nan_policy is 'error'; 'sanitize' replaces them by 0)."
                )

    def _concatenated_dims(self, group_name: str, group: ObservationGroupCfg) -> tuple[int, ...]:
        """The per-env shape of a concatenated group, with its axis in `_concat_axis`.

        Raises:
            ValueError: `concatenate_dim` is not an axis of the terms, or the terms differ in
                their number of axes or in an axis other than it.
        """
        dims = self.term_dims[group_name]
        ranks = {len(d) for d in dims.values()}
        if len(ranks) != 1:
            raise ValueError(
                f"Observation group '{group_name}' concatenates terms with different numbers "
                f"of axes: {dims}; give them one shape (e.g. flatten_history_dim=True) or set "
                "concatenate_terms=False."
            )
        rank = ranks.pop()
        axis = group.concatenate_dim
        if group_name in self._image_groups and axis == -1:
            axis = 0  # images are joined along their channels by default
        if not -rank <= axis < rank:
            raise ValueError(
                f"Observation group '{group_name}': concatenate_dim={group.concatenate_dim} is "
                f"not an axis of its terms, whose values have {rank} axis(es) per env: {dims}."
            )
        axis %= rank
        if len({d[:axis] + d[axis + 1 :] for d in dims.values()}) > 1:
            raise ValueError(
                f"Observation group '{group_name}': its terms {dims} cannot be concatenated "
                f"along axis {axis} (concatenate_dim={group.concatenate_dim}): they differ in "
                "another axis."
            )
        first = next(iter(dims.values()))
        self._concat_axis[group_name] = axis - rank
        return (*first[:axis], sum(d[axis] for d in dims.values()), *first[axis + 1 :])

    def _link_shared_terms(self) -> None:
        """Find, in each fused group, the terms an earlier fused group computes too: the same
        plain function with equal params and width (e.g. a critic's copy of the actor's
        terms). In `compute` they are copied from that group's raw values, a run of adjacent
        terms in one copy, instead of being computed again. Class-based terms (which may keep
        state) are always called."""
        done: list[str] = []
        for group_name, fused in self._fused.items():
            if self.cfg[group_name].nan_policy in ("warn", "error"):
                # It checks its own terms' values: a copy would come already cleaned.
                done.append(group_name)
                continue
            runs: list[tuple[str, slice, slice]] = []
            for name, term in self.group_terms[group_name].items():
                found = self._earlier_same_term(done, term, fused.slices[name])
                if found is None:
                    continue
                source, there, source_term = found
                here = fused.slices[name]
                fused.shared_from[name] = source_term
                if runs and (runs[-1][0], runs[-1][1].stop, runs[-1][2].stop) == (
                    source,
                    here.start,
                    there.start,
                ):  # adjacent in both groups: one longer run
                    _, a, b = runs[-1]
                    runs[-1] = (source, slice(a.start, here.stop), slice(b.start, there.stop))
                else:
                    runs.append((source, here, there))
            fused.shared = [
                (source, fused.raw[:, here], self._fused[source].raw[:, there])
                for source, here, there in runs
            ]
            fused.shared_sources = {source for source, _, _ in runs}
            done.append(group_name)

    def _earlier_same_term(
        self, groups: list[str], term: ObservationTermCfg, here: slice
    ) -> tuple[str, slice, ObservationTermCfg] | None:
        """(group, slice, term) of the first term of `groups` computing what `term`, at slice
        `here` of its own group, computes."""
        if not inspect.isfunction(term.func):
            return None
        for group_name in groups:
            fused = self._fused[group_name]
            for name, other in self.group_terms[group_name].items():
                there = fused.slices[name]
                if (
                    other.func is not term.func
                    or there.stop - there.start != here.stop - here.start
                ):
                    continue
                try:
                    same = bool(other.params == term.params)
                except (RuntimeError, TypeError, ValueError):  # e.g. tensors among the params
                    same = False
                if same:
                    return group_name, there, other
        return None

    def _is_image_group(self, group_name: str) -> bool:
        """Whether a group's terms are images (num_envs, C, H, W), to be joined along C into
        the (num_envs, C, H, W) tensor rsl-rl's CNN takes.

        Raises:
            ValueError: images mixed with other terms, or images of different sizes.
        """
        shapes = {k: tuple(b.buf.shape[2:]) for k, b in self._buffers[group_name].items()}
        images = {k: s for k, s in shapes.items() if len(s) == 3}
        if not images:
            return False
        others = sorted(set(shapes) - set(images))
        if others:
            raise ValueError(
                f"Observation group '{group_name}' mixes image terms {sorted(images)} (C, H, W) "
                f"with terms {others} of other shapes; put the images in a group of their own "
                "(rsl-rl's CNN takes each (num_envs, C, H, W) group as one image)."
            )
        sizes = {s[1:] for s in images.values()}
        if len(sizes) > 1:
            raise ValueError(
                f"Observation group '{group_name}' has images of different sizes "
                f"{ {k: s for k, s in images.items()} }; images joined along their channels "
                "need one (H, W)."
            )
        terms = self.group_terms[group_name]
        if any(t.history_length > 0 and not t.flatten_history_dim for t in terms.values()):
            raise ValueError(
                f"Observation group '{group_name}': an image term's history must be flattened "
                "(flatten_history_dim=True stacks it along the channels)."
            )
        return True

    def _compute_fused(
        self, group_name: str, fused: _FusedGroup, env_mask: torch.Tensor | None
    ) -> torch.Tensor:
        raw_views = self._raw[group_name]
        # Terms an earlier group computed in this `compute` are copied from it (see
        # `_link_shared_terms`); called alone, a group computes all its terms.
        shared: dict[str, ObservationTermCfg] = {}
        if fused.shared and fused.shared_sources <= self._computed:
            for _, here, there in fused.shared:
                here.copy_(there)
            shared = fused.shared_from
        for name, term in self.group_terms[group_name].items():
            source = shared.get(name)
            # A term whose function or params were changed after the build is called again.
            if source is not None and term.func is source.func and term.params == source.params:
                raw_views[name] = fused.views[name]
                continue
            value = term.func(self.env, **term.params)
            view = fused.views[name]
            self._check_shape(group_name, name, value, view.shape)
            view.copy_(value)
            raw_views[name] = view
        # No NaN/Inf ever reaches the policy or its normalizer (a diverged world, a term
        # dividing by zero): replaced by 0 and counted in `nonfinite`.
        raw = fused.raw
        group = self.cfg[group_name]
        # On the CPU one read skips the counting and replacing in the usual step with none (no
        # device to stall); on a GPU both run unconditionally, without a host sync.
        if not self.host_checks or maybe_nonfinite(raw):
            if group.nan_policy in ("warn", "error"):
                bad = nonfinite_mask(raw)
                self.nonfinite += bad.sum()
                flags = [bad[:, sl].any(dim=1) for sl in fused.slices.values()]
                raw.masked_fill_(bad, 0.0)
                self._check_nonfinite(group_name, group, list(fused.slices), flags)
            else:
                self.nonfinite += count_nonfinite(raw)
                torch.nan_to_num_(raw, nan=0.0, posinf=0.0, neginf=0.0)
        obs = fused.process(group.enable_corruption, self.env.rng)
        if not fused.buffered:
            return obs
        pieces = []
        for piece in fused.pieces:
            if isinstance(piece, slice):
                pieces.append(obs[:, piece])
                continue
            value = self._advance(group_name, piece, obs[:, fused.slices[piece]], env_mask)
            pieces.append(value.reshape(value.shape[0], -1) if value.ndim > 2 else value)
        return torch.cat(pieces, dim=-1)

    @staticmethod
    def _check_shape(group_name: str, name: str, obs: torch.Tensor, expected) -> None:
        if obs.shape != tuple(expected):  # shapes only: no device sync
            raise ValueError(
                f"Observation term '{group_name}/{name}' returned shape {tuple(obs.shape)}; "
                f"it returned {tuple(expected)} when the env was built. A term's shape must "
                "not change."
            )

    def raw_terms(self, group_name: str) -> dict[str, torch.Tensor]:
        """The raw value of every term of a group at the last `compute`, by term name.

        Raw means the term function's output (non-finite values already replaced by 0), before
        noise, clip, scale, delay and history: what a robot's state estimator hands to
        `mjlab.deploy.OnnxPolicy.build_observation`. Each value is (num_envs, *shape); they are
        references, valid until the next `compute`.

        Raises:
            KeyError: no such group (the message lists the groups).
        """
        if group_name not in self._raw:
            raise KeyError(
                f"No observation group '{group_name}'; groups: {list(self.group_terms)}."
            )
        if not self._raw[group_name]:
            raise RuntimeError("No observations computed yet: call env.reset() first.")
        return dict(self._raw[group_name])

    def describe(self, group_name: str) -> ObservationGroupDescription:
        """A plain-data description of a group, term by term, in order: what a robot needs to
        compute the same observation vector from the raw term values. Training-only
        corruptions are left out: noise, and the simulated sensor latency of the `delay_*`
        fields (a robot's own sensors have theirs); a term's `delay` is described.

        Raises:
            KeyError: no such group (the message lists the groups).
        """
        if group_name not in self.group_terms:
            raise KeyError(
                f"No observation group '{group_name}'; groups: {list(self.group_terms)}."
            )
        terms: list[ObservationTermDescription] = []
        for name, term in self.group_terms[group_name].items():
            buf = self._buffers[group_name][name]
            scale = term.scale
            if scale is not None:
                scale = (
                    float(scale) if isinstance(scale, (int, float)) else [float(v) for v in scale]
                )
            terms.append(
                ObservationTermDescription(
                    name=name,
                    func=func_name(term.func),
                    shape=[int(d) for d in buf.buf.shape[2:]],
                    clip=None if term.clip is None else [float(term.clip[0]), float(term.clip[1])],
                    scale=scale,
                    delay=int(term.delay),
                    history_length=int(term.history_length),
                    flatten_history_dim=bool(term.flatten_history_dim),
                    params=plain_value(term.params, self.env.scene),
                )
            )
        return ObservationGroupDescription(
            group=group_name,
            concatenate_terms=bool(self.cfg[group_name].concatenate_terms),
            terms=terms,
        )

    def deployment_spec(self, group_name: str) -> list[ObservationTermSpec]:
        """The group in the policy file's schema: one `mjlab.deploy.ObservationTermSpec` per
        term, in order, built from `describe(group_name)` (`observation_term_spec`). What
        mjlab-export writes into the file's metadata and the robot-side runtime reproduces.

        Raises:
            KeyError: no such group (the message lists the groups).
            mjlab.deploy.metadata.UnsupportedTermError: the group is not concatenated, or a
                term is not flat or keeps an unflattened history (the message names the term).
        """
        description = self.describe(group_name)
        require_concatenated(group_name, description["concatenate_terms"])
        return [observation_term_spec(group_name, **term) for term in description["terms"]]

    def flush_warnings(self) -> None:
        """Issue the `nan_policy="warn"` reports still waiting for their copy from the GPU (a
        device sync; nothing to do on the CPU). `ManagerBasedRlEnv.close` calls it."""
        self._nan_warnings.flush()

    def reset(self, env_ids: torch.Tensor) -> dict[str, float | torch.Tensor]:
        env_ids = resolve_env_ids(env_ids, self.env.num_envs, self.env.device)
        for model in self.noise_models.values():
            model.reset(env_ids)
        for group_name, terms in self.group_terms.items():
            for name, term in terms.items():
                self._buffers[group_name][name].reset(env_ids)
                self.reset_term(term, env_ids)
            for delay in self._delays[group_name].values():
                delay.reset(env_ids)
        return {}


def _noise_model(cfg: NoiseModelCfg, num_envs: int, device, generator, width: int) -> NoiseModel:
    """`cfg.class_type(cfg, num_envs, device, ...)`: with our generator and the observation's
    width, or with mjlab's three arguments for a model class that takes only those."""
    cls = type(cfg).class_type
    accepted = inspect.signature(cls).parameters
    if "generator" in accepted and "num_components" in accepted:
        return cls(cfg, num_envs, device, generator=generator, num_components=width)
    model = cls(cfg, num_envs, device)
    model.generator = generator
    return model

"""Distributions, operations and the shared write path of the domain-randomization terms."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from mjlab.envs.manager_based_rl_env import ManagerBasedRlEnv

Range = tuple[float, float]
Ranges = Range | Mapping[int, Range] | Mapping[str, Range]


@dataclass(frozen=True)
class Distribution:
    """A named sampler: `sample(lo, hi, shape, generator) -> Tensor` on `generator`'s device,
    `lo`/`hi` broadcastable to `shape` (their meaning is the distribution's)."""

    name: str
    """Name accepted in place of the instance, e.g. "uniform"."""
    sample: Callable[[torch.Tensor, torch.Tensor, tuple[int, ...], torch.Generator], torch.Tensor]
    """The sampler."""


@dataclass(frozen=True)
class Operation:
    """How a draw turns into a field value: `combine(initialize(default), draw)`."""

    name: str
    """Name accepted in place of the instance, e.g. "scale"."""
    initialize: Callable[[torch.Tensor], torch.Tensor]
    """Base value from the compiled-model (default) values."""
    combine: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
    """New value from the base and the draw."""
    uses_defaults: bool
    """Whether the result depends on the default values (False for `abs`)."""


def _uniform(lo, hi, shape, gen):
    u = torch.rand(shape, generator=gen, device=gen.device)
    return lo + (hi - lo) * u


def _log_uniform(lo, hi, shape, gen):
    # Checked here for bounds on the host; `draw` checks them before moving them to a device
    # (a check on a CUDA tensor would wait for the device).
    if lo.device.type == "cpu" and (bool((lo <= 0).any()) or bool((hi <= 0).any())):
        raise ValueError("log_uniform: range bounds must be > 0.")
    return torch.exp(_uniform(torch.log(lo), torch.log(hi), shape, gen))


def _gaussian(mean, std, shape, gen):
    return mean + std * torch.randn(shape, generator=gen, device=gen.device)


uniform = Distribution("uniform", _uniform)
"""U(lo, hi)."""
log_uniform = Distribution("log_uniform", _log_uniform)
"""exp(U(log lo, log hi)); bounds > 0."""
gaussian = Distribution("gaussian", _gaussian)
"""N(mean, std^2): a range is (mean, std)."""

scale = Operation("scale", lambda d: d, lambda base, x: base * x, True)
"""default * draw."""
abs = Operation("abs", lambda d: d, lambda base, x: x, False)
"""The draw itself."""
add = Operation("add", lambda d: d, lambda base, x: base + x, True)
"""default + draw."""

_DISTRIBUTIONS = {d.name: d for d in (uniform, log_uniform, gaussian)}
_OPERATIONS = {o.name: o for o in (scale, abs, add)}


def resolve_distribution(d: Distribution | str) -> Distribution:
    """The instance for a name (or the instance itself).

    Raises:
        ValueError: unknown name; lists the valid ones.
    """
    if isinstance(d, Distribution):
        return d
    if d not in _DISTRIBUTIONS:
        raise ValueError(f"Unknown distribution '{d}'; valid: {sorted(_DISTRIBUTIONS)}.")
    return _DISTRIBUTIONS[d]


def resolve_operation(o: Operation | str) -> Operation:
    """The instance for a name (or the instance itself).

    Raises:
        ValueError: unknown name; lists the valid ones.
    """
    if isinstance(o, Operation):
        return o
    if o not in _OPERATIONS:
        raise ValueError(f"Unknown operation '{o}'; valid: {sorted(_OPERATIONS)}.")
    return _OPERATIONS[o]


# -- shared machinery -----------------------------------------------------------------------
def env_index(env: ManagerBasedRlEnv, env_ids, device) -> torch.Tensor:
    if env_ids is None:
        return torch.arange(env.num_envs, device=device)
    return torch.as_tensor(env_ids, device=device, dtype=torch.long).reshape(-1)


def defaults(env: ManagerBasedRlEnv, field: str) -> torch.Tensor:
    """Compiled-model values of an MjModel field, cached once per env (the base of `scale` and
    `add`, so repeated randomization never compounds)."""
    cache = env.__dict__.setdefault("_dr_defaults", {})
    if field not in cache:
        cache[field] = torch.as_tensor(getattr(env.sim.mj_model, field)).clone()
    return cache[field]


def draw(
    env: ManagerBasedRlEnv,
    distribution: Distribution | str,
    lo: torch.Tensor,
    hi: torch.Tensor,
    shape: tuple[int, ...],
    device,
) -> torch.Tensor:
    dist = resolve_distribution(distribution)
    gen = env.rng
    if dist.name == "log_uniform":
        lo_h, hi_h = torch.as_tensor(lo).cpu(), torch.as_tensor(hi).cpu()
        if bool((lo_h <= 0).any()) or bool((hi_h <= 0).any()):
            raise ValueError("log_uniform: range bounds must be > 0.")
    lo = torch.as_tensor(lo, dtype=torch.float32, device=gen.device)
    hi = torch.as_tensor(hi, dtype=torch.float32, device=gen.device)
    return dist.sample(lo, hi, shape, gen).to(device)


def global_ids(local_global: Sequence[int], sel, what: str, field: str) -> torch.Tensor:
    ids = torch.as_tensor(list(local_global), dtype=torch.long)[sel].reshape(-1)
    if len(local_global) == 0:
        raise ValueError(f"{field}: the entity has no {what}s to randomize.")
    return ids


def axis_bounds(
    field: str,
    ranges: Ranges,
    axes: Sequence[int] | None,
    n_axes: int,
    default_axes: Sequence[int] | None,
) -> tuple[list[int], torch.Tensor, torch.Tensor]:
    """Selected axes and their (lo, hi) bounds from a (lo, hi) range or a per-axis dict
    {axis index: (lo, hi)}.

    Raises:
        ValueError: an axis out of range, or a selected axis without a range.
    """

    def index(key) -> int:
        if isinstance(key, bool) or not isinstance(key, int) or not 0 <= key < n_axes:
            raise ValueError(f"{field}: axis {key!r} is not an index in [0, {n_axes}).")
        return key

    if isinstance(ranges, Mapping):
        per = {index(k): tuple(v) for k, v in ranges.items()}
        sel = [index(a) for a in axes] if axes is not None else sorted(per)
        missing = [a for a in sel if a not in per]
        if missing:
            raise ValueError(f"{field}: axes {missing} have no range; add them to `ranges`.")
        bounds = [per[a] for a in sel]
    else:
        if len(ranges) != 2:
            raise ValueError(f"{field}: `ranges` must be (lo, hi) or a dict of them.")
        if axes is not None:
            sel = [index(a) for a in axes]
        else:
            sel = list(default_axes) if default_axes is not None else list(range(n_axes))
        bounds = [tuple(ranges)] * len(sel)
    lo = torch.tensor([b[0] for b in bounds], dtype=torch.float32)
    hi = torch.tensor([b[1] for b in bounds], dtype=torch.float32)
    return sel, lo, hi


def randomize_field(
    env: ManagerBasedRlEnv,
    env_ids,
    field: str,
    ids: torch.Tensor,
    ranges: Ranges,
    distribution: Distribution | str,
    operation: Operation | str,
    axes: Sequence[int] | None,
    shared_random: bool,
    default_axes: Sequence[int] | None = None,
    post: Callable[[torch.Tensor, list[int]], torch.Tensor] | None = None,
    set_const: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Randomize `field[env_ids, ids, axes]` per env from its defaults; returns (env rows on
    the view's device, new values (n_env, n_ids, n_axes))."""
    op = resolve_operation(operation)
    view = env.sim.expand_model_field(field)
    scalar = view.dim() == 2
    n_axes = 1 if scalar else view.shape[2]
    sel, lo, hi = axis_bounds(field, ranges, axes, n_axes, default_axes)
    rows = env_index(env, env_ids, view.device)
    ids = ids.to(view.device)
    cols = torch.as_tensor(sel, device=view.device)
    n = len(rows)
    x = draw(
        env, distribution, lo, hi, (n, 1 if shared_random else len(ids), len(sel)), view.device
    )
    x = x.expand(n, len(ids), len(sel))
    base = defaults(env, field).to(view.device, torch.float32)
    base = base[ids] if scalar else base[ids][:, cols]
    base = base.reshape(len(ids), len(sel))
    value = op.combine(op.initialize(base).expand(n, -1, -1), x)
    if post is not None:
        value = post(value, sel)
    if scalar:
        view[rows[:, None], ids[None, :]] = value[..., 0].to(view.dtype)
    else:
        view[rows[:, None, None], ids[None, :, None], cols[None, None, :]] = value.to(view.dtype)
    if set_const and n:
        env.sim.set_const(rows)
    return rows, value


def random_rotation(
    env: ManagerBasedRlEnv,
    env_ids,
    field: str,
    ids: torch.Tensor,
    roll_range: Range,
    pitch_range: Range,
    yaw_range: Range,
    distribution: Distribution | str,
    set_const: bool = False,
) -> None:
    """Rotate the default orientation of `field` (quaternions wxyz, child-to-parent) by a random
    roll-pitch-yaw rotation (extrinsic x-y-z, rad) expressed in the parent frame:
    q = q_rpy * q_default. Always from the default, so repeated calls do not accumulate."""
    from mjlab.utils.math import quat_from_euler_xyz, quat_mul

    view = env.sim.expand_model_field(field)
    rows = env_index(env, env_ids, view.device)
    ids = ids.to(view.device)
    lo = torch.tensor([roll_range[0], pitch_range[0], yaw_range[0]])
    hi = torch.tensor([roll_range[1], pitch_range[1], yaw_range[1]])
    rpy = draw(env, distribution, lo, hi, (len(rows), len(ids), 3), view.device)
    delta = quat_from_euler_xyz(rpy[..., 0], rpy[..., 1], rpy[..., 2])
    base = defaults(env, field).to(view.device, torch.float32)[ids]
    q = quat_mul(delta, base.expand_as(delta))
    view[rows[:, None], ids[None, :]] = q.to(view.dtype)
    if set_const and len(rows):
        env.sim.set_const(rows)


def check_range(name: str, value) -> None:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise ValueError(f"{name} must be a (lo, hi) pair, got {value!r}.")

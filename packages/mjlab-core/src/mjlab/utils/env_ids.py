"""The one rule for env-id arguments (`env.reset(env_ids=...)`, managers', entities', sensors'
and the simulation's `reset`): integer ids in [0, num_envs), or a boolean mask of length
num_envs meaning its True entries. Anything else is an error naming the argument: a float id
is never rounded, a mask is never read as the ids 0 and 1. A uint8 tensor or array is refused
whatever it holds: uint8 was PyTorch's mask dtype before bool (and indexing still reads it as a
mask), so `[1, 0, 1, 1]` could mean the ids 1, 0, 1, 1 or the envs 0, 2, 3.

Validating costs a host-device sync on CUDA (the range check), so it runs at the public
boundary only: ids that passed it, and ids the env makes itself in `step`, are marked
(`mark_checked`) and pass through the calls below them untouched, as long as the tensor is not
modified in place (its `_version` is compared).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
import torch

# id(tensor) -> (weak reference to it, its _version when checked).
_CHECKED: dict[int, tuple[weakref.ref, int]] = {}


def mark_checked(ids: torch.Tensor) -> torch.Tensor:
    """Mark a 1-D int64 tensor of valid env ids (made by the env itself, e.g. from `nonzero`)
    so that `resolve_env_ids` returns it without checking again; returns it."""
    key = id(ids)
    _CHECKED[key] = (weakref.ref(ids, lambda _, key=key: _CHECKED.pop(key, None)), _version(ids))
    return ids


def _version(ids: torch.Tensor) -> int:
    # Tensors made under torch.inference_mode have no version counter: identity alone.
    return -1 if ids.is_inference() else ids._version


def _is_checked(value: torch.Tensor) -> bool:
    entry = _CHECKED.get(id(value))
    return entry is not None and entry[0]() is value and entry[1] == _version(value)


def resolve_env_ids(
    env_ids: Any, num_envs: int, device: torch.device | str, name: str = "env_ids"
) -> torch.Tensor:
    """`env_ids` as a 1-D int64 tensor of env ids on `device`, checked.

    Args:
        env_ids: None (every env); an int; integer ids (torch tensor, numpy array, list, tuple
            or range) in [0, num_envs); or a boolean mask (torch or numpy, or a list of bools)
            of shape (num_envs,), whose True entries are the ids.
        num_envs: the number of envs.
        device: the device of the result.
        name: the argument's name, for messages.

    Returns:
        (K,) int64 ids on `device` (marked as checked).

    Raises:
        TypeError: floats, complex numbers, strings or other objects (the value's type is
            named); a float that happens to be whole is refused too; a uint8 tensor or array
            (mask or ids? `.bool()` or int64 ids say which).
        ValueError: ids outside [0, num_envs), a mask of the wrong length, or more than one
            dimension.
    """
    if isinstance(env_ids, torch.Tensor) and _is_checked(env_ids):
        return env_ids if env_ids.device == torch.device(device) else env_ids.to(device)
    if env_ids is None:
        return mark_checked(torch.arange(num_envs, device=device))
    ids = _as_tensor(env_ids, name, num_envs)
    if ids.ndim > 1:
        raise ValueError(f"{name} must be 1-D (ids or a mask), got shape {tuple(ids.shape)}.")
    ids = ids.reshape(-1)
    if ids.dtype == torch.bool:
        if ids.numel() != num_envs:
            raise ValueError(
                f"{name} is a boolean mask of length {ids.numel()}; a mask needs one entry per "
                f"env ({num_envs}). Give integer ids for a subset."
            )
        ids = ids.nonzero().flatten()
    elif ids.numel():
        low, high = int(ids.min()), int(ids.max())  # one sync, at the public boundary
        if low < 0 or high >= num_envs:
            bad = ids[(ids < 0) | (ids >= num_envs)][:5].tolist()
            raise ValueError(f"{name} {bad} outside [0, {num_envs}) ({num_envs} envs).")
    return mark_checked(ids.to(device=device, dtype=torch.long))


def _as_tensor(env_ids: Any, name: str, num_envs: int) -> torch.Tensor:
    ids = _as_tensor_any_dtype(env_ids, name, num_envs)
    if ids.dtype == torch.uint8:
        raise TypeError(
            f"{name} is a uint8 {'array' if isinstance(env_ids, np.ndarray) else 'tensor'} "
            f"{_preview(ids.flatten()[:6].tolist())}: a mask or ids? Pass a bool mask "
            "(mask.bool()) or int64 ids."
        )
    return ids


def _as_tensor_any_dtype(env_ids: Any, name: str, num_envs: int) -> torch.Tensor:
    expected = f"integer ids in [0, {num_envs}) or a boolean mask of length {num_envs}"
    if isinstance(env_ids, (bool, np.bool_)):
        raise TypeError(f"{name} must be {expected}, got the bool {env_ids!r}.")
    if isinstance(env_ids, (int, np.integer)):
        return torch.tensor([int(env_ids)])
    if isinstance(env_ids, range):
        return torch.tensor(list(env_ids), dtype=torch.long)
    if isinstance(env_ids, (list, tuple)):
        if not env_ids:
            return torch.zeros(0, dtype=torch.long)
        env_ids = np.asarray(env_ids)
    if isinstance(env_ids, np.ndarray):
        if env_ids.dtype.kind not in "biu":
            raise TypeError(
                f"{name} must be {expected}, got a numpy {env_ids.dtype} array "
                f"{_preview(np.atleast_1d(env_ids).tolist())}."
            )
        return torch.from_numpy(np.ascontiguousarray(env_ids))
    if isinstance(env_ids, torch.Tensor):
        if env_ids.dtype.is_floating_point or env_ids.dtype.is_complex:
            values = env_ids.detach().flatten()[:5].tolist()
            raise TypeError(
                f"{name} must be {expected}, got a {str(env_ids.dtype).removeprefix('torch.')} "
                f"tensor {_preview(values)}; a float id is never rounded."
            )
        return env_ids
    raise TypeError(f"{name} must be {expected}, got {type(env_ids).__name__} {env_ids!r:.60}.")


def _preview(values: list) -> str:
    shown = [repr(round(v, 4)) if isinstance(v, float) else str(v) for v in values[:5]]
    return "[" + ", ".join(shown) + (", ...]" if len(values) > 5 else "]")

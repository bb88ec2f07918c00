"""Capture and restore the mutable state of a live object graph (an env and its managers).

`capture(root)` walks `root`'s attributes and records every value that can change while the
object runs: tensors, numpy arrays, torch / numpy random generators and plain numbers, keyed by
their attribute path (e.g. `command_manager.terms['twist'].steps_left`). `restore(root, state)`
writes such a record back into an object graph built the same way (same class, same config), in
place, so views and aliases stay what they were.

What is walked: objects whose class (or a base class) is defined in `mjlab`, so terms and sensors
of downstream packages that subclass ours are included; dicts, lists and tuples inside them;
configs are searched for such objects and for class-based terms, which live in their config's
`func` (of any class, a downstream project's too). What
is not recorded: the values of configs (dataclass instances and every `cfg` attribute: they are
values, and a resumed run must see the config it was given, so a curriculum that writes into a
config, like `mdp.commands_vel`, is re-applied only at its next call), `extras` (rebuilt by
every step), functions, classes,
modules, objects of other libraries (a `mujoco.batch.Batch` or a renderer), non-numeric arrays,
and the attributes a class names in `_snapshot_exclude` (state its owner captures another way,
e.g. `Simulation`'s views, or data that never changes after construction, e.g. a generated
terrain map).
"""

from __future__ import annotations

import dataclasses
import enum
import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

_SKIP_ATTRS = frozenset({"extras"})  # rebuilt by every step
_CONFIG_ATTRS = frozenset({"cfg"})
# Never walked: code, and enum members (constants, e.g. an actuator config's CommandField).
_CODE = (
    type,
    types.ModuleType,
    types.FunctionType,
    types.MethodType,
    types.BuiltinFunctionType,
    enum.Enum,
)


def _is_ours(obj: Any) -> bool:
    return any(cls.__module__.startswith("mjlab.") for cls in type(obj).__mro__)


def _walkable(obj: Any) -> bool:
    """An object of ours (or a subclass of ours) that holds run-time state; containers (a
    frozen config's dicts and lists are ours too) are walked as containers."""
    return (
        not isinstance(obj, (*_CODE, dict, list, tuple))
        and not dataclasses.is_dataclass(obj)
        and _is_ours(obj)
    )


def _term_instance(obj: Any) -> bool:
    """A class-based term (any class, also one of a downstream project) in a config's `func`."""
    return hasattr(obj, "__dict__") and not isinstance(obj, _CODE) and not _is_config(obj)


def _is_config(obj: Any) -> bool:
    return dataclasses.is_dataclass(obj) and not isinstance(obj, type)


def _leaf(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biuf"  # numbers and bools; names are not state
    return (
        isinstance(value, (torch.Tensor, torch.Generator, np.random.Generator))
        or type(value) in (bool, int, float)
        or isinstance(value, np.generic)
        or value is None
    )


def _items(obj: Any) -> Iterator[tuple[Any, Any]]:
    if isinstance(obj, dict):
        yield from obj.items()
    elif isinstance(obj, (list, tuple)):
        yield from enumerate(obj)
    else:
        names = getattr(obj, "__dict__", {})
        skip = _SKIP_ATTRS.union(getattr(type(obj), "_snapshot_exclude", ()))
        for name, value in names.items():
            if name not in skip:
                yield name, value


def _child_path(parent: str, obj: Any, key: Any) -> str:
    if isinstance(obj, (dict, list, tuple)):
        return f"{parent}[{key!r}]"
    return f"{parent}.{key}" if parent else str(key)


def _slots(root: Any) -> Iterator[tuple[str, Any, Any, Any]]:
    """(path, container, key, value) of every leaf, in a deterministic order; each object and
    each tensor is visited once (the first path that reaches it names it).

    Configs (dataclasses, `cfg` attributes) are searched without recording their own values:
    a class-based term lives in its config's `func` field, and its state is recorded."""
    seen: set[int] = set()
    stack: list[tuple[str, Any, bool]] = [("", root, False)]
    while stack:
        path, obj, in_config = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        in_config = in_config or _is_config(obj)
        children = []
        for key, value in _items(obj):
            child = _child_path(path, obj, key)
            if _leaf(value):
                if in_config:
                    continue  # a config's value, not state
                generator = (torch.Generator, np.random.Generator)
                if isinstance(value, (torch.Tensor, np.ndarray, *generator)):
                    if id(value) in seen:
                        continue
                    seen.add(id(value))
                if isinstance(obj, tuple) and not isinstance(value, torch.Tensor | np.ndarray):
                    continue  # immutable slot: only in-place state can be restored
                yield child, obj, key, value
            elif _walkable(value) or (key == "func" and _term_instance(value)):
                children.append((child, value, False))
            elif isinstance(value, (dict, list, tuple)) or _is_config(value):
                config = in_config or _is_config(value) or key in _CONFIG_ATTRS
                children.append((child, value, config))
        stack.extend(reversed(children))


def _resolve(root: Any, state: dict[str, Any]) -> dict[str, tuple[Any, Any, Any]]:
    slots = {path: (obj, key, value) for path, obj, key, value in _slots(root)}
    missing = [path for path in state if path not in slots]
    if missing:
        raise StateMismatchError(
            f"The saved state does not fit this object: it has no {missing[0]!r}"
            f"{f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''}."
        )
    return slots


def _saved(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value.copy())  # tensors: `torch.load(weights_only=True)` reads them
    if isinstance(value, torch.Generator):
        return {"torch_generator": value.get_state()}
    if isinstance(value, np.random.Generator):
        return {"numpy_generator": value.bit_generator.state}
    if isinstance(value, np.generic):
        return value.item()
    return value


def capture(root: Any) -> dict[str, Any]:
    """Copies of every mutable leaf of `root`'s object graph, by attribute path.

    Returns:
        {path: value}: tensors (cloned, on their device; numpy arrays as CPU tensors), generator
        states as {"torch_generator": ByteTensor} / {"numpy_generator": state dict}, and
        bool / int / float / None. Only types `torch.load(weights_only=True)` reads back.
    """
    return {path: _saved(value) for path, _, _, value in _slots(root)}


class StateMismatchError(ValueError):
    """A captured state does not fit the object it is restored into (another config)."""


def restore(root: Any, state: dict[str, Any]) -> None:
    """Write a `capture` record back into `root` (built like the captured object), in place.

    Tensors and arrays are copied into the existing ones (their views and aliases keep
    working); a leaf that was None or of another shape when `root` was built is replaced.
    Every path is checked before anything is written.

    Raises:
        StateMismatchError: a recorded path that `root` does not have, naming it; nothing is
            written in that case.
    """
    slots = _resolve(root, state)
    with torch.no_grad():
        for path, saved in state.items():
            obj, key, current = slots[path]
            _put(obj, key, current, saved)


def _put(obj: Any, key: Any, current: Any, saved: Any) -> None:
    if isinstance(saved, dict) and "torch_generator" in saved:
        current.set_state(saved["torch_generator"].cpu())
        return
    if isinstance(saved, dict) and "numpy_generator" in saved:
        current.bit_generator.state = saved["numpy_generator"]
        return
    if isinstance(current, torch.Tensor) and isinstance(saved, (torch.Tensor, np.ndarray)):
        saved = torch.as_tensor(saved)
        if current.shape == saved.shape and current.dtype == saved.dtype:
            current.copy_(saved)
            return
        saved = saved.to(current.device)
    elif isinstance(current, np.ndarray) and isinstance(saved, (torch.Tensor, np.ndarray)):
        saved = saved.cpu().numpy() if isinstance(saved, torch.Tensor) else saved
        if current.shape == saved.shape and current.dtype == saved.dtype:
            if current.flags.writeable:
                np.copyto(current, saved)
            return
        saved = saved.copy()
    elif isinstance(saved, torch.Tensor):
        saved = saved.clone()
    elif isinstance(current, np.generic) and not isinstance(saved, (dict, type(None))):
        saved = type(current)(saved)  # np.float32 stays np.float32
    if isinstance(obj, (dict, list)):
        obj[key] = saved
    else:
        setattr(obj, key, saved)

"""Device moves over nested containers of tensors (private helper of :mod:`rlightning.types`)."""

from __future__ import annotations

from typing import Any

import torch
from tensordict import TensorDictBase


def move_tree(value: Any, device: torch.device | str) -> Any:
    """Return ``value`` with every tensor moved to ``device``.

    Tensors and ``TensorDict``\\ s are moved; dicts, lists and tuples are rebuilt with their items
    moved; anything else (numbers, strings, ``None``, numpy arrays) is returned unchanged.
    """
    if isinstance(value, (torch.Tensor, TensorDictBase)):
        return value.to(device)
    if isinstance(value, dict):
        return {key: move_tree(item, device) for key, item in value.items()}
    if isinstance(value, list):
        return [move_tree(item, device) for item in value]
    if isinstance(value, tuple):
        return tuple(move_tree(item, device) for item in value)
    return value

"""The policy-to-environment (and policy-to-buffer) message."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from rlightning.types._tree import move_tree


class PolicyResponse:
    """Named fields a policy produced for one :class:`~rlightning.types.EnvRet`.

    The only fixed field is ``env_id``; the rest are whatever the policy computes, e.g.
    ``PolicyResponse("env_0", actions=a, values=v)``. Every field is readable as an attribute
    (``resp.actions``) or an item (``resp["actions"]``). Which fields exist is part of each
    policy's documented contract (see ``RSLRLPolicy.rollout_step``).

    Args:
        env_id: Name of the environment the response is addressed to.
        **fields: The response fields; values are usually ``(N, ...)`` tensors or ``TensorDict``\\ s.

    Raises:
        ValueError: If a field is called ``env_id`` or starts with an underscore.
    """

    def __init__(self, env_id: str, **fields: Any) -> None:
        for name in fields:
            if name.startswith("_"):
                raise ValueError(
                    f"PolicyResponse field '{name}' starts with an underscore; those names are "
                    "reserved. Rename the field."
                )
        object.__setattr__(self, "env_id", env_id)
        object.__setattr__(self, "_fields", dict(fields))

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails, i.e. for response fields.
        fields = self.__dict__.get("_fields", {})
        if name in fields:
            return fields[name]
        raise AttributeError(
            f"PolicyResponse for '{self.__dict__.get('env_id')}' has no field '{name}'; "
            f"fields: {sorted(fields)}"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "env_id":
            object.__setattr__(self, name, value)
        else:
            self._fields[name] = value

    def __getitem__(self, name: str) -> Any:
        return getattr(self, name)

    def __contains__(self, name: object) -> bool:
        return name in self._fields

    def __iter__(self) -> Iterator[str]:
        return iter(self._fields)

    def __getstate__(self) -> dict[str, Any]:
        return {"env_id": self.env_id, "fields": self._fields}

    def __setstate__(self, state: dict[str, Any]) -> None:
        object.__setattr__(self, "env_id", state["env_id"])
        object.__setattr__(self, "_fields", state["fields"])

    def __repr__(self) -> str:
        parts = []
        for name, value in self._fields.items():
            shape = getattr(value, "shape", None)
            parts.append(f"{name}={tuple(shape)}" if shape is not None else f"{name}={value!r}")
        return f"PolicyResponse(env_id={self.env_id!r}, {', '.join(parts)})"

    def keys(self) -> list[str]:
        """Names of the response fields (``env_id`` excluded), in insertion order."""
        return list(self._fields)

    def get(self, name: str, default: Any = None) -> Any:
        """Return field ``name``, or ``default`` when the response has no such field."""
        return self._fields.get(name, default)

    def to(self, device: torch.device | str) -> PolicyResponse:
        """Return a copy whose tensors live on ``device`` (this object is not changed)."""
        return PolicyResponse(self.env_id, **move_tree(self._fields, device))

    def cpu(self) -> PolicyResponse:
        """Return a copy whose tensors live on the CPU."""
        return self.to("cpu")

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"env_id": ..., **fields}`` as a shallow dict (tensors are not copied)."""
        return {"env_id": self.env_id, **self._fields}

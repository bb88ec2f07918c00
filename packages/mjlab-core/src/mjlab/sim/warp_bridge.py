"""mjlab 1.6's torch views of MuJoCo Warp data: `TorchArray` and `WarpBridge`.

`Simulation.data` already gives every state field as a torch tensor on both backends; these two
classes are for code that holds MuJoCo Warp's own ``mjw.Model`` / ``mjw.Data`` structs and
wants to read and write their
``wp.array`` fields with torch, without copies (``m, d = sim.warp_model_data`` on the MuJoCo
Warp backend). Warp is imported when a view is made, so
importing this module costs nothing on the C MuJoCo backend.
"""

from __future__ import annotations

import operator
from typing import Any

import torch

__all__ = ["TorchArray", "WarpBridge"]


def _unwrap(value: Any) -> Any:
    """TorchArray -> its tensor, through lists, tuples and dicts; anything else unchanged."""
    if isinstance(value, TorchArray):
        return value.tensor
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap(v) for k, v in value.items()}
    return value


class TorchArray:
    """A ``wp.array`` seen as a torch tensor that shares its memory (``wp.to_torch``).

    Torch functions, operators, indexing and tensor methods act on the tensor, so
    ``torch.sum(view)``, ``view * 2`` and ``view[0] = 1.0`` work; an in-place write changes the
    Warp array. Results are plain torch tensors.

    Args:
        array: The Warp array.

    Attributes:
        array: The Warp array.
        tensor: Its zero-copy torch tensor (same shape, dtype, device; a vector dtype such as
            ``wp.vec3`` adds a trailing dimension).
    """

    __slots__ = ("array", "tensor")

    def __init__(self, array: Any) -> None:
        import warp as wp

        if not isinstance(array, wp.array):
            raise TypeError(f"TorchArray needs a warp array, got {type(array).__name__}.")
        self.array = array
        self.tensor = wp.to_torch(array)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return func(*_unwrap(args), **_unwrap(kwargs or {}))

    def __getattr__(self, name: str) -> Any:
        # shape, dtype, device, clone(), sum(), ... of the tensor.
        return getattr(self.tensor, name)

    def __getitem__(self, index: Any) -> torch.Tensor:
        return self.tensor[_unwrap(index)]

    def __setitem__(self, index: Any, value: Any) -> None:
        self.tensor[_unwrap(index)] = _unwrap(value)

    def __len__(self) -> int:
        return len(self.tensor)

    def __repr__(self) -> str:
        return f"TorchArray({self.tensor!r})"

    def __array__(self, dtype=None):
        array = self.tensor.detach().cpu().numpy()
        return array if dtype is None else array.astype(dtype)


def _binary(op):
    def forward(self, other):
        return op(self.tensor, _unwrap(other))

    def reflected(self, other):
        return op(_unwrap(other), self.tensor)

    return forward, reflected


for _name, _op in {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "pow": operator.pow,
    "matmul": operator.matmul,
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
}.items():
    _fwd, _ref = _binary(_op)
    setattr(TorchArray, f"__{_name}__", _fwd)
    setattr(TorchArray, f"__r{_name}__", _ref)
for _name, _op in {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}.items():
    setattr(TorchArray, f"__{_name}__", _binary(_op)[0])
TorchArray.__hash__ = None  # equality is elementwise, as for tensors
TorchArray.__neg__ = lambda self: -self.tensor
TorchArray.__pos__ = lambda self: +self.tensor
TorchArray.__abs__ = lambda self: abs(self.tensor)
TorchArray.__invert__ = lambda self: ~self.tensor


class WarpBridge:
    """A MuJoCo Warp struct (``mjw.Model``, ``mjw.Data``, or a nested one such as
    ``Data.contact``) whose ``wp.array`` fields read as `TorchArray` views.

    Reading a field gives a `TorchArray` for a Warp array, a `WarpBridge` for a nested Warp
    struct, and the plain value otherwise. Assigning to an array field copies the value (a
    tensor, a `TorchArray`, a number or a numpy array, broadcast to the field's shape) into
    the existing Warp array in place, so CUDA graphs captured on it stay valid; other fields
    are set as given.

    Args:
        struct: The Warp struct.

    Raises:
        AttributeError: reading or assigning a field the struct does not have.
    """

    __slots__ = ("struct",)

    def __init__(self, struct: Any) -> None:
        object.__setattr__(self, "struct", struct)

    def __getattr__(self, name: str) -> Any:
        import warp as wp

        value = getattr(self.struct, name)
        if isinstance(value, wp.array):
            return TorchArray(value)
        if hasattr(type(value), "__annotations__") and any(
            isinstance(getattr(value, f, None), wp.array) for f in type(value).__annotations__
        ):
            return WarpBridge(value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        import warp as wp

        current = getattr(self.struct, name)  # AttributeError names the missing field
        if isinstance(current, wp.array):
            target = wp.to_torch(current)
            source = _unwrap(value)
            target.copy_(torch.as_tensor(source, dtype=target.dtype, device=target.device))
            return
        setattr(self.struct, name, value)

    def __repr__(self) -> str:
        return f"WarpBridge({type(self.struct).__name__})"

"""The observations of a vector step's sub-responses as one batched value, decoded together.

`ObservationStack.stack(values, out)` gives exactly what Gymnasium's
`concatenate(space, [decode_value(v, space) for v in values], out)` gives. For the spaces the
protocol carries as tensors of a fixed dtype and shape (Box, MultiDiscrete, MultiBinary),
Discrete, and Dicts and Tuples of them, it checks each `Value` against the space and copies all
their bytes into `out` with one `np.frombuffer` over the joined bytes, instead of making an
array per sub-environment and stacking them; any value that does not match (another dtype or
shape, a malformed tensor, a missing key) sends the whole batch down the general path, which
decodes (or fails) as it always did.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces as gs
from gymnasium.vector.utils import concatenate
from platform_contracts.spaces import decode_value
from platform_contracts.values import tensor_dtype_name
from simulusion.env.v1 import values_pb2 as pb


class _Mismatch(Exception):
    """A value the fast path does not take: decode the batch the general way."""


# Gathers a batch of Values of one space into what will be written into `out` (raises _Mismatch).
_Gather = Callable[[Sequence[pb.Value]], Any]


class ObservationStack:
    """Decodes a batch's observations of `space` into the batched array (or dict, tuple)."""

    def __init__(self, space: Any) -> None:
        self.space = space
        self._gather = _gatherer(space, top=True)

    def stack(self, values: Sequence[pb.Value], out: Any) -> Any:
        """The observations `values` (one per sub-environment, in order) written into `out`
        (from `create_empty_array(space, len(values))`); returns `concatenate`'s result."""
        if self._gather is not None:
            try:
                gathered = self._gather(values)
            except _Mismatch:
                pass
            else:
                if _fits(gathered, out):
                    return _write(gathered, out)
        return concatenate(self.space, [decode_value(v, self.space) for v in values], out)


def _gatherer(space: Any, *, top: bool) -> _Gather | None:
    """The fast path for `space`, or None where there is none."""
    kind = type(space)
    if kind in (gs.Box, gs.MultiDiscrete, gs.MultiBinary):
        return _tensor_gatherer(np.dtype(space.dtype), tuple(space.shape))
    if kind is gs.Discrete:
        # At the top, `decode_value` gives each integer the space's dtype (an integer out of its
        # range raises); inside a Dict or Tuple it is an int64, cast when stacked.
        return _discrete_gatherer(np.dtype(space.dtype) if top else np.dtype(np.int64))
    if kind is gs.Dict:
        keys = list(space.spaces)
        parts = [_gatherer(s, top=False) for s in space.spaces.values()]
        if any(p is None for p in parts):
            return None
        return _dict_gatherer(keys, parts)  # type: ignore[arg-type]
    if kind is gs.Tuple:
        parts = [_gatherer(s, top=False) for s in space.spaces]
        if any(p is None for p in parts):
            return None
        return _tuple_gatherer(parts)  # type: ignore[arg-type]
    return None


def _tensor_gatherer(dtype: np.dtype, shape: tuple[int, ...]) -> _Gather | None:
    if dtype.kind == "O" or dtype.byteorder == ">":
        return None
    name = tensor_dtype_name(dtype)
    wire_shape = list(shape)
    item_bytes = dtype.itemsize * int(np.prod(shape, dtype=np.int64))

    def gather(values: Sequence[pb.Value]) -> np.ndarray:
        chunks: list[bytes] = []
        append = chunks.append
        for value in values:
            tensor = value.tensor  # the default (dtype "") when the value is not a tensor
            if tensor.dtype != name or tensor.shape != wire_shape:
                raise _Mismatch
            append(tensor.data)
        joined = b"".join(chunks)
        if len(joined) != item_bytes * len(values):
            raise _Mismatch  # a malformed tensor: the general path says what is wrong
        return np.frombuffer(joined, dtype=dtype).reshape((len(values), *shape))

    return gather


def _discrete_gatherer(dtype: np.dtype) -> _Gather:
    def gather(values: Sequence[pb.Value]) -> np.ndarray:
        integers: list[int] = []
        append = integers.append
        for value in values:
            if value.WhichOneof("kind") != "discrete":
                raise _Mismatch
            append(value.discrete)
        return np.asarray(integers, dtype=dtype)

    return gather


def _dict_gatherer(keys: list[str], parts: list[_Gather]) -> _Gather:
    def gather(values: Sequence[pb.Value]) -> dict[str, Any]:
        columns: list[list[pb.Value]] = [[] for _ in keys]
        for value in values:
            entries = value.dict.entries
            if value.WhichOneof("kind") != "dict" or [entry.name for entry in entries] != keys:
                raise _Mismatch  # not a dict, or other keys or order: the general path decides
            for column, entry in zip(columns, entries, strict=True):
                column.append(entry.value)
        return {key: part(column) for key, part, column in zip(keys, parts, columns, strict=True)}

    return gather


def _tuple_gatherer(parts: list[_Gather]) -> _Gather:
    def gather(values: Sequence[pb.Value]) -> tuple[Any, ...]:
        columns: list[list[pb.Value]] = [[] for _ in parts]
        for value in values:
            items = value.tuple.values
            if value.WhichOneof("kind") != "tuple" or len(items) != len(parts):
                raise _Mismatch
            for column, item in zip(columns, items, strict=True):
                column.append(item)
        return tuple(part(column) for part, column in zip(parts, columns, strict=True))

    return gather


def _fits(gathered: Any, out: Any) -> bool:
    """Whether `gathered` can be written into `out` as `concatenate` would (checked before any
    write, so that a batch that falls back leaves `out` to the general path untouched)."""
    if isinstance(gathered, np.ndarray):
        return (isinstance(out, np.ndarray) and out.shape == gathered.shape
                and np.can_cast(gathered.dtype, out.dtype, "same_kind"))
    if isinstance(gathered, dict):
        return isinstance(out, dict) and all(key in out and _fits(g, out[key]) for key, g in gathered.items())
    return (isinstance(out, tuple) and len(out) == len(gathered)
            and all(_fits(g, o) for g, o in zip(gathered, out, strict=True)))


def _write(gathered: Any, out: Any) -> Any:
    if isinstance(gathered, np.ndarray):
        np.copyto(out, gathered, casting="same_kind")
        return out
    if isinstance(gathered, dict):
        return {key: _write(g, out[key]) for key, g in gathered.items()}
    return tuple(_write(g, o) for g, o in zip(gathered, out, strict=True))

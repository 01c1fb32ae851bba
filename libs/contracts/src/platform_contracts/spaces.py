"""Convert Gymnasium spaces to and from protobuf, and encode values of a known space.

Gymnasium is imported lazily, so importing this module costs nothing where it is unused.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from simulusion.env.v1 import values_pb2 as pb

from platform_contracts.values import (
    array_from_tensor,
    fill_tensor,
    python_from_value,
    tensor_dtype_name,
    tensor_from_array,
    value_from_python,
)


class UnsupportedSpaceError(TypeError):
    """A space type the environment protocol cannot carry."""


def space_to_proto(space: Any) -> pb.Space:
    from gymnasium import spaces as gs

    if isinstance(space, gs.Box):
        return pb.Space(box=pb.BoxSpace(low=tensor_from_array(space.low), high=tensor_from_array(space.high)))
    if isinstance(space, gs.Discrete):
        return pb.Space(
            discrete=pb.DiscreteSpace(n=int(space.n), start=int(space.start), dtype=np.dtype(space.dtype).name)
        )
    if isinstance(space, gs.MultiDiscrete):
        return pb.Space(
            multi_discrete=pb.MultiDiscreteSpace(nvec=tensor_from_array(space.nvec), start=tensor_from_array(space.start))
        )
    if isinstance(space, gs.MultiBinary):
        return pb.Space(multi_binary=pb.MultiBinarySpace(shape=list(space.shape)))
    if isinstance(space, gs.Dict):
        return pb.Space(
            dict=pb.DictSpace(entries=[pb.NamedSpace(name=k, space=space_to_proto(s)) for k, s in space.spaces.items()])
        )
    if isinstance(space, gs.Tuple):
        return pb.Space(tuple=pb.TupleSpace(spaces=[space_to_proto(s) for s in space.spaces]))
    raise UnsupportedSpaceError(
        f"{type(space).__name__} is not supported by the environment protocol "
        "(use Box, Discrete, MultiDiscrete, MultiBinary, Dict or Tuple)"
    )


def space_from_proto(proto: pb.Space, seed: int | None = None) -> Any:
    from gymnasium import spaces as gs

    kind = proto.WhichOneof("kind")
    if kind == "box":
        low, high = array_from_tensor(proto.box.low), array_from_tensor(proto.box.high)
        return gs.Box(low=low, high=high, shape=low.shape, dtype=low.dtype, seed=seed)
    if kind == "discrete":
        d = proto.discrete
        return gs.Discrete(d.n, start=d.start, seed=seed, dtype=np.dtype(d.dtype or "int64"))
    if kind == "multi_discrete":
        md = proto.multi_discrete
        nvec = array_from_tensor(md.nvec)
        start = array_from_tensor(md.start) if md.HasField("start") else None
        return gs.MultiDiscrete(nvec, dtype=nvec.dtype, seed=seed, start=start)
    if kind == "multi_binary":
        shape = list(proto.multi_binary.shape)
        return gs.MultiBinary(shape[0] if len(shape) == 1 else shape, seed=seed)
    if kind == "dict":
        return gs.Dict({e.name: space_from_proto(e.space) for e in proto.dict.entries}, seed=seed)
    if kind == "tuple":
        return gs.Tuple([space_from_proto(s) for s in proto.tuple.spaces], seed=seed)
    raise UnsupportedSpaceError(f"unknown space kind {kind!r}")


def encode_value(obj: Any, space: Any) -> pb.Value:
    """Encode a value of `space` (a Gymnasium space)."""
    value = pb.Value()
    fill_value(value, obj, space)
    return value


def fill_value(value: pb.Value, obj: Any, space: Any) -> None:
    """Write `obj`, a value of `space`, into the empty `value` in place (as `encode_value`,
    without a message to copy).

    Raises:
        ValueError, TypeError: `obj` is not a value of `space` (`value` may be half written).
    """
    from gymnasium import spaces as gs

    if isinstance(space, gs.Discrete):
        _fill_discrete(value, obj, space)
    elif isinstance(space, gs.Dict):
        if not isinstance(obj, dict):
            raise ValueError(f"{obj!r} is not a value of {space}: expected a dict")  # noqa: TRY004 - callers catch ValueError for any mismatch
        entries = value.dict.entries
        value.dict.SetInParent()  # an empty Dict space still has a dict value
        for k, s in space.spaces.items():
            fill_value(entries.add(name=k).value, obj[k], s)
    elif isinstance(space, gs.Tuple):
        values = value.tuple.values
        value.tuple.SetInParent()
        for v, s in zip(obj, space.spaces, strict=True):
            fill_value(values.add(), v, s)
    elif isinstance(space, (gs.Box, gs.MultiDiscrete, gs.MultiBinary)):
        fill_tensor(value.tensor, np.asarray(obj, dtype=space.dtype))
    else:
        value.CopyFrom(value_from_python(obj))


ValueWriter = Callable[[pb.Value, Any], None]


# id(space) -> (space, its writer); the space is kept so that its id is not reused meanwhile.
_WRITERS: dict[int, tuple[Any, ValueWriter]] = {}
_MAX_WRITERS = 256  # restored environments bring new space objects: forget them all past this


def value_writer(space: Any) -> ValueWriter:
    """A function writing a value of `space` into an empty `Value` (`fill_value(value, obj,
    space)`), made once per space object: the step path writes an observation per step, and
    this leaves out the space's type checks and dtype look-ups there."""
    entry = _WRITERS.get(id(space))
    if entry is not None and entry[0] is space:
        return entry[1]
    writer = _make_writer(space)
    if len(_WRITERS) >= _MAX_WRITERS:
        _WRITERS.clear()
    _WRITERS[id(space)] = (space, writer)
    return writer


def _make_writer(space: Any) -> ValueWriter:
    from gymnasium import spaces as gs

    if type(space) in (gs.Box, gs.MultiDiscrete, gs.MultiBinary):
        dtype = np.dtype(space.dtype)
        if dtype.kind != "O" and dtype.byteorder != ">":
            name = tensor_dtype_name(dtype)
            shape = tuple(space.shape)
            head = _tensor_value_head(name, shape, dtype.itemsize * int(np.prod(shape, dtype=np.int64)))
            return functools.partial(_fill_array, dtype, name, shape, head)
    elif type(space) is gs.Discrete:
        return functools.partial(_fill_discrete, space=space)
    return lambda value, obj: fill_value(value, obj, space)


def _fill_discrete(value: pb.Value, obj: Any, space: Any) -> None:
    if type(obj) is int:  # the common case (and what np.asarray would accept)
        value.discrete = obj
        return
    array = np.asarray(obj)
    if array.shape != () or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{obj!r} is not a value of {space}: expected one integer")
    value.discrete = int(array)


def _fill_array(dtype: np.dtype, name: str, shape: tuple[int, ...], head: bytes | None,
                value: pb.Value, obj: Any) -> None:
    array = np.asarray(obj, dtype=dtype)
    if head is not None and array.shape == shape:
        # The space's shape: the Value's bytes are a fixed head and the array's bytes; merging
        # them is one call into protobuf instead of a write per field.
        value.MergeFromString(head + array.tobytes())  # C order, whatever the array's layout
        return
    tensor = value.tensor
    tensor.dtype = name
    tensor.shape.extend(array.shape)
    tensor.data = array.tobytes()


def _tensor_value_head(name: str, shape: tuple[int, ...], size: int) -> bytes | None:
    """The bytes of a tensor `Value` of `name` and `shape` before its `size` data bytes, as
    protobuf serializes it (None when there is no data to follow them)."""
    if size == 0:
        return None
    marker = b"\xa5" * size
    whole = pb.Value(tensor=pb.Tensor(dtype=name, shape=shape, data=marker)).SerializeToString()
    return whole[:-size] if whole.endswith(marker) else None


def decode_value(value: pb.Value, space: Any = None) -> Any:
    """Decode a Value; with a Discrete space the integer takes the space's dtype."""
    if space is not None and value.WhichOneof("kind") == "discrete":
        return np.asarray(value.discrete, dtype=space.dtype)[()]
    return python_from_value(value)

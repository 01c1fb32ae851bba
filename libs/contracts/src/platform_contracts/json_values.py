"""JSON views of protocol values and spaces, for the REST API.

Works from the protobuf Space alone (no Gymnasium), and names the space in every error.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from simulusion.env.v1 import values_pb2 as pb

from platform_contracts.values import array_from_tensor, python_from_value, tensor_dtype, tensor_from_array


class ValueMismatchError(ValueError):
    """A JSON value that does not fit the space it was given for."""


def describe_space(space: pb.Space) -> str:
    """A short text like Gymnasium's repr: Box(-1.0, 1.0, (3,), float32), Discrete(2)."""
    kind = space.WhichOneof("kind")
    if kind == "box":
        low, high = array_from_tensor(space.box.low), array_from_tensor(space.box.high)
        lo = low.min() if low.size else 0
        hi = high.max() if high.size else 0
        return f"Box({lo}, {hi}, {tuple(low.shape)}, {low.dtype})"
    if kind == "discrete":
        d = space.discrete
        return f"Discrete({d.n})" if d.start == 0 else f"Discrete({d.n}, start={d.start})"
    if kind == "multi_discrete":
        return f"MultiDiscrete({array_from_tensor(space.multi_discrete.nvec).tolist()})"
    if kind == "multi_binary":
        return f"MultiBinary({list(space.multi_binary.shape)})"
    if kind == "dict":
        inner = ", ".join(f"'{e.name}': {describe_space(e.space)}" for e in space.dict.entries)
        return f"Dict({inner})"
    if kind == "tuple":
        return f"Tuple({', '.join(describe_space(s) for s in space.tuple.spaces)})"
    return "UnknownSpace"


def space_to_json(space: pb.Space) -> dict[str, Any]:
    kind = space.WhichOneof("kind")
    out: dict[str, Any] = {"type": kind, "repr": describe_space(space)}
    if kind == "box":
        low = array_from_tensor(space.box.low)
        high = array_from_tensor(space.box.high)
        out.update(shape=list(low.shape), dtype=str(low.dtype), low=_bound(low), high=_bound(high))
    elif kind == "discrete":
        out.update(n=space.discrete.n, start=space.discrete.start)
    elif kind == "multi_discrete":
        out.update(nvec=array_from_tensor(space.multi_discrete.nvec).tolist())
    elif kind == "multi_binary":
        out.update(shape=list(space.multi_binary.shape))
    elif kind == "dict":
        out["spaces"] = {e.name: space_to_json(e.space) for e in space.dict.entries}
    elif kind == "tuple":
        out["spaces"] = [space_to_json(s) for s in space.tuple.spaces]
    return out


def _bound(array: np.ndarray) -> Any:
    """A Box bound in JSON: one number when every element has it (an image's 0 and 255, as
    Gymnasium's `Box(0, 255, shape)` writes it: spelled out, an Atari screen's bounds are
    2 x 100,800 numbers, a megabyte of JSON in every recording's meta.json), else the flat list.
    Non-finite values as strings ("inf", "-inf", "nan"): JSON has no such numbers."""
    values = array.astype(float).ravel()
    if values.size and bool(np.all(values == values[0])):
        first = values[0].item()
        return first if np.isfinite(first) else str(first)
    return _finite(values)


def _finite(values: np.ndarray) -> list[Any]:
    """Flat float values as a list, the non-finite ones as strings. Checked in one pass."""
    out: list[Any] = values.tolist()
    for i in np.flatnonzero(~np.isfinite(values)).tolist():
        out[i] = str(out[i])
    return out


def value_from_json(obj: Any, space: pb.Space) -> pb.Value:
    """Encode a JSON value for `space`; raise ValueMismatchError naming the space if it cannot fit.

    The space's description is made only for an error message, and a Box's or MultiDiscrete's
    dtype and shape are read from its bound's header, never decoded: this runs on every step a
    browser sends.
    """
    kind = space.WhichOneof("kind")
    if kind == "discrete":
        if isinstance(obj, bool) or not isinstance(obj, (int, float)) or (
            isinstance(obj, float) and not obj.is_integer()
        ):
            raise ValueMismatchError(f"action {obj!r} does not fit {describe_space(space)}: expected one integer")
        try:
            return pb.Value(discrete=int(obj))
        except ValueError:  # beyond int64
            raise ValueMismatchError(f"action {obj!r} does not fit {describe_space(space)}: out of range") from None
    if kind in ("box", "multi_discrete", "multi_binary"):
        dtype, shape = _template(space, kind)
        try:
            array = np.asarray(obj, dtype=dtype)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValueMismatchError(f"action {obj!r} does not fit {describe_space(space)}: {exc}") from None
        if array.shape != shape:
            raise ValueMismatchError(f"action of shape {list(array.shape)} does not fit {describe_space(space)}: "
                                     f"expected shape {list(shape)}")
        return pb.Value(tensor=tensor_from_array(array))
    if kind == "dict":
        if not isinstance(obj, dict):
            raise ValueMismatchError(f"action {obj!r} does not fit {describe_space(space)}: expected an object")
        missing = [e.name for e in space.dict.entries if e.name not in obj]
        if missing:
            raise ValueMismatchError(f"action does not fit {describe_space(space)}: missing keys {missing}")
        return pb.Value(
            dict=pb.DictValue(
                entries=[pb.NamedValue(name=e.name, value=value_from_json(obj[e.name], e.space)) for e in space.dict.entries]
            )
        )
    if kind == "tuple":
        spaces = list(space.tuple.spaces)
        if not isinstance(obj, list) or len(obj) != len(spaces):
            raise ValueMismatchError(f"action {obj!r} does not fit {describe_space(space)}: "
                                     f"expected a list of {len(spaces)}")
        return pb.Value(tuple=pb.TupleValue(values=[value_from_json(v, s) for v, s in zip(obj, spaces)]))
    raise ValueMismatchError(f"space {describe_space(space)} has no kind")


def _template(space: pb.Space, kind: str) -> tuple[np.dtype[Any], tuple[int, ...]]:
    """The dtype and shape an action of a Box, MultiDiscrete or MultiBinary space has."""
    if kind == "multi_binary":
        return np.dtype(np.int8), tuple(space.multi_binary.shape)
    bound = space.box.low if kind == "box" else space.multi_discrete.nvec
    return tensor_dtype(bound), tuple(bound.shape)


def value_to_json(value: pb.Value) -> Any:
    return _to_json(python_from_value(value))


def _to_json(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {k: _to_json(v) for k, v in obj.items()}
    if isinstance(obj, tuple):
        return [_to_json(v) for v in obj]
    return obj

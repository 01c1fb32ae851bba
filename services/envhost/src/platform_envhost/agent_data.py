"""The rules of agent data (`StepRequest.agent`, `HoldRequest.agent`), checked by the env host.

Values are finite numbers, booleans (recorded as 0/1) or lists of 1 to `MAX_AGENT_LIST_LENGTH`
numbers; a step carries at most `MAX_AGENT_NAMES_PER_STEP` names and a recording at most
`MAX_AGENT_NAMES_PER_RECORDING` (`platform_contracts.limits`); names match `AGENT_NAME`; a
name keeps the shape of its first value (a number, or a list of that length). A value that
breaks a rule is left out of what is recorded, with one warning line naming the name and
the rule; the step itself always goes on.

What is recorded is normalized: a scalar is `Data.number` (float), a list `Data.tensor`
(float64, shape (k,)). A map already in that form is recorded as it came, not copied.
"""

from __future__ import annotations

import math

import numpy as np
from platform_contracts.limits import (
    AGENT_NAME,
    AGENT_NAME_CHARACTERS,
    MAX_AGENT_LIST_LENGTH,
    MAX_AGENT_NAMES_PER_RECORDING,
    MAX_AGENT_NAMES_PER_STEP,
)
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb

SCALAR = -1  # the shape of a number (a list's shape is its length)

_NUMERIC_KINDS = frozenset("biuf")  # numpy dtype kinds: bool, int, uint, float
_VALUE_RULE = f"values are finite numbers, booleans or lists of up to {MAX_AGENT_LIST_LENGTH} numbers"


class AgentNames:
    """The agent data names of one recording (one session, or one sub-environment of a vector
    session) and the shape each keeps."""

    __slots__ = ("shapes",)

    def __init__(self) -> None:
        self.shapes: dict[str, int] = {}


class _Broken(ValueError):
    """A value that breaks a rule; the message says which."""


def _describe_shape(shape: int) -> str:
    return "a number" if shape == SCALAR else f"a list of {shape}"


def _finite(number: float) -> float:
    if not math.isfinite(number):
        raise _Broken(f"{number} is not finite; {_VALUE_RULE}")
    return number


def _list_length(length: int) -> None:
    if length == 0:
        raise _Broken(f"an empty list; {_VALUE_RULE}")
    if length > MAX_AGENT_LIST_LENGTH:
        raise _Broken(f"a list of {length} numbers; lists hold at most {MAX_AGENT_LIST_LENGTH}")


def _list_item(item: values_pb.Data) -> float:
    kind = item.WhichOneof("kind")
    if kind == "number":
        return _finite(item.number)
    if kind == "integer":
        return float(item.integer)
    if kind == "flag":
        return 1.0 if item.flag else 0.0
    raise _Broken(f"a list holding {kind or 'an empty value'}; {_VALUE_RULE}")


# What `_normalized` says to record: None (the value as it came), a float (a number) or a
# float64 array (a list).
Recorded = float | np.ndarray | None


def _normalized(data: values_pb.Data) -> tuple[int, Recorded]:
    """The shape of a value and its recorded form.

    Raises:
        _Broken: the value breaks a rule.
    """
    kind = data.WhichOneof("kind")
    if kind == "number":
        _finite(data.number)
        return SCALAR, None
    if kind == "flag":
        return SCALAR, 1.0 if data.flag else 0.0
    if kind == "integer":
        return SCALAR, float(data.integer)
    if kind == "list":
        items = data.list.items
        _list_length(len(items))
        return len(items), np.array([_list_item(item) for item in items], dtype=np.float64)
    if kind == "tensor":
        return _normalized_tensor(data.tensor)
    what = {"text": "a string", "map": "a map", "null": "null"}.get(kind or "", "an empty value")
    raise _Broken(f"{what}; {_VALUE_RULE}")


def _normalized_tensor(tensor: values_pb.Tensor) -> tuple[int, Recorded]:
    try:
        dtype = np.dtype(tensor.dtype)
        array = np.frombuffer(tensor.data, dtype=dtype).reshape(tuple(tensor.shape))
    except (TypeError, ValueError) as exc:
        raise _Broken(f"an unreadable array ({exc}); {_VALUE_RULE}") from None
    if dtype.kind not in _NUMERIC_KINDS:
        raise _Broken(f"an array of {dtype}; {_VALUE_RULE}")
    if array.ndim > 1:
        raise _Broken(f"an array of shape {array.shape}; lists are flat ({_VALUE_RULE})")
    values = array.astype(np.float64)
    if not np.isfinite(values).all():
        raise _Broken(f"an array holding non-finite numbers; {_VALUE_RULE}")
    if array.ndim == 0:
        return SCALAR, float(values)
    _list_length(array.shape[0])
    if dtype == np.float64 and dtype.byteorder != ">":
        return array.shape[0], None
    return array.shape[0], values


def check_agent_data(agent: values_pb.DataMap, names: AgentNames) -> tuple[values_pb.DataMap | None, list[str]]:
    """Check one step's agent data against the rules and the recording's names so far.

    Returns:
        What to record (`agent` itself when it needs no change; None when nothing is left) and
        one warning line per value left out. Accepted new names are added to `names`.
    """
    fields = agent.fields
    if not fields:
        return None, []
    shapes = names.shapes
    warnings: list[str] = []
    kept: list[tuple[str, values_pb.Data, Recorded]] = []
    changed = False
    for name in sorted(fields):  # in name order: the 32 names a step kept are the first ones
        data = fields[name]
        known = shapes.get(name)
        if known is None and not AGENT_NAME.fullmatch(name):
            warnings.append(f"agent data {name!r} left out: names are {AGENT_NAME_CHARACTERS}")
            continue
        try:
            shape, recorded = _normalized(data)
        except _Broken as exc:
            warnings.append(f"agent data {name!r} left out: {exc}")
            continue
        if known is not None and shape != known:
            warnings.append(f"agent data {name!r} left out: a name keeps the shape of its first value "
                            f"({_describe_shape(known)}), not {_describe_shape(shape)}")
            continue
        if len(kept) == MAX_AGENT_NAMES_PER_STEP:
            warnings.append(f"agent data {name!r} left out: at most {MAX_AGENT_NAMES_PER_STEP} names a step")
            continue
        if known is None:
            if len(shapes) >= MAX_AGENT_NAMES_PER_RECORDING:
                warnings.append(f"agent data {name!r} left out: at most {MAX_AGENT_NAMES_PER_RECORDING} names "
                                "a recording")
                continue
            shapes[name] = shape
        kept.append((name, data, recorded))
        changed = changed or recorded is not None
    if not kept:
        return None, warnings
    if not changed and not warnings:
        return agent, warnings
    result = values_pb.DataMap()
    out = result.fields
    for name, data, recorded in kept:
        if recorded is None:
            out[name].CopyFrom(data)
        elif isinstance(recorded, float):
            out[name].number = recorded
        else:
            tensor = out[name].tensor
            tensor.dtype = "f8"
            tensor.shape.append(len(recorded))
            tensor.data = recorded.tobytes()
    return result, warnings


def with_warnings(response: bytes, warnings: list[str]) -> bytes:
    """`response` (an EnvResponse's bytes) with `warnings` added, without re-encoding it
    (protobuf appends repeated fields that occur again)."""
    if not warnings:
        return response
    return response + env_pb.EnvResponse(warnings=warnings).SerializeToString()

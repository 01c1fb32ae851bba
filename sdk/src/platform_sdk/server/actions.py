"""Decode an action `Value` with the action space and check that it lies in the space."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces as gs
from platform_contracts.values import array_from_tensor, python_from_value
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

from platform_sdk.server.errors import CommandError

_INVALID = env_pb.ERROR_CODE_INVALID_ACTION


def decode_action(value: pb.Value, space: gs.Space[Any]) -> Any:
    """The action `value` encodes, as a value of `space`.

    Arrays whose dtype casts to the space's dtype within its kind (float64 to float32, int64 to
    int8) are cast; anything else must match the space exactly.

    Raises:
        CommandError: ERROR_CODE_INVALID_ACTION, naming the space, when the value cannot be
            decoded or does not lie in the space (value, shape or dtype).
    """
    kind = value.WhichOneof("kind")
    if kind == "discrete" and type(space) is gs.Discrete:  # the common case, kept cheap
        start, n = int(space.start), int(space.n)
        if start <= value.discrete < start + n:
            return space.dtype.type(value.discrete)
    elif kind is None:
        raise CommandError(_INVALID, f"the step has no action (expected a value of {space})")
    try:
        action = _decode(value, space)
    except (ValueError, TypeError, OverflowError) as exc:  # OverflowError: an integer beyond the dtype
        raise CommandError(_INVALID, f"cannot decode the action as a value of {space}: {exc}") from None
    try:
        inside = bool(space.contains(action))
    except Exception:  # noqa: BLE001 - a malformed value can make contains() itself fail
        inside = False
    if not inside:
        raise CommandError(_INVALID, f"action {describe(action, space)} is not in {space}")
    return action


def action_decoder(space: gs.Space[Any]) -> Callable[[pb.Value], Any]:
    """`decode_action` for one space, made once (an instance decodes an action per step): a
    Discrete space's bounds and dtype are read here rather than per action."""
    if type(space) is gs.Discrete:
        start = int(space.start)
        stop = start + int(space.n)
        make = space.dtype.type

        def decode_discrete(value: pb.Value) -> Any:
            if value.WhichOneof("kind") == "discrete":
                integer = value.discrete
                if start <= integer < stop:
                    return make(integer)
            return decode_action(value, space)

        return decode_discrete
    return functools.partial(_decode_action_of, space)


def _decode_action_of(space: gs.Space[Any], value: pb.Value) -> Any:
    return decode_action(value, space)


def _decode(value: pb.Value, space: gs.Space[Any]) -> Any:
    kind = value.WhichOneof("kind")
    if isinstance(space, gs.Dict) and kind == "dict":
        return {
            e.name: _decode(e.value, space.spaces[e.name])
            if e.name in space.spaces
            else python_from_value(e.value)
            for e in value.dict.entries
        }
    if isinstance(space, gs.Tuple) and kind == "tuple":
        subspaces = list(space.spaces)
        return tuple(
            _decode(v, subspaces[i]) if i < len(subspaces) else python_from_value(v)
            for i, v in enumerate(value.tuple.values)
        )
    if kind == "discrete":
        if isinstance(space, (gs.Discrete, gs.Box, gs.MultiDiscrete, gs.MultiBinary)):
            dtype = space.dtype if np.issubdtype(space.dtype, np.integer) else np.int64
            return np.asarray(value.discrete, dtype=dtype)[()]
        return np.int64(value.discrete)
    if kind == "tensor":
        array = array_from_tensor(value.tensor)
        wanted = getattr(space, "dtype", None)
        if wanted is not None and array.dtype != wanted and np.can_cast(array.dtype, wanted, "same_kind"):
            array = array.astype(wanted)
        if isinstance(space, gs.Discrete) and array.shape == ():
            return array[()]
        return array
    return python_from_value(value)


def describe(action: Any, space: gs.Space[Any]) -> str:
    """A short description of `action` for an error message."""
    shape, dtype = getattr(space, "shape", None), getattr(space, "dtype", None)
    if isinstance(action, np.ndarray) and action.ndim > 0:
        if (shape is not None and action.shape != shape) or (dtype is not None and action.dtype != dtype):
            return f"of shape {action.shape} and dtype {action.dtype}"
        return np.array2string(action, threshold=16, separator=", ")
    if isinstance(action, (np.generic, np.ndarray)):
        item = np.asarray(action).item()
        if dtype is not None and np.asarray(action).dtype != dtype and not isinstance(space, gs.Discrete):
            return f"{item!r} of dtype {np.asarray(action).dtype}"
        return repr(item)
    text = repr(action)
    return text if len(text) <= 200 else text[:197] + "..."

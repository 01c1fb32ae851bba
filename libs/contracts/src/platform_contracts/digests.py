"""The digest of an observation: one hex SHA-256 that says whether two observations are the
same, whichever form each is in.

An observation is taken as its leaves (arrays), each named by its path: "" for a plain array
or a Discrete value, the key for an entry of a Dict ("joints"), keys and indexes joined by dots
for nested Dict and Tuple spaces ("arm.joints", "0"). The digest hashes the leaves in the order
of their names (so a Dict's key order does not matter), each as

    name NUL dtype NUL shape NUL data

where dtype is NumPy's little-endian dtype string (`"<f4"`, `"|u1"`, `"<i8"`), shape the
dimensions joined by commas (`"210,160,3"`; `""` for a scalar) and data the C-order bytes. A
Discrete value (in Python an `int` or a NumPy integer scalar) is an int64 scalar, whatever its
space's dtype; a Box of shape () is a 0-d array of its own dtype.

The same observation gives the same digest as

- a protobuf `Value` (what an environment answers: the gateway's live observation),
- a Python observation (`numpy` arrays, Dict as `dict`, Tuple as `tuple`: what the SDK returns),
- one row of a recorded episode's `observations` / `observations.<path>` arrays
  (`episode_digests`: what the recorder serves).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np
from simulusion.env.v1 import values_pb2 as pb

OBSERVATIONS = "observations"  # the recorded observation arrays: "observations" or "observations.<path>"
_INT64 = np.dtype("<i8")
_WIRE_DTYPES: dict[str, np.dtype] = {}

Leaf = tuple[str, np.dtype, tuple[int, ...], bytes]  # (path, little-endian dtype, shape, C-order bytes)


def observation_digest(observation: Any) -> str:
    """The hex SHA-256 of an observation: a protobuf `Value`, a Python observation, or a mapping of
    leaf paths to arrays (`{"arm.joints": array}`, nested mappings alike).

    Raises:
        ValueError: an empty `Value`, or an object array (not an observation).
    """
    return leaves_digest(_leaves(observation, ""))


def leaves_digest(leaves: Iterable[Leaf]) -> str:
    """The digest of an observation given as its leaves: (path, little-endian dtype, shape, the
    C-order bytes), in any order (for readers that stream a recorded episode's rows)."""
    digest = hashlib.sha256()
    for name, dtype, shape, data in sorted(leaves, key=lambda leaf: leaf[0]):
        digest.update(f"{name}\0{dtype.str}\0{','.join(map(str, shape))}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def episode_digests(arrays: Mapping[str, np.ndarray]) -> list[str]:
    """The digest of each observation row of a recorded episode.

    Args:
        arrays: the episode's observation arrays, `observations` (a plain observation) or
            `observations.<path>` (Dict / Tuple leaves); other names are ignored.

    Raises:
        ValueError: no observation arrays, or arrays of different row counts.
    """
    columns: dict[str, np.ndarray] = {}
    for name, array in arrays.items():
        path = leaf_name(name)
        if path is not None:
            columns[path] = np.asarray(array)
    if not columns:
        raise ValueError(f"no {OBSERVATIONS!r} arrays among {sorted(arrays)}")
    rows = {len(column) for column in columns.values()}
    if len(rows) != 1:
        raise ValueError(f"the observation arrays have different row counts: "
                         f"{ {name: len(column) for name, column in columns.items()} }")
    # Rows as arrays: a row of a 1-d column is a NumPy scalar, which `_leaves` would take for a
    # Discrete value (a Box of shape () is not one).
    return [leaves_digest(_array_leaf(np.asarray(column[i]), path) for path, column in columns.items())
            for i in range(rows.pop())]


def is_observation_array(name: str) -> bool:
    """`name` is one of a recorded episode's observation arrays."""
    return leaf_name(name) is not None


def leaf_name(name: str) -> str | None:
    """The leaf path of a recorded observation array's name ("observations.arm.joints" ->
    "arm.joints", "observations" -> ""), None for other arrays."""
    if name == OBSERVATIONS:
        return ""
    if name.startswith(OBSERVATIONS + "."):
        return name[len(OBSERVATIONS) + 1:]
    return None


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _leaves(obj: Any, path: str) -> Iterator[Leaf]:
    if isinstance(obj, pb.Value):
        yield from _value_leaves(obj, path)
    elif isinstance(obj, Mapping):
        for key, item in obj.items():
            yield from _leaves(item, _join(path, str(key)))
    elif isinstance(obj, tuple):
        for i, item in enumerate(obj):
            yield from _leaves(item, _join(path, str(i)))
    elif isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_)):
        yield path, _INT64, (), np.int64(obj).tobytes()  # a Discrete value, whatever its dtype
    else:
        yield _array_leaf(np.asarray(obj), path)


def _value_leaves(value: pb.Value, path: str) -> Iterator[Leaf]:
    kind = value.WhichOneof("kind")
    if kind == "tensor":
        tensor = value.tensor
        dtype = _WIRE_DTYPES.get(tensor.dtype)
        if dtype is None:
            dtype = _WIRE_DTYPES.setdefault(tensor.dtype, _little_endian(np.dtype(tensor.dtype)))
        yield path, dtype, tuple(tensor.shape), tensor.data  # the wire's bytes are little-endian C order
    elif kind == "discrete":
        yield path, _INT64, (), np.int64(value.discrete).tobytes()
    elif kind == "dict":
        for entry in value.dict.entries:
            yield from _value_leaves(entry.value, _join(path, entry.name))
    elif kind == "tuple":
        for i, item in enumerate(value.tuple.values):
            yield from _value_leaves(item, _join(path, str(i)))
    else:
        raise ValueError(f"an empty Value (no kind set) at {path or 'the top'} has no digest")


def _array_leaf(array: np.ndarray, path: str) -> Leaf:
    if array.dtype.kind == "O":
        raise ValueError(f"an object array at {path or 'the top'} (shape {array.shape}) is not an observation")
    dtype = _little_endian(array.dtype)
    if dtype != array.dtype:
        array = array.astype(dtype)
    return path, dtype, tuple(array.shape), np.ascontiguousarray(array).tobytes()


def _little_endian(dtype: np.dtype) -> np.dtype:
    return dtype.newbyteorder("<") if dtype.byteorder == ">" else dtype

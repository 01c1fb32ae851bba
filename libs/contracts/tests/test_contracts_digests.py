"""`observation_digest`: one digest for an observation as a protobuf Value, as the SDK's Python
object and as a row of a recorded episode's observation arrays; different observations differ."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces as gs
from platform_contracts.digests import episode_digests, is_observation_array, observation_digest
from platform_contracts.spaces import decode_value, encode_value
from simulusion.env.v1 import values_pb2 as pb

SPACES: dict[str, gs.Space[Any]] = {
    "box": gs.Box(low=-np.inf, high=np.inf, shape=(4,), dtype=np.float32),
    "image": gs.Box(0, 255, (6, 5, 3), np.uint8),
    "box-scalar": gs.Box(low=0, high=1, shape=(), dtype=np.float64),
    "box-scalar-u8": gs.Box(low=0, high=9, shape=(), dtype=np.uint8),
    "discrete": gs.Discrete(7),
    "discrete-int8": gs.Discrete(3, start=-1, dtype=np.int8),
    "multi-binary": gs.MultiBinary([2, 3]),
    "dict": gs.Dict({"pos": gs.Box(-1, 1, (2,)), "grip": gs.Discrete(2)}),
    "tuple": gs.Tuple([gs.Discrete(4), gs.Box(0, 1, (3,))]),
    "nested": gs.Dict({"arm": gs.Dict({"joints": gs.Box(-1, 1, (3,)), "open": gs.MultiBinary(1)}),
                       "t": gs.Tuple([gs.Discrete(5), gs.Box(0, 1, (2,), np.float64)])}),
}


def _leaf_columns(rows: list[Any], prefix: str = "observations") -> dict[str, np.ndarray]:
    """The recorder's layout of decoded observations (`decode_value`): one stacked array per leaf
    (`observations`, `observations.<key>`, `observations.<i>`, nested with dots)."""
    first = rows[0]
    if isinstance(first, dict):
        out: dict[str, np.ndarray] = {}
        for key in first:
            out.update(_leaf_columns([row[key] for row in rows], f"{prefix}.{key}"))
        return out
    if isinstance(first, tuple):
        out = {}
        for i in range(len(first)):
            out.update(_leaf_columns([row[i] for row in rows], f"{prefix}.{i}"))
        return out
    if isinstance(first, np.integer):  # a decoded Discrete value (a Box's scalar decodes as a 0-d array)
        return {prefix: np.array(rows, dtype=np.int64)}
    return {prefix: np.stack([np.asarray(row) for row in rows])}


@pytest.mark.parametrize("name", SPACES)
def test_a_value_its_python_object_and_its_recorded_row_have_one_digest(name: str) -> None:
    space = SPACES[name]
    space.seed(5)
    observations = [space.sample() for _ in range(4)]
    values = [encode_value(obs, space) for obs in observations]
    from_values = [observation_digest(v) for v in values]
    from_python = [observation_digest(decode_value(v, space)) for v in values]
    decoded = [decode_value(v, space) for v in values]
    from_rows = episode_digests({**_leaf_columns(decoded), "rewards": np.zeros(3), "actions": np.zeros(3)})
    assert from_values == from_python == from_rows
    assert all(len(d) == 64 and int(d, 16) >= 0 for d in from_values)


def test_different_observations_differ_and_dict_order_does_not_matter() -> None:
    a = {"pos": np.array([0.5, -0.5], np.float32), "grip": 1}
    assert observation_digest(a) == observation_digest({"grip": 1, "pos": a["pos"]})
    assert observation_digest(a) != observation_digest({**a, "grip": 0})
    assert observation_digest(a) != observation_digest({**a, "pos": np.array([0.5, -0.25], np.float32)})
    # The dtype and shape count, not only the bytes.
    x = np.arange(6, dtype=np.int32)
    assert observation_digest(x) != observation_digest(x.view(np.float32))
    assert observation_digest(x) != observation_digest(x.reshape(2, 3))
    # A Discrete value is an int64 scalar whatever its dtype; a 0-d int32 array is not one.
    assert observation_digest(np.int8(3)) == observation_digest(3) == observation_digest(pb.Value(discrete=3))
    assert observation_digest(np.asarray(3, dtype=np.int32)) != observation_digest(3)


def test_the_digest_is_the_documented_hash() -> None:
    obs = {"b": np.array([1, 2], dtype=np.uint8), "a": 7}
    expected = hashlib.sha256()
    expected.update(b"a\0<i8\0\0" + np.int64(7).tobytes())
    expected.update(b"b\0|u1\x002\0" + bytes([1, 2]))
    assert observation_digest(obs) == expected.hexdigest()
    plain = np.zeros((2, 3), dtype=np.float32)
    assert observation_digest(plain) == hashlib.sha256(b"\0<f4\x002,3\0" + plain.tobytes()).hexdigest()


def test_big_endian_and_strided_arrays_digest_as_their_values() -> None:
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    assert observation_digest(x.astype(">f8")) == observation_digest(x)
    assert observation_digest(x[:, ::2]) == observation_digest(np.ascontiguousarray(x[:, ::2]))


def test_bad_input_says_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="empty Value"):
        observation_digest(pb.Value())
    with pytest.raises(ValueError, match="object array"):
        observation_digest(np.array([object()]))
    with pytest.raises(ValueError, match="no 'observations' arrays"):
        episode_digests({"rewards": np.zeros(2)})
    with pytest.raises(ValueError, match="different row counts"):
        episode_digests({"observations.a": np.zeros(2), "observations.b": np.zeros(3)})
    assert is_observation_array("observations.a") and is_observation_array("observations")
    assert not is_observation_array("observations_x") and not is_observation_array("actions")

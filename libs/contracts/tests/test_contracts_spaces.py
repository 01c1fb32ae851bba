"""Spaces and their values survive the protocol losslessly."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces as gs
from platform_contracts.spaces import (
    UnsupportedSpaceError,
    decode_value,
    encode_value,
    space_from_proto,
    space_to_proto,
)

SPACES = {
    "box": gs.Box(low=-np.inf, high=np.inf, shape=(4,), dtype=np.float32),
    "box-bounded-f64": gs.Box(low=np.array([-1.0, 0.0]), high=np.array([1.0, 5.0]), dtype=np.float64),
    "image": gs.Box(0, 255, (6, 5, 3), np.uint8),
    "discrete": gs.Discrete(7),
    "discrete-start": gs.Discrete(3, start=-1),
    "multi-discrete": gs.MultiDiscrete([3, 4, 5]),
    "multi-binary": gs.MultiBinary([2, 3]),
    "dict": gs.Dict({"pos": gs.Box(-1, 1, (2,)), "grip": gs.Discrete(2)}),
    "tuple": gs.Tuple([gs.Discrete(4), gs.Box(0, 1, (3,))]),
    "nested": gs.Dict({"a": gs.Tuple([gs.MultiBinary(3), gs.Dict({"b": gs.Discrete(5)})])}),
}


@pytest.mark.parametrize("name", SPACES)
def test_space_round_trips(name):
    space = SPACES[name]
    restored = space_from_proto(space_to_proto(space))
    assert restored == space
    assert type(restored) is type(space)


@pytest.mark.parametrize("name", SPACES)
def test_values_round_trip_bit_for_bit(name):
    space = SPACES[name]
    space.seed(1)
    for _ in range(5):
        value = space.sample()
        decoded = decode_value(encode_value(value, space), space)
        assert space.contains(decoded)
        flat_a = gs.flatten(space, value)
        flat_b = gs.flatten(space, decoded)
        assert np.array_equal(flat_a, flat_b)


def test_discrete_value_keeps_the_space_dtype():
    space = gs.Discrete(3)
    decoded = decode_value(encode_value(2, space), space)
    assert decoded == 2 and decoded.dtype == space.dtype


def test_unsupported_space_names_itself():
    with pytest.raises(UnsupportedSpaceError, match="Text"):
        space_to_proto(gs.Text(5))


def test_wrong_shape_for_discrete_is_rejected():
    with pytest.raises(ValueError, match="Discrete"):
        encode_value(np.array([1, 0]), gs.Discrete(2))

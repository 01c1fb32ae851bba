"""`action_decoder(space)` decodes exactly as `decode_action(value, space)`, refusals included."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium import spaces as gs
from platform_contracts.spaces import encode_value
from platform_sdk.server.actions import action_decoder, decode_action
from platform_sdk.server.errors import CommandError
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb

SPACES: dict[str, gs.Space[Any]] = {
    "discrete": gs.Discrete(3),
    "discrete-start-int8": gs.Discrete(4, start=-2, dtype=np.int8),
    "box": gs.Box(-1, 1, (2,), np.float32),
    "dict": gs.Dict({"a": gs.Discrete(2), "b": gs.Box(0, 1, (1,))}),
}


def _same(space: gs.Space[Any], value: pb.Value) -> None:
    try:
        expected = decode_action(value, space)
    except CommandError as exc:
        with pytest.raises(CommandError) as got:
            action_decoder(space)(value)
        assert (got.value.code, got.value.message) == (exc.code, exc.message)
        return
    decoded = action_decoder(space)(value)
    assert type(decoded) is type(expected)
    if isinstance(expected, dict):
        assert decoded.keys() == expected.keys()
        for key in expected:
            np.testing.assert_array_equal(decoded[key], expected[key])
    else:
        np.testing.assert_array_equal(decoded, expected)
        assert np.asarray(decoded).dtype == np.asarray(expected).dtype


@pytest.mark.parametrize("name", SPACES)
def test_samples_decode_as_decode_action_decodes_them(name: str) -> None:
    space = SPACES[name]
    space.seed(0)
    for _ in range(10):
        _same(space, encode_value(space.sample(), space))


@pytest.mark.parametrize("value", [
    pb.Value(discrete=-3), pb.Value(discrete=-2), pb.Value(discrete=1), pb.Value(discrete=2),
    pb.Value(discrete=2**40), pb.Value(), encode_value(np.array(1), gs.Box(0, 5, (), np.int64)),
    encode_value(np.array([1.0, 2.0]), gs.Box(0, 5, (2,))),
])
def test_edge_values_of_a_discrete_space_are_decoded_or_refused_alike(value: pb.Value) -> None:
    _same(SPACES["discrete-start-int8"], value)
    _same(SPACES["discrete"], value)


def test_a_value_outside_a_box_is_refused_alike() -> None:
    _same(SPACES["box"], encode_value(np.array([3.0, 0.0]), gs.Box(-5, 5, (2,), np.float32)))


def test_an_integer_beyond_the_space_dtype_is_an_invalid_action() -> None:
    with pytest.raises(CommandError, match="cannot decode the action") as refused:
        action_decoder(SPACES["discrete-start-int8"])(pb.Value(discrete=2**40))
    assert refused.value.code == env_pb.ERROR_CODE_INVALID_ACTION

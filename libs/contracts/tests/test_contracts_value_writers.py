"""`value_writer` / `fill_value` write in place exactly the `Value` that `encode_value` returns,
and refuse what it refuses."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium import spaces as gs
from platform_contracts.spaces import decode_value, encode_value, fill_value, value_writer
from simulusion.env.v1 import values_pb2 as pb

SPACES: dict[str, gs.Space[Any]] = {
    "box": gs.Box(low=-np.inf, high=np.inf, shape=(4,), dtype=np.float32),
    "box-f64": gs.Box(low=-1.0, high=1.0, shape=(2, 3), dtype=np.float64),
    "box-scalar": gs.Box(low=0, high=1, shape=(), dtype=np.float32),
    "box-bool": gs.Box(low=0, high=1, shape=(3,), dtype=np.bool_),
    "image": gs.Box(0, 255, (6, 5, 3), np.uint8),
    "discrete": gs.Discrete(7),
    "discrete-int8": gs.Discrete(3, start=-1, dtype=np.int8),
    "multi-discrete": gs.MultiDiscrete([3, 4, 5]),
    "multi-binary": gs.MultiBinary([2, 3]),
    "dict": gs.Dict({"pos": gs.Box(-1, 1, (2,)), "grip": gs.Discrete(2)}),
    "empty-dict": gs.Dict({}),
    "tuple": gs.Tuple([gs.Discrete(4), gs.Box(0, 1, (3,))]),
    "nested": gs.Dict({"a": gs.Tuple([gs.MultiBinary(3), gs.Dict({"b": gs.Discrete(5)})])}),
}


def _written(space: Any, obj: Any) -> pb.Value:
    value = pb.Value()
    value_writer(space)(value, obj)
    return value


@pytest.mark.parametrize("name", SPACES)
def test_the_writer_writes_the_encoded_value_bit_for_bit(name: str) -> None:
    space = SPACES[name]
    space.seed(3)
    for _ in range(5):
        sample = space.sample()
        written = _written(space, sample)
        assert written.SerializeToString() == encode_value(sample, space).SerializeToString()
        filled = pb.Value()
        fill_value(filled, sample, space)
        assert filled == written
        assert space.contains(decode_value(written, space)) or isinstance(space, (gs.Dict, gs.Tuple))


def test_non_finite_floats_keep_their_bits() -> None:
    space = SPACES["box"]
    obs = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=np.float32)
    decoded = decode_value(_written(space, obs), space)
    assert decoded.tobytes() == obs.tobytes()


def test_the_writer_casts_to_the_space_dtype_and_accepts_lists() -> None:
    space = SPACES["box"]
    written = _written(space, [1.5, 2.0, 3.0, 4.0])
    assert written.tensor.dtype == "f4" and list(written.tensor.shape) == [4]
    np.testing.assert_array_equal(decode_value(written, space), np.array([1.5, 2, 3, 4], np.float32))


def test_a_big_endian_box_is_written_little_endian() -> None:
    space = gs.Box(low=-1, high=1, shape=(2,), dtype=np.dtype(">f4"))
    obs = np.array([0.25, -0.5], dtype=">f4")
    written = _written(space, obs)
    assert written == encode_value(obs, space)
    assert written.tensor.dtype == "f4"
    np.testing.assert_array_equal(decode_value(written, space), obs)


@pytest.mark.parametrize("obj", [1.5, np.float32(2.0), True, np.array([1, 2]), "3"])
def test_a_discrete_writer_refuses_what_is_not_one_integer(obj: Any) -> None:
    with pytest.raises(ValueError, match="expected one integer"):
        _written(SPACES["discrete"], obj)
    with pytest.raises(ValueError, match="expected one integer"):
        encode_value(obj, SPACES["discrete"])


@pytest.mark.parametrize("obj", [3, np.int64(3), np.uint8(3), np.array(3)])
def test_a_discrete_writer_takes_any_integer(obj: Any) -> None:
    assert _written(SPACES["discrete"], obj) == pb.Value(discrete=3)


def test_an_integer_beyond_int64_is_refused() -> None:
    with pytest.raises(ValueError):
        _written(SPACES["discrete"], 2**70)


def test_a_dict_writer_needs_a_dict_with_every_key() -> None:
    with pytest.raises(ValueError, match="expected a dict"):
        _written(SPACES["dict"], [1, 2])
    with pytest.raises(KeyError):
        _written(SPACES["dict"], {"pos": np.zeros(2, np.float32)})


def test_an_empty_dict_space_writes_a_dict_value() -> None:
    written = _written(SPACES["empty-dict"], {})
    assert written.WhichOneof("kind") == "dict" and decode_value(written) == {}


def test_a_writer_is_made_once_per_space_object() -> None:
    space = gs.Box(0, 1, (2,))
    assert value_writer(space) is value_writer(space)
    other = gs.Box(0, 1, (2,))
    assert value_writer(other) is not value_writer(space)


@pytest.mark.parametrize("obj", [np.zeros(3, np.float32), np.ones((2, 2)), np.arange(8.0).reshape(2, 4)[:, ::2]])
def test_an_array_of_another_shape_or_layout_is_written_as_encode_value_writes_it(obj: np.ndarray) -> None:
    space = gs.Box(low=-10, high=10, shape=(4,), dtype=np.float32)
    assert _written(space, obj).SerializeToString() == encode_value(obj, space).SerializeToString()


def test_a_box_without_elements_is_written_as_encode_value_writes_it() -> None:
    space = gs.Box(low=0, high=1, shape=(0, 3), dtype=np.float32)
    obs = np.zeros((0, 3), np.float32)
    written = _written(space, obs)
    assert written == encode_value(obs, space) and list(written.tensor.shape) == [0, 3]

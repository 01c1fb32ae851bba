"""`ObservationStack` decodes a batch of observations exactly as decoding each one and stacking
them with Gymnasium's `concatenate` does, on its fast path and off it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium import spaces as gs
from gymnasium.vector.utils import concatenate, create_empty_array
from platform_contracts.spaces import decode_value, encode_value
from platform_sdk.client.observation_stack import ObservationStack
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
    "tuple": gs.Tuple([gs.Discrete(4), gs.Box(0, 1, (3,))]),
    "nested": gs.Dict({"a": gs.Tuple([gs.MultiBinary(3), gs.Dict({"b": gs.Discrete(5, dtype=np.int16)})])}),
}


def _general(space: Any, values: list[pb.Value]) -> Any:
    out = create_empty_array(space, len(values))
    return concatenate(space, [decode_value(v, space) for v in values], out)


def _fast(space: Any, values: list[pb.Value]) -> Any:
    out = create_empty_array(space, len(values))
    stacked = ObservationStack(space).stack(values, out)
    _assert_same(stacked, out)  # written into `out`, as concatenate does
    return stacked


def _assert_same(got: Any, want: Any) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and list(got) == list(want)
        for key in want:
            _assert_same(got[key], want[key])
    elif isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            _assert_same(g, w)
    else:
        assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()  # NaNs and signed zeros included


@pytest.mark.parametrize("name", SPACES)
@pytest.mark.parametrize("count", [1, 5])
def test_the_fast_path_agrees_with_decoding_each_value(name: str, count: int) -> None:
    space = SPACES[name]
    space.seed(count)
    values = [encode_value(space.sample(), space) for _ in range(count)]
    _assert_same(_fast(space, values), _general(space, values))


def test_non_finite_floats_keep_their_bits() -> None:
    space = SPACES["box"]
    rows = np.array([[np.nan, np.inf, -np.inf, -0.0], [1e-45, -3.4e38, 0.0, 1.0]], dtype=np.float32)
    stacked = _fast(space, [encode_value(row, space) for row in rows])
    assert stacked.tobytes() == rows.tobytes()


def test_the_result_is_a_writable_array_owned_by_out() -> None:
    space = SPACES["box"]
    out = create_empty_array(space, 2)
    stacked = ObservationStack(space).stack([encode_value(np.ones(4, np.float32), space)] * 2, out)
    assert stacked is out and stacked.flags.writeable
    stacked[0, 0] = 7.0  # not a view of the message's bytes


def _tensor(array: np.ndarray, dtype: str | None = None, shape: list[int] | None = None) -> pb.Value:
    value = pb.Value()
    value.tensor.dtype = dtype or array.dtype.str.lstrip("<|=")
    value.tensor.shape.extend(array.shape if shape is None else shape)
    value.tensor.data = array.tobytes()
    return value


def test_another_dtype_is_cast_as_the_general_path_casts() -> None:
    space = SPACES["box"]
    values = [_tensor(np.array([0.1, 0.2, 0.3, 0.4])), encode_value(np.zeros(4, np.float32), space)]  # f8, f4
    _assert_same(_fast(space, values), _general(space, values))


def test_a_value_of_another_shape_fails_as_the_general_path_fails() -> None:
    space = SPACES["box"]
    values = [encode_value(np.zeros(4, np.float32), space), _tensor(np.zeros(3, np.float32))]
    with pytest.raises(ValueError) as general:
        _general(space, values)
    with pytest.raises(ValueError) as fast:
        _fast(space, values)
    assert str(fast.value) == str(general.value)


def test_a_malformed_tensor_fails_as_the_general_path_fails() -> None:
    space = SPACES["box"]
    values = [encode_value(np.zeros(4, np.float32), space), _tensor(np.zeros(3, np.float32), shape=[4])]
    with pytest.raises(ValueError) as general:
        _general(space, values)
    with pytest.raises(ValueError) as fast:
        _fast(space, values)
    assert str(fast.value) == str(general.value)


def test_an_integer_where_a_box_is_expected_goes_the_general_way() -> None:
    space = SPACES["box-scalar"]
    values = [pb.Value(discrete=3), encode_value(np.float32(0.5), space)]
    _assert_same(_fast(space, values), _general(space, values))


def test_a_discrete_observation_out_of_its_dtype_fails_as_the_general_path_fails() -> None:
    space = gs.Discrete(3, dtype=np.uint8)
    values = [pb.Value(discrete=1), pb.Value(discrete=300)]
    with pytest.raises(OverflowError):
        _general(space, values)
    with pytest.raises(OverflowError):
        _fast(space, values)


def test_dict_entries_in_another_order_or_extra_go_the_general_way() -> None:
    space = SPACES["dict"]
    grip, pos = pb.Value(discrete=1), encode_value(np.array([0.5, -0.5], np.float32), space["pos"])
    reordered = pb.Value(dict=pb.DictValue(entries=[pb.NamedValue(name="grip", value=grip),
                                                    pb.NamedValue(name="pos", value=pos)]))
    extra = encode_value({"pos": np.zeros(2, np.float32), "grip": 0}, space)
    extra.dict.entries.add(name="more", value=pb.Value(discrete=9))
    values = [reordered, extra]
    _assert_same(_fast(space, values), _general(space, values))


def test_a_missing_dict_key_fails_as_the_general_path_fails() -> None:
    space = SPACES["dict"]
    values = [pb.Value(dict=pb.DictValue(entries=[pb.NamedValue(name="grip", value=pb.Value(discrete=1))]))]
    with pytest.raises(KeyError):
        _general(space, values)
    with pytest.raises(KeyError):
        _fast(space, values)


def test_an_empty_value_fails_as_the_general_path_fails() -> None:
    for name in ("box", "discrete", "dict", "tuple"):
        with pytest.raises(ValueError, match="empty Value"):
            _fast(SPACES[name], [pb.Value()])


@pytest.mark.parametrize("name", SPACES)
def test_values_that_match_their_space_never_take_the_general_path(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    space = SPACES[name]

    def general_path(*args: Any) -> Any:
        raise AssertionError("the general path was taken")

    monkeypatch.setattr("platform_sdk.client.observation_stack.concatenate", general_path)
    space.seed(7)
    values = [encode_value(space.sample(), space) for _ in range(3)]
    ObservationStack(space).stack(values, create_empty_array(space, 3))

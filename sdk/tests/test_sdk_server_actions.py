"""Decoding actions with the action space and rejecting those outside it."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces as gs
from platform_contracts.spaces import encode_value
from platform_contracts.values import tensor_from_array
from platform_sdk.server.actions import decode_action
from platform_sdk.server.errors import CommandError
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as pb


def _rejected(value: pb.Value, space: gs.Space) -> str:
    with pytest.raises(CommandError) as info:
        decode_action(value, space)
    assert info.value.code == env_pb.ERROR_CODE_INVALID_ACTION
    return info.value.message


def test_discrete_in_range_takes_the_space_dtype() -> None:
    action = decode_action(pb.Value(discrete=1), gs.Discrete(2))
    assert action == 1 and isinstance(action, np.int64)
    assert decode_action(pb.Value(discrete=-1), gs.Discrete(3, start=-1)) == -1


def test_discrete_out_of_range_names_the_space() -> None:
    assert _rejected(pb.Value(discrete=7), gs.Discrete(2)) == "action 7 is not in Discrete(2)"


def test_discrete_rejects_a_float_tensor() -> None:
    message = _rejected(pb.Value(tensor=tensor_from_array(np.float32(1.0))), gs.Discrete(2))
    assert "Discrete(2)" in message


def test_box_casts_within_kind_and_checks_bounds_and_shape() -> None:
    space = gs.Box(-2.0, 2.0, (1,), np.float32)
    action = decode_action(pb.Value(tensor=tensor_from_array(np.array([0.5]))), space)  # float64 sent
    assert action.dtype == np.float32 and action.tolist() == [0.5]
    assert "is not in Box(" in _rejected(
        pb.Value(tensor=tensor_from_array(np.array([5.0], np.float32))), space
    )
    message = _rejected(pb.Value(tensor=tensor_from_array(np.zeros(3, np.float32))), space)
    assert message.startswith("action of shape (3,) and dtype float32 is not in Box(")


def test_multidiscrete_rejects_floats() -> None:
    space = gs.MultiDiscrete([3, 3])
    assert decode_action(encode_value([1, 2], space), space).tolist() == [1, 2]
    assert "MultiDiscrete" in _rejected(pb.Value(tensor=tensor_from_array(np.array([1.0, 2.0]))), space)


def test_dict_and_tuple_actions() -> None:
    space = gs.Dict({"move": gs.Discrete(3), "force": gs.Box(0.0, 1.0, (2,), np.float32)})
    action = decode_action(encode_value({"move": 2, "force": [0.1, 0.2]}, space), space)
    assert action["move"] == 2 and action["force"].shape == (2,)
    missing = pb.Value(dict=pb.DictValue(entries=[pb.NamedValue(name="move", value=pb.Value(discrete=1))]))
    assert "Dict(" in _rejected(missing, space)
    tuple_space = gs.Tuple([gs.Discrete(2), gs.Discrete(4)])
    assert decode_action(encode_value((1, 3), tuple_space), tuple_space) == (1, 3)
    assert "Tuple(" in _rejected(
        encode_value((1, 8), gs.Tuple([gs.Discrete(2), gs.Discrete(9)])), tuple_space
    )


def test_empty_and_malformed_values_are_rejected() -> None:
    assert "no action" in _rejected(pb.Value(), gs.Discrete(2))
    broken = pb.Value(tensor=pb.Tensor(dtype="float32", shape=[3], data=b"\x00" * 5))
    assert "cannot decode" in _rejected(broken, gs.Box(-1.0, 1.0, (3,), np.float32))
    assert "cannot decode" in _rejected(
        pb.Value(tensor=pb.Tensor(dtype="nonsense", shape=[1])), gs.Discrete(2)
    )

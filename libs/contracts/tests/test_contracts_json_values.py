"""JSON actions are checked against the protobuf space, and errors name the space."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces as gs
from platform_contracts.json_values import (
    ValueMismatchError,
    describe_space,
    space_to_json,
    value_from_json,
    value_to_json,
)
from platform_contracts.spaces import decode_value, space_to_proto
from platform_contracts.values import datamap_from_dict, dict_from_datamap, json_from_datamap


def test_box_action_from_json():
    space = gs.Box(-2, 2, (1,), np.float32)
    value = value_from_json([0.5], space_to_proto(space))
    assert decode_value(value).dtype == np.float32
    assert value_to_json(value) == [0.5]


@pytest.mark.parametrize(
    "space,bad,fragment",
    [
        (gs.Discrete(2), [1, 0], "Discrete(2)"),
        (gs.Discrete(2), "left", "Discrete(2)"),
        (gs.Box(-2, 2, (1,), np.float32), [1.0, 2.0, 3.0], "Box(-2.0, 2.0, (1,), float32)"),
        (gs.Box(-2, 2, (1,), np.float32), ["x"], "Box"),
        (gs.Dict({"a": gs.Discrete(2)}), {"b": 1}, "missing keys ['a']"),
        (gs.Tuple([gs.Discrete(2)]), [1, 2], "Tuple"),
        (gs.Discrete(2), -5.6411369393186605e225, "does not fit Discrete(2): out of range"),
        (gs.Discrete(2), 2**63, "does not fit Discrete(2): out of range"),
        (gs.MultiDiscrete([3, 3]), [2**70, 1], "MultiDiscrete([3, 3])"),
    ],
)
def test_mismatches_name_the_space(space, bad, fragment):
    with pytest.raises(ValueMismatchError) as caught:
        value_from_json(bad, space_to_proto(space))
    assert fragment in str(caught.value)


def test_describe_and_json_of_a_space():
    proto = space_to_proto(gs.Box(-np.inf, np.inf, (2,), np.float32))
    assert describe_space(proto) == "Box(-inf, inf, (2,), float32)"
    assert space_to_json(proto)["low"] == "-inf"  # one value when every element has it


def test_box_bounds_are_one_number_when_uniform_else_the_flat_list():
    screen = space_to_json(space_to_proto(gs.Box(0, 255, (210, 160, 3), np.uint8)))
    assert (screen["low"], screen["high"], screen["shape"]) == (0.0, 255.0, [210, 160, 3])
    mixed = space_to_json(space_to_proto(gs.Box(np.array([-1.0, -np.inf]), np.array([np.inf, 2.0]), dtype=np.float64)))
    assert (mixed["low"], mixed["high"]) == ([-1.0, "-inf"], ["inf", 2.0])
    empty = space_to_json(space_to_proto(gs.Box(0, 1, (0,), np.float32)))
    assert (empty["low"], empty["high"]) == ([], [])


def test_info_data_round_trip_and_json():
    info = {"lives": 3, "score": 1.5, "done": False, "name": "x", "arr": np.arange(3), "nested": {"l": [1, "a", None]}}
    back = dict_from_datamap(datamap_from_dict(info))
    assert back["lives"] == 3 and back["score"] == 1.5 and back["done"] is False
    assert np.array_equal(back["arr"], np.arange(3))
    assert back["nested"] == {"l": [1, "a", None]}
    assert json_from_datamap(datamap_from_dict({"x": float("nan")}))["x"] == "nan"

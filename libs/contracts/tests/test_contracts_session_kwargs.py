"""`platform_contracts.session_kwargs`: the platform's own kwargs lifted into SessionOptions' typed
fields and put back, the same both ways."""

from __future__ import annotations

import json
from typing import Any

import pytest
from platform_contracts.session_kwargs import (
    RESERVED_KWARGS,
    lift,
    merged_kwargs,
    reserved_kwargs,
    timeline_entries,
)
from simulusion.session.v1.options_pb2 import SessionOptions

TIMELINE = [{"at": 100, "change": "mass", "body": "torso", "scale": 2},
            {"at": 5, "change": "sensor_noise", "std": 0.5, "reveal": True}]


def test_every_reserved_name_is_a_field_of_the_options() -> None:
    fields = {field.name for field in SessionOptions.DESCRIPTOR.fields}
    assert set(RESERVED_KWARGS) <= fields
    for name in RESERVED_KWARGS:  # each knows whether it was given
        assert SessionOptions.DESCRIPTOR.fields_by_name[name].has_presence


def test_reserved_kwargs_are_lifted_out_and_put_back_as_written() -> None:
    kwargs: dict[str, Any] = {"frameskip": 2, "world_changes": TIMELINE, "endless": True, "wad": "wad-1",
                              "doom_map": "MAP02"}
    options = SessionOptions(env_id="doom-basic")
    lift(kwargs, options)
    assert kwargs == {"frameskip": 2}
    assert (options.endless, options.wad, options.doom_map) == (True, "wad-1", "MAP02")
    assert [json.loads(change.entry_json) for change in options.world_changes.changes] == TIMELINE
    assert [change.at for change in options.world_changes.changes] == [0, 0]  # the broker parses
    again = SessionOptions.FromString(options.SerializeToString())
    assert reserved_kwargs(again) == {"world_changes": TIMELINE, "endless": True, "wad": "wad-1", "doom_map": "MAP02"}
    assert merged_kwargs(kwargs, again) == {"frameskip": 2, "world_changes": TIMELINE, "endless": True,
                                            "wad": "wad-1", "doom_map": "MAP02"}
    assert json.loads(json.dumps(timeline_entries(again)[0])) == TIMELINE[0]  # 2 stays an int


def test_values_equal_to_the_default_are_still_shown_as_given() -> None:
    kwargs: dict[str, Any] = {"world_changes": [], "endless": False}
    options = SessionOptions()
    lift(kwargs, options)
    assert kwargs == {}
    again = SessionOptions.FromString(options.SerializeToString())
    assert reserved_kwargs(again) == {"world_changes": [], "endless": False}
    assert reserved_kwargs(SessionOptions()) == {}  # none given: none shown


@pytest.mark.parametrize("kwargs", [
    {"endless": "yes"}, {"endless": 1}, {"world_changes": {"at": 1}}, {"world_changes": None},
    {"wad": 7}, {"doom_map": ["MAP01"]},
])
def test_a_value_of_another_type_stays_in_the_kwargs(kwargs: dict[str, Any]) -> None:
    """For the broker to refuse with the message any kwarg gets (or, wad and doom_map, the env host)."""
    left = dict(kwargs)
    options = SessionOptions()
    lift(left, options)
    assert left == kwargs and options == SessionOptions()


def test_lifting_again_changes_nothing() -> None:
    kwargs: dict[str, Any] = {"world_changes": TIMELINE, "endless": True}
    options = SessionOptions()
    lift(kwargs, options)
    once = SessionOptions()
    once.CopyFrom(options)
    lift(kwargs, options)
    assert options == once

"""The one mapping between a create's REST body and the SessionOptions message, both ways."""

from __future__ import annotations

from typing import Any

import pytest
from platform_gateway.schemas.sessions import SessionBase, SessionCreate, SessionPublic
from platform_gateway.session_options import (
    LIFTED_FROM_KWARGS,
    SET_BY_THE_PLATFORM,
    options_from_body,
    options_to_json,
)
from simulusion.session.v1.options_pb2 import SessionOptions

EVERY_OPTION: dict[str, Any] = {
    "env_id": "cartpole", "kwargs": {"max_episode_steps": 50, "nested": {"a": [1, 2.5, None]}}, "record": True,
    "jpeg_quality": 40, "record_frames": True, "num_envs": 1, "life": "robot-1", "frame_every": 3,
    "max_frames": 500, "auto_reset": True, "durable": True,
}


def test_the_rest_options_and_the_message_have_the_same_fields() -> None:
    rest = {"kwargs_json" if name == "kwargs" else name for name in SessionBase.model_fields}
    assert rest | SET_BY_THE_PLATFORM | LIFTED_FROM_KWARGS == {field.name for field in SessionOptions.DESCRIPTOR.fields}
    assert not SET_BY_THE_PLATFORM & set(SessionBase.model_fields)  # a client cannot choose its team
    assert not LIFTED_FROM_KWARGS & set(SessionBase.model_fields)  # written inside kwargs
    assert set(SessionBase.model_fields) <= set(SessionPublic.model_fields)  # GET shows every option


TIMELINE = [{"at": 100, "change": "mass", "body": "torso", "scale": 2}, {"at": 5, "change": "sensor_offset",
                                                                      "offset": [0.1, -1], "reveal": True}]


@pytest.mark.parametrize("body", [
    EVERY_OPTION,
    {"env_id": "pong"},
    {"env_id": "halfcheetah", "kwargs": {"world_changes": TIMELINE, "endless": True, "ctrl_cost_weight": 0.2}},
    {"env_id": "doom-basic", "kwargs": {"wad": "wad-0123456789abcdef", "doom_map": "MAP02", "endless": False,
                                        "world_changes": []}},
    {"env_id": "cartpole", "kwargs": {"endless": "yes", "wad": 3}},
    {"env_id": "cartpole", "kwargs": {"continuous": True}, "num_envs": 8, "jpeg_quality": 100},
    {"env_id": "cartpole", "record": True, "record_frames": True},
])
def test_a_body_becomes_options_and_back_unchanged(body: dict[str, Any]) -> None:
    created = SessionCreate.model_validate(body)
    options = options_from_body(created)
    assert options_to_json(options) == created.model_dump()
    assert options_from_body(SessionCreate.model_validate(options_to_json(options))) == options


def test_every_option_lands_in_its_field() -> None:
    options = options_from_body(SessionCreate.model_validate(EVERY_OPTION))
    assert options == SessionOptions(
        env_id="cartpole", kwargs_json='{"max_episode_steps": 50, "nested": {"a": [1, 2.5, null]}}', record=True,
        jpeg_quality=40, record_frames=True, num_envs=1, life="robot-1", frame_every=3, max_frames=500,
        auto_reset=True, durable=True)


def test_options_left_out_are_zero_in_the_message_and_null_in_json() -> None:
    options = options_from_body(SessionCreate.model_validate({"env_id": "cartpole"}))
    assert options == SessionOptions(env_id="cartpole", kwargs_json="{}")
    shown = options_to_json(options)
    assert shown == {"env_id": "cartpole", "kwargs": {}, "record": False, "jpeg_quality": None,
                     "record_frames": False, "num_envs": None, "life": None, "frame_every": None,
                     "max_frames": None, "auto_reset": False, "durable": False, "closes_with_page": False}


def test_options_completed_by_the_broker_read_as_they_are() -> None:
    # What the broker stores for {"env_id": "cartpole", "record": true, "life": "arm", "max_frames": 9}.
    completed = SessionOptions(env_id="cartpole", kwargs_json="{}", record=True, record_frames=True, num_envs=1,
                               life="arm", max_frames=9)
    shown = options_to_json(completed)
    assert (shown["record_frames"], shown["num_envs"], shown["life"], shown["max_frames"]) == (True, 1, "arm", 9)
    assert options_from_body(SessionCreate.model_validate(shown)) == completed


def test_the_platforms_own_kwargs_are_lifted_into_their_fields_once() -> None:
    body = {"env_id": "halfcheetah", "kwargs": {"world_changes": TIMELINE, "endless": True, "wad": "wad-1",
                                                "doom_map": "E1M1", "ctrl_cost_weight": 0.2}}
    options = options_from_body(SessionCreate.model_validate(body))
    assert options.kwargs_json == '{"ctrl_cost_weight": 0.2}'
    assert (options.endless, options.wad, options.doom_map) == (True, "wad-1", "E1M1")
    assert [change.entry_json for change in options.world_changes.changes] == [
        '{"at": 100, "change": "mass", "body": "torso", "scale": 2}',
        '{"at": 5, "change": "sensor_offset", "offset": [0.1, -1], "reveal": true}']


def test_a_platform_kwarg_of_another_type_stays_in_the_kwargs_for_the_broker_to_refuse() -> None:
    options = options_from_body(SessionCreate.model_validate({"env_id": "cartpole", "kwargs": {"endless": "yes"}}))
    assert options == SessionOptions(env_id="cartpole", kwargs_json='{"endless": "yes"}')


def test_a_session_stored_by_an_older_version_shows_its_kwargs_as_they_were() -> None:
    """Before issue 28 the platform's own kwargs stayed in kwargs_json: such rows read as they are."""
    old = SessionOptions(env_id="cartpole", kwargs_json='{"endless": true, "world_changes": [], "g": 1}', num_envs=1)
    assert options_to_json(old)["kwargs"] == {"endless": True, "world_changes": [], "g": 1}


def test_unreadable_stored_kwargs_are_shown_not_raised() -> None:
    assert options_to_json(SessionOptions(env_id="x", kwargs_json="{nope"))["kwargs"] == {"_unparsed": "{nope"}
    assert options_to_json(SessionOptions(env_id="x", kwargs_json="[1]"))["kwargs"] == {"_value": [1]}
    broken = SessionOptions(env_id="x", kwargs_json="{}")
    broken.world_changes.changes.add(entry_json="{nope")
    assert options_to_json(broken)["kwargs"] == {"world_changes": {"_unparsed": ["{nope"]}}

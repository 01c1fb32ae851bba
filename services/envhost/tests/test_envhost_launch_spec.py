"""The launch spec built from a catalog entry and a session's options."""

from __future__ import annotations

import json

import pytest
from platform_envhost.errors import StartFailed
from platform_envhost.instance_table import launch_spec
from simulusion.control.v1 import control_pb2 as control_pb
from simulusion.session.v1.options_pb2 import SessionOptions


def test_session_kwargs_go_over_the_entry_kwargs() -> None:
    entry = control_pb.CatalogEntry(id="mine", factory="my_envs:make", path="/opt/envs",
                                    kwargs_json='{"level": 1, "size": 8}')
    spec = launch_spec(entry, SessionOptions(env_id="mine", kwargs_json='{"level": 3}'))
    assert (spec.factory, spec.path, spec.gymnasium_id) == ("my_envs:make", "/opt/envs", "")
    assert spec.kwargs == {"level": 3, "size": 8}
    assert (spec.jpeg_quality, spec.num_envs) == (0, 1)  # the server's default quality, one environment
    plain = launch_spec(control_pb.CatalogEntry(id="cp", gymnasium_id="CartPole-v1"), SessionOptions(env_id="cp"))
    assert plain.kwargs == {}


def test_the_options_jpeg_quality_and_num_envs_reach_the_launcher() -> None:
    entry = control_pb.CatalogEntry(id="cp", gymnasium_id="CartPole-v1")
    spec = launch_spec(entry, SessionOptions(env_id="cp", jpeg_quality=35, num_envs=4))
    assert (spec.jpeg_quality, spec.num_envs) == (35, 4)


@pytest.mark.parametrize(("entry_kwargs", "kwargs", "needle"), [
    ("", "{not json", "not valid JSON"),
    ("", "[1, 2]", "must be a JSON object"),
    ("7", "", "in the catalog"),
])
def test_bad_kwargs_are_invalid_argument_naming_the_environment(entry_kwargs: str, kwargs: str, needle: str) -> None:
    entry = control_pb.CatalogEntry(id="cp", gymnasium_id="CartPole-v1", kwargs_json=entry_kwargs)
    with pytest.raises(StartFailed) as caught:
        launch_spec(entry, SessionOptions(env_id="cp", kwargs_json=kwargs))
    assert caught.value.code == "invalid_argument"
    assert needle in str(caught.value) and "'cp'" in str(caught.value)


def test_an_entry_without_a_source_is_refused() -> None:
    with pytest.raises(StartFailed, match="neither a gymnasium_id nor a factory"):
        launch_spec(control_pb.CatalogEntry(id="empty"), SessionOptions(env_id="empty"))


def test_the_platforms_own_kwargs_go_back_into_the_instances_kwargs() -> None:
    """They travel in SessionOptions' typed fields; the instance (and an image's older SDK) reads
    them in its kwargs."""
    timeline = [{"at": 3, "change": "sensor_offset", "offset": 1, "reveal": True}]
    options = SessionOptions(env_id="doom", kwargs_json='{"tics": 2}', endless=True, wad="wad-1", doom_map="MAP02")
    options.world_changes.changes.add(entry_json=json.dumps(timeline[0]), at=3, change="sensor_offset", reveal=True)
    entry = control_pb.CatalogEntry(id="doom", factory="platform_envs.doom:make_env", kwargs_json='{"scenario": "x"}')
    assert launch_spec(entry, options).kwargs == {"scenario": "x", "tics": 2, "world_changes": timeline,
                                                  "endless": True, "wad": "wad-1", "doom_map": "MAP02"}
    given_false = SessionOptions(env_id="doom", endless=False)
    given_false.world_changes.SetInParent()
    assert launch_spec(entry, given_false).kwargs == {"scenario": "x", "world_changes": [], "endless": False}
    bad = SessionOptions(env_id="doom")
    bad.world_changes.changes.add(entry_json="{nope")
    with pytest.raises(StartFailed) as caught:
        launch_spec(entry, bad)
    assert caught.value.code == "invalid_argument" and "'doom'" in str(caught.value)

"""The launch spec built from a catalog entry and a session's kwargs."""

from __future__ import annotations

import pytest
from platform_envhost.errors import StartFailed
from platform_envhost.instances import launch_spec
from simulusion.control.v1 import control_pb2 as control_pb


def test_session_kwargs_go_over_the_entry_kwargs() -> None:
    entry = control_pb.CatalogEntry(id="mine", factory="my_envs:make", path="/opt/envs",
                                    kwargs_json='{"level": 1, "size": 8}')
    spec = launch_spec(entry, '{"level": 3}')
    assert (spec.factory, spec.path, spec.gymnasium_id) == ("my_envs:make", "/opt/envs", "")
    assert spec.kwargs == {"level": 3, "size": 8}
    assert launch_spec(control_pb.CatalogEntry(id="cp", gymnasium_id="CartPole-v1"), "").kwargs == {}


@pytest.mark.parametrize(("entry_kwargs", "kwargs", "needle"), [
    ("", "{not json", "not valid JSON"),
    ("", "[1, 2]", "must be a JSON object"),
    ("7", "", "in the catalog"),
])
def test_bad_kwargs_are_invalid_argument_naming_the_environment(entry_kwargs: str, kwargs: str, needle: str) -> None:
    entry = control_pb.CatalogEntry(id="cp", gymnasium_id="CartPole-v1", kwargs_json=entry_kwargs)
    with pytest.raises(StartFailed) as caught:
        launch_spec(entry, kwargs)
    assert caught.value.code == "invalid_argument"
    assert needle in str(caught.value) and "'cp'" in str(caught.value)


def test_an_entry_without_a_source_is_refused() -> None:
    with pytest.raises(StartFailed, match="neither a gymnasium_id nor a factory"):
        launch_spec(control_pb.CatalogEntry(id="empty"), "")

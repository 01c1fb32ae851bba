"""Lives across services: the SDK's life settings reach the session (gateway, broker) and its
lifecycle events (env host); one open session per life; bad settings are 422s."""

from __future__ import annotations

import asyncio

import httpx
import nats
import platform_sdk
import pytest
from platform_contracts import subjects
from simulusion.bus.v1 import events_pb2


def lifecycle_events(nats_url: str, session_id: str, count: int) -> list[events_pb2.SessionEvent]:
    """The session's first `count` lifecycle events, read from JetStream."""

    async def read() -> list[events_pb2.SessionEvent]:
        nc = await nats.connect(nats_url)
        try:
            sub = await nc.jetstream().subscribe(subjects.session_lifecycle(session_id, "robot-1"),
                                                 ordered_consumer=True)
            return [events_pb2.SessionEvent.FromString((await sub.next_msg(timeout=15)).data)
                    for _ in range(count)]
        finally:
            await nc.close()

    return asyncio.run(read())


def test_a_life_reaches_the_session_and_its_events(platform_stack):
    env = platform_sdk.connect("cartpole", url=platform_stack.url, record=True, life="robot-1", frame_every=3,
                               max_frames=500)
    with env:
        assert env.session["life"] == "robot-1"
        shown = httpx.get(f"{platform_stack.url}/v0/sessions/{env.session_id}", timeout=10).json()
        assert shown["life"] == "robot-1" and shown["record"]
        env.reset(seed=0)
        env.step(0)
    started, closed = lifecycle_events(platform_stack.nats_url, env.session_id, 2)
    assert started.kind == events_pb2.SESSION_EVENT_KIND_STARTED
    options = started.options
    assert (options.life, options.frame_every, options.max_frames) == ("robot-1", 3, 500)
    assert options.record and options.record_frames  # thinning frames means keeping them
    assert closed.kind == events_pb2.SESSION_EVENT_KIND_CLOSED and closed.options == options

    with platform_sdk.connect("cartpole", url=platform_stack.url) as plain:
        assert plain.session["life"] is None


def test_one_session_at_a_time_writes_a_life(platform_stack):
    first = platform_sdk.connect("cartpole", url=platform_stack.url, record=True, life="arm-2")
    try:
        with pytest.raises(platform_sdk.PlatformError) as refused:
            platform_sdk.connect("pendulum", url=platform_stack.url, record=True, life="arm-2")
        assert refused.value.status == 409
        assert f"life arm-2 is being recorded by session {first.session_id}; close it first" in str(refused.value)
        with platform_sdk.connect("cartpole", url=platform_stack.url, record=True, life="arm-3") as other:
            assert other.session["life"] == "arm-3"  # another life is free meanwhile
    finally:
        first.close()
    with platform_sdk.connect("cartpole", url=platform_stack.url, record=True, life="arm-2") as second:
        assert second.session["life"] == "arm-2" and second.session_id != first.session_id
        second.reset(seed=1)
    sessions = httpx.get(f"{platform_stack.url}/v0/sessions", params={"include_closed": True}, timeout=10).json()
    by_id = {s["id"]: s for s in sessions["data"]}
    assert by_id[first.session_id]["life"] == "arm-2" and by_id[first.session_id]["state"] == "closed"


@pytest.mark.parametrize(("body", "named"), [
    ({"record": True, "life": "robot 1"}, "life"),
    ({"record": True, "life": "a/b"}, "life"),
    ({"record": True, "life": ""}, "life"),
    ({"record": True, "life": "x" * 65}, "life"),
    ({"life": "robot-1"}, "life robot-1 is a recording: set record to true"),
    ({"record": True, "frame_every": 4}, "give life a name"),
    ({"record": True, "max_frames": 100}, "give life a name"),
    ({"record": True, "life": "robot-1", "frame_every": 0}, "frame_every"),
    ({"record": True, "life": "robot-1", "max_frames": -5}, "max_frames"),
    ({"record": True, "life": "robot-1", "num_envs": 2}, "a vector session (num_envs=2) cannot append to it"),
])
def test_bad_life_settings_are_422s(platform_stack, body, named):
    response = httpx.post(f"{platform_stack.url}/v0/sessions", json={"env_id": "cartpole", **body}, timeout=60)
    assert response.status_code == 422, response.text
    assert named in response.json()["detail"]
    assert response.json()["code"] == "invalid_argument"


def test_the_sdk_reports_bad_life_settings(platform_stack):
    with pytest.raises(platform_sdk.PlatformError, match="set record to true") as missing_record:
        platform_sdk.connect("cartpole", url=platform_stack.url, life="robot-1")
    assert missing_record.value.status == 422
    with pytest.raises(platform_sdk.InvalidRequestError, match="life"):
        platform_sdk.connect("cartpole", url=platform_stack.url, record=True, life="no spaces please")
    open_lives = [s["life"] for s in httpx.get(f"{platform_stack.url}/v0/sessions", timeout=10).json()["data"]]
    assert "robot-1" not in open_lives

"""A session's options through the real platform: what POST /v0/sessions is given is what
GET /v0/sessions/{id} shows (as the broker completed it), open or closed, and what the env host's
STARTED event carries to the recorder."""

from __future__ import annotations

import asyncio

import httpx
import nats
import platform_sdk
from simulusion.bus.v1 import events_pb2

OPTION_NAMES = ("env_id", "kwargs", "record", "jpeg_quality", "record_frames", "num_envs", "life", "frame_every",
                "max_frames", "auto_reset")


def started_event(nats_url: str, session_id: str) -> events_pb2.SessionEvent:
    async def read() -> events_pb2.SessionEvent:
        nc = await nats.connect(nats_url)
        try:
            # any partition: a session of a life has its life's (subjects.session_partition)
            sub = await nc.jetstream().subscribe(f"platform.session.{session_id}.lifecycle.*", ordered_consumer=True)
            msg = await sub.next_msg(timeout=10)
            return events_pb2.SessionEvent.FromString(msg.data)
        finally:
            await nc.close()

    return asyncio.run(read())


def test_get_shows_every_option_the_session_was_made_with(platform_stack):
    body = {"env_id": "cartpole", "kwargs": {"max_episode_steps": 40}, "record": True, "jpeg_quality": 35,
            "life": "options-arm", "frame_every": 2, "max_frames": 300, "auto_reset": True}
    with httpx.Client(base_url=platform_stack.url, timeout=60) as http:
        created = http.post("/v0/sessions", json=body)
        assert created.status_code == 201, created.text
        session_id = created.json()["id"]
        # The broker completes them: frames kept for the life's thinning, one environment.
        expected = {**body, "record_frames": True, "num_envs": 1}
        assert {name: created.json()[name] for name in OPTION_NAMES} == expected
        shown = http.get(f"/v0/sessions/{session_id}").json()
        assert {name: shown[name] for name in OPTION_NAMES} == expected
        listed = {s["id"]: s for s in http.get("/v0/sessions").json()["data"]}
        assert {name: listed[session_id][name] for name in OPTION_NAMES} == expected

        started = started_event(platform_stack.nats_url, session_id)
        assert started.kind == events_pb2.SESSION_EVENT_KIND_STARTED
        options = started.options
        assert (options.jpeg_quality, options.life, options.frame_every, options.max_frames, options.auto_reset) == (
            35, "options-arm", 2, 300, True)

        assert http.delete(f"/v0/sessions/{session_id}").status_code == 200
        closed = http.get(f"/v0/sessions/{session_id}").json()
        assert closed["state"] == "closed" and {name: closed[name] for name in OPTION_NAMES} == expected


def test_a_vector_session_and_a_plain_one_show_their_options(platform_stack):
    with httpx.Client(base_url=platform_stack.url, timeout=60) as http:
        vector = http.post("/v0/sessions", json={"env_id": "cartpole", "num_envs": 3, "jpeg_quality": 80})
        assert vector.status_code == 201, vector.text
        plain = http.post("/v0/sessions", json={"env_id": "pendulum"})
        assert plain.status_code == 201, plain.text
        try:
            shown = http.get(f"/v0/sessions/{vector.json()['id']}").json()
            assert (shown["num_envs"], shown["jpeg_quality"], shown["record"], shown["life"]) == (3, 80, False, None)
            shown = http.get(f"/v0/sessions/{plain.json()['id']}").json()
            assert {name: shown[name] for name in OPTION_NAMES} == {
                "env_id": "pendulum", "kwargs": {}, "record": False, "jpeg_quality": None, "record_frames": False,
                "num_envs": 1, "life": None, "frame_every": None, "max_frames": None, "auto_reset": False}
        finally:
            for created in (vector, plain):
                http.delete(f"/v0/sessions/{created.json()['id']}")


def test_the_sdk_sessions_show_how_they_were_made(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url, auto_reset=True, jpeg_quality=50) as env:
        assert (env.session["auto_reset"], env.session["jpeg_quality"]) == (True, 50)
        shown = httpx.get(f"{platform_stack.url}/v0/sessions/{env.session_id}", timeout=10).json()
        assert (shown["auto_reset"], shown["jpeg_quality"], shown["num_envs"]) == (True, 50, 1)
    with platform_sdk.make_vec("cartpole", 2, url=platform_stack.url) as vector:
        assert vector.session["num_envs"] == 2


def test_the_platforms_own_kwargs_are_shown_as_sent_and_bad_ones_refused_as_before(platform_stack):
    """world_changes and endless travel in SessionOptions' typed fields (issue 28): the session's
    kwargs show them as the user wrote them, the instance runs them, and a value of another type
    is refused naming the kwarg."""
    timeline = [{"at": 2, "change": "sensor_offset", "offset": 1, "indices": [0], "reveal": True}]
    kwargs = {"world_changes": timeline, "endless": True, "sutton_barto_reward": False}
    with httpx.Client(base_url=platform_stack.url, timeout=60) as http:
        created = http.post("/v0/sessions", json={"env_id": "cartpole", "kwargs": kwargs, "record": True})
        assert created.status_code == 201, created.text
        session_id = created.json()["id"]
        try:
            assert created.json()["kwargs"] == kwargs
            assert http.get(f"/v0/sessions/{session_id}").json()["kwargs"] == kwargs
            assert http.get(f"/v0/sessions/{session_id}/world-changes").json()["timeline"] == timeline
            started = started_event(platform_stack.nats_url, session_id)
            assert started.options.endless and started.options.world_changes.changes[0].at == 2
            assert started.spec.endless  # the instance took endless off its kwargs
        finally:
            http.delete(f"/v0/sessions/{session_id}")
        for bad, field, says in (
            ({"endless": "yes"}, "kwargs.endless", "kwargs.endless of 'cartpole' must be true or false, not \"yes\""),
            ({"world_changes": {"at": 1}}, "kwargs.world_changes", "kwargs.world_changes of 'cartpole': must be a list"),
            ({"world_changes": [{"at": 1, "change": "mass", "body": "pole", "scale": 2}]},
             "kwargs.world_changes[0].change", "kwargs.world_changes[0].change of 'cartpole': mass needs a MuJoCo"),
        ):
            refused = http.post("/v0/sessions", json={"env_id": "cartpole", "kwargs": bad})
            assert refused.status_code == 422, refused.text
            assert refused.json()["field"] == field and refused.json()["detail"].startswith(says), refused.json()

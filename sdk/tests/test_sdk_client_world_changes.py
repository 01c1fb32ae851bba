"""`env.world_changes()`: GET /v0/sessions/{id}/world-changes through the SDK's REST client, and
its errors (the route itself is tested in services/gateway; with every service in
tests/test_e2e_world_changes.py)."""

from __future__ import annotations

import json

import httpx
import pytest
from platform_sdk import errors
from platform_sdk.client.rest import RestClient
from platform_sdk.client.session import PlatformSession

CHANGES = {"session_id": "s1", "timeline": [{"at": 2, "change": "mass", "body": "torso", "scale": 2.0}],
           "applied": [{"at": 2, "change": "mass", "body": "torso", "scale": 2.0, "index": 0, "session_step": 2,
                        "seq": 3, "time": 1.5}]}


def _client(status: int, body: object, seen: list[httpx.Request]) -> RestClient:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, content=json.dumps(body).encode(), headers={"content-type": "application/json"})

    client = RestClient("http://platform.test", "t0ken")
    client._http = httpx.Client(base_url=client.url, headers={"Authorization": "Bearer t0ken"},
                                transport=httpx.MockTransport(handler))
    return client


def test_world_changes_is_the_routes_answer() -> None:
    seen: list[httpx.Request] = []
    assert _client(200, CHANGES, seen).world_changes("s1") == CHANGES
    [request] = seen
    assert (request.method, request.url.path) == ("GET", "/v0/sessions/s1/world-changes")
    assert request.headers["authorization"] == "Bearer t0ken"


def test_an_ended_or_unknown_session_raises_the_sdks_errors() -> None:
    gone = {"detail": "session s1 is closed (closed by the client): ... GET /v0/recordings/s1", "code": "gone",
            "log_tail": ""}
    with pytest.raises(errors.SessionClosedError, match="GET /v0/recordings/s1"):
        _client(410, gone, []).world_changes("s1")
    with pytest.raises(errors.SessionNotFoundError, match="no session"):
        _client(404, {"detail": "no session 'x'", "code": "not_found"}, []).world_changes("x")


def test_a_closed_session_object_says_where_its_changes_are() -> None:
    session = PlatformSession()
    session.env_id, session.session_id = "cartpole", "s1"
    with pytest.raises(errors.SessionClosedError, match="recording's world_changes"):
        session.world_changes()

"""Requests have bounds (issue 29), on the whole platform: a 100 MB body is a 413 answered
before it is read, the gateway's memory does not grow with it, oversized kwargs never reach
the broker, and the served OpenAPI document states each limit."""

from __future__ import annotations

import time

import httpx
import pytest
from platform_contracts import limits

MB = 1000 * 1000


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


@pytest.fixture(scope="module")
def http(platform_stack):
    with httpx.Client(base_url=platform_stack.url, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def session_id(http):
    sid = http.post("/v0/sessions", json={"env_id": "cartpole"}).json()["id"]
    assert http.post(f"/v0/sessions/{sid}/reset", json={"seed": 0}).status_code == 200
    yield sid
    http.delete(f"/v0/sessions/{sid}")


def test_a_100_mb_body_is_a_413_at_once_and_the_gateway_does_not_grow(platform_stack, http, session_id):
    pid = platform_stack.pid("gateway")
    assert pid is not None
    body = b'{"env_id": "cartpole", "kwargs": {"x": "' + b"y" * (100 * MB) + b'"}}'
    for path, limit in (("/v0/sessions", limits.MAX_SESSION_CREATE_BODY_BYTES),
                        (f"/v0/sessions/{session_id}/step", limits.MAX_COMMAND_BODY_BYTES)):
        http.post(path, content=b"{}", headers={"content-type": "application/json"})  # warm
        before = _rss_kib(pid)
        began = time.monotonic()
        response = http.post(path, content=body, headers={"content-type": "application/json"})
        took = time.monotonic() - began
        grew = _rss_kib(pid) - before
        assert response.status_code == 413, response.text
        assert response.json()["code"] == "too_large"
        assert f"is {len(body)} bytes, over {limit} bytes" in response.json()["detail"]
        assert took < 15, took  # the client's sending, mostly: the gateway drops what it is sent
        assert grew < 8 * 1024, f"the gateway grew by {grew} KiB on a refused 100 MB body"
    assert http.post(f"/v0/sessions/{session_id}/step", json={"action": 0}).status_code == 200


def test_10_mb_of_kwargs_never_reach_the_broker(http):
    listed = http.get("/v0/sessions").json()["count"]
    response = http.post("/v0/sessions", json={"env_id": "cartpole", "kwargs": {"x": "y" * (10 * MB)}})
    assert response.status_code == 413, response.text
    assert f"over {limits.MAX_SESSION_CREATE_BODY_BYTES} bytes (2 MiB)" in response.json()["detail"]
    # Within the body's limit, over the kwargs': a 422 naming the field and the limit.
    response = http.post("/v0/sessions", json={"env_id": "cartpole",
                                               "kwargs": {"x": "y" * (limits.MAX_KWARGS_JSON_BYTES + 1)}})
    assert response.status_code == 422, response.text
    assert response.json()["field"] == "kwargs"
    assert f"at most {limits.MAX_KWARGS_JSON_BYTES:,} bytes (1 MiB)" in response.json()["detail"]
    assert http.get("/v0/sessions").json()["count"] == listed  # no session row was made


def test_the_served_openapi_document_lists_the_413_with_each_limit(http):
    document = http.get("/openapi.json").json()
    create = document["paths"]["/v0/sessions"]["post"]
    assert create["x-body-limit-bytes"] == limits.MAX_SESSION_CREATE_BODY_BYTES
    assert f"{limits.MAX_SESSION_CREATE_BODY_BYTES} bytes (2 MiB)" in create["responses"]["413"]["description"]
    step = document["paths"]["/v0/sessions/{session_id}/step"]["post"]
    assert f"{limits.MAX_COMMAND_BODY_BYTES} bytes (1 MiB)" in step["responses"]["413"]["description"]

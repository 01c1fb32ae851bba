"""Request bodies have bounds (issue 29): each route's limit from `platform_contracts.limits`,
refused 413 before the body is read (declared) or as soon as it passes (streamed), in the
gateway's error shape and in the OpenAPI document; kwargs over their limits are a 422 naming
the field; a message too large for the bus is a 413, never a 503."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from platform_contracts import limits
from platform_gateway import nats_rpc
from platform_gateway.app import api_app
from platform_gateway.errors import PayloadTooLargeError
from platform_gateway.request_bounds import body_limit

MIB = 1024 * 1024


async def _raw_post(url: str, path: str, declared: int, sent: bytes = b"{") -> tuple[str, dict[str, Any], float]:
    """POST declaring `declared` bytes but sending only `sent`: the answer's status line and
    JSON body, and the seconds it took (an answer before the body means it was never read)."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    began = time.monotonic()
    writer.write(f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {declared}\r\n\r\n".encode() + sent)
    await writer.drain()
    head = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)).decode()
    length = int(next(line.split(":")[1] for line in head.split("\r\n") if line.lower().startswith("content-length")))
    body = json.loads(await asyncio.wait_for(reader.readexactly(length), 10))
    took = time.monotonic() - began
    writer.close()
    return head.split("\r\n")[0], body, took


@pytest.mark.parametrize(("path", "limit"), [
    ("/v0/sessions", limits.MAX_SESSION_CREATE_BODY_BYTES),
    ("/v0/sessions/s-0123456789ab/step", limits.MAX_COMMAND_BODY_BYTES),
    ("/v0/sessions/s-0123456789ab/reset", limits.MAX_COMMAND_BODY_BYTES),
    ("/v0/sessions/s-0123456789ab/hold", limits.MAX_COMMAND_BODY_BYTES),
    ("/v0/comparisons", limits.MAX_COMPARISON_BODY_BYTES),
    ("/v0/tokens", limits.MAX_DEFAULT_BODY_BYTES),
])
async def test_a_declared_body_over_its_routes_limit_is_a_413_before_it_is_read(
        gateway: Any, path: str, limit: int) -> None:
    status, body, took = await _raw_post(gateway.url, path, 100 * MIB)
    assert status.startswith("HTTP/1.1 413 ")
    assert body["code"] == "too_large"
    assert body["detail"].startswith(f"the request body is {100 * MIB} bytes, over {limit} bytes (")
    assert body["detail"].endswith(f"the most POST {path} takes (platform_contracts.limits)")
    assert took < 5  # answered with 1 of the 100 MB sent


async def test_a_body_within_its_limit_is_read_as_before(gateway: Any, broker: Any) -> None:
    response = await gateway.http.post("/v0/sessions", json={"env_id": "cartpole", "kwargs": {"x": "y" * 1000}})
    assert response.status_code == 201, response.text


async def test_a_streamed_body_is_cut_with_a_413_as_soon_as_it_passes_the_limit(gateway: Any) -> None:
    sent = 0

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: chunked, counted as it arrives
        nonlocal sent
        yield b'{"env_id": "cartpole", "kwargs": {"x": "'
        for _ in range(100):
            sent += 256 * 1024
            yield b"y" * (256 * 1024)
        yield b'"}}'

    response = await gateway.http.post("/v0/sessions", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413, response.text
    assert response.json() == {
        "detail": f"the request body is over {limits.MAX_SESSION_CREATE_BODY_BYTES} bytes (2 MiB), the most "
                  "POST /v0/sessions takes (platform_contracts.limits)",
        "code": "too_large"}


async def test_kwargs_over_their_limit_are_a_422_naming_the_field_and_the_limit(gateway: Any) -> None:
    big = "y" * (limits.MAX_KWARGS_JSON_BYTES + 10)  # within the body's 2 MiB, over the kwargs' 1 MiB
    response = await gateway.http.post("/v0/sessions", json={"env_id": "cartpole", "kwargs": {"blob": big}})
    assert response.status_code == 422, response.text
    error = response.json()
    assert error["field"] == "kwargs"
    assert f"at most {limits.MAX_KWARGS_JSON_BYTES:,} bytes (1 MiB)" in error["detail"]

    timeline = [{"at": 0, "change": "sensor_noise", "std": 1}] * (limits.MAX_WORLD_CHANGES + 1)
    response = await gateway.http.post("/v0/sessions", json={"env_id": "cartpole", "kwargs": {"world_changes": timeline}})
    assert response.status_code == 422, response.text
    error = response.json()
    assert error["field"] == "kwargs"
    assert (f"kwargs.world_changes has {limits.MAX_WORLD_CHANGES + 1:,} changes: a timeline has at most "
            f"{limits.MAX_WORLD_CHANGES:,}") in error["detail"]


def test_every_limit_is_far_below_the_bus_payload() -> None:
    for limit in (limits.MAX_KWARGS_JSON_BYTES, limits.MAX_SESSION_CREATE_BODY_BYTES, limits.MAX_COMMAND_BODY_BYTES,
                  limits.MAX_COMPARISON_BODY_BYTES, limits.MAX_DEFAULT_BODY_BYTES):
        assert limit <= limits.NATS_MAX_PAYLOAD // 2


def test_the_openapi_document_states_each_bodys_limit() -> None:
    document = api_app().openapi()
    with_body = [(path, method, operation) for path, operations in document["paths"].items()
                 for method, operation in operations.items() if isinstance(operation, dict) and "requestBody" in operation]
    assert len(with_body) >= 10
    for path, _method, operation in with_body:
        limit = body_limit(path)
        assert operation["x-body-limit-bytes"] == limit, path
        assert f"{limit} bytes" in operation["responses"]["413"]["description"], path
        assert operation["responses"]["413"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ErrorPublic"}
    operations = document["paths"]
    assert operations["/v0/sessions"]["post"]["x-body-limit-bytes"] == limits.MAX_SESSION_CREATE_BODY_BYTES
    assert operations["/v0/sessions/{session_id}/step"]["post"]["x-body-limit-bytes"] == limits.MAX_COMMAND_BODY_BYTES
    assert operations["/v0/doom/wads"]["post"]["x-body-limit-bytes"] == limits.MAX_WAD_BYTES


async def test_a_request_too_large_for_the_bus_is_a_413_naming_its_limit_not_a_503(nats_client: Any) -> None:
    with pytest.raises(PayloadTooLargeError) as raised:
        await nats_rpc.request(nats_client, "platform.test.nobody", b"x" * (limits.NATS_MAX_PAYLOAD + 1),
                               timeout=1, service="broker")
    assert raised.value.status == 413
    assert str(raised.value) == (
        f"the message to the broker on platform.test.nobody is {limits.NATS_MAX_PAYLOAD + 1} bytes: too large for "
        f"the bus, whose messages are at most {limits.NATS_MAX_PAYLOAD} bytes (16 MiB)")

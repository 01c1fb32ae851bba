"""Nothing holds the gateway forever (issue 29): raw sockets against the gateway's own uvicorn
server (`transport_bounds.uvicorn_config`, as `python -m platform_gateway` runs it), with short
timeouts: a header block that never ends, a connection that sends nothing, an idle kept-alive
connection, a body that stops or trickles, and too many connections from one address."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus


class Raw:
    """One raw TCP connection to the gateway."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str) -> None:
        self.reader, self.writer, self.host = reader, writer, host
        self.opened = time.monotonic()

    @classmethod
    async def open(cls, url: str) -> Raw:
        host, port = url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer, host)

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def answer(self, timeout: float = 10) -> tuple[int, dict[str, Any]]:
        """The next answer's status and JSON body."""
        head = (await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), timeout)).decode()
        lines = head.split("\r\n")
        length = int(next(line.split(":")[1] for line in lines if line.lower().startswith("content-length")))
        body = await asyncio.wait_for(self.reader.readexactly(length), timeout)
        return int(lines[0].split()[1]), json.loads(body)

    async def get(self, path: str = "/healthz") -> tuple[int, dict[str, Any]]:
        await self.send(f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode())
        return await self.answer()

    async def closed_after(self, timeout: float = 10) -> float:
        """Seconds from the connection's opening until the gateway closed it (EOF or reset)."""
        try:
            rest = await asyncio.wait_for(self.reader.read(), timeout)
        except ConnectionResetError:
            rest = b""
        assert rest == b"", rest
        return time.monotonic() - self.opened

    def close(self) -> None:
        self.writer.close()


async def test_a_header_block_that_never_ends_is_a_408_and_closed_after_the_header_timeout(start_gateway: Any) -> None:
    gateway = await start_gateway(header_timeout=1.0)
    raw = await Raw.open(gateway.url)
    await raw.send(f"GET /healthz HTTP/1.1\r\nHost: {raw.host}\r\nX-Slow: ".encode())  # ... and never ends
    status, body = await raw.answer(timeout=5)
    assert (status, body["code"]) == (408, "timeout")
    assert body["detail"] == "the request's line and headers did not come within 1 s (PLATFORM_HEADER_TIMEOUT)"
    assert 0.9 < await raw.closed_after(timeout=5) < 3


async def test_headers_sent_a_byte_at_a_time_do_not_push_the_deadline(start_gateway: Any) -> None:
    gateway = await start_gateway(header_timeout=1.0)
    raw = await Raw.open(gateway.url)
    request = f"GET /healthz HTTP/1.1\r\nHost: {raw.host}\r\nX-Slow: ".encode() + b"a" * 200

    async def drip() -> None:  # ~10 s of bytes
        for byte in request:
            await raw.send(bytes([byte]))
            await asyncio.sleep(0.05)

    sender = asyncio.create_task(drip())
    try:
        status, _ = await raw.answer(timeout=5)
    finally:
        sender.cancel()
    assert status == 408
    assert time.monotonic() - raw.opened < 3


async def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout(start_gateway: Any) -> None:
    gateway = await start_gateway(header_timeout=1.0)
    raws = [await Raw.open(gateway.url) for _ in range(20)]  # half-open: never a byte
    for raw in raws:
        assert await raw.closed_after(timeout=5) < 3


async def test_an_idle_kept_alive_connection_is_closed_after_the_keep_alive_timeout(start_gateway: Any) -> None:
    gateway = await start_gateway(keep_alive_timeout=1, header_timeout=30.0)
    raw = await Raw.open(gateway.url)
    assert (await raw.get())[0] == 200
    answered = time.monotonic()
    await raw.closed_after(timeout=5)
    assert 0.9 < time.monotonic() - answered < 3


async def test_a_body_sent_a_byte_a_second_is_a_408_after_the_grace(start_gateway: Any) -> None:
    gateway = await start_gateway(upload_grace=2.0, min_upload_rate=1024, body_timeout=30.0)
    raw = await Raw.open(gateway.url)
    await raw.send(f"POST /v0/sessions HTTP/1.1\r\nHost: {raw.host}\r\nContent-Type: application/json\r\n"
                   "Content-Length: 100\r\n\r\n{".encode())

    async def trickle() -> None:
        for _ in range(60):
            await asyncio.sleep(0.5)
            await raw.send(b" ")

    sender = asyncio.create_task(trickle())
    try:
        status, body = await raw.answer(timeout=10)
    finally:
        sender.cancel()
    assert (status, body["code"]) == (408, "timeout")
    assert "at least 1,024 bytes/s are needed after the first 2 s (PLATFORM_MIN_UPLOAD_RATE" in body["detail"]
    assert await raw.closed_after(timeout=5) < 6


async def test_a_body_that_stops_is_a_408_after_the_body_timeout(start_gateway: Any) -> None:
    gateway = await start_gateway(body_timeout=1.0, upload_grace=60.0)
    raw = await Raw.open(gateway.url)
    await raw.send(f"POST /v0/sessions HTTP/1.1\r\nHost: {raw.host}\r\nContent-Type: application/json\r\n"
                   "Content-Length: 100\r\n\r\n{\"env_id\": ".encode())
    status, body = await raw.answer(timeout=10)
    assert (status, body["detail"]) == (408, "no byte of the request's body came for 1 s (PLATFORM_BODY_TIMEOUT)")
    assert await raw.closed_after(timeout=5) < 5
    # The gateway serves on.
    fresh = await Raw.open(gateway.url)
    assert (await fresh.get())[0] == 200


async def test_connections_per_client_address_are_bounded_websockets_included(start_gateway: Any, broker: Any) -> None:
    gateway = await start_gateway(max_connections_per_client=3, header_timeout=30.0, keep_alive_timeout=30)
    sid = (await gateway.http.post("/v0/sessions", json={"env_id": "cartpole"})).json()["id"]
    await gateway.http.aclose()  # its pooled connection would count
    stream = f"{gateway.ws_url}/v0/sessions/{sid}/stream"

    held = [await Raw.open(gateway.url) for _ in range(2)]
    for raw in held:
        assert (await raw.get())[0] == 200  # kept alive
    websocket = await connect(stream, compression=None)
    # The fourth: answered 503 naming the bound, and closed; a WebSocket is refused too.
    extra = await Raw.open(gateway.url)
    status, body = await extra.get()
    assert (status, body["code"]) == (503, "unavailable")
    assert body["detail"] == ("too many connections from your address: at most 3 open at once "
                              "(PLATFORM_MAX_CONNECTIONS_PER_CLIENT); close some and retry")
    await extra.closed_after()
    with pytest.raises(InvalidStatus, match="503"):
        await connect(stream, compression=None)

    held.pop().close()  # one goes: one more is taken
    await asyncio.sleep(0.2)
    again = await Raw.open(gateway.url)
    assert (await again.get())[0] == 200
    with pytest.raises(InvalidStatus, match="503"):  # 3 again (2 raw, 1 WebSocket)
        await connect(stream, compression=None)
    await websocket.close()  # the WebSocket's slot is given back when it closes
    await asyncio.sleep(0.2)
    second = await connect(stream, compression=None)
    await second.close()
    for raw in (*held, again):
        raw.close()

"""Frames of the step link survive a real TCP connection, and oversized ones are refused."""

from __future__ import annotations

import asyncio

import pytest
from platform_contracts.framing import HEADER, MAX_FRAME_BYTES, FrameTooLargeError, encode_frame, read_frame


async def test_frames_round_trip_over_tcp():
    received: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                received.append(await read_frame(reader))
            except asyncio.IncompleteReadError:
                break
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    _reader, writer = await asyncio.open_connection("127.0.0.1", port)
    payloads = [b"", b"x", bytes(range(256)) * 1000]
    for payload in payloads:
        writer.write(encode_frame(payload))
    await writer.drain()
    writer.close()
    await writer.wait_closed()
    for _ in range(100):
        if len(received) == len(payloads):
            break
        await asyncio.sleep(0.01)
    server.close()
    assert received == payloads


async def test_an_oversized_announced_length_is_refused():
    reader = asyncio.StreamReader()
    reader.feed_data(HEADER.pack(MAX_FRAME_BYTES + 1))
    with pytest.raises(FrameTooLargeError, match="over the"):
        await read_frame(reader)

"""Length-prefixed frames of the step link (see simulusion/host/v1/step_link.proto).

A frame is a 4-byte little-endian length and that many bytes. Used on both ends: the env host
serves the link, the gateway opens one per session.
"""

from __future__ import annotations

import asyncio
import struct

from platform_contracts.limits import MAX_STEP_LINK_FRAME_BYTES as MAX_FRAME_BYTES

HEADER = struct.Struct("<I")


class FrameTooLargeError(ValueError):
    pass


def encode_frame(payload: bytes) -> bytes:
    if len(payload) > MAX_FRAME_BYTES:
        raise FrameTooLargeError(f"a frame of {len(payload)} bytes is over the {MAX_FRAME_BYTES}-byte limit")
    return HEADER.pack(len(payload)) + payload


async def read_frame(reader: asyncio.StreamReader) -> bytes:
    """Read one frame's payload.

    Raises:
        asyncio.IncompleteReadError: the peer closed the connection (at a frame boundary when
            `.partial` is empty).
        FrameTooLargeError: the announced length is over the limit.
    """
    (length,) = HEADER.unpack(await reader.readexactly(HEADER.size))
    if length > MAX_FRAME_BYTES:
        raise FrameTooLargeError(f"a frame of {length} bytes is over the {MAX_FRAME_BYTES}-byte limit")
    return await reader.readexactly(length)

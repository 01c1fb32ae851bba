"""A session's step link to its env host (simulusion/host/v1/step_link.proto): the fast path.

One TCP connection per session, opened on first use: a `StepLinkOpen` frame naming the session
(and carrying the trace context and the gateway's ticket for it), the env host's `StepLinkOpened`, then one `EnvRequest` frame
out and one `EnvResponse` frame back per command. Frames are a 4-byte length and the message's
bytes (`platform_contracts.framing`); the gateway never parses them on the way through.
"""

from __future__ import annotations

import asyncio
import socket
import time

from google.protobuf.message import DecodeError
from platform_contracts.framing import FrameTooLargeError, encode_frame, read_frame
from platform_contracts.tracing import inject_dict
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.host.v1 import step_link_pb2 as link_pb

from platform_gateway.errors import InvalidArgumentError, StreamBrokenError

CONNECT_TIMEOUT_S = 10.0
# Requests are written without awaiting a drain; only once this much is queued (an env host
# that reads slowly) does the link wait for the socket to take it.
DRAIN_ABOVE_BYTES = 4 * 1024 * 1024
READ_LIMIT_BYTES = 1024 * 1024  # the reader's buffer before it stops reading the socket


class StepLink:
    """One session's step link; the same interface as `grpc_stream.GrpcStream`."""

    __slots__ = ("_reader", "_refused", "_ticket", "_writer", "address", "dropped", "env_id", "last_used",
                 "session_id")

    def __init__(self, session_id: str, env_id: str, address: str, ticket: str = "") -> None:
        self.session_id = session_id
        self._ticket = ticket
        self.env_id = env_id
        self.address = address
        self.last_used = time.monotonic()
        self.dropped = False
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._refused = False

    def done(self) -> bool:
        """The link ended: refused, closed, or the env host closed it (the next request needs a new one)."""
        if self._refused or self.dropped:
            return True
        return self._reader is not None and self._reader.at_eof()

    async def exchange(self, request: bytes) -> bytes:
        """Send one request's bytes, return its response's bytes. Connects on first use; when the
        env host refuses the session, the answer is an `EnvResponse` carrying its error.

        Raises:
            StreamBrokenError: no connection, or it broke (EOF, reset) before the response.
            InvalidArgumentError: the request is over the frame size limit.
        """
        if self._writer is None:
            refusal = await self._connect()
            if refusal is not None:
                return _refused_response(request, refusal)
        reader, writer = self._reader, self._writer
        assert reader is not None and writer is not None
        try:
            frame = encode_frame(request)
        except FrameTooLargeError as exc:
            raise InvalidArgumentError(f"session {self.session_id} ({self.env_id}): {exc}") from None
        writer.write(frame)
        try:
            if writer.transport.get_write_buffer_size() > DRAIN_ABOVE_BYTES:
                await writer.drain()
            return await read_frame(reader)
        except asyncio.IncompleteReadError:
            raise StreamBrokenError("the env host closed the step link") from None
        except (OSError, FrameTooLargeError) as exc:
            raise StreamBrokenError(f"the step link broke: {type(exc).__name__}: {exc}") from None

    def close(self) -> None:
        self.dropped = True
        if self._writer is not None:
            self._writer.close()

    async def _connect(self) -> env_pb.Error | None:
        """Open the connection and the link; the env host's error when it refuses the session."""
        host, _, port = self.address.rpartition(":")
        writer: asyncio.StreamWriter | None = None
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT_S):
                reader, writer = await asyncio.open_connection(host.strip("[]"), int(port),
                                                               limit=READ_LIMIT_BYTES)
                _set_nodelay(writer)
                opening = link_pb.StepLinkOpen(session_id=self.session_id, trace_context=inject_dict(),
                                               ticket=self._ticket, via_gateway=True)
                writer.write(encode_frame(opening.SerializeToString()))
                opened = link_pb.StepLinkOpened.FromString(await read_frame(reader))
        except TimeoutError:
            _close(writer)
            raise StreamBrokenError(f"no step link within {CONNECT_TIMEOUT_S:g} s") from None
        except asyncio.IncompleteReadError:
            _close(writer)
            raise StreamBrokenError("the env host closed the step link while opening it") from None
        except (OSError, ValueError, FrameTooLargeError, DecodeError) as exc:
            _close(writer)
            raise StreamBrokenError(f"cannot open the step link: {type(exc).__name__}: {exc}") from None
        if opened.HasField("error"):
            _close(writer)
            self._refused = True
            return opened.error
        if self.dropped:  # closed while connecting
            _close(writer)
            raise StreamBrokenError("the step link was closed")
        self._reader, self._writer = reader, writer
        return None


def _set_nodelay(writer: asyncio.StreamWriter) -> None:
    sock = writer.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _close(writer: asyncio.StreamWriter | None) -> None:
    if writer is not None:
        writer.close()


def _refused_response(request: bytes, error: env_pb.Error) -> bytes:
    """The env host's refusal as the answer to `request` (as the gRPC stream would answer it)."""
    try:
        request_id = env_pb.EnvRequest.FromString(request).id
    except DecodeError:
        request_id = 0
    return env_pb.EnvResponse(id=request_id, error=error).SerializeToString()

"""The env host's link to one instance: request bytes in, response bytes out, one at a time.

Two kinds behind one interface (`InstanceLink`), chosen by what the instance speaks
(`InstanceProcess.transport`):

- `FramedLink`: the instances the env host starts itself (`python -m platform_sdk --transport
  frames`): the same `EnvRequest`/`EnvResponse` bytes as length-prefixed frames
  (`platform_contracts.framing`) on the instance's Unix socket, read by an `asyncio.Protocol`
  whose `data_received` cuts frames and resolves the waiting request's future. Python gRPC cost
  the env host ~200 µs of CPU per step (and the instance ~330 µs) for a CartPole step of 7 µs.
- `GrpcLink`: instances of Docker images (and any other gRPC environment server): the
  environment protocol's `Environment/Connect` stream.

Both carry the bytes unchanged (the env host parses a request only to learn its command, never
re-encodes it), and both raise `InstanceGone` for every failure, with the messages the env host
has always logged: `the stream to the instance of <session> (<env>) broke: ...`.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable
from typing import Protocol, cast

import grpc
from platform_contracts.framing import HEADER
from platform_contracts.limits import MAX_GRPC_MESSAGE_BYTES as MAX_FRAME_BYTES  # the gRPC transport's
from platform_sdk.launch.instance_processes import InstanceProcess

from platform_envhost.errors import InstanceGone

CONNECT_METHOD = "/simulusion.env.v1.Environment/Connect"
MAX_MESSAGE_BYTES = 256 * 1024 * 1024
CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
]
# A request this small is written joined to its header (one send); a larger one after it, as
# copying it would cost more than a second send.
WRITE_JOINED_BELOW_BYTES = 64 * 1024

Describe = Callable[[], str]
"""Names the instance's session in messages ("session s1 (cartpole)"); asked at each failure,
as a claimed warm pool instance changes session."""

Meanwhile = Callable[[], Awaitable[None]]
"""Work run once the request is written, while the instance answers it (the step events of
earlier answers: see `Router.build_while_forwarding`). It must not raise."""


class InstanceLink(Protocol):
    """A link to one instance. `forward` is called one request at a time (under the instance's
    lock)."""

    async def forward(self, request: bytes, meanwhile: Meanwhile | None = None) -> bytes:
        """Send one request's bytes and return the response's bytes; `meanwhile` runs between
        the two, while the instance works.

        Raises:
            InstanceGone: the link broke (the instance died, or the link was closed).
        """
        ...

    async def close(self) -> None:
        """Close the link; a request in flight fails with `InstanceGone`. Idempotent."""
        ...


def open_link(process: InstanceProcess, describe: Describe) -> InstanceLink:
    """The link `process` speaks (its `transport`). Connects on first use, so callers that
    construct an `Instance` synchronously keep working."""
    if process.transport == "frames":
        return FramedLink(process.address, describe)
    return GrpcLink(process.address, describe)


def _cancelled(describe: Describe) -> InstanceGone:
    """A forward cancelled by the link's close (not by its caller's cancellation, which goes on)."""
    return InstanceGone(f"the stream to the instance of {describe()} was cancelled")


def _caller_cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class GrpcLink:
    """The environment protocol's gRPC stream (identity serializers: bytes pass unchanged)."""

    def __init__(self, address: str, describe: Describe) -> None:
        self._describe = describe
        self._channel = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
        self._call: grpc.aio.StreamStreamCall[bytes, bytes] = self._channel.stream_stream(
            CONNECT_METHOD, request_serializer=None, response_deserializer=None
        )()

    async def forward(self, request: bytes, meanwhile: Meanwhile | None = None) -> bytes:
        try:
            await self._call.write(request)
            if meanwhile is not None:
                await meanwhile()
            response = await self._call.read()
        except asyncio.CancelledError:
            if _caller_cancelled():
                raise  # our caller is being cancelled, not the stream
            raise _cancelled(self._describe) from None
        except Exception as exc:  # grpc.aio.AioRpcError, a write after the call ended...
            detail = exc.details() if isinstance(exc, grpc.aio.AioRpcError) else str(exc)
            raise InstanceGone(f"the stream to the instance of {self._describe()} broke: {detail}") from exc
        if response is grpc.aio.EOF:
            raise InstanceGone(f"the instance of {self._describe()} ended its stream")
        return response  # type: ignore[return-value]

    async def close(self) -> None:
        self._call.cancel()
        await self._channel.close(grace=None)


class FramedLink(asyncio.Protocol):
    """Length-prefixed frames on the instance's Unix socket, connected on the first `forward`.

    Each written request appends a future to `_waiting`; each complete frame received resolves
    the oldest. A future whose caller was cancelled is still in the queue, so its response, when
    it comes, is dropped rather than taken for the next request's.
    """

    def __init__(self, address: str, describe: Describe) -> None:
        self._path = address.removeprefix("unix:")
        self._describe = describe
        self._transport: asyncio.Transport | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._waiting: collections.deque[asyncio.Future[bytes]] = collections.deque()
        self._buffer = bytearray()  # the start of a frame not yet complete
        self._broken = ""  # why the link is down for good ("" while it is up or not yet opened)

    # -- the interface

    async def forward(self, request: bytes, meanwhile: Meanwhile | None = None) -> bytes:
        transport = self._transport
        if transport is None or self._broken:
            transport = await self._connected()
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        if len(request) < WRITE_JOINED_BELOW_BYTES:
            transport.write(HEADER.pack(len(request)) + request)
        else:
            transport.write(HEADER.pack(len(request)))
            transport.write(request)
        try:
            if meanwhile is not None:
                await meanwhile()
            return await future
        except asyncio.CancelledError:
            if _caller_cancelled() or not future.cancelled():
                raise  # our caller is being cancelled, not the link
            raise _cancelled(self._describe) from None

    async def close(self) -> None:
        self._fail("the link was closed", cancel=True)
        connecting = self._connecting
        if connecting is not None and not connecting.done():
            connecting.cancel()

    # -- connecting

    async def _connected(self) -> asyncio.Transport:
        """The transport, connecting first when not yet connected.

        Raises:
            InstanceGone: the link broke or was closed, or the connection is refused.
        """
        if self._broken:
            raise self._gone(self._broken)
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._connect())
        try:
            await asyncio.shield(self._connecting)
        except asyncio.CancelledError:
            if _caller_cancelled():
                raise
            raise _cancelled(self._describe) from None
        if self._broken or self._transport is None:
            raise self._gone(self._broken or "not connected")
        return self._transport

    async def _connect(self) -> None:
        try:
            await asyncio.get_running_loop().create_unix_connection(lambda: self, self._path)
        except OSError as exc:
            self._fail(f"cannot connect to unix:{self._path}: {exc}")

    # -- asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self._broken:  # closed while connecting
            transport.close()
            return
        # a stream transport (uvloop's, under the env host, is not a subclass of asyncio's)
        self._transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        if not buffer and len(data) >= HEADER.size and HEADER.unpack_from(data)[0] == len(data) - HEADER.size:
            self._answer(data[HEADER.size :])  # one whole frame: the lockstep case
            return
        buffer += data
        start = 0
        while len(buffer) - start >= HEADER.size:
            (length,) = HEADER.unpack_from(buffer, start)
            if length > MAX_FRAME_BYTES:
                self._fail(f"the instance sent a frame of {length} bytes, over the {MAX_FRAME_BYTES}-byte limit")
                return
            end = start + HEADER.size + length
            if len(buffer) < end:
                break
            self._answer(bytes(buffer[start + HEADER.size : end]))
            start = end
        del buffer[:start]

    def eof_received(self) -> bool:
        self._fail("the instance closed the connection")
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(str(exc) if exc is not None else "the instance closed the connection")

    # -- answers and failures

    def _answer(self, response: bytes) -> None:
        if not self._waiting:
            self._fail("the instance sent a response to no request")
            return
        future = self._waiting.popleft()
        if not future.done():  # done: its caller was cancelled; the response is dropped
            future.set_result(response)

    def _fail(self, detail: str, *, cancel: bool = False) -> None:
        """The link is down for good: every waiting request fails (cancelled by `close`, else
        with `InstanceGone` naming `detail`). The first reason is kept."""
        if not self._broken:
            self._broken = detail
        while self._waiting:
            future = self._waiting.popleft()
            if not future.done():
                if cancel:
                    future.cancel()
                else:
                    future.set_exception(self._gone(self._broken))
        self._buffer.clear()
        transport, self._transport = self._transport, None
        if transport is not None:
            transport.close()

    def _gone(self, detail: str) -> InstanceGone:
        return InstanceGone(f"the stream to the instance of {self._describe()} broke: {detail}")

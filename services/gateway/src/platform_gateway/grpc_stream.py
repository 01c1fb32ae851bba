"""A session's gRPC stream `Environment/Connect` to its env host: the fallback when the broker
gives no step link address. Raw bytes both ways; one `grpc.aio` channel per env host address."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import grpc
import grpc.aio
from platform_bus.step_tickets import TICKET_METADATA
from platform_contracts import subjects, tracing

from platform_gateway.errors import StreamBrokenError

CONNECT_METHOD = "/simulusion.env.v1.Environment/Connect"
CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", -1),
    ("grpc.max_receive_message_length", -1),
    # An env host that restarts at the same address is found again within a second or two.
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 2000),
]


def new_channel(address: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)


class GrpcStream:
    """One session's gRPC stream. Requests are fed through a queue that gRPC consumes on its
    own: the next response can be awaited at once, without first waiting for the write to
    complete (measured: ~15-25% more lockstep steps per second than write() then read())."""

    __slots__ = ("_queue", "address", "call", "dropped", "env_id", "last_used", "session_id")

    def __init__(self, session_id: str, env_id: str, address: str, channel: grpc.aio.Channel,
                 ticket: str = "") -> None:
        self.session_id = session_id
        self.env_id = env_id
        self.address = address
        self.last_used = time.monotonic()
        self.dropped = False
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        connect: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = channel.stream_stream(
            CONNECT_METHOD, request_serializer=None, response_deserializer=None
        )
        ours = [(subjects.SESSION_ID_METADATA, session_id)] + ([(TICKET_METADATA, ticket)] if ticket else [])
        metadata = tracing.grpc_metadata(ours)
        self.call: grpc.aio.StreamStreamCall[bytes, bytes] = connect(self._requests(), metadata=metadata)

    async def _requests(self) -> AsyncIterator[bytes]:
        while (request := await self._queue.get()) is not None:
            yield request

    def done(self) -> bool:
        """The stream ended (the next request needs a new one)."""
        return self.call.done()

    async def exchange(self, request: bytes) -> bytes:
        """Send one request's bytes, return its response's bytes.

        Raises:
            StreamBrokenError: the call failed or the env host ended it.
            asyncio.CancelledError: the stream was closed (or gRPC cancelled the call).
        """
        self._queue.put_nowait(request)
        try:
            response = await self.call.read()
        except grpc.aio.AioRpcError as exc:
            raise StreamBrokenError(f"{exc.code().name}: {exc.details()}") from None
        except asyncio.InvalidStateError as exc:
            raise StreamBrokenError(str(exc) or type(exc).__name__) from None
        if response is grpc.aio.EOF:
            raise StreamBrokenError("the env host ended the stream")
        return response  # type: ignore[return-value]

    def close(self) -> None:
        self.dropped = True
        self._queue.put_nowait(None)
        self.call.cancel()

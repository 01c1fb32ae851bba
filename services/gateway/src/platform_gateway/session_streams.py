"""The step path: each session's link to its env host, carrying raw bytes.

The step link (`step_link.StepLink`, one TCP connection per session) when the broker gives the
session a `step_address`; else a gRPC stream `Environment/Connect` (`grpc_stream.GrpcStream`,
one `grpc.aio` channel per env host address shared by its sessions). Either is opened on first
use, each with a ticket for the session (`step_tickets`) when the gateway has the ticket
secret. One `asyncio.Lock` per session keeps REST and WebSocket requests on a session in order,
one at a time (each request is followed by the read of its response). Nothing here decodes or
encodes a message: requests and responses stay serialized bytes.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

import grpc.aio

from platform_gateway.errors import (
    EnvTimeoutError,
    GatewayError,
    SessionGoneError,
    StreamBrokenError,
    UnavailableError,
)
from platform_gateway.grpc_stream import GrpcStream, new_channel
from platform_gateway.session_directory import SessionDirectory, gone_error
from platform_gateway.step_link import StepLink
from platform_gateway.step_tickets import StepTickets


class _Stream(Protocol):
    session_id: str
    env_id: str
    address: str
    last_used: float
    dropped: bool

    def done(self) -> bool: ...

    async def exchange(self, request: bytes) -> bytes: ...

    def close(self) -> None: ...


class SessionStreams:
    """Sends a session's serialized `EnvRequest`s to its env host and returns the responses."""

    def __init__(self, directory: SessionDirectory, *, timeout: float = 300.0,
                 tickets: StepTickets | None = None) -> None:
        self.directory = directory
        self._tickets = tickets or StepTickets(None)
        self._timeout = timeout
        self._channels: dict[str, grpc.aio.Channel] = {}  # the gRPC fallback's, by env host address
        self._streams: dict[str, _Stream] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._closed = False

    def lock(self, session_id: str) -> asyncio.Lock:
        """The lock that serializes the session's requests."""
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = asyncio.Lock()
        return lock

    async def exchange(self, session_id: str, request: bytes) -> bytes:
        """Send one serialized `EnvRequest` on the session's stream; return the serialized response.

        Raises:
            NotFoundError, SessionGoneError, ConflictError: the session cannot take commands.
            UnavailableError: the broker or the env host cannot be reached.
            EnvTimeoutError: no response within the timeout (the stream is dropped).
        """
        async with self.lock(session_id):
            return await self.exchange_locked(session_id, request)

    async def exchange_locked(self, session_id: str, request: bytes) -> bytes:
        """`exchange` for a caller that already holds `lock(session_id)`."""
        stream = self._streams.get(session_id)
        if stream is None or stream.done():
            if stream is not None:  # ended since the last request: ask the broker again
                self.directory.forget(session_id)
            stream = await self._open(session_id)
        stream.last_used = time.monotonic()
        try:
            async with asyncio.timeout(self._timeout):
                return await stream.exchange(request)
        except TimeoutError:
            self.drop(session_id)
            raise EnvTimeoutError(
                f"session {session_id} ({stream.env_id}): no response from the env host at {stream.address} "
                f"within {self._timeout:g} s"
            ) from None
        except asyncio.CancelledError:
            task = asyncio.current_task()
            dropped = stream.dropped
            self.drop(session_id)  # a response may still come: this stream is out of step now
            if task is not None and task.cancelling():
                raise
            if not dropped:  # gRPC cancelled the call itself
                raise await self._broken(stream, "the call was cancelled") from None
            raise _closed_in_flight(session_id) from None
        except StreamBrokenError as exc:
            if stream.dropped:  # closed here while the request was in flight
                raise _closed_in_flight(session_id) from None
            raise await self._broken(stream, exc.message) from None

    def drop(self, session_id: str) -> None:
        """Cancel the session's stream (if any); the next request opens a new one."""
        stream = self._streams.pop(session_id, None)
        if stream is not None:
            stream.close()

    def forget(self, session_id: str) -> None:
        """Drop everything the gateway holds for a session that ended."""
        self.drop(session_id)
        self.directory.forget(session_id)
        lock = self._locks.get(session_id)
        if lock is not None and not lock.locked():
            del self._locks[session_id]

    def sweep(self, idle: float) -> list[str]:
        """Forget the sessions whose streams were not used for `idle` seconds; returns their ids.

        A session that ended without the gateway seeing it (e.g. closed by the broker for being
        idle) would otherwise keep its stream, lock and cached info forever.
        """
        now = time.monotonic()
        stale = [sid for sid, stream in self._streams.items()
                 if now - stream.last_used > idle and not self.lock(sid).locked()]
        for session_id in stale:
            self.forget(session_id)
        return stale

    async def sweep_forever(self, idle: float, every: float = 60.0) -> None:
        while True:
            await asyncio.sleep(every)
            self.sweep(idle)

    async def close(self) -> None:
        self._closed = True
        for session_id in list(self._streams):
            self.drop(session_id)
        channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            await channel.close(grace=None)

    async def _open(self, session_id: str) -> _Stream:
        if self._closed:
            raise UnavailableError("the gateway is shutting down")
        self.drop(session_id)
        info = await self.directory.running(session_id)
        ticket = self._tickets.for_link(info)
        stream: _Stream
        if info.step_address:
            stream = StepLink(session_id, info.options.env_id, info.step_address, ticket)
        else:
            address = info.host_address
            if not address:
                raise UnavailableError(f"session {session_id} ({info.options.env_id}) has no env host address")
            channel = self._channels.get(address)
            if channel is None:
                channel = self._channels[address] = new_channel(address)
            stream = GrpcStream(session_id, info.options.env_id, address, channel, ticket)
        self._streams[session_id] = stream
        return stream

    async def _broken(self, stream: _Stream, why: str) -> GatewayError:
        """The error for a stream that failed: the session's end if the broker knows it, else 503."""
        self.drop(stream.session_id)
        where = f"session {stream.session_id} ({stream.env_id})"
        try:
            info = await self.directory.fresh(stream.session_id)
        except GatewayError:
            info = None
        error = gone_error(info) if info is not None else None
        if isinstance(error, SessionGoneError):
            return error
        return UnavailableError(f"{where}: the env host at {stream.address} is unreachable ({why})")


def _closed_in_flight(session_id: str) -> SessionGoneError:
    return SessionGoneError(f"session {session_id} is closed (closed while a request was in flight)")

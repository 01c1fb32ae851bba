"""The step link: the fast path to this env host (simulusion/host/v1/step_link.proto), opened
by the gateway or, on the direct path, by the SDK itself.

One TCP connection per session carrying length-prefixed frames (`platform_contracts.framing`).
The first frame is a `StepLinkOpen` naming the session, answered by a `StepLinkOpened` (with
an error, then the connection closes, when the session does not run here, or when this host
has a ticket secret and the open brings no valid ticket for the session on this host:
`platform_bus.step_tickets`; the ticket is checked first, so a client without one learns
nothing about which sessions run here). After that each
frame is an `EnvRequest`'s bytes, handed to `Router.handle`, and the response's bytes go back
in order. Per step this costs one read and one write on a plain socket: no HTTP/2, no gRPC.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket

from google.protobuf.message import DecodeError
from opentelemetry import trace
from platform_bus.step_tickets import TicketRefusedError, verify_ticket
from platform_contracts.framing import FrameTooLargeError, encode_frame, read_frame
from platform_contracts.tracing import extract_dict
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.host.v1 import step_link_pb2 as link_pb

from platform_envhost.errors import ConfigError
from platform_envhost.instance_table import InstanceTable
from platform_envhost.router import Router

log = logging.getLogger(__name__)

OPEN_TIMEOUT_S = 10.0  # a connection that does not say which session it is for is closed
# Responses are written without awaiting a drain; only once this much is queued (a client
# that reads slowly) does the link wait for the socket to take it.
DRAIN_ABOVE_BYTES = 4 * 1024 * 1024
READ_LIMIT_BYTES = 1024 * 1024  # the reader's buffer before it stops reading the socket
CLOSE_GRACE_S = 1.0


def set_nodelay(writer: asyncio.StreamWriter) -> None:
    """Send small frames at once (no Nagle delay): a lockstep step is one small frame each way."""
    sock = writer.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _opened_error(code: env_pb.ErrorCode.ValueType, message: str) -> bytes:
    opened = link_pb.StepLinkOpened(error=env_pb.Error(code=code, message=message))
    return encode_frame(opened.SerializeToString())


class StepLinkServer:
    """Serves step links for the sessions of `table`, answering through `router`.

    Args:
        ticket_secret: when set, every link must open with a ticket for its session on this host.
    """

    def __init__(self, router: Router, table: InstanceTable, host_id: str,
                 tracer: trace.Tracer | None = None, *, ticket_secret: str | None = None) -> None:
        self._router = router
        self._ticket_secret = ticket_secret
        self._table = table
        self._host_id = host_id
        self._tracer = tracer or trace.get_tracer(__name__)
        self._server: asyncio.Server | None = None
        self._connections: dict[asyncio.Task[None], asyncio.StreamWriter] = {}

    async def start(self, listen: str) -> tuple[str, int]:
        """Listen on `listen` (HOST:PORT, port 0 picks one); returns the bound (host, port).

        Raises:
            ConfigError: the address cannot be bound.
        """
        host, _, port = listen.rpartition(":")
        try:
            self._server = await asyncio.start_server(self._serve, host.strip("[]"), int(port),
                                                      limit=READ_LIMIT_BYTES)
        except OSError as exc:
            raise ConfigError(f"cannot listen on PLATFORM_ENVHOST_STEP_LISTEN={listen}: {exc}") from None
        return host, self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and close every link (called once the instances are stopped, so no
        request is in flight any more)."""
        if self._server is not None:
            self._server.close()
        for writer in self._connections.values():
            writer.close()
        tasks = list(self._connections)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=CLOSE_GRACE_S)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        set_nodelay(writer)
        try:
            opened = await self._open(reader, writer)
            if opened is not None:
                await self._steps(*opened, reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client (gateway or SDK) closed the link (dropped it, or went away)
        except (FrameTooLargeError, TimeoutError) as exc:
            log.warning("step link from %s closed: %s", writer.get_extra_info("peername"), exc)
        except asyncio.CancelledError:
            # Only `close()` cancels a link's task; ending quietly spares the log the traceback
            # asyncio (3.11) prints for a cancelled connection task.
            pass
        except Exception:  # a bug: close this link (the gateway answers 503), keep serving others
            log.exception("step link from %s failed", writer.get_extra_info("peername"))
        finally:
            del self._connections[task]
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def _open(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> tuple[str, str] | None:
        """Read the StepLinkOpen and answer it; the session's id and the link's path ("gateway"
        or "direct"), or None when refused."""
        async with asyncio.timeout(OPEN_TIMEOUT_S):
            data = await read_frame(reader)
        try:
            opening = link_pb.StepLinkOpen.FromString(data)
        except DecodeError as exc:
            writer.write(_opened_error(env_pb.ERROR_CODE_INVALID_ARGUMENT,
                                       f"the first frame of a step link is not a StepLinkOpen: {exc}"))
            return None
        session_id = opening.session_id
        if not session_id:
            writer.write(_opened_error(env_pb.ERROR_CODE_INVALID_ARGUMENT,
                                       "the StepLinkOpen names no session"))
            return None
        ctx = extract_dict(opening.trace_context) if opening.trace_context else None
        if ctx is not None and trace.get_current_span(ctx).get_span_context().is_valid:
            with self._tracer.start_as_current_span("envhost.step_link.open", context=ctx,
                                                    kind=trace.SpanKind.SERVER,
                                                    attributes={"session.id": session_id}):
                accepted = self._accept(session_id, opening.ticket, writer)
        else:
            accepted = self._accept(session_id, opening.ticket, writer)
        if accepted is None:
            return None
        return accepted, "gateway" if opening.via_gateway else "direct"

    def _accept(self, session_id: str, ticket: str, writer: asyncio.StreamWriter) -> str | None:
        if self._ticket_secret is not None:
            try:
                verify_ticket(self._ticket_secret, ticket, session_id, self._host_id)
            except TicketRefusedError as exc:
                log.warning("step link from %s refused: %s", writer.get_extra_info("peername"), exc.message)
                writer.write(_opened_error(exc.code, exc.message))
                return None
        if self._table.get(session_id) is None:
            writer.write(_opened_error(env_pb.ERROR_CODE_NOT_FOUND,
                                       f"session {session_id} is not running on env host {self._host_id}"))
            return None
        writer.write(encode_frame(link_pb.StepLinkOpened().SerializeToString()))
        return session_id

    async def _steps(self, session_id: str, path: str, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
        """Answer the session's requests in order until the client closes the link."""
        router = self._router
        handle, finish, write, transport = router.handle, router.finish, writer.write, writer.transport
        while True:
            raw = await read_frame(reader)
            write(encode_frame(await handle(session_id, raw, path)))  # sent now; its step events next
            await finish(session_id)
            if transport.get_write_buffer_size() > DRAIN_ABOVE_BYTES:
                await writer.drain()

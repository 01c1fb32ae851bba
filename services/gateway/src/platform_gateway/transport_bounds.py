"""Nothing holds the gateway forever: bounds of its HTTP transport, below the app.

uvicorn (httptools) has a keep-alive timeout for idle connections between requests, and no
other: a connection that never sends a byte, a header block that never ends, or a body sent a
byte a second are all held as long as the client likes, and one address may open any number
of connections. `uvicorn_config` builds the gateway's server with protocol classes that add:

- a header timeout: a request's line and headers complete within `header_timeout` seconds of
  the connection (its first request) or of their own first byte (a kept-alive connection,
  idle at most `keep_alive_timeout` seconds between requests); otherwise a 408 (or, when not
  a byte came, nothing) and the connection is closed;
- body timeouts: no byte of a body for `body_timeout` seconds, or under `min_upload_rate`
  bytes/s on average once the body has taken `upload_grace` seconds, is a 408 (when no answer
  has started) and the connection is closed. Time the gateway itself does not read (the app
  has not taken what came, or has not asked for a body sent with `Expect: 100-continue`) does
  not count against the client;
- a bound on the open connections (HTTP and WebSocket) per client address: past
  `max_connections_per_client` a new connection's requests are answered 503 and it is closed
  (0: no bound). Behind a reverse proxy every client has the proxy's address.

The timers cost nothing on the usual request, whose headers and body come in one read: a timer
is armed only after a read that leaves a request's headers or body unfinished (and one per
connection, for its first request). WebSocket messages, once upgraded, pass untouched.
"""

from __future__ import annotations

import asyncio
import json
from asyncio import TimerHandle
from dataclasses import dataclass
from typing import Any, ClassVar

import uvicorn
from platform_contracts.log_lines import to_the_root_handler
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.config import WS_PROTOCOLS
from uvicorn.importer import import_from_string
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from platform_gateway.config import Settings
from platform_gateway.log_redaction import UVICORN_LOGGERS

_IDLE, _BODY, _UPGRADED = range(3)
_TICK_S = 1.0  # how often a body that spans reads is looked at


@dataclass(frozen=True)
class TransportBounds:
    """The figures (PLATFORM_* settings of the same names)."""

    header_timeout: float = 10.0
    body_timeout: float = 10.0
    min_upload_rate: int = 8192  # bytes/s; 0: none
    upload_grace: float = 5.0
    max_connections_per_client: int = 512  # 0: unbounded

    @classmethod
    def of(cls, settings: Settings) -> TransportBounds:
        return cls(header_timeout=settings.header_timeout, body_timeout=settings.body_timeout,
                   min_upload_rate=settings.min_upload_rate, upload_grace=settings.upload_grace,
                   max_connections_per_client=settings.max_connections_per_client)


class ClientSlot:
    """One open connection counted against its client address; released once."""

    __slots__ = ("_address", "_counts")

    def __init__(self, counts: dict[str, int], address: str) -> None:
        self._counts = counts
        self._address: str | None = address

    def release(self) -> None:
        address, self._address = self._address, None
        if address is None:
            return
        left = self._counts[address] - 1
        if left:
            self._counts[address] = left
        else:
            del self._counts[address]


class ClientConnections:
    """Open connections per client address, at most `bound` each (0: no bound)."""

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self.open: dict[str, int] = {}

    def take(self, address: str) -> ClientSlot | None:
        """A slot for one more connection from `address`; None when it has `bound` already."""
        count = self.open.get(address, 0)
        if self.bound and count >= self.bound:
            return None
        self.open[address] = count + 1
        return ClientSlot(self.open, address)


def _raw_response(status: int, reason: str, detail: str, code: str) -> bytes:
    body = json.dumps({"detail": detail, "code": code}).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n")
    return head.encode() + body


def _too_many_message(bound: int) -> str:
    return (f"too many connections from your address: at most {bound} open at once "
            "(PLATFORM_MAX_CONNECTIONS_PER_CLIENT); close some and retry")


class BoundedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the module's bounds (subclassed per server by
    `protocol_classes`, which sets `bounds` and `clients`)."""

    bounds: ClassVar[TransportBounds] = TransportBounds()
    clients: ClassVar[ClientConnections] = ClientConnections(0)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._slot: ClientSlot | None = None
        self._refused = False
        self._phase = _IDLE
        self._header_timer: TimerHandle | None = None
        self._body_timer: TimerHandle | None = None
        self._headers_scope: Any = None  # the scope of the last request whose headers completed
        self._bytes_in = 0  # read on this connection (a body's progress)
        self._body_seen = 0  # at the last look
        self._body_start_bytes = 0  # when the look began
        self._body_began = 0.0
        self._body_moved = 0.0  # when a byte last came (or the gateway last held the body up)

    # The connection
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if self.client is not None:
            self._slot = self.clients.take(self.client[0])
            if self._slot is None:
                self._refused = True
                self.app = self._refuse  # its requests are answered 503 (see on_headers_complete)
        self._header_timer = self.loop.call_later(self.bounds.header_timeout, self._headers_late)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timers()
        if self._slot is not None:
            self._slot.release()
            self._slot = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._bytes_in += len(data)
        HttpToolsProtocol.data_received(self, data)
        # Only a read that leaves a request unfinished arms a timer. A request whose headers are
        # unfinished has a scope (made at its first byte) that on_headers_complete has not seen.
        if self.scope is not self._headers_scope and self._phase != _UPGRADED:
            if self._header_timer is None and not self.transport.is_closing():
                self._header_timer = self.loop.call_later(self.bounds.header_timeout, self._headers_late)
        elif self._phase == _BODY and self._body_timer is None and not self.transport.is_closing():
            self._body_began = self._body_moved = self.loop.time()
            self._body_seen = self._body_start_bytes = self._bytes_in
            self._body_timer = self.loop.call_later(_TICK_S, self._look_at_body)

    def handle_websocket_upgrade(self) -> None:
        self._stop_timers()
        if self._refused:
            self.transport.write(_raw_response(503, "Service Unavailable", _too_many_message(self.clients.bound),
                                               "unavailable"))
            self.transport.close()
            return
        self._phase = _UPGRADED
        super().handle_websocket_upgrade()
        protocol = self.transport.get_protocol()
        if isinstance(protocol, ReleasesClientSlot):  # the WebSocket holds the count from now on
            protocol.client_slot, self._slot = self._slot, None

    # The parser's callbacks (the base's called by name: cheaper than super() on every request)
    def on_headers_complete(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        self._headers_scope = self.scope
        self._phase = _BODY
        HttpToolsProtocol.on_headers_complete(self)

    def on_message_complete(self) -> None:
        if self._phase != _UPGRADED:
            self._phase = _IDLE
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None
        HttpToolsProtocol.on_message_complete(self)

    # The bounds
    def _stop_timers(self) -> None:
        for timer in (self._header_timer, self._body_timer):
            if timer is not None:
                timer.cancel()
        self._header_timer = self._body_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or self._phase == _UPGRADED:
            return
        answering = self.cycle is not None and not self.cycle.response_complete  # a pipelined request's
        if self.scope is not self._headers_scope and not answering:  # some of a request came: say why
            self.transport.write(_raw_response(
                408, "Request Timeout",
                f"the request's line and headers did not come within {self.bounds.header_timeout:g} s "
                "(PLATFORM_HEADER_TIMEOUT)", "timeout"))
        self.transport.close()

    def _look_at_body(self) -> None:
        self._body_timer = None
        if self._phase != _BODY or self.transport.is_closing():
            return
        now = self.loop.time()
        cycle = self.cycle
        if self.flow.read_paused or (cycle is not None and cycle.waiting_for_100_continue):
            # The gateway holds the body up, not the client: that time does not count.
            self._body_began += now - self._body_moved
            self._body_moved = now
        elif self._bytes_in != self._body_seen:
            self._body_seen = self._bytes_in
            self._body_moved = now
        elif now - self._body_moved >= self.bounds.body_timeout:
            self._cut(f"no byte of the request's body came for {self.bounds.body_timeout:g} s "
                      "(PLATFORM_BODY_TIMEOUT)")
            return
        taken = now - self._body_began
        rate = self.bounds.min_upload_rate
        got = self._bytes_in - self._body_start_bytes
        if rate and taken >= self.bounds.upload_grace and got < rate * taken:
            self._cut(f"the request's body came at {got / taken:,.0f} bytes/s: at least {rate:,} "
                      f"bytes/s are needed after the first {self.bounds.upload_grace:g} s "
                      "(PLATFORM_MIN_UPLOAD_RATE, PLATFORM_UPLOAD_GRACE)")
            return
        self._body_timer = self.loop.call_later(_TICK_S, self._look_at_body)

    def _cut(self, detail: str) -> None:
        """A late body: a 408 when no answer has started, and the connection closes; the app
        reading the body is told the client left."""
        cycle = self.cycle
        if cycle is not None and not cycle.response_started:
            self.transport.write(_raw_response(408, "Request Timeout", detail, "timeout"))
        if cycle is not None:
            cycle.disconnected = True  # the app's answer, if any, goes nowhere
            cycle.message_event.set()
        self.logger.info("%s: %s: the connection is closed", self.client[0] if self.client else "?", detail)
        self.transport.close()

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = json.dumps({"detail": _too_many_message(self.clients.bound), "code": "unavailable"}).encode()
        await send({"type": "http.response.start", "status": 503, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


class ReleasesClientSlot(asyncio.Protocol):
    """Mixed into uvicorn's WebSocket protocol: the upgraded connection keeps its client
    address's count (`BoundedHttpProtocol.handle_websocket_upgrade` hands it over) until it closes."""

    client_slot: ClientSlot | None = None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.client_slot is not None:
            self.client_slot.release()
            self.client_slot = None
        super().connection_lost(exc)


def protocol_classes(bounds: TransportBounds, ws: str) -> tuple[type[asyncio.Protocol], type[asyncio.Protocol]]:
    """The HTTP and WebSocket protocol classes of one server (its own connection counts)."""
    clients = ClientConnections(bounds.max_connections_per_client)
    http = type("GatewayHttpProtocol", (BoundedHttpProtocol,), {"bounds": bounds, "clients": clients})
    ws_base = import_from_string(WS_PROTOCOLS.get(ws) or ws)
    websocket = type("GatewayWebSocketProtocol", (ReleasesClientSlot, ws_base), {})
    return http, websocket


def uvicorn_config(app: ASGIApp, settings: Settings, **options: Any) -> uvicorn.Config:
    """The gateway's uvicorn server for `app` on `settings.host:port`, with the transport's
    bounds (`options`: other `uvicorn.Config` arguments, e.g. the log level)."""
    http, websocket = protocol_classes(TransportBounds.of(settings), settings.ws)
    # JSON lines: uvicorn's loggers hand their records to the root's JSON handler
    # (platform_contracts.log_lines); text: uvicorn's own format, as always.
    logging_options = ({"log_config": to_the_root_handler("uvicorn", *UVICORN_LOGGERS)}
                       if settings.log_format == "json" else {})
    return uvicorn.Config(
        app, host=settings.host, port=settings.port, http=http, ws=websocket,
        timeout_keep_alive=settings.keep_alive_timeout,
        ws_max_size=1 << 30, ws_per_message_deflate=False, ws_ping_interval=None,
        **{"log_level": settings.log_level, "access_log": settings.access_log, "lifespan": "on",
           **logging_options, **options},
    )

"""The direct path: the session's step link on its env host, opened by the SDK itself.

A step over the gateway costs a hop and ~200 µs of the gateway's CPU. With a ticket from the
gateway (`POST /v0/sessions/{id}/ticket`) the SDK opens the env host's step link
(simulusion/host/v1/step_link.proto: 4-byte little-endian length frames, a `StepLinkOpen`
answered by a `StepLinkOpened`, then `EnvRequest`s out and `EnvResponse`s back), so steps
skip the gateway. `open_direct_link` says why not (`DirectPathUnavailable`) whenever that does
not work out: the gateway offers no direct path (409), the env host cannot be reached within a
second, or it refuses the link; `SessionStream` then uses the gateway's WebSocket.

`BlockingStepLink` has the interface `SessionStream` uses on `BlockingWebSocket` (`send`,
`recv`, `close`, `last_message_unread`) and ends the same way: `link_errors.ConnectionClosed`
with no close frame received when the link is lost (so the stream reconnects), with close code
4410 after the instance died (the gateway's WebSocket closes so), with a close frame sent
(1000) once closed here. It reads in the calling thread on a blocking socket (TCP_NODELAY),
into one reused buffer: a step is one `sendall` and usually one `recv_into`.
"""

from __future__ import annotations

import logging
import os
import socket
import struct
import time

from google.protobuf.message import DecodeError
from platform_contracts.limits import MAX_STEP_LINK_FRAME_BYTES
from platform_contracts.tracing import inject_dict
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.host.v1 import step_link_pb2 as link_pb

from platform_sdk import errors
from platform_sdk.client.error_map import error_from_close
from platform_sdk.client.link_errors import Close, ConnectionClosed, ConnectionClosedError, ConnectionClosedOK
from platform_sdk.client.rest import RestClient
from platform_sdk.client.timed_socket import TimedSocket, peer_closed_before_last_write

log = logging.getLogger(__name__)

DIRECT_VARIABLE = "PLATFORM_DIRECT"
CONNECT_TIMEOUT_S = 1.0  # an env host this far away is not worth the wait: the gateway is there
OPEN_TIMEOUT_S = 5.0  # for the env host's StepLinkOpened
TICKET_TIMEOUT_S = 10.0
_HEADER = struct.Struct("<I")
_unpack_length = _HEADER.unpack_from
_pack_length = _HEADER.pack
_BUFFER_BYTES = 64 * 1024  # a lockstep answer fits: one recv_into, no allocation but its bytes
_SMALL_SEND = 64 * 1024  # up to this, header and message go in one write (one copy)
_OFF = frozenset({"0", "false", "no", "off"})


def direct_wanted(direct: bool | None) -> bool:
    """`direct`, or when None the `PLATFORM_DIRECT` variable (default on)."""
    if direct is not None:
        return direct
    return os.environ.get(DIRECT_VARIABLE, "").strip().lower() not in _OFF


class DirectPathUnavailable(Exception):
    """The direct path cannot be used now (the message says why); step over the gateway."""


class StepLinkRefusedError(Exception):
    """The env host answered the StepLinkOpen with an error (and closed the link)."""

    def __init__(self, error: env_pb.Error) -> None:
        super().__init__(error.message or env_pb.ErrorCode.Name(error.code))
        self.error = error


def open_direct_link(rest: RestClient, session_id: str, timeout: float) -> BlockingStepLink:
    """Ask the gateway for a ticket and open the session's step link with it.

    Raises:
        DirectPathUnavailable: not offered, unreachable or refused (use the gateway). A 404 is
            one too: a gateway without the ticket route answers it as well, and the WebSocket
            then says 4404 itself when the session is the unknown one.
        SessionClosedError: the session ended (410): the error of the WebSocket's 4410 close.
    """
    try:
        answer = rest.request("POST", f"/v0/sessions/{session_id}/ticket", timeout=min(TICKET_TIMEOUT_S, timeout))
    except errors.PlatformError as exc:
        if exc.status == 410:
            raise error_from_close(4410, str(exc), session_id) from None
        raise DirectPathUnavailable(f"no step ticket: {exc}") from None
    address = answer["address"]
    try:
        return BlockingStepLink(address, session_id, answer["ticket"],
                                connect_timeout=min(CONNECT_TIMEOUT_S, timeout),
                                open_timeout=min(OPEN_TIMEOUT_S, timeout))
    except StepLinkRefusedError as exc:
        raise DirectPathUnavailable(f"the env host at {address} refused the step link: {exc}") from None
    except (OSError, ConnectionClosed, DecodeError, ValueError) as exc:
        raise DirectPathUnavailable(f"cannot open the step link at {address}: {type(exc).__name__}: {exc}") from None


class BlockingStepLink(TimedSocket):
    """One session's step link to its env host; not thread-safe (one caller at a time).

    Raises (constructor): OSError (unreachable, timed out), StepLinkRefusedError, ConnectionClosed
    (closed while opening), DecodeError (not an env host).
    """

    path = "direct"

    def __init__(self, address: str, session_id: str, ticket: str, *, connect_timeout: float = CONNECT_TIMEOUT_S,
                 open_timeout: float = OPEN_TIMEOUT_S) -> None:
        host, _, port = address.rpartition(":")
        self.address = address
        self.last_message_unread = False
        self._closed_exc: ConnectionClosed | None = None
        self._buffer = bytearray(_BUFFER_BYTES)
        self._view = memoryview(self._buffer)
        self._start = self._end = 0  # the bytes read but not returned yet: buffer[start:end]
        sock = socket.create_connection((host.strip("[]"), int(port)), timeout=connect_timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.settimeout(open_timeout)
            self.socket = sock
            self._timeout: float | None = open_timeout
            opening = link_pb.StepLinkOpen(session_id=session_id, trace_context=inject_dict(), ticket=ticket)
            self.send(opening.SerializeToString())
            opened = link_pb.StepLinkOpened.FromString(self.recv(open_timeout))
        except BaseException:
            sock.close()
            raise
        if opened.HasField("error"):
            sock.close()
            raise StepLinkRefusedError(opened.error)
        self._set_timeout(None)

    def send(self, data: bytes) -> None:
        """Send one message as one frame.

        Raises:
            ConnectionClosed: the link is closed, or the write failed (`last_message_unread`).
            InvalidRequestError: the message is over the frame size limit.
        """
        if self._closed_exc is not None:
            self.last_message_unread = True
            raise self._closed_exc
        n = len(data)
        try:
            if n < _SMALL_SEND:
                self.socket.sendall(_pack_length(n) + data)
            elif n <= MAX_STEP_LINK_FRAME_BYTES:
                self.socket.sendall(_pack_length(n))
                self.socket.sendall(data)
            else:
                raise errors.InvalidRequestError(
                    f"a request of {n} bytes is over the step link's {MAX_STEP_LINK_FRAME_BYTES}-byte limit")
        except OSError as exc:
            self.last_message_unread = True  # a whole frame was not written, so the env host ran nothing
            raise self._lost(exc) from exc

    def recv(self, timeout: float | None = None) -> bytes:
        """The next message.

        Raises:
            TimeoutError: no whole message within `timeout` seconds (None: wait forever).
            ConnectionClosed: the link ended before a whole message came.
        """
        if self._closed_exc is not None:
            raise self._closed_exc
        deadline = None if timeout is None else time.monotonic() + timeout
        view, start, end = self._view, self._start, self._end
        while True:
            if end - start >= 4:
                stop = start + 4 + _unpack_length(view, start)[0]
                if stop <= end:
                    data = bytes(view[start + 4:stop])
                    self._start, self._end = (0, 0) if stop == end else (stop, end)
                    return data
                if stop - start > _BUFFER_BYTES:
                    self._start = self._end = 0
                    return self._recv_large(start, end, deadline)
            if start:  # more to read: move what is left to the front (never in lockstep)
                view[:end - start] = view[start:end]
                start, end = 0, end - start
                self._start = 0
            end += self._recv_into(view[end:], deadline)
            self._end = end

    def close(self) -> None:
        """Close the link (later calls raise ConnectionClosed as after a client's close). Idempotent."""
        if self._closed_exc is None:
            self._closed_exc = ConnectionClosedOK(None, Close(1000, ""))
        self.socket.close()

    def end_session(self, reason: str) -> None:
        """The session ended (its instance died): close the link as the gateway closes its
        WebSocket then (code 4410 and `reason`), so later calls raise SessionClosedError."""
        if self._closed_exc is None:
            self._closed_exc = ConnectionClosedError(Close(4410, reason), None)
        self.socket.close()

    @property
    def closed(self) -> bool:
        return self._closed_exc is not None

    # -- plumbing -----------------------------------------------------------------------------
    def _recv_large(self, start: int, end: int, deadline: float | None) -> bytes:
        """A frame larger than the buffer: its head is in buffer[start:end]; read the rest."""
        length = _unpack_length(self._view, start)[0]
        if length > MAX_STEP_LINK_FRAME_BYTES:
            raise self._lost(None, f"a frame of {length} bytes is over the {MAX_STEP_LINK_FRAME_BYTES}-byte limit")
        out = bytearray(length)
        have = end - start - 4
        out[:have] = self._view[start + 4:end]
        rest = memoryview(out)
        while have < length:
            have += self._recv_into(rest[have:], deadline)
        return bytes(out)

    def _recv_into(self, target: memoryview, deadline: float | None) -> int:
        """One read into `target`; its byte count (never 0: the end of the link raises)."""
        self._before_read(deadline, "the env host")
        try:
            got = self.socket.recv_into(target)
        except TimeoutError:
            raise
        except OSError as exc:
            raise self._lost(exc) from exc
        if not got:
            raise self._lost(None)
        return got

    def _lost(self, cause: OSError | None, why: str = "") -> ConnectionClosed:
        """The link ended (EOF, reset, a broken frame): close it; the error to raise."""
        if self._closed_exc is None:
            if not self.last_message_unread:
                self.last_message_unread = peer_closed_before_last_write(self.socket)
            self._closed_exc = ConnectionClosedError(None, None)
            self._closed_exc.__cause__ = cause
            if why:
                log.warning("step link to %s closed: %s", self.address, why)
            self.socket.close()
        return self._closed_exc

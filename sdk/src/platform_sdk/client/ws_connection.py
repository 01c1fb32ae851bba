"""A blocking WebSocket client that reads in the calling thread.

`websockets`' own sync client reads in a background thread, which costs a thread hand-off
on every message. In lockstep (send one request, wait for its answer) that is pure
overhead, so this client drives websockets' sans-I/O `ClientProtocol` over a plain socket:
`send` writes the frame, `recv` reads from the socket until one whole message is parsed.
Pings are answered (and close frames echoed) whenever data is read.

A lockstep step is one small frame each way, so both directions have a fast path that
leaves the protocol in the very state it would reach by itself: `send` frames a message
under 64 KiB directly, and `recv` returns a read that holds exactly one whole binary frame
under 64 KiB while the parser waits between frames. Everything else (handshake, pings,
close frames, fragments, large or split frames) goes through `ClientProtocol`.

Errors are websockets' and the socket's own: `InvalidStatus` / `InvalidHandshake` when the
server refuses the handshake, `ConnectionClosed` once the connection is closed (with the
close frame received, if any), `TimeoutError` when a read times out, `OSError` when the
server cannot be reached. Once closed, `last_message_unread` tells whether the last message
sent is known not to have reached the server's application (see there).
"""

from __future__ import annotations

import os
import socket
import ssl
import time
from collections import deque
from collections.abc import Mapping
from typing import Any

from websockets.client import ClientProtocol
from websockets.exceptions import (
    ConnectionClosed,
    ConnectionClosedError,
    ConnectionClosedOK,
    InvalidHandshake,
)
from websockets.frames import OK_CLOSE_CODES, Frame, Opcode, apply_mask
from websockets.protocol import State
from websockets.streams import StreamReader
from websockets.uri import parse_uri

from platform_sdk.client.timed_socket import TimedSocket, peer_closed_before_last_write

# 64 KiB: a bigger buffer makes every recv() call mmap and munmap its bytes (~15 us).
_RECV_SIZE = 64 * 1024
_BINARY, _TEXT, _CONT, _CLOSE = Opcode.BINARY, Opcode.TEXT, Opcode.CONT, Opcode.CLOSE
_OPEN = State.OPEN
_AT_EOF = StreamReader.at_eof.__code__
_ENDING = (State.CLOSING, State.CLOSED)
def _waits_for_a_frame(protocol: ClientProtocol) -> bool:
    """Whether the protocol's parser is suspended between two frames (not inside one).

    Between frames the parser waits in `StreamReader.at_eof()`; inside one, in `read_exact()`.
    Should websockets change that, this answers False and every read takes the full parser.
    """
    # a generator object: websockets types it as a `Generator`, which has no gi_yieldfrom, gi_code
    generator: Any = protocol.parser
    while generator.gi_yieldfrom is not None:
        generator = generator.gi_yieldfrom
    return generator.gi_code is _AT_EOF


class BlockingWebSocket(TimedSocket):
    """One client WebSocket connection; not thread-safe (one caller at a time).

    Args:
        url: a `ws://` or `wss://` URL.
        open_timeout: seconds allowed for the TCP connect and the opening handshake.
        headers: extra HTTP headers for the handshake request.
        max_size: the largest message accepted, in bytes; None for no limit.
        ssl_context: for `wss://` URLs; default `ssl.create_default_context()`.
    """

    def __init__(
        self,
        url: str,
        *,
        open_timeout: float | None = 30.0,
        headers: Mapping[str, str] | None = None,
        max_size: int | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        uri = parse_uri(url)
        self._protocol = protocol = ClientProtocol(uri, max_size=max_size)  # no extensions: no compression
        self._messages: deque[bytes | str] = deque()
        self._fragments: list[bytes] = []
        self._fragments_text = False
        self._closed_exc: ConnectionClosed | None = None
        self._at_boundary = False  # True when the parser waits for a new frame with nothing buffered
        self._fast_recv = max_size is None or max_size >= 65536  # the fast path does not check max_size
        self._wrote_after_send = False  # a pong or close frame went out after the last message
        self.last_message_unread = False
        deadline = None if open_timeout is None else time.monotonic() + open_timeout
        sock = socket.create_connection((uri.host, uri.port), timeout=open_timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if uri.secure:
                context = ssl_context or ssl.create_default_context()
                sock = context.wrap_socket(sock, server_hostname=uri.host)
            self.socket = sock
            self._timeout: float | None = open_timeout
            request = protocol.connect()
            for name, value in (headers or {}).items():
                request.headers[name] = value
            protocol.send_request(request)
            self._flush()
            self._handshake(deadline)
        except BaseException:
            sock.close()
            raise
        self._set_timeout(None)

    # -- public -------------------------------------------------------------------------------
    def send(self, data: bytes) -> None:
        """Send one binary message.

        Raises:
            ConnectionClosed: the connection is closed (or closing), or closed now because the
                write failed; the message was not sent (`last_message_unread` is True).
        """
        protocol = self._protocol
        if protocol.state is not _OPEN or self._closed_exc is not None:
            self.last_message_unread = True
            raise self._closed_error()
        self._wrote_after_send = False
        n = len(data)
        mask = os.urandom(4)
        if n < 126:
            frame = bytes((0x82, 0x80 | n)) + mask + apply_mask(data, mask)
        elif n < 65536:
            frame = bytes((0x82, 0xFE, n >> 8, n & 0xFF)) + mask + apply_mask(data, mask)
        else:
            protocol.send_binary(data)
            frame = b"".join(protocol.data_to_send())
        try:
            self.socket.sendall(frame)
        except OSError as exc:  # the server went away: its close frame may still be readable
            self._read_close(exc)
            self.last_message_unread = True  # a whole frame was not written, so none was read
            raise self._closed_error() from exc

    def recv(self, timeout: float | None = None) -> bytes | str:
        """Wait for the next message: bytes for a binary message, str for a text one.

        Args:
            timeout: seconds to wait; None waits forever.

        Raises:
            TimeoutError: no whole message came within `timeout`.
            ConnectionClosed: the connection closed before a message came.
        """
        messages = self._messages
        if messages:
            return messages.popleft()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self._closed_exc is not None:
                raise self._closed_exc
            data = self._recv_bytes(deadline)
            if data is None:
                continue
            if self._at_boundary:
                # Fast path: the read holds exactly one whole binary frame (FIN, no mask, under
                # 64 KiB) and the parser waits at a frame boundary with nothing buffered. Parsing
                # the frame would leave the protocol exactly as it is, so it is not fed.
                n = len(data)
                if n > 3 and data[0] == 0x82:
                    length = data[1]
                    if length < 126:
                        if n == length + 2:
                            return data[2:]
                    elif length == 126 and n == (data[2] << 8 | data[3]) + 4:
                        return data[4:]
            self._feed(data)
            if messages:
                return messages.popleft()

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Send a close frame (when the connection is still open) and close the socket. Idempotent."""
        protocol = self._protocol
        if self.socket.fileno() == -1:
            return
        try:
            if protocol.state is _OPEN and self._closed_exc is None:
                protocol.send_close(code, reason)
                self._flush()
        except OSError:
            pass
        finally:
            self._at_boundary = False
            self._closed_exc = self._closed_exc or self._closed_error()
            self.socket.close()

    @property
    def closed(self) -> bool:
        return self._closed_exc is not None or self._protocol.state is State.CLOSED

    # `last_message_unread`: once the connection has ended, True when the last message given to
    # `send` is known not to have reached the server's application: it was not written (the
    # connection was already closed, or the write failed), or nothing else was written after it
    # and the server had closed the connection before it arrived (`peer_closed_before_last_write`).
    # False means not known: the server may have read it.

    # -- plumbing -----------------------------------------------------------------------------
    def _handshake(self, deadline: float | None) -> None:
        protocol = self._protocol
        while protocol.state is State.CONNECTING and protocol.handshake_exc is None:
            data = self._recv_bytes(deadline)
            if data is not None:
                self._feed(data)
        if protocol.handshake_exc is not None:
            raise protocol.handshake_exc

    def _read_once(self, deadline: float | None) -> None:
        data = self._recv_bytes(deadline)
        if data is not None:
            self._feed(data)

    def _recv_bytes(self, deadline: float | None) -> bytes | None:
        """One read from the socket; None when it failed (and the connection is now closed)."""
        self._before_read(deadline, "the server")
        try:
            return self.socket.recv(_RECV_SIZE)
        except TimeoutError:
            raise
        except OSError as exc:
            self._on_read_error(exc)
            return None

    def _on_read_error(self, exc: OSError) -> None:
        """A failed read (reset by the peer) is an abrupt end of stream."""
        self._note_end()
        self._at_boundary = False
        self._protocol.receive_eof()
        self._closed_exc = self._closed_error()
        self._closed_exc.__cause__ = exc
        self.socket.close()

    def _feed(self, data: bytes) -> None:
        """Hand bytes read (b"" at end of stream) to the protocol; send its replies; take its frames."""
        protocol = self._protocol
        if data:
            protocol.receive_data(data)
        else:
            protocol.receive_eof()
        if protocol.state in _ENDING and self._closed_exc is None:
            self._note_end()  # before the close frame's echo is written
        try:
            self._flush()
        except OSError:
            pass  # a pong or a close echo the peer will not read; the read side tells the story
        for event in protocol.events_received():
            if isinstance(event, Frame):  # not the handshake's response: `_handshake` looks at that
                self._on_frame(event)
        self._at_boundary = (
            self._fast_recv
            and protocol.state is _OPEN and not self._fragments and not protocol.reader.buffer and _waits_for_a_frame(protocol)
        )
        if self._closed_exc is None and (protocol.state is State.CLOSED or protocol.parser_exc is not None):
            # CLOSED: the server closed the TCP connection. parser_exc: it broke the protocol,
            # the protocol answered with a close frame, and nothing more is worth reading.
            self._closed_exc = self._closed_error()
            self._closed_exc.__cause__ = protocol.parser_exc
            self.socket.close()

    def _read_close(self, cause: OSError, wait: float = 1.0) -> None:
        """After a failed write, read what the server sent before it went (its close frame)."""
        deadline = time.monotonic() + wait
        try:
            while self._closed_exc is None:
                self._read_once(deadline)
        except OSError:
            pass
        if self._closed_exc is None:
            self._on_read_error(cause)

    def _note_end(self) -> None:
        """The connection is ending: find out whether the last message was read (once)."""
        if not self.last_message_unread and not self._wrote_after_send:
            self.last_message_unread = peer_closed_before_last_write(self.socket)

    def _flush(self) -> None:
        for chunk in self._protocol.data_to_send():
            if chunk:
                self._wrote_after_send = True
                self.socket.sendall(chunk)
            else:
                try:
                    self.socket.shutdown(socket.SHUT_WR)
                except OSError:
                    pass

    def _on_frame(self, frame: Frame) -> None:
        opcode = frame.opcode
        if opcode is _BINARY or opcode is _TEXT:
            if frame.fin:
                data = bytes(frame.data)  # the same object when it is bytes, as the parser's are
                self._messages.append(data.decode(errors="replace") if opcode is _TEXT else data)
            else:
                self._fragments = [bytes(frame.data)]
                self._fragments_text = opcode is _TEXT
        elif opcode is _CONT:
            self._fragments.append(bytes(frame.data))
            if frame.fin:
                data = b"".join(self._fragments)
                self._fragments = []
                self._messages.append(data.decode(errors="replace") if self._fragments_text else data)
        elif opcode is _CLOSE:
            self._at_boundary = False
            # The close frame was echoed by `_flush`; a client should then wait for the server
            # to close the TCP connection, but nothing is left to read, so do not wait for it.
            self._closed_exc = self._closed_error()
            self.socket.close()

    def _closed_error(self) -> ConnectionClosed:
        protocol = self._protocol
        if self._closed_exc is not None:
            return self._closed_exc
        if protocol.state is State.CLOSED:
            return protocol.close_exc
        rcvd, sent = protocol.close_rcvd, protocol.close_sent
        ok = rcvd is not None and sent is not None and rcvd.code in OK_CLOSE_CODES and sent.code in OK_CLOSE_CODES
        return (ConnectionClosedOK if ok else ConnectionClosedError)(rcvd, sent, protocol.close_rcvd_then_sent)

__all__ = ["BlockingWebSocket", "ConnectionClosed", "InvalidHandshake"]

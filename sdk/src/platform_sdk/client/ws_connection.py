"""A blocking WebSocket client (RFC 6455) that reads in the calling thread, with no dependency
but the standard library and numpy.

In lockstep (send one request, wait for its answer) a reader thread would cost a thread
hand-off on every message, so `send` writes the frame and `recv` reads from the socket until
one whole message is parsed. The opening handshake is `ws_handshake`'s; the framing is here:
client frames are masked (section 5.3), pings are answered with pongs and a close frame is
echoed whenever data is read, fragmented messages are joined, text messages must be UTF-8,
and payload lengths take 7, 16 or 64 bits. No extension (compression) is negotiated.

A lockstep step is one small frame each way, so both directions have a fast path: `send`
frames a message with one concatenation, and `recv` returns a read that holds exactly one
whole binary frame under 64 KiB, when nothing else is buffered, without parsing it further.

Errors (`link_errors`): `InvalidStatus` when the server refuses the handshake with an HTTP
status, `InvalidHandshake` when its answer is not a WebSocket one, `ConnectionClosed` once the
connection is closed (with the close frames received and sent, if any), `TimeoutError` when a
read times out, `OSError` when the server cannot be reached. A server that breaks the protocol
gets a close frame (1002, 1007 for bad UTF-8, 1009 for a message over `max_size`) and the
connection ends. Once closed, `last_message_unread` tells whether the last message sent is
known not to have reached the server's application (see there).
"""

from __future__ import annotations

import os
import socket
import ssl
import time
from collections import deque
from collections.abc import Mapping

import numpy as np

from platform_sdk.client.link_errors import (
    Close,
    ConnectionClosed,
    InvalidHandshake,
    InvalidStatus,
    closed_error,
)
from platform_sdk.client.timed_socket import TimedSocket, peer_closed_before_last_write
from platform_sdk.client.ws_handshake import (
    MAX_HEAD_BYTES,
    check_switching,
    content_length,
    handshake_request,
    new_key,
    parse_response_head,
    parse_url,
)

# 64 KiB: a bigger buffer makes every recv() call mmap and munmap its bytes (~15 us).
_RECV_SIZE = 64 * 1024
_MASKS_BYTES = 4096  # random bytes read at once for the masks of 1024 frames
_NUMPY_MASK_FROM = 384  # from this payload size, numpy masks faster than one big integer
_WORDS_MASK_FROM = 16 * 1024  # and from this one, faster by 8-byte words
_MAX_BODY_BYTES = 64 * 1024  # of a refused handshake's answer, for InvalidStatus.body
_CONT, _TEXT, _BINARY, _CLOSE, _PING, _PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
_DATA_OPCODES = frozenset({_CONT, _TEXT, _BINARY})
_CONTROL_OPCODES = frozenset({_CLOSE, _PING, _PONG})


def apply_mask(data: bytes | bytearray | memoryview, mask: bytes) -> bytes | bytearray:
    """`data` XOR the 4-byte `mask` repeated (RFC 6455 section 5.3): masks and unmasks."""
    n = len(data)
    if n < _NUMPY_MASK_FROM:  # one integer XOR: the mask repeated past the end only touches bytes cut off
        key = mask * ((n >> 2) + 1)
        return (int.from_bytes(data, "little") ^ int.from_bytes(key, "little")).to_bytes(len(key), "little")[:n]
    if n < _WORDS_MASK_FROM:  # a byte array XOR the mask repeated
        return np.bitwise_xor(np.frombuffer(data, np.uint8), np.frombuffer(mask * ((n >> 2) + 1), np.uint8, n)).tobytes()
    out = bytearray(n)  # 8-byte words XOR the mask twice, into the result (large: no copy more)
    words = n >> 3
    np.bitwise_xor(np.frombuffer(data, np.uint64, words), np.frombuffer(mask * 2, np.uint64)[0],
                   out=np.frombuffer(out, np.uint64, words))
    if (tail := words << 3) < n:  # a multiple of 8, so the mask starts over there
        out[tail:] = apply_mask(memoryview(data)[tail:], mask)
    return out


class _ProtocolError(Exception):
    """The server broke the protocol: the connection fails with close code `code`."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


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
        target = parse_url(url)
        self._max_size = max_size
        self._fast_recv = max_size is None or max_size >= 65536  # the fast path does not check max_size
        self._messages: deque[bytes | str] = deque()
        self._buffer = bytearray()  # bytes read and not parsed yet (the start of a frame)
        self._fragments: list[bytes] = []  # the frames so far of a fragmented message
        self._fragments_size = 0
        self._fragments_text: bool | None = None  # None: no fragmented message under way
        self._close_rcvd: Close | None = None
        self._close_sent: Close | None = None
        self._rcvd_then_sent: bool | None = None
        self._closed_exc: ConnectionClosed | None = None
        self._masks = b""
        self._mask_at = _MASKS_BYTES
        self._wrote_after_send = False  # a pong or close frame went out after the last message
        self.last_message_unread = False
        deadline = None if open_timeout is None else time.monotonic() + open_timeout
        sock = socket.create_connection((target.host, target.port), timeout=open_timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if target.secure:
                context = ssl_context or ssl.create_default_context()
                sock = context.wrap_socket(sock, server_hostname=target.host)
            self.socket = sock
            self._timeout: float | None = open_timeout
            key = new_key()
            sock.sendall(handshake_request(target, key, headers))
            self._handshake(key, deadline)
        except BaseException:
            sock.close()
            raise
        self._set_timeout(None)
        if self._buffer:  # frames that came with the handshake's answer (a close, at once)
            self._parse()

    # -- public -------------------------------------------------------------------------------
    def send(self, data: bytes) -> None:
        """Send one binary message.

        Raises:
            ConnectionClosed: the connection is closed (or closing), or closed now because the
                write failed; the message was not sent (`last_message_unread` is True).
        """
        if self._closed_exc is not None:
            self.last_message_unread = True
            raise self._closed_exc
        self._wrote_after_send = False
        n = len(data)
        mask = self._next_mask()
        try:
            if n < 126:
                key = mask * ((n >> 2) + 1)
                masked = (int.from_bytes(data, "little") ^ int.from_bytes(key, "little")).to_bytes(len(key), "little")
                self.socket.sendall(bytes((0x82, 0x80 | n)) + mask + masked[:n])
            elif n < 65536:
                self.socket.sendall(bytes((0x82, 0xFE, n >> 8, n & 0xFF)) + mask + apply_mask(data, mask))
            else:
                self.socket.sendall(bytes((0x82, 0xFF)) + n.to_bytes(8, "big") + mask)
                self.socket.sendall(apply_mask(data, mask))
        except OSError as exc:  # the server went away: its close frame may still be readable
            self._read_close(exc)
            self.last_message_unread = True  # a whole frame was not written, so none was read
            raise self._closed() from exc

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
            if not self._buffer and self._fragments_text is None and self._fast_recv:
                # Fast path: the read holds exactly one whole binary frame (FIN, no mask, under
                # 64 KiB) and nothing is buffered: the frame is the message.
                n = len(data)
                if n > 3 and data[0] == 0x82:
                    length = data[1]
                    if length < 126:
                        if n == length + 2:
                            return data[2:]
                    elif length == 126 and n == (data[2] << 8 | data[3]) + 4:
                        return data[4:]
            if data:
                self._buffer += data
                self._parse()
            else:  # the end of the stream
                self._ended(None)
            if messages:
                return messages.popleft()

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Send a close frame (when the connection is still open) and close the socket. Idempotent."""
        if self.socket.fileno() == -1:
            return
        try:
            if self._closed_exc is None:
                self._close_sent = Close(code, reason)
                self._write(_CLOSE, code.to_bytes(2, "big") + reason.encode())
        except OSError:
            pass
        finally:
            self._finish(None)

    @property
    def closed(self) -> bool:
        return self._closed_exc is not None

    # `last_message_unread`: once the connection has ended, True when the last message given to
    # `send` is known not to have reached the server's application: it was not written (the
    # connection was already closed, or the write failed), or nothing else was written after it
    # and the server had closed the connection before it arrived (`peer_closed_before_last_write`).
    # False means not known: the server may have read it.

    # -- the handshake ------------------------------------------------------------------------
    def _handshake(self, key: str, deadline: float | None) -> None:
        """Read the answer to the handshake request; keep the bytes after it (frames).

        Raises:
            InvalidStatus: not 101. InvalidHandshake: not an HTTP answer, or not a WebSocket one.
            TimeoutError: no whole answer by `deadline`.
        """
        buffer = bytearray()
        while (end := buffer.find(b"\r\n\r\n")) < 0:
            if len(buffer) > MAX_HEAD_BYTES:
                raise InvalidHandshake(f"the HTTP response's head is over {MAX_HEAD_BYTES} bytes")
            data = self._read_handshake(deadline)
            if not data:
                raise InvalidHandshake("the connection closed before a whole HTTP response came")
            buffer += data
        response = parse_response_head(bytes(buffer[:end]))
        rest = buffer[end + 4:]
        if response.status != 101:
            length = content_length(response)
            try:  # the body, for the exception (the gateway says why); what comes in time
                while length is not None and len(rest) < min(length, _MAX_BODY_BYTES) and (data := self._read_handshake(deadline)):
                    rest += data
            except (OSError, InvalidHandshake):
                pass
            raise InvalidStatus(response.status, response.reason, bytes(rest[:length]))
        check_switching(response, key)
        self._buffer = rest

    def _read_handshake(self, deadline: float | None) -> bytes:
        self._before_read(deadline, "the server's handshake answer")
        try:
            return self.socket.recv(_RECV_SIZE)
        except TimeoutError:
            raise
        except OSError as exc:
            raise InvalidHandshake(f"the connection failed while reading the HTTP response: {exc}") from exc

    # -- reading ------------------------------------------------------------------------------
    def _recv_bytes(self, deadline: float | None) -> bytes | None:
        """One read from the socket (b"": end of stream); None when it failed (the connection
        is now closed)."""
        self._before_read(deadline, "the server")
        try:
            return self.socket.recv(_RECV_SIZE)
        except TimeoutError:
            raise
        except OSError as exc:
            self._ended(exc)
            return None

    def _parse(self) -> None:
        """Take the whole frames off the buffer; fail the connection when one breaks the protocol."""
        buffer = self._buffer
        start = 0
        try:
            while self._closed_exc is None:
                available = len(buffer) - start
                if available < 2:
                    break
                first, second = buffer[start], buffer[start + 1]
                opcode, length, head = first & 0x0F, second & 0x7F, 2
                if first & 0x70:
                    raise _ProtocolError(1002, "reserved bits must be 0")
                if second & 0x80:
                    raise _ProtocolError(1002, "incorrect masking")
                if opcode in _CONTROL_OPCODES:
                    if length > 125 or not first & 0x80:
                        raise _ProtocolError(1002, "control frames must be whole and at most 125 bytes")
                elif opcode not in _DATA_OPCODES:
                    raise _ProtocolError(1002, f"invalid opcode {opcode:#x}")
                if length == 126:
                    if available < 4:
                        break
                    length, head = buffer[start + 2] << 8 | buffer[start + 3], 4
                elif length == 127:
                    if available < 10:
                        break
                    length, head = int.from_bytes(buffer[start + 2:start + 10], "big"), 10
                    if length >> 63:
                        raise _ProtocolError(1002, "invalid frame length")
                size = self._fragments_size + length
                if self._max_size is not None and opcode in _DATA_OPCODES and size > self._max_size:
                    raise _ProtocolError(1009, f"over size limit ({size} > {self._max_size} bytes)")
                stop = start + head + length
                if stop > len(buffer):
                    break
                with memoryview(buffer) as view:
                    payload = bytes(view[start + head:stop])
                start = stop
                self._on_frame(opcode, bool(first & 0x80), payload)
        except _ProtocolError as exc:
            self._fail(exc)
        finally:
            del buffer[:start]

    def _on_frame(self, opcode: int, fin: bool, payload: bytes) -> None:
        if opcode == _BINARY or opcode == _TEXT:
            if self._fragments_text is not None:
                raise _ProtocolError(1002, "expected a continuation frame")
            if fin:
                self._messages.append(_text(payload) if opcode == _TEXT else payload)
            else:
                self._fragments, self._fragments_size, self._fragments_text = [payload], len(payload), opcode == _TEXT
        elif opcode == _CONT:
            if self._fragments_text is None:
                raise _ProtocolError(1002, "unexpected continuation frame")
            self._fragments.append(payload)
            self._fragments_size += len(payload)
            if fin:
                data = b"".join(self._fragments)
                self._messages.append(_text(data) if self._fragments_text else data)
                self._fragments, self._fragments_size, self._fragments_text = [], 0, None
        elif opcode == _PING:
            try:
                self._write(_PONG, payload)
            except OSError:
                pass  # a pong the server will not read: the read side tells the story
        elif opcode == _CLOSE:
            self._on_close(payload)
        # _PONG: unsolicited (no ping is sent), nothing to do

    def _on_close(self, payload: bytes) -> None:
        """The server's close frame: echo it and end (a client should then wait for the server
        to close the TCP connection, but nothing is left to read, so it does not wait)."""
        if len(payload) >= 2:
            code = int.from_bytes(payload[:2], "big")
            if not Close.valid_code(code):
                raise _ProtocolError(1002, f"invalid close code {code}")
            rcvd = Close(code, _text(payload[2:]))
        elif not payload:
            rcvd = Close(1005, "")
        else:
            raise _ProtocolError(1002, "close frame too short")
        self._close_rcvd = rcvd
        self._note_end()  # before the echo is written
        self._close_sent, self._rcvd_then_sent = rcvd, True
        try:
            self._write(_CLOSE, payload)
        except OSError:
            pass
        self._finish(None)

    def _fail(self, error: _ProtocolError) -> None:
        """Fail the connection: a close frame with the error's code, and the end."""
        self._note_end()
        if self._close_sent is None:
            self._close_sent = Close(error.code, error.reason)
            try:
                self._write(_CLOSE, error.code.to_bytes(2, "big") + error.reason.encode()[:123])
            except OSError:
                pass
        self._finish(error)

    def _ended(self, cause: OSError | None) -> None:
        """The stream ended (`cause`: the read failed, as a reset does) without a close frame."""
        self._note_end()
        self._finish(cause)

    def _finish(self, cause: BaseException | None) -> None:
        """The connection is over: keep how it ended, close the socket."""
        if self._closed_exc is None:
            self._closed_exc = closed_error(self._close_rcvd, self._close_sent, self._rcvd_then_sent)
            self._closed_exc.__cause__ = cause
        self._buffer.clear()
        self.socket.close()

    def _read_close(self, cause: OSError, wait: float = 1.0) -> None:
        """After a failed write, read what the server sent before it went (its close frame)."""
        deadline = time.monotonic() + wait
        try:
            while self._closed_exc is None:
                data = self._recv_bytes(deadline)
                if data:
                    self._buffer += data
                    self._parse()
                elif data is not None:
                    self._ended(None)
        except OSError:
            pass
        if self._closed_exc is None:
            self._ended(cause)

    def _closed(self) -> ConnectionClosed:
        assert self._closed_exc is not None
        return self._closed_exc

    # -- writing ------------------------------------------------------------------------------
    def _next_mask(self) -> bytes:
        """A fresh 4-byte masking key, drawn from a block of random bytes read once per
        _MASKS_BYTES / 4 frames."""
        at = self._mask_at
        if at >= _MASKS_BYTES:
            self._masks = os.urandom(_MASKS_BYTES)
            at = 0
        self._mask_at = at + 4
        return self._masks[at:at + 4]

    def _write(self, opcode: int, payload: bytes) -> None:
        """Write one whole control frame (masked; `payload` at most 125 bytes)."""
        mask = self._next_mask()
        self._wrote_after_send = True
        self.socket.sendall(bytes((0x80 | opcode, 0x80 | len(payload))) + mask + apply_mask(payload, mask))

    def _note_end(self) -> None:
        """The connection is ending: find out whether the last message was read (once)."""
        if not self.last_message_unread and not self._wrote_after_send:
            self.last_message_unread = peer_closed_before_last_write(self.socket)


def _text(data: bytes) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise _ProtocolError(1007, "invalid UTF-8 in a text message or close reason") from None


__all__ = ["BlockingWebSocket", "ConnectionClosed", "InvalidHandshake", "InvalidStatus", "apply_mask"]

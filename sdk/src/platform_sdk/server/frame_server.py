"""The framed transport of the environment server (`python -m platform_sdk --transport frames`).

The same `EnvRequest`/`EnvResponse` messages as the gRPC stream, in the same order, as
length-prefixed frames (a 4-byte little-endian length, then the message:
`platform_contracts.framing`) on a Unix socket. The env host speaks it to the instances it
starts itself: per step, Python gRPC cost the instance ~330 µs of CPU and the env host ~200 µs,
for a CartPole step of 7 µs; a blocking read and write on a plain socket cost a few µs.
Users' servers, `platform-check` and Docker images keep gRPC (the default transport).

One blocking loop in the main thread, no asyncio and no thread hand-off: one connection at a
time (the env host's one link), one request at a time, answered by `instance.handle`, then
`instance.after_answer()` (work that waits for the answer, as the gRPC servicer does). The end
of a connection (EOF) goes back to accepting the next. A frame over the limit, or one that is
not an `EnvRequest`, closes its connection with a log line. SIGTERM or SIGINT stops the loop;
`serve_frames` then removes the socket and returns (the caller closes the instance).
"""

from __future__ import annotations

import logging
import os
import signal
import socket
from types import FrameType
from typing import TYPE_CHECKING, TextIO

from google.protobuf.message import DecodeError
from platform_contracts.framing import HEADER
from platform_contracts.limits import MAX_GRPC_MESSAGE_BYTES as MAX_FRAME_BYTES  # the gRPC transport's
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk.server.addresses import bindable_socket_path
from platform_sdk.server.errors import StartupError

if TYPE_CHECKING:
    from platform_sdk.server.servicer import Instance

log = logging.getLogger("platform_sdk.server")

# The receive buffer a connection starts with: a lockstep request is one small frame, read by
# one recv_into; a larger one grows the buffer for that connection.
INITIAL_BUFFER_BYTES = 64 * 1024
_HEADER_SIZE = HEADER.size
_unpack_header = HEADER.unpack_from
_pack_header = HEADER.pack
SEND_JOINED_BELOW_BYTES = 64 * 1024


class _Stop(BaseException):
    """Raised by the SIGTERM/SIGINT handler in the main thread: unwinds a blocking accept, recv
    or a command in progress (the instance is closed right after, so nothing is left half-done
    that matters)."""


class _ConnectionEnded(Exception):
    """The peer closed the connection (EOF) or it failed: accept the next one."""


class FrameTooLargeError(Exception):
    pass


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def bind(listen: str) -> tuple[socket.socket, str]:
    """A listening Unix socket for `listen` ("unix:/path"); returns it and its address.

    Raises:
        StartupError: `listen` is not a "unix:" address, or it cannot be bound.
    """
    path = bindable_socket_path(listen)
    if path is None:
        raise StartupError(f"--transport frames needs a 'unix:/path/x.sock' --listen address, not {listen!r}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        sock.listen(1)
    except OSError as exc:
        sock.close()
        raise StartupError(f"cannot listen on {listen}: {exc}") from None
    return sock, f"unix:{path}"


def serve_frames(instance: Instance, listen: str, ready_stream: TextIO, env_id: str = "") -> None:
    """Serve `instance` over frames on `listen` until SIGTERM or SIGINT, then remove the socket.

    Prints `READY <address>` (the same line as the gRPC transport: the launcher chose the
    transport, so it knows which one the address speaks).

    Raises:
        StartupError: the address is not a Unix socket, or cannot be bound.
    """
    listener, address = bind(listen)
    path = address[len("unix:") :]
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        ready_stream.write(f"READY {address}\n")
        ready_stream.flush()
        log.info("serving %s on %s (frames)", env_id, address)
        while True:
            connection, _ = listener.accept()
            try:
                _serve_connection(instance, connection)
            except _ConnectionEnded:
                pass
            except FrameTooLargeError as exc:
                log.warning("closing the connection on %s: %s", address, exc)
            except DecodeError as exc:
                log.warning("closing the connection on %s: a frame is not an EnvRequest: %s", address, exc)
            finally:
                connection.close()
    except _Stop:
        log.info("stopping: signal received")
    finally:
        for sig in previous:  # a second signal while cleaning up must not cut the cleanup short
            signal.signal(sig, signal.SIG_IGN)
        listener.close()
        if os.path.exists(path):
            os.unlink(path)


def _serve_connection(instance: Instance, connection: socket.socket) -> None:
    """Answer the connection's requests in order until it ends.

    Raises:
        _ConnectionEnded: EOF or a socket error.
        FrameTooLargeError: a frame announced more than MAX_FRAME_BYTES.
        DecodeError: a frame is not an EnvRequest.
    """
    handle, after_answer, parse = instance.handle, instance.after_answer, env_pb.EnvRequest.FromString
    next_frame, sendall = _FrameReader(connection).next_frame, connection.sendall
    try:
        while True:
            answer = handle(parse(next_frame())).SerializeToString()  # type: ignore[arg-type]  # any buffer
            if len(answer) < SEND_JOINED_BELOW_BYTES:  # one write; copying a small answer is cheaper
                sendall(_pack_header(len(answer)) + answer)
            else:
                sendall(_pack_header(len(answer)))
                sendall(answer)
            after_answer()  # the answer is out: work that can wait for it (render_later frames)
    except OSError as exc:  # reset by the peer, a broken pipe
        raise _ConnectionEnded from exc


class _FrameReader:
    """Frames read from a socket into one reused buffer (recv_into: no bytes object per read).

    `next_frame`'s view is valid until the next call (the buffer is reused).
    """

    def __init__(self, connection: socket.socket) -> None:
        self._recv_into = connection.recv_into
        self._buffer = bytearray(INITIAL_BUFFER_BYTES)
        self._view = memoryview(self._buffer)
        self._start = self._end = 0  # the unparsed bytes: buffer[start:end]

    def next_frame(self) -> memoryview:
        """The next frame's payload.

        Raises:
            _ConnectionEnded: EOF.
            FrameTooLargeError: the announced length is over the limit.
        """
        if self._end == 0 and len(self._buffer) > INITIAL_BUFFER_BYTES:  # a large frame is done with
            self._buffer = bytearray(INITIAL_BUFFER_BYTES)
            self._view = memoryview(self._buffer)
        self._fill(_HEADER_SIZE)
        (length,) = _unpack_header(self._buffer, self._start)
        if length > MAX_FRAME_BYTES:
            raise FrameTooLargeError(f"a frame of {length} bytes is over the {MAX_FRAME_BYTES}-byte limit")
        self._fill(_HEADER_SIZE + length)
        first = self._start + _HEADER_SIZE
        self._start = first + length
        if self._start == self._end:  # all read (the lockstep case): start again at the front
            self._start = self._end = 0
        return self._view[first : first + length]

    def _fill(self, size: int) -> None:
        """Read until `size` unparsed bytes are buffered."""
        if self._end - self._start >= size:
            return
        if self._start + size > len(self._buffer):  # no room after them: move them to the front
            pending = bytes(self._view[self._start : self._end])
            if size > len(self._buffer):
                self._buffer = bytearray(size)
                self._view = memoryview(self._buffer)
            self._view[: len(pending)] = pending
            self._start, self._end = 0, len(pending)
        while self._end - self._start < size:
            received = self._recv_into(self._view[self._end :])
            if not received:
                raise _ConnectionEnded
            self._end += received

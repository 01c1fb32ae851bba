"""What the SDK's two blocking clients of a step (`BlockingWebSocket` over the gateway,
`BlockingStepLink` to the env host) share about their socket: reads bounded by a deadline, and
whether a message written last never reached the other side's application."""

from __future__ import annotations

import errno
import socket
import struct
import sys
import time

# struct tcp_info (linux/tcp.h): tcpi_state is its first byte, tcpi_unacked the u32 at offset 24.
_TCP_INFO_SIZE = 104
_TCP_CLOSE_WAIT = 8


def peer_closed_before_last_write(sock: socket.socket) -> bool:
    """Whether the peer had closed the connection before the bytes written last reached it.

    Linux tells it two ways: the peer's FIN has come while bytes are still unacknowledged (a
    FIN acknowledges all its sender received), or those bytes met a reset after that FIN (the
    error is then EPIPE, not ECONNRESET). A peer that reads a message and then resets the
    connection gives ECONNRESET: not counted. Elsewhere this answers False (not known).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == errno.EPIPE:
            return True
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_SIZE)
    except OSError:
        return False
    return len(info) >= 28 and info[0] == _TCP_CLOSE_WAIT and struct.unpack_from("I", info, 24)[0] > 0


class TimedSocket:
    """A blocking socket whose timeout is changed only when a read's deadline needs another one
    (a `settimeout` before every read would cost a system call on every step).

    Subclasses set `socket` and `_timeout` (the socket's current timeout) when they connect.
    """

    socket: socket.socket
    _timeout: float | None

    def _before_read(self, deadline: float | None, waiting_for: str) -> None:
        """Set the timeout for one read that must end by `deadline` (None: wait forever).

        Raises:
            TimeoutError: the deadline has passed ("timed out waiting for <waiting_for>").
        """
        if deadline is None:
            if self._timeout is not None:
                self._set_timeout(None)
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"timed out waiting for {waiting_for}")
        self._set_timeout(remaining)

    def _set_timeout(self, timeout: float | None) -> None:
        if timeout != self._timeout and self.socket.fileno() != -1:
            self.socket.settimeout(timeout)
            self._timeout = timeout

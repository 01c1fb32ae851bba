"""How the SDK's two blocking step connections end or fail to open (internal to the client).

`BlockingWebSocket` (the gateway's WebSocket) and `BlockingStepLink` (the env host's step link)
raise these; `SessionStream` turns them into the SDK's errors (`platform_sdk.errors`), so a
user never sees them. They carry what the stream decides on: the close frames received and
sent (`ConnectionClosed.rcvd` / `.sent`; None: none), and the HTTP status of a refused
WebSocket handshake (`InvalidStatus.status_code`).
"""

from __future__ import annotations

from dataclasses import dataclass

# Close codes a peer may send (RFC 6455 section 7.4.1, and 3000-4999 for applications).
_SENDABLE_CODES = frozenset({1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014})
# Close codes of a connection that ended as it should (1005: a close frame without a code).
OK_CLOSE_CODES = frozenset({1000, 1001, 1005})


@dataclass(frozen=True)
class Close:
    """A close frame's code and reason."""

    code: int
    reason: str

    def __str__(self) -> str:
        return f"{self.code} ({self.reason})" if self.reason else str(self.code)

    @staticmethod
    def valid_code(code: int) -> bool:
        """Whether a peer may send `code` in a close frame."""
        return code in _SENDABLE_CODES or 3000 <= code < 5000


class ConnectionClosed(Exception):
    """The connection is closed. `rcvd`: the close frame received (None: the connection ended
    without one); `sent`: the close frame sent (None: none); `rcvd_then_sent`: whether the
    received one came first (None when not both)."""

    def __init__(self, rcvd: Close | None, sent: Close | None, rcvd_then_sent: bool | None = None) -> None:
        self.rcvd = rcvd
        self.sent = sent
        self.rcvd_then_sent = rcvd_then_sent
        super().__init__(self._describe())

    def _describe(self) -> str:
        if self.rcvd is None:
            if self.sent is None:
                return "no close frame received or sent"
            return f"sent {self.sent}; no close frame received"
        if self.sent is None:
            return f"received {self.rcvd}; no close frame sent"
        if self.rcvd_then_sent:
            return f"received {self.rcvd}; then sent {self.sent}"
        return f"sent {self.sent}; then received {self.rcvd}"


class ConnectionClosedOK(ConnectionClosed):
    """Closed as it should be: both close frames came and went with 1000, 1001 or 1005."""


class ConnectionClosedError(ConnectionClosed):
    """Closed otherwise: without a close frame, or with an error code."""


def closed_error(rcvd: Close | None, sent: Close | None, rcvd_then_sent: bool | None = None) -> ConnectionClosed:
    """`ConnectionClosedOK` or `ConnectionClosedError`, as the two close frames say."""
    ok = rcvd is not None and sent is not None and rcvd.code in OK_CLOSE_CODES and sent.code in OK_CLOSE_CODES
    return (ConnectionClosedOK if ok else ConnectionClosedError)(rcvd, sent, rcvd_then_sent)


class InvalidHandshake(Exception):
    """The WebSocket opening handshake failed: not an HTTP response, or not a WebSocket one."""


class InvalidStatus(InvalidHandshake):
    """The server refused the WebSocket handshake with an HTTP status other than 101."""

    def __init__(self, status_code: int, reason: str = "", body: bytes = b"") -> None:
        self.status_code = status_code
        self.reason = reason
        self.body = body
        super().__init__(f"server rejected WebSocket connection: HTTP {status_code}")

"""The WebSocket opening handshake, client side (RFC 6455 section 4.1), over HTTP/1.1.

`handshake_request` writes the `GET` with `Upgrade: websocket` and a fresh key;
`parse_response_head` reads the answer's status line and headers; `check_switching` checks a
101 answer as section 4.1 says (Upgrade, Connection, the key's `Sec-WebSocket-Accept`, and no
extension or subprotocol, since none is asked for). Failures are `InvalidHandshake`.
"""

from __future__ import annotations

import base64
import hashlib
import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from platform_sdk.client.link_errors import InvalidHandshake

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
MAX_HEAD_BYTES = 64 * 1024  # a response head (status line and headers) larger than this is refused
_USER_AGENT = f"platform-sdk Python/{platform.python_version()}"


@dataclass(frozen=True)
class Target:
    """Where a `ws://` or `wss://` URL points."""

    host: str  # for the TCP connection (an IPv6 address without brackets)
    port: int
    secure: bool
    resource: str  # the path and query, as the request line has them
    host_header: str


def parse_url(url: str) -> Target:
    """The target of a `ws://` or `wss://` URL.

    Raises:
        ValueError: another scheme, or no host.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("ws", "wss"):
        raise ValueError(f"not a WebSocket URL (ws:// or wss://): {url}")
    host = parts.hostname
    if not host:
        raise ValueError(f"no host in the WebSocket URL {url}")
    secure = scheme == "wss"
    default_port = 443 if secure else 80
    port = parts.port or default_port
    resource = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    name = f"[{host}]" if ":" in host else host
    return Target(host, port, secure, resource, name if port == default_port else f"{name}:{port}")


def new_key() -> str:
    """A `Sec-WebSocket-Key`: 16 random bytes, base64."""
    return base64.b64encode(os.urandom(16)).decode()


def accept_value(key: str) -> str:
    """The `Sec-WebSocket-Accept` a server answers `key` with."""
    return base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()


def handshake_request(target: Target, key: str, headers: Mapping[str, str] | None = None) -> bytes:
    """The opening handshake's HTTP request; `headers` are added (or replace ours, by name)."""
    fields = {
        "Host": target.host_header,
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": key,
        "Sec-WebSocket-Version": "13",
        "User-Agent": _USER_AGENT,
    }
    by_lower = {name.lower(): name for name in fields}
    for name, value in (headers or {}).items():
        if "\r" in name or "\n" in name or "\r" in value or "\n" in value:
            raise ValueError(f"a line break in the header {name!r}")
        fields.pop(by_lower.get(name.lower(), name), None)
        fields[name] = value
    lines = [f"GET {target.resource} HTTP/1.1", *(f"{name}: {value}" for name, value in fields.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


@dataclass(frozen=True)
class ResponseHead:
    status: int
    reason: str
    headers: list[tuple[str, str]]  # (lower-case name, value), in order

    def values(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key == name]


def parse_response_head(head: bytes) -> ResponseHead:
    """The status line and headers of an HTTP/1.1 response (`head`: up to the blank line, excluded).

    Raises:
        InvalidHandshake: not an HTTP/1.1 response head.
    """
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code, _, reason = rest.partition(" ")
    if version != "HTTP/1.1" or len(code) != 3 or not code.isdigit():
        raise InvalidHandshake(f"did not receive a valid HTTP response: {lines[0][:100]!r}")
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip() or name[0] in " \t":
            raise InvalidHandshake(f"did not receive a valid HTTP response: header line {line[:100]!r}")
        headers.append((name.lower(), value.strip(" \t")))
    return ResponseHead(int(code), reason, headers)


def _tokens(values: list[str]) -> list[str]:
    return [token.strip().lower() for value in values for token in value.split(",") if token.strip()]


def check_switching(response: ResponseHead, key: str) -> None:
    """Check a 101 answer to the request made with `key`.

    Raises:
        InvalidHandshake: it does not switch to the WebSocket protocol as RFC 6455 says.
    """
    if "upgrade" not in _tokens(response.values("connection")):
        raise InvalidHandshake(f"invalid Connection header: {', '.join(response.values('connection'))!r}")
    if _tokens(response.values("upgrade")) != ["websocket"]:
        raise InvalidHandshake(f"invalid Upgrade header: {', '.join(response.values('upgrade'))!r}")
    accepts = response.values("sec-websocket-accept")
    if accepts != [accept_value(key)]:
        raise InvalidHandshake(f"invalid Sec-WebSocket-Accept header: {', '.join(accepts)!r}")
    for name in ("sec-websocket-extensions", "sec-websocket-protocol"):
        if _tokens(response.values(name)):  # none was asked for
            raise InvalidHandshake(f"unexpected {name} header: {', '.join(response.values(name))!r}")


def content_length(response: ResponseHead) -> int | None:
    """The answer's Content-Length, when it has one valid one."""
    values = response.values("content-length")
    return int(values[0]) if len(values) == 1 and values[0].isdigit() else None

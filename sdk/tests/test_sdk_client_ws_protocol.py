"""The SDK's own WebSocket client (`ws_connection.BlockingWebSocket`, `ws_handshake`) against
servers it did not write: a `websockets` asyncio server for whole conversations, and raw
sockets whose handshake is `websockets`' `ServerProtocol` and whose frames are `websockets`'
`Frame`, written byte by byte as a test needs (pings between fragments, a frame split
anywhere, protocol violations, a reset). `websockets` is a test dependency only: the client
does not import it.
"""

from __future__ import annotations

import asyncio
import os
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http import HTTPStatus

import pytest
from platform_sdk import errors
from platform_sdk.client.link_errors import (
    ConnectionClosed,
    ConnectionClosedError,
    ConnectionClosedOK,
    InvalidHandshake,
    InvalidStatus,
)
from platform_sdk.client.stream import SessionStream
from platform_sdk.client.ws_connection import BlockingWebSocket, apply_mask
from platform_sdk.client.ws_handshake import accept_value, handshake_request, parse_url
from websockets import frames as ws_frames
from websockets.asyncio.server import ServerConnection, serve
from websockets.frames import Close, Frame, Opcode
from websockets.http11 import Request, Response
from websockets.server import ServerProtocol

pytestmark = pytest.mark.timeout(60)


# -- a websockets server ---------------------------------------------------------------------
@dataclass
class Server:
    url: str
    close_codes: dict[str, tuple[int | None, str | None]] = field(default_factory=dict)
    pongs: dict[str, int] = field(default_factory=dict)
    headers: dict[str, dict[str, str]] = field(default_factory=dict)


async def _handler(ws: ServerConnection, server: Server) -> None:
    path = ws.request.path
    kind = path.strip("/").split("/")[0].split("?")[0]
    server.headers[path] = dict(ws.request.headers.raw_items())
    try:
        if kind == "close":  # /close/<code>: a close frame with a code and a reason at once
            await ws.close(int(path.split("/")[2]), "the reason: ünïcode")
            return
        async for message in ws:
            if kind == "ping":  # pings before each answer, the client answering them while it waits
                for _ in range(2):
                    await asyncio.wait_for(await ws.ping(b"mid-stream"), 5)
                    server.pongs[path] = server.pongs.get(path, 0) + 1
            if kind == "fragments":  # the answer in 1000-byte fragments
                await ws.send([message[i:i + 1000] for i in range(0, len(message), 1000)] or [message])
            elif kind == "text":
                await ws.send(f"{len(message)} bytes, ünïcode")
            else:
                await ws.send(message)
    finally:
        server.close_codes[path] = (ws.close_code, ws.close_reason)


def _refuse(ws: ServerConnection, request: Request) -> Response | None:
    if request.path.startswith("/refused/"):
        status = HTTPStatus(int(request.path.split("/")[2]))
        return ws.respond(status, f"refused: {status.phrase}\n")
    return None


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, object] = {}

    async def main() -> None:
        state = holder["state"] = Server(url="")
        stop = holder["stop"] = asyncio.Event()
        async with serve(lambda ws: _handler(ws, state), "127.0.0.1", 0, process_request=_refuse, max_size=None,
                         compression=None) as running:
            state.url = f"ws://127.0.0.1:{running.sockets[0].getsockname()[1]}"
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    assert ready.wait(10), "the server did not start"
    yield holder["state"]  # type: ignore[misc]
    loop.call_soon_threadsafe(holder["stop"].set)  # type: ignore[attr-defined]
    thread.join(10)


def _wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_conversation_and_the_closing_handshake(server: Server) -> None:
    ws = BlockingWebSocket(f"{server.url}/echo/1?token=abc", headers={"X-Test": "yes"})
    for size in (0, 5, 125, 126, 65535, 65536, 200_000):
        payload = os.urandom(size)
        ws.send(payload)
        assert ws.recv(5) == payload
    ws.close()
    assert ws.closed
    ws.close()  # idempotent
    _wait_for(lambda: "/echo/1?token=abc" in server.close_codes)
    assert server.close_codes["/echo/1?token=abc"] == (1000, "")
    headers = server.headers["/echo/1?token=abc"]
    assert headers["X-Test"] == "yes" and headers["Host"] == server.url.removeprefix("ws://")
    with pytest.raises(ConnectionClosed) as closed:
        ws.send(b"after")
    assert closed.value.rcvd is None and closed.value.sent is not None and closed.value.sent.code == 1000
    assert ws.last_message_unread
    with pytest.raises(ConnectionClosed):
        ws.recv(1)


def test_pings_mid_stream_are_answered(server: Server) -> None:
    ws = BlockingWebSocket(f"{server.url}/ping/1")
    for value in range(3):
        ws.send(bytes([value]) * 10)
        assert ws.recv(5) == bytes([value]) * 10
    assert server.pongs["/ping/1"] == 6
    ws.close()


def test_fragmented_messages_are_joined(server: Server) -> None:
    ws = BlockingWebSocket(f"{server.url}/fragments/1")
    for size in (10, 1000, 1001, 300_000):
        payload = os.urandom(size)
        ws.send(payload)
        assert ws.recv(5) == payload
    ws.close()


def test_text_messages_are_str(server: Server) -> None:
    ws = BlockingWebSocket(f"{server.url}/text/1")
    ws.send(b"abc")
    assert ws.recv(5) == "3 bytes, ünïcode"
    ws.close()


@pytest.mark.parametrize(("code", "ok"), [(1000, True), (1001, True), (1011, False), (4404, False)])
def test_a_server_close_says_its_code_and_reason(server: Server, code: int, ok: bool) -> None:
    ws = BlockingWebSocket(f"{server.url}/close/{code}")
    with pytest.raises(ConnectionClosed) as closed:
        ws.recv(5)
    assert type(closed.value) is (ConnectionClosedOK if ok else ConnectionClosedError)
    assert closed.value.rcvd is not None and (closed.value.rcvd.code, closed.value.rcvd.reason) == (
        code, "the reason: ünïcode")
    assert closed.value.sent == closed.value.rcvd and closed.value.rcvd_then_sent  # echoed
    _wait_for(lambda: f"/close/{code}" in server.close_codes)
    assert server.close_codes[f"/close/{code}"] == (code, "the reason: ünïcode")
    with pytest.raises(ConnectionClosed):
        ws.send(b"after")
    assert ws.last_message_unread


@pytest.mark.parametrize("status", [401, 403, 404, 503])
def test_a_refused_handshake_gives_the_status_and_body(server: Server, status: int) -> None:
    with pytest.raises(InvalidStatus) as refused:
        BlockingWebSocket(f"{server.url}/refused/{status}")
    assert refused.value.status_code == status
    assert refused.value.body == f"refused: {HTTPStatus(status).phrase}\n".encode()


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_refused_stream_is_the_sdks_error(server: Server, status: int) -> None:
    """SessionStream's error for a refused handshake: PlatformError with the status (as with
    websockets' client before)."""
    http_url = server.url.replace("ws://", "http://") + f"/refused/{status}"
    with pytest.raises(errors.PlatformError) as caught:
        SessionStream(http_url, "s-1", token=None)
    assert type(caught.value) is errors.PlatformError
    assert caught.value.status == status
    assert str(caught.value) == f"session s-1: the stream was refused with HTTP {status}"


def test_a_read_timeout_leaves_the_connection_usable(server: Server) -> None:
    ws = BlockingWebSocket(f"{server.url}/echo/2")
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        ws.recv(0.2)
    assert 0.15 < time.monotonic() - started < 2
    ws.send(b"later")
    assert ws.recv(5) == b"later"
    ws.close()


# -- raw servers -----------------------------------------------------------------------------
def _raw_server(script: Callable[[socket.socket], None], handshake: bool = True) -> tuple[str, threading.Thread]:
    """A one-connection server: `websockets`' handshake (unless `handshake` is False), then
    `script(conn)` writes and reads what it likes."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)
    failures: list[BaseException] = []

    def serve_one() -> None:
        try:
            with listener, listener.accept()[0] as conn:
                conn.settimeout(10)
                if handshake:
                    protocol = ServerProtocol()
                    while not (events := protocol.events_received()):
                        protocol.receive_data(conn.recv(65536))
                    protocol.send_response(protocol.accept(events[0]))
                    conn.sendall(b"".join(protocol.data_to_send()))
                script(conn)
        except BaseException as exc:  # noqa: BLE001  (the assertions about what the client wrote: raised in the test)
            failures.append(exc)

    thread = threading.Thread(target=serve_one, daemon=True)
    thread.start()
    thread.failures = failures  # type: ignore[attr-defined]
    return f"ws://127.0.0.1:{listener.getsockname()[1]}/", thread


def _joined(thread: threading.Thread) -> None:
    thread.join(10)
    assert not thread.is_alive()
    if thread.failures:  # type: ignore[attr-defined]
        raise thread.failures[0]  # type: ignore[attr-defined]


def _frame(opcode: Opcode, data: bytes, fin: bool = True) -> bytes:
    return Frame(opcode, data, fin).serialize(mask=False)


def _exact(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        assert chunk, "the client closed the connection"
        data += chunk
    return data


def _read_frame(conn: socket.socket) -> tuple[int, bool, bytes]:
    """One frame from the client: (opcode, fin, unmasked payload); it must be masked."""
    def exact(n: int) -> bytes:
        return _exact(conn, n)

    first, second = exact(2)
    assert second & 0x80, "a client frame must be masked"
    length = second & 0x7F
    if length == 126:
        (length,) = struct.unpack("!H", exact(2))
    elif length == 127:
        (length,) = struct.unpack("!Q", exact(8))
    mask = exact(4)
    return first & 0x0F, bool(first & 0x80), ws_frames.apply_mask(exact(length), mask)


def test_a_ping_between_fragments_is_answered_and_the_message_joined() -> None:
    seen: list[tuple[int, bool, bytes]] = []

    def script(conn: socket.socket) -> None:
        conn.sendall(_frame(Opcode.BINARY, b"first ", fin=False) + _frame(Opcode.PING, b"are you there"))
        seen.append(_read_frame(conn))  # the pong comes while the message is still incomplete
        conn.sendall(_frame(Opcode.CONT, b"second ", fin=False))
        time.sleep(0.05)
        conn.sendall(_frame(Opcode.PONG, b"unsolicited") + _frame(Opcode.CONT, b"third"))
        seen.append(_read_frame(conn))  # the client's close

    url, thread = _raw_server(script)
    ws = BlockingWebSocket(url)
    assert ws.recv(5) == b"first second third"
    ws.close()
    _joined(thread)
    assert seen[0] == (0xA, True, b"are you there")
    assert seen[1] == (0x8, True, struct.pack("!H", 1000))


def test_a_frame_split_anywhere_is_read_whole() -> None:
    message = os.urandom(70_000)  # a 64-bit length
    data = _frame(Opcode.BINARY, b"small") + _frame(Opcode.BINARY, message) + _frame(Opcode.TEXT, "é".encode())

    def script(conn: socket.socket) -> None:
        for cut in (1, 3, 7, 9, 11, 50, 7000):  # inside headers, lengths and payloads
            conn.sendall(data[:cut])
            data_left = data[cut:]
            time.sleep(0.01)
            conn.sendall(data_left)
            _read_frame(conn)  # the client's go-ahead

    url, thread = _raw_server(script)
    ws = BlockingWebSocket(url)
    for _ in range(7):
        assert ws.recv(5) == b"small"
        assert ws.recv(5) == message
        assert ws.recv(5) == "é"
        ws.send(b"next")
    _joined(thread)
    ws.close()


def test_the_client_masks_every_frame_with_a_new_mask() -> None:
    masks: list[bytes] = []
    payloads: list[bytes] = []

    def script(conn: socket.socket) -> None:
        for size in (0, 1, 125, 126, 65535, 65536, 100_003):
            head = _exact(conn, 2)
            length = head[1] & 0x7F
            extra = {126: 2, 127: 8}.get(length, 0)
            if extra:
                length = int.from_bytes(_exact(conn, extra), "big")
            assert head[0] == 0x82 and head[1] & 0x80 and length == size
            masks.append(_exact(conn, 4))
            payloads.append(ws_frames.apply_mask(_exact(conn, length), masks[-1]))

    url, thread = _raw_server(script)
    ws = BlockingWebSocket(url)
    sent = [os.urandom(size) for size in (0, 1, 125, 126, 65535, 65536, 100_003)]
    for payload in sent:
        ws.send(payload)
    _joined(thread)
    ws.close()
    assert payloads == sent
    assert len(set(masks)) == len(masks)


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (Frame(Opcode.BINARY, b"masked").serialize(mask=True), 1002),  # a server must not mask
        (bytes([0xC2, 1, 0]), 1002),  # RSV1 set: no extension was negotiated
        (_frame(Opcode.CONT, b"no start"), 1002),
        (_frame(Opcode.TEXT, b"\xff\xfe not UTF-8"), 1007),
        (_frame(Opcode.BINARY, b"a", fin=False) + _frame(Opcode.BINARY, b"b"), 1002),
        (bytes([0x83, 1, 0]), 1002),  # a reserved opcode
        (bytes([0x89, 126, 0, 126]) + bytes(126), 1002),  # a control frame over 125 bytes
        (bytes([0x09, 1, 0]), 1002),  # a fragmented ping
        (bytes([0x88, 2]) + struct.pack("!H", 1005), 1002),  # a close code no one may send
        (bytes([0x88, 1, 3]), 1002),  # a close frame of one byte
        (_frame(Opcode.BINARY, bytes(2000)), 1009),  # over max_size
    ],
    ids=["masked", "rsv1", "continuation", "utf8", "unfinished", "opcode", "long-ping", "fragmented-ping",
         "close-1005", "close-short", "max-size"],
)
def test_a_protocol_violation_fails_the_connection(frame: bytes, code: int) -> None:
    seen: list[tuple[int, bool, bytes]] = []

    def script(conn: socket.socket) -> None:
        conn.sendall(frame)
        seen.append(_read_frame(conn))

    url, thread = _raw_server(script)
    ws = BlockingWebSocket(url, max_size=1000)
    with pytest.raises(ConnectionClosedError) as failed:
        ws.recv(5)
    _joined(thread)
    assert failed.value.rcvd is None and failed.value.sent is not None and failed.value.sent.code == code
    assert seen[0][0] == 0x8 and struct.unpack("!H", seen[0][2][:2])[0] == code


def test_a_message_at_max_size_is_accepted() -> None:
    def script(conn: socket.socket) -> None:
        conn.sendall(_frame(Opcode.BINARY, bytes(600), fin=False) + _frame(Opcode.CONT, bytes(400)))
        conn.sendall(_frame(Opcode.BINARY, bytes(600), fin=False) + _frame(Opcode.CONT, bytes(401)))
        _read_frame(conn)

    url, thread = _raw_server(script)
    ws = BlockingWebSocket(url, max_size=1000)
    assert ws.recv(5) == bytes(1000)
    with pytest.raises(ConnectionClosedError) as failed:
        ws.recv(5)
    assert failed.value.sent is not None and failed.value.sent.code == 1009
    _joined(thread)


def test_an_empty_close_frame_is_1005_and_ok() -> None:
    def script(conn: socket.socket) -> None:
        conn.sendall(_frame(Opcode.BINARY, b"last") + _frame(Opcode.CLOSE, b""))
        assert _read_frame(conn) == (0x8, True, b"")  # echoed as it came

    url, thread = _raw_server(script)
    ws = BlockingWebSocket(url)
    assert ws.recv(5) == b"last"  # the message before the close comes first
    with pytest.raises(ConnectionClosedOK) as closed:
        ws.recv(5)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1005
    _joined(thread)


def test_a_close_frame_with_the_handshake_answer() -> None:
    """The server's close in the same write as its 101: the connection is closed when it opens."""
    def script(conn: socket.socket) -> None:
        protocol = ServerProtocol()
        while not (events := protocol.events_received()):
            protocol.receive_data(conn.recv(65536))
        protocol.send_response(protocol.accept(events[0]))
        conn.sendall(b"".join(protocol.data_to_send()) + _frame(Opcode.CLOSE, Close(4404, "unknown").serialize()))
        _read_frame(conn)

    url, thread = _raw_server(script, handshake=False)
    ws = BlockingWebSocket(url)
    _joined(thread)
    assert ws.closed
    with pytest.raises(ConnectionClosed) as closed:
        ws.send(b"x")
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404
    assert ws.last_message_unread


@pytest.mark.parametrize("reset", [False, True])
def test_an_abrupt_end_has_no_close_frame(reset: bool) -> None:
    def script(conn: socket.socket) -> None:
        _read_frame(conn)  # the request, read: whether it ran is not known to the client
        if reset:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    url, thread = _raw_server(script)
    ws = BlockingWebSocket(url)
    ws.send(b"request")
    with pytest.raises(ConnectionClosedError) as ended:
        ws.recv(5)
    _joined(thread)
    assert ended.value.rcvd is None and ended.value.sent is None
    assert not ws.last_message_unread  # the server read it
    if reset:
        assert isinstance(ended.value.__cause__, ConnectionResetError)


def test_a_message_written_after_the_server_went_is_known_unread() -> None:
    def script(conn: socket.socket) -> None:
        conn.close()  # gone before the request is written

    url, thread = _raw_server(script)
    ws = BlockingWebSocket(url)
    time.sleep(0.1)
    ws.send(b"request")
    with pytest.raises(ConnectionClosedError):
        ws.recv(5)
    assert ws.last_message_unread
    _joined(thread)


@pytest.mark.parametrize(
    ("answer", "match"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", None),  # InvalidStatus
        (b"HTTP/1.0 101 Switching Protocols\r\n\r\n", "valid HTTP response"),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "valid HTTP response"),
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         b"Sec-WebSocket-Accept: wrong\r\n\r\n", "Sec-WebSocket-Accept"),
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n", "Upgrade"),
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", "Connection"),
        (b"HTTP/1.1 101 Switch", "closed before a whole HTTP response"),
    ],
)
def test_an_answer_that_is_not_a_websocket_handshake(answer: bytes, match: str | None) -> None:
    def script(conn: socket.socket) -> None:
        while b"\r\n\r\n" not in conn.recv(65536):
            pass
        conn.sendall(answer)

    url, thread = _raw_server(script, handshake=False)
    with pytest.raises(InvalidHandshake, match=match) as failed:
        BlockingWebSocket(url)
    assert isinstance(failed.value, InvalidStatus) == (match is None)
    _joined(thread)


def test_extensions_and_subprotocols_not_asked_for_are_refused() -> None:
    def script(conn: socket.socket) -> None:
        request = b""
        while b"\r\n\r\n" not in request:
            request += conn.recv(65536)
        key = next(line.split(b":", 1)[1].strip() for line in request.split(b"\r\n")
                   if line.lower().startswith(b"sec-websocket-key:"))
        conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     b"Sec-WebSocket-Accept: " + accept_value(key.decode()).encode() +
                     b"\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n")

    url, thread = _raw_server(script, handshake=False)
    with pytest.raises(InvalidHandshake, match="sec-websocket-extensions"):
        BlockingWebSocket(url)
    _joined(thread)


def test_a_server_that_never_answers_the_handshake_times_out() -> None:
    release = threading.Event()

    def script(conn: socket.socket) -> None:
        release.wait(5)

    url, thread = _raw_server(script, handshake=False)
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        BlockingWebSocket(url, open_timeout=0.3)
    assert time.monotonic() - started < 2
    release.set()
    _joined(thread)


def test_a_stream_whose_handshake_times_out_is_unavailable() -> None:
    release = threading.Event()

    def script(conn: socket.socket) -> None:
        release.wait(5)

    url, thread = _raw_server(script, handshake=False)
    with pytest.raises(errors.PlatformUnavailableError, match="cannot open the stream"):
        SessionStream(url.replace("ws://", "http://").rstrip("/"), "s-1", token=None, open_timeout=0.3)
    release.set()
    _joined(thread)


def test_a_stream_whose_server_is_not_a_websocket_one_is_unavailable() -> None:
    def script(conn: socket.socket) -> None:
        while b"\r\n\r\n" not in conn.recv(65536):
            pass
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")

    url, thread = _raw_server(script, handshake=False)
    with pytest.raises(errors.PlatformError, match="refused with HTTP 200"):
        SessionStream(url.replace("ws://", "http://").rstrip("/"), "s-1", token=None)
    _joined(thread)


# -- the handshake's and the mask's pieces ---------------------------------------------------
def test_the_handshake_request() -> None:
    target = parse_url("ws://example.com:8000/v0/sessions/s-1/stream?token=t")
    assert (target.host, target.port, target.secure, target.resource, target.host_header) == (
        "example.com", 8000, False, "/v0/sessions/s-1/stream?token=t", "example.com:8000")
    assert parse_url("wss://[::1]/").host_header == "[::1]" and parse_url("wss://[::1]/").port == 443
    assert parse_url("ws://h").resource == "/"
    with pytest.raises(ValueError, match="not a WebSocket URL"):
        parse_url("http://h/")
    request = handshake_request(target, "dGhlIHNhbXBsZSBub25jZQ==", {"Authorization": "Bearer x", "user-agent": "me"})
    lines = request.decode().split("\r\n")
    assert lines[0] == "GET /v0/sessions/s-1/stream?token=t HTTP/1.1" and request.endswith(b"\r\n\r\n")
    assert {"Host: example.com:8000", "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Authorization: Bearer x", "user-agent: me"} <= set(lines)
    assert not [line for line in lines if line.startswith("User-Agent")]
    assert accept_value("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="  # RFC 6455's example


@pytest.mark.parametrize("size", [0, 1, 3, 4, 5, 7, 8, 9, 383, 384, 385, 16383, 16384, 16385, 16391, 100_003])
def test_apply_mask_is_websockets_mask(size: int) -> None:
    data, mask = os.urandom(size), os.urandom(4)
    assert bytes(apply_mask(data, mask)) == ws_frames.apply_mask(data, mask)
    unaligned = memoryview(bytearray(b"x" + data))[1:]
    assert bytes(apply_mask(unaligned, mask)) == ws_frames.apply_mask(data, mask)

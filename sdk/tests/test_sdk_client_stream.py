"""`SessionStream` over a real WebSocket server.

The server here is a small in-test stand-in for the gateway's `/v0/sessions/{id}/stream`
(the gateway is another service): a `websockets` asyncio server in a background thread whose
behaviour is picked by the session id in the path.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http import HTTPStatus

import pytest
from platform_contracts.values import array_from_tensor, tensor_from_array
from platform_sdk import errors
from platform_sdk.client.stream import SessionStream
from platform_sdk.client.ws_connection import BlockingWebSocket
from simulusion.env.v1 import environment_pb2 as env_pb
from websockets.asyncio.server import ServerConnection, serve
from websockets.frames import Frame, Opcode, apply_mask
from websockets.http11 import Request, Response
from websockets.server import ServerProtocol

pytestmark = pytest.mark.timeout(60)
_BIG = 8 * 1024 * 1024


@dataclass
class StandIn:
    """The stand-in gateway: its URL and what it saw."""

    url: str
    close_codes: dict[str, int | None] = field(default_factory=dict)
    pongs: dict[str, int] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)


def _answer(request: env_pb.EnvRequest) -> env_pb.EnvResponse:
    response = env_pb.EnvResponse(id=request.id)
    if request.HasField("step"):  # echo the action as the observation
        response.step.observation.CopyFrom(request.step.action)
        response.step.reward = 1.0
    elif request.HasField("render"):
        response.render.frame.data = bytes(range(256)) * (_BIG // 256)
        response.render.frame.width, response.render.frame.height = 1024, _BIG // 1024 // 3
    return response


async def _handler(ws: ServerConnection, standin: StandIn) -> None:
    session = ws.request.path.split("/")[3]
    kind = session.split("-")[0]
    try:
        if kind == "gone":  # refused right after the handshake, as the gateway does for an unknown session
            await ws.close(4404, f"unknown session {session}")
            return
        async for message in ws:
            standin.requests[session] = standin.requests.get(session, 0) + 1
            if kind == "raw":  # any bytes, echoed
                await ws.send(message)
                continue
            request = env_pb.EnvRequest.FromString(message)
            if kind == "close":  # close-<code>
                await ws.close(int(session.split("-")[1]), f"closing {session} with a reason")
                return
            if kind == "crash":  # the answer, then the close, as the gateway does when an instance dies
                error = env_pb.Error(code=env_pb.ERROR_CODE_UNAVAILABLE, message="the instance died")
                await ws.send(env_pb.EnvResponse(id=request.id, error=error).SerializeToString())
                await ws.close(4410, "the instance died")
                return
            if kind == "drop":  # the TCP connection goes away without a close frame
                ws.transport.abort()
                return
            if kind == "silent":
                continue
            if kind == "ping":
                for _ in range(3):
                    waiter = await ws.ping()
                    await asyncio.wait_for(waiter, 5)
                    standin.pongs[session] = standin.pongs.get(session, 0) + 1
            data = _answer(request).SerializeToString()
            if kind == "wrongid":
                data = env_pb.EnvResponse(id=request.id + 7).SerializeToString()
            if kind == "text":
                await ws.send("not protobuf")
            elif kind == "fragments":
                await ws.send([data[i : i + 1000] for i in range(0, len(data), 1000)])
            else:
                await ws.send(data)
    finally:
        standin.close_codes[session] = ws.close_code


def _refuse(ws: ServerConnection, request: Request) -> Response | None:
    if "/denied-" in request.path:
        return ws.respond(HTTPStatus.UNAUTHORIZED, "the API token is not valid\n")
    return None


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, object] = {}

    async def main() -> None:
        state = holder["state"] = StandIn(url="")
        stop = holder["stop"] = asyncio.Event()
        async with serve(
            lambda ws: _handler(ws, state), "127.0.0.1", 0, process_request=_refuse, max_size=None, compression=None
        ) as server:
            port = server.sockets[0].getsockname()[1]
            state.url = f"http://127.0.0.1:{port}"
            ready.set()
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    assert ready.wait(10), "the stand-in server did not start"
    yield holder["state"]  # type: ignore[misc]
    loop.call_soon_threadsafe(holder["stop"].set)  # type: ignore[attr-defined]
    thread.join(10)


def _session(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:8]}"


def _wait_for(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def _step(value: int) -> env_pb.EnvRequest:
    request = env_pb.EnvRequest()
    request.step.action.discrete = value
    return request


def test_round_trip_assigns_ids_in_lockstep(standin: StandIn) -> None:
    session = _session("echo")
    stream = SessionStream(standin.url, session, token=None)
    for value in range(200):
        request = _step(value)
        response = stream.call(request)
        assert request.id == value + 1
        assert response.id == request.id
        assert response.step.observation.discrete == value
    stream.close()
    stream.close()  # idempotent
    _wait_for(lambda: session in standin.close_codes)
    assert standin.close_codes[session] == 1000


def test_large_messages_both_ways(standin: StandIn) -> None:
    stream = SessionStream(standin.url, _session("echo"), token=None)
    payload = bytes(range(256)) * (_BIG // 256)
    request = env_pb.EnvRequest()
    request.step.action.tensor.CopyFrom(tensor_from_array(memoryview(payload).cast("B")))
    observation = stream.call(request).step.observation
    assert array_from_tensor(observation.tensor).tobytes() == payload
    frame = stream.call(env_pb.EnvRequest(render=env_pb.RenderRequest())).render.frame
    assert len(frame.data) == _BIG and frame.data[:256] == bytes(range(256))
    stream.close()


def test_fragmented_messages_are_joined(standin: StandIn) -> None:
    stream = SessionStream(standin.url, _session("fragments"), token=None)
    assert stream.call(_step(3)).step.observation.discrete == 3
    assert len(stream.call(env_pb.EnvRequest(render=env_pb.RenderRequest())).render.frame.data) == _BIG
    stream.close()


def test_pings_from_the_server_are_answered(standin: StandIn) -> None:
    session = _session("ping")
    stream = SessionStream(standin.url, session, token=None)
    for value in range(3):
        assert stream.call(_step(value)).step.observation.discrete == value
    assert standin.pongs[session] == 9
    stream.close()


@pytest.mark.parametrize(
    ("code", "error"),
    [(4404, errors.SessionNotFoundError), (4410, errors.SessionClosedError), (1011, errors.PlatformUnavailableError)],
)
def test_close_codes_map_to_errors(standin: StandIn, code: int, error: type[errors.PlatformError]) -> None:
    session = _session(f"close-{code}")
    stream = SessionStream(standin.url, session, token=None)
    with pytest.raises(error) as caught:
        stream.call(_step(0))
    assert type(caught.value) is error
    assert caught.value.session_id == session
    assert f"closing {session} with a reason" in str(caught.value)
    if code == 1011:
        assert "1011" in str(caught.value)
    with pytest.raises(error):  # the stream stays closed
        stream.call(_step(1))
    stream.close()


@pytest.mark.parametrize("delay", [0.0, 0.3])
def test_closed_before_the_first_call(standin: StandIn, delay: float) -> None:
    session = _session("gone")
    stream = SessionStream(standin.url, session, token=None)
    time.sleep(delay)  # 0.3 s: the server has closed the TCP connection before the request is written
    with pytest.raises(errors.SessionNotFoundError, match=f"unknown session {session}"):
        stream.call(_step(0))
    stream.close()


@pytest.mark.parametrize("size", [0, 1, 2, 3, 125, 126, 127, 65535, 65536, 300_000])
def test_message_sizes_at_frame_length_boundaries(standin: StandIn, size: int) -> None:
    ws = BlockingWebSocket(standin.url.replace("http", "ws") + f"/v0/sessions/{_session('raw')}/stream")
    payload = (bytes(range(256)) * (size // 256 + 1))[:size]
    for timeout in (None, 5.0, None):
        ws.send(payload)
        assert ws.recv(timeout) == payload
    ws.close()
    assert ws.closed


def test_answer_then_close_gives_the_answer_first(standin: StandIn) -> None:
    session = _session("crash")
    stream = SessionStream(standin.url, session, token=None)
    response = stream.call(_step(0))
    assert response.error.code == env_pb.ERROR_CODE_UNAVAILABLE
    with pytest.raises(errors.SessionClosedError, match="the instance died"):
        stream.call(_step(1))
    stream.close()


def test_handshake_refused_with_401(standin: StandIn) -> None:
    session = _session("denied")
    with pytest.raises(errors.PlatformError) as caught:
        SessionStream(standin.url, session, token="wrong")
    assert caught.value.status == 401
    assert session in str(caught.value) and "401" in str(caught.value)


def test_unreachable_port() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(errors.PlatformUnavailableError, match="cannot open the stream"):
        SessionStream(f"http://127.0.0.1:{port}", "s-1", token=None, open_timeout=5)
    assert time.monotonic() - started < 5


def test_server_dropping_mid_call_raises(standin: StandIn) -> None:
    session = _session("drop")
    stream = SessionStream(standin.url, session, token=None, reconnect_timeout=1.0)
    with pytest.raises(errors.OutcomeUnknownError, match=session):  # it read the request, then reset
        stream.call(_step(0))
    started = time.monotonic()
    with pytest.raises(errors.PlatformUnavailableError, match="could not be opened again within 1 s"):
        stream.call(_step(1))  # every new connection is dropped too
    assert time.monotonic() - started < 5
    stream.close()


def test_read_timeout_closes_the_stream(standin: StandIn) -> None:
    session = _session("silent")
    stream = SessionStream(standin.url, session, token=None, read_timeout=0.3, reconnect_timeout=1.0)
    started = time.monotonic()
    with pytest.raises(errors.OutcomeUnknownError, match="no response to request 1 within 0.3 s"):
        stream.call(_step(0))
    assert 0.25 < time.monotonic() - started < 3
    with pytest.raises(errors.PlatformUnavailableError, match="no answer to a spec request"):
        stream.call(_step(1))  # a new connection, silent too
    _wait_for(lambda: session in standin.close_codes)
    assert standin.close_codes[session] == 1000


def test_mismatched_id_and_text_are_errors(standin: StandIn) -> None:
    stream = SessionStream(standin.url, _session("wrongid"), token=None)
    with pytest.raises(errors.PlatformError, match="response id 8 does not match request 1"):
        stream.call(_step(0))
    stream.close()
    stream = SessionStream(standin.url, _session("text"), token=None)
    with pytest.raises(errors.PlatformError, match="unexpected text message 'not protobuf'"):
        stream.call(_step(0))
    stream.close()


def _raw_server(script) -> tuple[str, threading.Thread]:
    """A server that completes the handshake, then writes the bytes `script(conn)` chooses."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)

    def serve_one() -> None:
        with listener, listener.accept()[0] as conn:
            protocol = ServerProtocol()
            while not (events := protocol.events_received()):
                protocol.receive_data(conn.recv(65536))
            protocol.send_response(protocol.accept(events[0]))
            conn.sendall(b"".join(protocol.data_to_send()))
            script(conn)

    thread = threading.Thread(target=serve_one, daemon=True)
    thread.start()
    return f"ws://127.0.0.1:{listener.getsockname()[1]}/", thread


def test_a_frame_split_after_its_header_is_read_whole() -> None:
    # The payload looks like a whole frame of its own: only the parser knows it is not one.
    payload = bytes([0x82, 48]) + bytes(range(48))

    def script(conn: socket.socket) -> None:
        conn.sendall(Frame(Opcode.BINARY, payload).serialize(mask=False)[:2])
        time.sleep(0.2)
        conn.sendall(payload)
        conn.recv(1024)  # the client's close frame

    url, thread = _raw_server(script)
    ws = BlockingWebSocket(url)
    assert ws.recv() == payload
    ws.close()
    thread.join(5)


def test_a_ping_and_a_message_in_one_read() -> None:
    received: list[bytes] = []

    def script(conn: socket.socket) -> None:
        ping = Frame(Opcode.PING, b"are you there").serialize(mask=False)
        conn.sendall(ping + Frame(Opcode.BINARY, b"answer").serialize(mask=False))
        conn.settimeout(5)
        received.append(conn.recv(1024))

    url, thread = _raw_server(script)
    ws = BlockingWebSocket(url)
    assert ws.recv() == b"answer"
    thread.join(5)
    ws.close()
    assert received and received[0][0] == 0x8A  # FIN + PONG
    mask, data = received[0][2:6], received[0][6:]
    assert apply_mask(data, mask) == b"are you there"

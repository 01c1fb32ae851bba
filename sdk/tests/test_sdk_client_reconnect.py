"""`SessionStream` opening a lost connection again, over a real WebSocket server.

The server is an in-test stand-in for the gateway (a `websockets` asyncio server in a
background thread) whose first connection of a session ends the way the session id's kind
says: the TCP connection closed while the client is idle (a killed gateway), after reading a
request without answering it (killed mid-step), with a 1012 close frame (a restart), and so on.
Later connections answer. `tests/test_e2e_gateway_restart.py` does the same with the real
gateway, killed and started again.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http import HTTPStatus

import pytest
from platform_sdk import errors
from platform_sdk.client.stream import SessionStream
from simulusion.env.v1 import environment_pb2 as env_pb
from websockets.asyncio.server import ServerConnection, serve
from websockets.frames import Close, Frame, Opcode
from websockets.http11 import Request, Response

pytestmark = pytest.mark.timeout(60)
_IDLE_S = 0.2  # long enough for the server's FIN to reach the client


@dataclass
class StandIn:
    """The stand-in gateway: its URL and, per session, the commands each connection received."""

    url: str
    seen: dict[str, list[list[str]]] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)


def _answer(request: env_pb.EnvRequest) -> bytes:
    response = env_pb.EnvResponse(id=request.id)
    if request.HasField("step"):
        response.step.observation.CopyFrom(request.step.action)
    elif request.HasField("spec"):
        response.spec.SetInParent()
    return response.SerializeToString()


async def _handler(ws: ServerConnection, standin: StandIn) -> None:
    session = ws.request.path.split("/")[3]
    kind = session.split("-")[0]
    connections = standin.seen.setdefault(session, [])
    first = not connections
    seen: list[str] = []
    connections.append(seen)
    if not first and kind == "ended":  # the session ended while the gateway was away
        await ws.close(4404, f"unknown session {session}")
        return
    async for message in ws:
        request = env_pb.EnvRequest.FromString(message)
        seen.append(request.WhichOneof("command") or "")
        if first and kind == "killed":  # read the request, gone before answering
            ws.transport.close()
            return
        await ws.send(_answer(request))
        if first and kind in ("hangup", "ended", "down", "dead"):  # gone while the client is idle
            ws.transport.close()
            return
        if first and kind == "restart":  # a restart: 1012, and the TCP connection closed at once
            ws.transport.write(Frame(Opcode.CLOSE, Close(1012, "service restart").serialize()).serialize(mask=False))
            ws.transport.close()
            return


def _refuse(standin: StandIn, ws: ServerConnection, request: Request) -> Response | None:
    """While "down", a proxy in front of the gateway answers 503 (three times; "dead": always)."""
    session = request.path.split("/")[3]
    kind = session.split("-")[0]
    if kind in ("down", "dead") and standin.seen.get(session):
        if kind == "dead" or standin.refused.get(session, 0) < 3:
            standin.refused[session] = standin.refused.get(session, 0) + 1
            return ws.respond(HTTPStatus.SERVICE_UNAVAILABLE, "no upstream\n")
    return None


@pytest.fixture(scope="module")
def standin() -> Iterator[StandIn]:
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, object] = {}

    async def main() -> None:
        state = holder["state"] = StandIn(url="")
        stop = holder["stop"] = asyncio.Event()
        async with serve(lambda ws: _handler(ws, state), "127.0.0.1", 0, compression=None,
                         process_request=lambda ws, request: _refuse(state, ws, request)) as server:
            state.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
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


def _step(value: int) -> env_pb.EnvRequest:
    request = env_pb.EnvRequest()
    request.step.action.discrete = value
    return request


@pytest.mark.parametrize("kind", ["hangup", "restart"])
def test_a_request_written_after_the_server_went_is_sent_again(standin: StandIn, kind: str) -> None:
    session = _session(kind)
    stream = SessionStream(standin.url, session, token=None)
    assert stream.call(_step(1)).step.observation.discrete == 1
    time.sleep(_IDLE_S)  # the server goes while the client thinks
    assert stream.call(_step(2)).step.observation.discrete == 2
    assert stream.call(_step(3)).step.observation.discrete == 3
    # The second step went out on the dead connection, was refused there, and ran once: on the
    # new connection, after the spec request that checked it.
    assert standin.seen[session] == [["step"], ["spec", "step", "step"]]
    stream.close()


def test_a_request_the_server_may_have_read_raises_outcome_unknown(standin: StandIn) -> None:
    session = _session("killed")
    stream = SessionStream(standin.url, session, token=None)
    with pytest.raises(errors.OutcomeUnknownError, match=f"session {session}: .*whether it ran is unknown"):
        stream.call(_step(1))
    assert stream.call(_step(2)).step.observation.discrete == 2  # the next call reconnects
    assert standin.seen[session] == [["step"], ["spec", "step"]]  # step 1 was not sent again
    stream.close()


def test_an_idempotent_request_is_sent_again_even_when_it_may_have_run(standin: StandIn) -> None:
    session = _session("killed")
    stream = SessionStream(standin.url, session, token=None)
    assert stream.call(_step(7), idempotent=True).step.observation.discrete == 7
    assert standin.seen[session] == [["step"], ["spec", "step"]]
    stream.close()


def test_reconnecting_waits_out_a_gateway_that_is_not_back_yet(standin: StandIn) -> None:
    session = _session("down")
    stream = SessionStream(standin.url, session, token=None)
    stream.call(_step(1))
    time.sleep(_IDLE_S)
    started = time.monotonic()
    assert stream.call(_step(2)).step.observation.discrete == 2
    assert standin.refused[session] == 3  # three refused handshakes, with back-off between them
    assert 0.3 < time.monotonic() - started < 5
    stream.close()


def test_reconnecting_gives_up_at_its_deadline(standin: StandIn) -> None:
    session = _session("dead")
    stream = SessionStream(standin.url, session, token=None, reconnect_timeout=0.5)
    stream.call(_step(1))
    time.sleep(_IDLE_S)
    started = time.monotonic()
    with pytest.raises(errors.PlatformUnavailableError, match=r"could not be opened again within 0.5 s: HTTP 503"):
        stream.call(_step(2))
    assert time.monotonic() - started < 3
    stream.close()


def test_a_session_that_ended_meanwhile_is_not_retried(standin: StandIn) -> None:
    session = _session("ended")
    stream = SessionStream(standin.url, session, token=None)
    stream.call(_step(1))
    time.sleep(_IDLE_S)
    with pytest.raises(errors.SessionNotFoundError, match=f"unknown session {session}"):
        stream.call(_step(2))
    stream.close()


def test_reconnect_timeout_zero_never_reconnects(standin: StandIn) -> None:
    session = _session("hangup")
    stream = SessionStream(standin.url, session, token=None, reconnect_timeout=0)
    stream.call(_step(1))
    time.sleep(_IDLE_S)
    with pytest.raises(errors.PlatformUnavailableError, match="no close frame"):
        stream.call(_step(2))
    assert len(standin.seen[session]) == 1
    stream.close()


def test_a_closed_stream_is_not_reopened(standin: StandIn) -> None:
    session = _session("hangup")
    stream = SessionStream(standin.url, session, token=None)
    stream.call(_step(1))
    stream.close()
    with pytest.raises(errors.SessionClosedError, match="closed by the client"):
        stream.call(_step(2))
    assert len(standin.seen[session]) == 1

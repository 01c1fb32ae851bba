"""The step link (framed EnvRequest/EnvResponse over TCP) from the gateway to an env host.

The env host side is a small in-test stand-in for the env host's step link server (another
service): an asyncio frame server that, depending on its behaviour, forwards each request to a
real environment server over gRPC (as the env host forwards to an instance), refuses the
session, answers as for a dead instance, never answers, or hangs up. The real env host is
tested with its own step link in services/envhost and, with every service, in tests/.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import grpc.aio
import pytest
from google.protobuf.message import DecodeError
from platform_contracts.framing import encode_frame, read_frame
from platform_gateway.errors import SessionGoneError
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.host.v1 import step_link_pb2 as link_pb
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"
BEHAVIOURS = ("proxy", "refuse", "dead", "silent", "hangup")


@dataclass
class StandInStepHost:
    behaviour: str
    env_address: str = ""  # the environment server "proxy" forwards to
    address: str = ""
    opens: list[link_pb.StepLinkOpen] = field(default_factory=list)
    requests: list[env_pb.EnvRequest | None] = field(default_factory=list)
    _server: asyncio.Server | None = None
    _writers: list[asyncio.StreamWriter] = field(default_factory=list)

    async def start(self) -> StandInStepHost:
        assert self.behaviour in BEHAVIOURS
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.address = f"127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def stop(self) -> None:
        """Stop listening and close every link (as an env host that goes away)."""
        if self._server is not None:
            self._server.close()
        for writer in self._writers:
            writer.close()
        await asyncio.sleep(0.05)  # let the gateway's side see the EOF

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        channel = grpc.aio.insecure_channel(self.env_address) if self.behaviour == "proxy" else None
        try:
            opening = link_pb.StepLinkOpen.FromString(await read_frame(reader))
            self.opens.append(opening)
            if self.behaviour == "refuse":
                error = env_pb.Error(code=env_pb.ERROR_CODE_NOT_FOUND,
                                     message=f"session {opening.session_id} is not running on env host h1")
                writer.write(encode_frame(link_pb.StepLinkOpened(error=error).SerializeToString()))
                return
            writer.write(encode_frame(link_pb.StepLinkOpened().SerializeToString()))
            call = None
            if channel is not None:
                call = channel.stream_stream("/simulusion.env.v1.Environment/Connect",
                                             request_serializer=None, response_deserializer=None)()
            while True:
                raw = await read_frame(reader)
                try:
                    request: env_pb.EnvRequest | None = env_pb.EnvRequest.FromString(raw)
                except DecodeError:
                    request = None
                self.requests.append(request)
                if self.behaviour == "hangup":
                    return
                if self.behaviour == "dead":
                    error = env_pb.Error(code=env_pb.ERROR_CODE_UNAVAILABLE,
                                         message="the instance died (exit code -9)", log_tail="Killed\n")
                    writer.write(encode_frame(env_pb.EnvResponse(id=request.id if request else 0,
                                                                 error=error).SerializeToString()))
                elif call is not None:
                    await call.write(raw)
                    writer.write(encode_frame(await call.read()))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            if channel is not None:
                await channel.close(grace=None)


@pytest.fixture
async def step_host(env_server):
    """Start stand-in step link hosts: `await step_host(behaviour)`; stopped after the test."""
    hosts: list[StandInStepHost] = []

    async def start(behaviour: str = "proxy") -> StandInStepHost:
        hosts.append(await StandInStepHost(behaviour, env_server.address).start())
        return hosts[-1]

    yield start
    for host in hosts:
        await host.stop()


async def _ws_call(ws, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
    await ws.send(request.SerializeToString())
    try:
        data = await asyncio.wait_for(ws.recv(), 10)
    except ConnectionClosed as exc:
        pytest.fail(f"the stream closed instead of answering: {exc.rcvd}")
    response = env_pb.EnvResponse.FromString(data)
    assert response.id == request.id
    return response


async def test_binary_steps_go_over_one_link(gateway, broker, step_host) -> None:
    host = await step_host("proxy")
    broker.step_address = host.address  # sessions created from now on have a step link
    created = await gateway.http.post("/v0/sessions", json={"env_id": "cartpole"})
    sid = created.json()["id"]
    async with connect(f"{gateway.ws_url}/v0/sessions/{sid}/stream", compression=None) as ws:
        spec = (await _ws_call(ws, env_pb.EnvRequest(id=1, spec=env_pb.SpecRequest()))).spec
        assert spec.action_space.discrete.n == 2
        reset = await _ws_call(ws, env_pb.EnvRequest(id=2, reset=env_pb.ResetRequest(seed=5)))
        assert list(reset.reset.observation.tensor.shape) == [4]
        for i in range(20):
            request = env_pb.EnvRequest(id=3 + i, step=env_pb.StepRequest(action={"discrete": i % 2}))
            step = await _ws_call(ws, request)
            assert step.HasField("step"), step
        bad = await _ws_call(ws, env_pb.EnvRequest(id=99, step=env_pb.StepRequest(action={"discrete": 9})))
        assert bad.error.code == env_pb.ERROR_CODE_INVALID_ACTION  # the link stays up
    # REST commands of the same session use the same link.
    assert (await gateway.http.post(f"/v0/sessions/{sid}/step", json={"action": 1})).status_code == 200
    assert [o.session_id for o in host.opens] == [sid]
    assert [r.id for r in host.requests[:3]] == [1, 2, 3] and len(host.requests) == 24

    # A session without a step address still goes over the gRPC stream.
    info = broker.add(step_address="")
    assert (await gateway.http.post(f"/v0/sessions/{info.id}/reset", json={})).status_code == 200
    assert len(host.opens) == 1


async def test_the_link_carries_the_trace_context(gateway, broker, step_host) -> None:
    host = await step_host("proxy")
    info = broker.add(step_address=host.address)
    response = await gateway.http.post(f"/v0/sessions/{info.id}/reset", json={},
                                       headers={"traceparent": TRACEPARENT})
    assert response.status_code == 200, response.text
    assert TRACE_ID in host.opens[0].trace_context["traceparent"]
    assert TRACE_ID in host.requests[0].trace_context["traceparent"]


async def test_dead_instance_over_the_link(gateway, broker, step_host) -> None:
    host = await step_host("dead")
    info = broker.add(step_address=host.address)
    response = await gateway.http.post(f"/v0/sessions/{info.id}/step", json={"action": 0})
    assert response.status_code == 410
    assert response.json() == {"detail": "the instance died (exit code -9)", "code": "gone",
                               "log_tail": "Killed\n"}

    other = broker.add(step_address=host.address)
    async with connect(f"{gateway.ws_url}/v0/sessions/{other.id}/stream") as ws:
        answer = await _ws_call(ws, env_pb.EnvRequest(id=7, reset=env_pb.ResetRequest()))
        assert answer.error.code == env_pb.ERROR_CODE_UNAVAILABLE and answer.error.log_tail == "Killed\n"
        with pytest.raises(ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 10)
    assert closed.value.rcvd.code == 4410 and "instance died" in closed.value.rcvd.reason


async def test_a_refused_link_answers_not_found(gateway, broker, step_host) -> None:
    host = await step_host("refuse")
    info = broker.add(step_address=host.address)
    response = await gateway.http.post(f"/v0/sessions/{info.id}/reset", json={})
    assert response.status_code == 404
    assert f"session {info.id} is not running on env host h1" in response.json()["detail"]
    async with connect(f"{gateway.ws_url}/v0/sessions/{info.id}/stream", compression=None) as ws:
        answer = await _ws_call(ws, env_pb.EnvRequest(id=5, reset=env_pb.ResetRequest()))
        assert answer.error.code == env_pb.ERROR_CODE_NOT_FOUND
    assert len(host.opens) == 2  # a refused link is not kept: each request asks again
    # Once the broker says the session ended, the answer is its end.
    info.state, info.reason = ctl.SESSION_STATE_CLOSED, "idle for 1800 s"
    response = await gateway.http.post(f"/v0/sessions/{info.id}/reset", json={})
    assert response.status_code == 410 and "idle for 1800 s" in response.json()["detail"]


async def test_env_host_gone_is_503_naming_the_link_then_410(gateway, broker, step_host) -> None:
    host = await step_host("proxy")
    info = broker.add(step_address=host.address)
    assert (await gateway.http.post(f"/v0/sessions/{info.id}/reset", json={})).status_code == 200
    await host.stop()
    response = await gateway.http.post(f"/v0/sessions/{info.id}/step", json={"action": 0})
    assert response.status_code == 503
    detail = response.json()["detail"]
    assert info.id in detail and host.address in detail and "step link" in detail
    info.state, info.reason, info.log_tail = ctl.SESSION_STATE_CRASHED, "env host gone", "killed\n"
    response = await gateway.http.post(f"/v0/sessions/{info.id}/step", json={"action": 0})
    assert response.status_code == 410 and response.json()["log_tail"] == "killed\n"


async def test_a_link_that_breaks_mid_request_asks_the_broker(gateway, broker, step_host) -> None:
    host = await step_host("hangup")
    info = broker.add(step_address=host.address)
    response = await gateway.http.post(f"/v0/sessions/{info.id}/reset", json={})
    assert response.status_code == 503
    assert "closed the step link" in response.json()["detail"] and host.address in response.json()["detail"]
    assert (await gateway.http.post(f"/v0/sessions/{info.id}/reset", json={})).status_code == 503
    assert len(host.opens) == 2  # the broken link was replaced by a new one
    # The session ends while the gateway still holds it as running; then its link breaks: 410.
    streams = gateway.app.state.gateway.streams
    await streams.directory.running(info.id)
    info.state, info.reason = ctl.SESSION_STATE_CLOSED, "closed by the user"
    with pytest.raises(SessionGoneError, match="closed by the user"):
        request = env_pb.EnvRequest(id=9, reset=env_pb.ResetRequest())
        await streams.exchange(info.id, request.SerializeToString())
    assert len(host.opens) == 3


async def test_a_hung_link_times_out_504_and_is_replaced(start_gateway, broker, step_host) -> None:
    gateway = await start_gateway(env_timeout=0.5)
    host = await step_host("silent")
    info = broker.add(step_address=host.address)
    response = await gateway.http.post(f"/v0/sessions/{info.id}/step", json={"action": 0})
    assert response.status_code == 504
    assert info.id in response.json()["detail"] and host.address in response.json()["detail"]
    await gateway.http.post(f"/v0/sessions/{info.id}/reset", json={})
    assert len(host.opens) == 2

    # A link closed by the gateway while a request waits: the request says the session closed.
    streams = gateway.app.state.gateway.streams
    pending = asyncio.create_task(streams.exchange(info.id, env_pb.EnvRequest(id=1).SerializeToString()))
    while len(host.requests) < 3:
        await asyncio.sleep(0.01)
    streams.drop(info.id)
    with pytest.raises(SessionGoneError, match="closed while a request was in flight"):
        await asyncio.wait_for(pending, 5)


async def test_swept_links_are_reopened(gateway, broker, step_host) -> None:
    host = await step_host("proxy")
    info = broker.add(step_address=host.address)
    assert (await gateway.http.post(f"/v0/sessions/{info.id}/reset", json={"seed": 1})).status_code == 200
    assert gateway.app.state.gateway.streams.sweep(idle=0) == [info.id]
    assert (await gateway.http.post(f"/v0/sessions/{info.id}/step", json={"action": 0})).status_code == 200
    assert len(host.opens) == 2


async def test_an_unreachable_link_address_is_503(gateway, broker) -> None:
    info = broker.add(step_address="127.0.0.1:1")  # nothing listens on port 1
    response = await gateway.http.post(f"/v0/sessions/{info.id}/reset", json={})
    assert response.status_code == 503
    detail = response.json()["detail"]
    assert "127.0.0.1:1" in detail and "cannot open the step link" in detail

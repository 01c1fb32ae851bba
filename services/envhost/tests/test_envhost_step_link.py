"""The step link (framed EnvRequest/EnvResponse over TCP) served by a real env host process."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

from envhost_testkit import (
    EnvHostProcess,
    lifecycle_events,
    next_heartbeat,
    new_session_id,
    recorded_events,
    start_session,
    stop_session,
)
from platform_contracts.framing import encode_frame, read_frame
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2
from simulusion.host.v1 import step_link_pb2 as link_pb

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


async def test_steps_over_the_link(envhost: EnvHostProcess, nats_client: Any, open_link: Any) -> None:
    session_id = new_session_id()
    assert not (await start_session(nats_client, envhost.host_id, session_id)).HasField("error")
    link = await open_link(envhost.step_address, session_id, trace_context={"traceparent": TRACEPARENT})
    assert not link.opened.HasField("error"), link.opened

    reset = await link.reset(seed=3)
    assert reset.id == 1 and list(reset.reset.observation.tensor.shape) == [4]
    steps = 0
    while True:
        response = await link.step(steps % 2)
        assert response.WhichOneof("result") == "step", response
        steps += 1
        if response.step.terminated or response.step.truncated:
            break
    assert steps > 5 and response.id == steps + 1
    # A bad action answers an error and the link stays up.
    bad = await link.request(env_pb.EnvRequest(step=env_pb.StepRequest(action=values_pb2.Value(discrete=9))))
    assert bad.error.code == env_pb.ERROR_CODE_INVALID_ACTION
    assert (await link.reset(seed=3)).reset.observation == reset.reset.observation

    # Several requests written at once are answered in order.
    actions = [values_pb2.Value(discrete=i % 2) for i in range(5)]
    requests = [env_pb.EnvRequest(id=100 + i, step=env_pb.StepRequest(action=action))
                for i, action in enumerate(actions)]
    link.writer.write(b"".join(encode_frame(r.SerializeToString()) for r in requests))
    ids = [env_pb.EnvResponse.FromString(await asyncio.wait_for(read_frame(link.reader), 10)).id
           for _ in requests]
    assert ids == [100, 101, 102, 103, 104]
    assert (await stop_session(nats_client, envhost.host_id, session_id)).stopped


async def test_a_dropped_link_leaves_the_session_usable(envhost: EnvHostProcess, nats_client: Any,
                                                        open_link: Any, open_stream: Any) -> None:
    session_id = new_session_id()
    await start_session(nats_client, envhost.host_id, session_id)
    first = await open_link(envhost.step_address, session_id)
    await first.reset(seed=1)
    await first.close()
    second = await open_link(envhost.step_address, session_id)
    assert (await second.step(0)).WhichOneof("result") == "step"
    # The gRPC Environment service still serves the same session.
    assert (await open_stream(envhost.address, session_id).step(1)).WhichOneof("result") == "step"
    assert (await stop_session(nats_client, envhost.host_id, session_id)).stopped


async def test_unknown_session_is_refused_not_found(envhost: EnvHostProcess, open_link: Any) -> None:
    link = await open_link(envhost.step_address, "nope")
    assert link.opened.error.code == env_pb.ERROR_CODE_NOT_FOUND
    assert link.opened.error.message == f"session nope is not running on env host {envhost.host_id}"
    assert await link.closed_by_peer()


async def test_a_first_frame_that_is_not_an_open_is_refused(envhost: EnvHostProcess) -> None:
    host, _, port = envhost.step_address.rpartition(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(encode_frame(b"\xff\xff\xff"))
        opened = link_pb.StepLinkOpened.FromString(await asyncio.wait_for(read_frame(reader), 10))
        assert opened.error.code == env_pb.ERROR_CODE_INVALID_ARGUMENT
        assert "StepLinkOpen" in opened.error.message
        assert await asyncio.wait_for(reader.read(1), 10) == b""
    finally:
        writer.close()


async def test_crashed_instance_answers_unavailable_over_the_link(envhost: EnvHostProcess, nats_client: Any,
                                                                  js: Any, open_link: Any) -> None:
    session_id = new_session_id()
    await start_session(nats_client, envhost.host_id, session_id, record=True)
    link = await open_link(envhost.step_address, session_id)
    await link.reset(seed=1)
    os.kill(envhost.instance_pid(session_id), signal.SIGKILL)
    _, crashed = await lifecycle_events(js, session_id, 2)

    response = await link.step(1)
    assert response.id == 2 and response.error.code == env_pb.ERROR_CODE_UNAVAILABLE
    assert response.error.message == (f"environment instance of session {session_id} (cartpole) "
                                      "died with exit code -9")
    assert response.error.log_tail == crashed.log_tail
    # A link opened after the crash is accepted and answers the same (the gateway then says 410).
    late = await open_link(envhost.step_address, session_id)
    assert not late.opened.HasField("error")
    assert (await late.reset()).error.code == env_pb.ERROR_CODE_UNAVAILABLE
    assert (await stop_session(nats_client, envhost.host_id, session_id)).stopped


async def test_recorded_steps_over_the_link_are_published(envhost: EnvHostProcess, nats_client: Any, js: Any,
                                                          open_link: Any) -> None:
    session_id = new_session_id()
    await start_session(nats_client, envhost.host_id, session_id, record=True)
    link = await open_link(envhost.step_address, session_id)
    await link.reset(seed=2)
    for action in (0, 1, 0):
        await link.step(action)
    events = await recorded_events(js, session_id, 4)
    assert [(e.session_id, e.seq) for e in events] == [(session_id, seq) for seq in range(1, 5)]
    assert (await stop_session(nats_client, envhost.host_id, session_id)).stopped


async def test_default_step_listen_is_advertised_in_heartbeats(envhost_factory: Any, nats_client: Any,
                                                               open_link: Any) -> None:
    # No PLATFORM_ENVHOST_STEP_LISTEN: the gRPC listen host with a free port.
    host = envhost_factory(PLATFORM_ENVHOST_STEP_LISTEN="", PLATFORM_ENVHOST_HEARTBEAT_INTERVAL="0.2")
    beat = await next_heartbeat(nats_client, host.host_id)
    assert beat.address == host.address
    step_host, _, step_port = beat.step_address.rpartition(":")
    assert step_host == "127.0.0.1" and int(step_port) > 0 and beat.step_address != host.address
    session_id = new_session_id()
    await start_session(nats_client, host.host_id, session_id)
    link = await open_link(beat.step_address, session_id)
    assert (await link.reset(seed=0)).WhichOneof("result") == "reset"

    assert await asyncio.to_thread(host.stop) == 0  # SIGTERM closes the links
    assert await link.closed_by_peer()
    assert "Traceback" not in host.log()


async def test_advertised_step_address_is_the_setting(envhost_factory: Any, nats_client: Any) -> None:
    host = envhost_factory(PLATFORM_ENVHOST_STEP_ADVERTISE="steps.example:7777",
                           PLATFORM_ENVHOST_HEARTBEAT_INTERVAL="0.2")
    assert (await next_heartbeat(nats_client, host.host_id)).step_address == "steps.example:7777"

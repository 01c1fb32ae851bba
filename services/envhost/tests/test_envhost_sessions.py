"""Starting, stepping and stopping sessions through a real env host process and real instances."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

from envhost_testkit import (
    CARTPOLE,
    EnvHostProcess,
    lifecycle_events,
    next_heartbeat,
    new_session_id,
    start_session,
    stop_session,
)
from platform_contracts import subjects
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.control.v1 import control_pb2 as control_pb
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.session.v1.options_pb2 import SessionOptions


async def test_start_replies_with_the_spec_and_publishes_started(envhost: EnvHostProcess, nats_client: Any,
                                                                 js: Any) -> None:
    session_id = new_session_id()
    reply = await start_session(nats_client, envhost.host_id, session_id, kwargs_json='{"max_episode_steps": 7}',
                                record=True)
    assert not reply.HasField("error"), reply.error
    assert reply.spec.env_id == "CartPole-v1"
    assert list(reply.spec.observation_space.box.low.shape) == [4]
    assert reply.spec.action_space.discrete.n == 2

    [started] = await lifecycle_events(js, session_id, 1)
    assert started.kind == bus_pb.SESSION_EVENT_KIND_STARTED
    assert (started.session_id, started.options.env_id, started.host_id, started.options.record) == (
        session_id, "cartpole", envhost.host_id, True)
    assert json.loads(started.options.kwargs_json) == {"max_episode_steps": 7}  # the session's own
    assert json.loads(started.env_kwargs_json) == {"max_episode_steps": 7}  # over the entry's (none)
    assert started.spec == reply.spec

    again = await start_session(nats_client, envhost.host_id, session_id, record=True)  # a retried start
    assert again.spec == reply.spec
    assert (await stop_session(nats_client, envhost.host_id, session_id)).stopped


async def test_steps_go_through_the_env_host(envhost: EnvHostProcess, nats_client: Any, open_stream: Any) -> None:
    session_id = new_session_id()
    assert not (await start_session(nats_client, envhost.host_id, session_id)).HasField("error")
    stream = open_stream(envhost.address, session_id)

    reset = await stream.reset(seed=3)
    assert reset.WhichOneof("result") == "reset" and reset.id == 1
    assert list(reset.reset.observation.tensor.shape) == [4]
    steps = 0
    while True:
        response = await stream.step(steps % 2)
        assert response.WhichOneof("result") == "step", response
        steps += 1
        if response.step.terminated or response.step.truncated:
            break
    assert steps > 5
    assert response.id == steps + 1

    bad = await stream.request(env_pb.EnvRequest(step=env_pb.StepRequest()))  # no action: the stream stays up
    assert bad.HasField("error") and bad.error.code != env_pb.ERROR_CODE_UNAVAILABLE
    assert (await stream.reset()).WhichOneof("result") == "reset"
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_unknown_session_answers_not_found_and_keeps_the_stream(envhost: EnvHostProcess,
                                                                      open_stream: Any) -> None:
    stream = open_stream(envhost.address, "no-such-session")
    for _ in range(2):
        response = await stream.reset()
        assert response.error.code == env_pb.ERROR_CODE_NOT_FOUND
        assert "no-such-session" in response.error.message
    assert response.id == 2


async def test_stop_publishes_closed_and_is_idempotent(envhost: EnvHostProcess, nats_client: Any, js: Any,
                                                       open_stream: Any) -> None:
    session_id = new_session_id()
    await start_session(nats_client, envhost.host_id, session_id, record=True)
    stream = open_stream(envhost.address, session_id)
    await stream.reset(seed=1)
    for _ in range(3):
        await stream.step(0)

    reply = await stop_session(nats_client, envhost.host_id, session_id, reason="closed by the user")
    assert reply.stopped and not reply.HasField("error")
    _, closed = await lifecycle_events(js, session_id, 2)
    assert closed.kind == bus_pb.SESSION_EVENT_KIND_CLOSED
    assert closed.reason == "closed by the user"
    assert closed.last_seq == 4  # a reset and three steps

    again = await stop_session(nats_client, envhost.host_id, session_id)
    assert not again.stopped and again.error.code == "not_found"
    after = await stream.step(0)
    assert after.error.code == env_pb.ERROR_CODE_NOT_FOUND


async def test_a_failing_factory_is_invalid_argument_with_its_log(envhost: EnvHostProcess, nats_client: Any,
                                                                   tmp_path: Any) -> None:
    (tmp_path / "broken_env.py").write_text("def make(**kwargs):\n    raise RuntimeError('no such level: 9')\n")
    entry = control_pb.CatalogEntry(id="broken", factory="broken_env:make", path=str(tmp_path))
    reply = await start_session(nats_client, envhost.host_id, new_session_id(), entry=entry)
    assert reply.error.code == "invalid_argument"
    assert "no such level: 9" in reply.error.message

    bad_kwargs = await start_session(nats_client, envhost.host_id, new_session_id(), kwargs_json="[1]")
    assert bad_kwargs.error.code == "invalid_argument" and "JSON object" in bad_kwargs.error.message


async def test_capacity_is_refused_as_unavailable(envhost_factory: Any, nats_client: Any) -> None:
    host = envhost_factory(capacity=1)
    first = new_session_id()
    assert not (await start_session(nats_client, host.host_id, first)).HasField("error")
    refused = await start_session(nats_client, host.host_id, new_session_id())
    assert refused.error.code == "unavailable" and "capacity" in refused.error.message
    await stop_session(nats_client, host.host_id, first)
    assert not (await start_session(nats_client, host.host_id, new_session_id())).HasField("error")


async def test_list_names_the_instances(envhost: EnvHostProcess, nats_client: Any) -> None:
    session_id = new_session_id()
    await start_session(nats_client, envhost.host_id, session_id, entry=CARTPOLE)
    msg = await nats_client.request(subjects.envhost_list(envhost.host_id),
                                    control_pb.ListInstancesRequest().SerializeToString(), timeout=10)
    listed = {i.session_id: i for i in control_pb.ListInstancesReply.FromString(msg.data).instances}
    assert listed[session_id].alive and listed[session_id].last_active_at > 0
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_a_vector_start_hosts_num_envs_environments(envhost_factory: Any, nats_client: Any) -> None:
    host = envhost_factory(capacity=1)
    session_id = new_session_id()
    request = control_pb.StartInstanceRequest(session_id=session_id, entry=CARTPOLE,
                                              options=SessionOptions(env_id="cartpole", num_envs=3))
    msg = await nats_client.request(subjects.envhost_start(host.host_id), request.SerializeToString(), timeout=60)
    reply = control_pb.StartInstanceReply.FromString(msg.data)
    assert not reply.HasField("error"), reply.error
    assert reply.spec.num_envs == 3 and reply.spec.action_space.discrete.n == 2
    command = Path(f"/proc/{host.instance_pid(session_id)}/cmdline").read_bytes().split(b"\0")
    assert command[command.index(b"--num-envs") + 1] == b"3"
    refused = await start_session(nats_client, host.host_id, new_session_id())  # one instance of capacity
    assert refused.error.code == "unavailable"
    await stop_session(nats_client, host.host_id, session_id)


async def start_with_options(nc: Any, host_id: str, session_id: str,
                             options: SessionOptions) -> control_pb.StartInstanceReply:
    request = control_pb.StartInstanceRequest(session_id=session_id, entry=CARTPOLE, options=options)
    msg = await nc.request(subjects.envhost_start(host_id), request.SerializeToString(), timeout=60)
    return control_pb.StartInstanceReply.FromString(msg.data)


async def test_lifecycle_events_carry_the_sessions_options_whole(envhost: EnvHostProcess, nats_client: Any,
                                                                 js: Any) -> None:
    options = SessionOptions(env_id="cartpole", kwargs_json="{}", record=True, record_frames=True, jpeg_quality=60,
                             num_envs=1, life="robot-1", frame_every=4, max_frames=20_000, auto_reset=True)
    closing, crashing = new_session_id(), new_session_id()
    assert not (await start_with_options(nats_client, envhost.host_id, closing, options)).HasField("error")
    [started] = await lifecycle_events(js, closing, 1)
    assert started.kind == bus_pb.SESSION_EVENT_KIND_STARTED and started.options == options
    await stop_session(nats_client, envhost.host_id, closing, reason="closed by the user")
    _, closed = await lifecycle_events(js, closing, 2)
    assert closed.kind == bus_pb.SESSION_EVENT_KIND_CLOSED and closed.options == options

    unframed = SessionOptions(env_id="cartpole", record=True, life="robot-1")
    assert not (await start_with_options(nats_client, envhost.host_id, crashing, unframed)).HasField("error")
    os.kill(envhost.instance_pid(crashing), signal.SIGKILL)
    started, crashed = await lifecycle_events(js, crashing, 2)
    assert started.options == unframed
    assert crashed.kind == bus_pb.SESSION_EVENT_KIND_CRASHED and crashed.options == unframed


async def test_a_stopped_session_is_named_in_the_next_heartbeats_ended_list(envhost_factory: Any,
                                                                           nats_client: Any) -> None:
    # A session started and stopped between two beats is in no beat's instances: the broker,
    # which counts a placement until a beat lists it, hears of its end here instead.
    host = envhost_factory(PLATFORM_ENVHOST_HEARTBEAT_INTERVAL="0.2")
    session_id = new_session_id()
    assert not (await start_session(nats_client, host.host_id, session_id)).HasField("error")
    assert (await stop_session(nats_client, host.host_id, session_id)).stopped
    beat = await next_heartbeat(nats_client, host.host_id)
    assert list(beat.ended_session_ids) == [session_id]
    assert not beat.instances and beat.running == 0

"""Warm pool instances on a real env host: a pooled start is no session until a claim makes it one."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import uuid
from pathlib import Path
from typing import Any

from envhost_testkit import (
    CARTPOLE,
    EnvHostProcess,
    lifecycle_events,
    new_session_id,
    recorded_events,
    start_session,
    stop_session,
    stored_count,
)
from platform_contracts import subjects
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.control.v1 import control_pb2 as control_pb
from simulusion.session.v1.options_pb2 import SessionOptions


def new_slot_id() -> str:
    return f"pool-cartpole-{uuid.uuid4().hex[:8]}"


async def start_pooled(nc: Any, host_id: str, slot_id: str,
                       entry: control_pb.CatalogEntry = CARTPOLE) -> control_pb.StartInstanceReply:
    request = control_pb.StartInstanceRequest(session_id=slot_id, entry=entry, pooled=True,
                                              options=SessionOptions(env_id=entry.id, kwargs_json="{}", num_envs=1))
    msg = await nc.request(subjects.envhost_start(host_id), request.SerializeToString(), timeout=60)
    return control_pb.StartInstanceReply.FromString(msg.data)


async def claim(nc: Any, host_id: str, slot_id: str, session_id: str, **options: Any) -> control_pb.ClaimInstanceReply:
    request = control_pb.ClaimInstanceRequest(pool_slot=slot_id, session_id=session_id, options=SessionOptions(
        env_id="cartpole", kwargs_json="{}", num_envs=1, **options))
    msg = await nc.request(subjects.envhost_claim(host_id), request.SerializeToString(), timeout=30)
    return control_pb.ClaimInstanceReply.FromString(msg.data)


async def listed(nc: Any, host_id: str) -> dict[str, control_pb.InstanceInfo]:
    msg = await nc.request(subjects.envhost_list(host_id), control_pb.ListInstancesRequest().SerializeToString(),
                           timeout=10)
    return {info.session_id: info for info in control_pb.ListInstancesReply.FromString(msg.data).instances}


async def test_a_claimed_pool_instance_becomes_the_session(envhost: EnvHostProcess, nats_client: Any, js: Any,
                                                           open_stream: Any) -> None:
    slot_id, session_id = new_slot_id(), new_session_id()
    pooled = await start_pooled(nats_client, envhost.host_id, slot_id)
    assert not pooled.HasField("error"), pooled.error
    assert pooled.spec.env_id == "CartPole-v1"
    pid = envhost.instance_pid(slot_id)
    assert (await listed(nats_client, envhost.host_id))[slot_id].alive
    assert await stored_count(js, subjects.session_lifecycle(slot_id)) == 0  # no session, no STARTED

    claimed = await claim(nats_client, envhost.host_id, slot_id, session_id, record=True, auto_reset=True)
    assert not claimed.HasField("error"), claimed.error
    assert claimed.spec == pooled.spec
    [started] = await lifecycle_events(js, session_id, 1)
    assert started.kind == bus_pb.SESSION_EVENT_KIND_STARTED
    assert (started.session_id, started.host_id) == (session_id, envhost.host_id)
    assert started.options == SessionOptions(env_id="cartpole", kwargs_json="{}", num_envs=1, record=True,
                                             auto_reset=True)  # the claim's, whole
    assert json.loads(started.env_kwargs_json) == {} and started.spec == pooled.spec
    assert envhost.instance_pid(slot_id) == pid  # the same process, now the session's
    instances = await listed(nats_client, envhost.host_id)
    assert session_id in instances and slot_id not in instances
    assert (envhost.run_dir / envhost.host_id / f"{session_id}.log").is_file()
    assert not (envhost.run_dir / envhost.host_id / f"{slot_id}.log").exists()

    stream = open_stream(envhost.address, session_id)
    assert (await stream.reset(seed=4)).WhichOneof("result") == "reset"
    assert (await stream.step(1)).WhichOneof("result") == "step"
    assert [e.seq for e in await recorded_events(js, session_id, 2)] == [1, 2]

    again = await claim(nats_client, envhost.host_id, slot_id, new_session_id())
    assert again.error.code == "not_found" and slot_id in again.error.message
    assert (await stop_session(nats_client, envhost.host_id, session_id)).stopped
    [_, closed] = await lifecycle_events(js, session_id, 2)
    assert closed.kind == bus_pb.SESSION_EVENT_KIND_CLOSED and closed.last_seq == 2


async def test_claims_of_unknown_sessions_and_bad_requests_fail(envhost: EnvHostProcess, nats_client: Any) -> None:
    missing = await claim(nats_client, envhost.host_id, "pool-cartpole-00000000", new_session_id())
    assert missing.error.code == "not_found" and "pool-cartpole-00000000" in missing.error.message

    session_id = new_session_id()  # a session is no pool instance
    assert not (await start_session(nats_client, envhost.host_id, session_id)).HasField("error")
    not_pooled = await claim(nats_client, envhost.host_id, session_id, new_session_id())
    assert not_pooled.error.code == "not_found"

    slot_id = new_slot_id()
    assert not (await start_pooled(nats_client, envhost.host_id, slot_id)).HasField("error")
    taken = await claim(nats_client, envhost.host_id, slot_id, session_id)  # that id is running already
    assert taken.error.code == "failed_precondition" and session_id in taken.error.message
    empty = await claim(nats_client, envhost.host_id, slot_id, "")
    assert empty.error.code == "invalid_argument"
    assert (await listed(nats_client, envhost.host_id))[slot_id].alive  # still warm
    await stop_session(nats_client, envhost.host_id, slot_id)
    await stop_session(nats_client, envhost.host_id, session_id)


async def test_a_dead_or_stopped_pool_instance_is_silent(envhost: EnvHostProcess, nats_client: Any, js: Any) -> None:
    dying, stopped = new_slot_id(), new_slot_id()
    for slot_id in (dying, stopped):
        assert not (await start_pooled(nats_client, envhost.host_id, slot_id)).HasField("error")

    os.kill(envhost.instance_pid(dying), signal.SIGKILL)
    deadline = time.monotonic() + 15
    while dying in await listed(nats_client, envhost.host_id):
        assert time.monotonic() < deadline, "the dead pool instance is still listed"
        await asyncio.sleep(0.1)
    late = await claim(nats_client, envhost.host_id, dying, new_session_id())
    assert late.error.code == "not_found"

    reply = await stop_session(nats_client, envhost.host_id, stopped, reason="pool shrinks")
    assert reply.stopped and not reply.HasField("error")
    assert stopped not in await listed(nats_client, envhost.host_id)
    await asyncio.sleep(0.5)  # nothing is on its way either
    for slot_id in (dying, stopped):
        assert await stored_count(js, subjects.session_lifecycle(slot_id)) == 0


async def test_pool_instances_hold_capacity(envhost_factory: Any, nats_client: Any) -> None:
    host = envhost_factory(capacity=1)
    slot_id = new_slot_id()
    assert not (await start_pooled(nats_client, host.host_id, slot_id)).HasField("error")
    refused = await start_session(nats_client, host.host_id, new_session_id())
    assert refused.error.code == "unavailable" and "capacity" in refused.error.message
    session_id = new_session_id()
    assert not (await claim(nats_client, host.host_id, slot_id, session_id)).HasField("error")
    assert (await start_pooled(nats_client, host.host_id, new_slot_id())).error.code == "unavailable"
    await stop_session(nats_client, host.host_id, session_id)


async def test_env_host_shutdown_publishes_no_event_for_pool_instances(envhost_factory: Any, nats_client: Any,
                                                                       js: Any) -> None:
    host = envhost_factory()
    slot_id, session_id = new_slot_id(), new_session_id()
    assert not (await start_pooled(nats_client, host.host_id, slot_id)).HasField("error")
    assert not (await start_session(nats_client, host.host_id, session_id)).HasField("error")
    pid = host.instance_pid(slot_id)
    assert host.stop() == 0
    [_, closed] = await lifecycle_events(js, session_id, 2)
    assert closed.kind == bus_pb.SESSION_EVENT_KIND_CLOSED
    assert await stored_count(js, subjects.session_lifecycle(slot_id)) == 0
    assert not Path(f"/proc/{pid}").exists()

"""The step-event publisher survives a NATS outage: steps go on, nothing is lost or doubled, single
events and StepEventBatch messages alike."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

import nats
from envhost_testkit import (
    events_until_closed,
    new_session_id,
    recorded_events,
    start_session,
    stop_session,
    stored_count,
)
from platform_contracts import subjects
from platform_contracts.step_batches import parse_batch
from platform_contracts.streams import ensure_sessions_stream
from platform_envhost.event_batches import BatchCounter, batch_messages
from platform_envhost.publisher import EventPublisher, Outgoing
from platform_envhost.step_events import StepEventBuilder
from platform_testing.nats_server import NatsServer
from simulusion.bus.v1 import events_pb2 as bus_pb
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.env.v1 import values_pb2 as values_pb


async def _connect(server: NatsServer) -> Any:
    async def quiet(exc: Exception) -> None:  # the outage is the point of these tests
        pass

    return await nats.connect(server.url, max_reconnect_attempts=-1, reconnect_time_wait=0.2, error_cb=quiet)


async def test_env_host_publishes_every_event_across_a_nats_restart(tmp_path: Path, envhost_factory: Any,
                                                                     open_stream: Any) -> None:
    server = NatsServer(store_dir=tmp_path / "nats").start()
    try:
        host = envhost_factory(nats_url=server.url)
        nc = await _connect(server)
        session_id = new_session_id()
        await start_session(nc, host.host_id, session_id, record=True)
        stream = open_stream(host.address, session_id)
        await stream.reset(seed=0)
        for i in range(20):
            await stream.step(i % 2)

        server.stop()
        started = time.monotonic()
        for i in range(30):  # NATS is away: steps go on, events wait in the backlog
            response = await stream.step(i % 2, timeout=5)
            if response.step.terminated or response.step.truncated:
                await stream.reset()
        assert time.monotonic() - started < 5
        await asyncio.sleep(1.0)  # some publishes time out and are retried
        server.start()

        js = nc.jetstream()
        assert len(await recorded_events(js, session_id, 51, timeout=30)) >= 51  # 1 reset + 50 steps (+ resets)
        assert (await stop_session(nc, host.host_id, session_id)).stopped
        events = await events_until_closed(js, session_id)
        assert [e.seq for e in events] == list(range(1, len(events) + 1))  # none lost, none stored twice
        assert sum(e.WhichOneof("kind") == "step" for e in events) == 50
        await nc.close()
    finally:
        server.stop()


async def test_publisher_applies_back_pressure_only_when_its_backlog_is_full(tmp_path: Path) -> None:
    server = NatsServer(store_dir=tmp_path / "nats").start()
    nc = await _connect(server)
    try:
        js = nc.jetstream()
        await ensure_sessions_stream(js)
        publisher = EventPublisher(nc, backlog=4, batch_size=2, ack_timeout=0.5, linger=0)
        await publisher.start()
        session_id = new_session_id()

        def event(seq: int) -> Outgoing:
            payload = bus_pb.StepEvent(session_id=session_id, seq=seq).SerializeToString()
            return Outgoing(subjects.session_steps(session_id), payload,
                            {"Nats-Msg-Id": subjects.step_msg_id(session_id, seq)})

        assert publisher.submit_nowait(event(1))
        assert await publisher.flush(5)
        server.stop()
        await asyncio.sleep(0.2)
        seq = 2
        while publisher.submit_nowait(event(seq)):  # NATS is away: the backlog fills up
            seq += 1
            await asyncio.sleep(0.01)
            assert seq < 100
        accepted = seq  # the first seq refused
        assert accepted > 4
        blocked = asyncio.create_task(publisher.submit(event(accepted)))
        await asyncio.sleep(1.0)
        assert not blocked.done()  # waits while NATS is away and the backlog is full
        server.start()
        await asyncio.wait_for(blocked, 30)
        for seq in range(accepted + 1, 12):
            await publisher.submit(event(seq))
        assert await publisher.flush(30)
        assert await publisher.close() == 0

        sub = await js.subscribe(subjects.session_steps(session_id), ordered_consumer=True)
        seqs = [bus_pb.StepEvent.FromString((await sub.next_msg(timeout=5)).data).seq for _ in range(11)]
        assert sorted(seqs) == list(range(1, 12))
        assert await stored_count(js, subjects.session_steps(session_id)) == 11
    finally:
        server.stop()
        with contextlib.suppress(Exception):
            await nc.close()


async def test_step_event_batches_are_published_once_each_across_an_outage(tmp_path: Path) -> None:
    server = NatsServer(store_dir=tmp_path / "nats").start()
    nc = await _connect(server)
    try:
        js = nc.jetstream()
        await ensure_sessions_stream(js)
        publisher = EventPublisher(nc, batch_size=4, ack_timeout=0.5, linger=0)
        await publisher.start()
        session_id = new_session_id()
        counter = BatchCounter(session_id)
        builders = [StepEventBuilder(subjects.sub_session_id(session_id, i), session_id) for i in range(8)]

        def vector_step() -> list[Outgoing]:
            batch = bus_pb.StepEventBatch()
            for builder in builders:
                builder.add_step(batch.events, values_pb.Value(discrete=1), env_pb.StepResponse(reward=1.0), 1.0)
            return batch_messages(batch, counter, {}, nc.max_payload)

        for _ in range(5):
            for message in vector_step():
                assert publisher.submit_nowait(message)
        assert await publisher.flush(10)
        server.stop()
        await asyncio.sleep(0.2)
        for _ in range(10):  # NATS is away: the batches wait, and are retried with their ids
            for message in vector_step():
                await publisher.submit(message)
        await asyncio.sleep(1.0)
        server.start()
        assert await publisher.flush(30)
        assert await publisher.close() == 0

        subject = subjects.session_step_batches(session_id)
        assert await stored_count(js, subject) == 15
        sub = await js.subscribe(subject, ordered_consumer=True)
        msgs = [await sub.next_msg(timeout=5) for _ in range(15)]
        assert [m.headers["Nats-Msg-Id"] for m in msgs] == [f"{session_id}:batch:{n}" for n in range(1, 16)]
        for n, msg in enumerate(msgs, start=1):
            events = parse_batch(msg.data)
            assert [(e.session_id, e.seq) for e in events] == [(f"{session_id}-{i}", n) for i in range(8)]
        again = await js.publish(subject, msgs[3].data, headers={"Nats-Msg-Id": msgs[3].headers["Nats-Msg-Id"]})
        assert again.duplicate
    finally:
        server.stop()
        with contextlib.suppress(Exception):
            await nc.close()


async def test_a_message_over_the_max_payload_is_refused_and_the_rest_go_on(tmp_path: Path) -> None:
    server = NatsServer(store_dir=tmp_path / "nats").start()
    nc = await _connect(server)
    try:
        js = nc.jetstream()
        await ensure_sessions_stream(js)
        publisher = EventPublisher(nc, linger=0)
        await publisher.start()
        session_id = new_session_id()
        subject = subjects.session_steps(session_id)
        done = asyncio.get_running_loop().create_future()
        huge = Outgoing(subject, b"x" * nc.max_payload, {"Nats-Msg-Id": f"{session_id}:1"}, done)
        assert publisher.submit_nowait(huge)  # taken, and dropped: it could never be published
        assert publisher.too_large == 1 and isinstance(done.exception(), ValueError)
        await publisher.submit(Outgoing(subject, b"small", {"Nats-Msg-Id": f"{session_id}:2"}))
        assert await publisher.flush(10)
        assert await stored_count(js, subject) == 1
        assert await publisher.close() == 0
    finally:
        server.stop()
        with contextlib.suppress(Exception):
            await nc.close()

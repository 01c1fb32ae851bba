"""A session the broker closes (DELETE, idle timeout) whose env host cannot publish its CLOSED
event (gone: the stop gets no answer; restarted: it has no such instance) gets it from the broker,
in JetStream, so its recording is finished; one its env host stopped gets none from the broker."""

from __future__ import annotations

from pathlib import Path

import nats
from nats.js.errors import NotFoundError
from platform_broker.envhosts import EnvHostClient
from platform_broker.hosts import HostRegistry
from platform_broker.idle import IdleMonitor
from platform_broker.session_endings import MSG_ID_HEADER, SessionEndings
from platform_broker.store import CLOSED, RUNNING, SessionStore
from platform_bus import flush_queued
from platform_contracts import streams, subjects
from simulusion.bus.v1 import events_pb2
from simulusion.control.v1 import control_pb2
from simulusion.session.v1.options_pb2 import SessionOptions


async def stored_lifecycle_event(js, session_id: str) -> tuple[events_pb2.SessionEvent, dict[str, str]] | None:
    """The last lifecycle event JetStream holds for the session, with its headers; None if none."""
    try:
        msg = await js.get_last_msg(subjects.SESSIONS_STREAM, subjects.session_lifecycle(session_id))
    except NotFoundError:
        return None
    return events_pb2.SessionEvent.FromString(msg.data), dict(msg.headers or {})


async def create_recorded(ask) -> control_pb2.SessionInfo:
    request = control_pb2.CreateSessionRequest(options=SessionOptions(env_id="cartpole", record=True))
    reply = await ask(subjects.BROKER_CREATE_SESSION, request, control_pb2.SessionReply)
    assert not reply.error.code, reply.error
    return reply.session


async def close(ask, session_id: str, reason: str) -> control_pb2.SessionInfo:
    request = control_pb2.CloseSessionRequest(session_id=session_id, reason=reason)
    reply = await ask(subjects.BROKER_CLOSE_SESSION, request, control_pb2.SessionReply)
    assert not reply.error.code, reply.error
    return reply.session


async def test_closing_a_session_whose_env_host_is_gone_publishes_its_closed(broker, envhost, ask, nc) -> None:
    host = await envhost("gone")
    await broker()
    session = await create_recorded(ask)
    await host.stop()  # gone, though still within its live window: nothing answers the stop

    closed = await close(ask, session.id, "done with it")
    assert (closed.state, closed.reason) == (CLOSED, "done with it")
    stored = await stored_lifecycle_event(nc.jetstream(), session.id)
    assert stored is not None, "the broker published the CLOSED no env host can"
    event, headers = stored
    assert event.kind == events_pb2.SESSION_EVENT_KIND_CLOSED
    assert (event.session_id, event.host_id, event.reason) == (session.id, host.host_id, "done with it")
    assert event.last_seq == 0 and event.options.record, "last_seq unknown; the recorder knows what it records"
    assert headers[MSG_ID_HEADER] == f"{session.id}:closed"  # the env host's id for its own CLOSED


async def test_closing_a_session_its_env_host_stops_publishes_nothing_from_the_broker(
        broker, envhost, ask, nc) -> None:
    host = await envhost("answers")
    await broker()
    session = await create_recorded(ask)

    closed = await close(ask, session.id, "done with it")
    assert closed.state == CLOSED
    assert [stop.session_id for stop in host.stops] == [session.id]
    assert await stored_lifecycle_event(nc.jetstream(), session.id) is None, \
        "the env host that stopped it publishes its CLOSED (with its last_seq), not the broker"


async def test_an_idle_session_on_a_restarted_env_host_gets_its_closed_from_the_broker(
        tmp_path: Path, broker_nats, unique_prefix: str) -> None:
    host_id = f"{unique_prefix}-restarted"
    session_id = f"s-{unique_prefix}"
    store = SessionStore.from_url(f"sqlite:///{tmp_path}/platform.db")
    await store.create_tables()
    nc = await nats.connect(broker_nats.url)
    js = nc.jetstream()
    await streams.ensure_sessions_stream(js)

    async def answer_as_restarted(msg) -> None:  # as the real env host answers for a session it does not run
        request = control_pb2.StopInstanceRequest.FromString(msg.data)
        await msg.respond(control_pb2.StopInstanceReply(stopped=False, error=control_pb2.ControlError(
            code="not_found", message=f"session {request.session_id} is not running on env host {host_id}")
        ).SerializeToString())

    await nc.subscribe(subjects.envhost_stop(host_id), cb=answer_as_restarted)
    await flush_queued(nc)
    try:
        await store.insert(control_pb2.SessionInfo(id=session_id, host_id=host_id, host_address="127.0.0.1:1",
                                                   state=RUNNING, created_at=1.0, last_active_at=1.0,
                                                   options=SessionOptions(env_id="cartpole", record=True)))
        idle = IdleMonitor(store, HostRegistry(), EnvHostClient(nc, start_timeout=5.0), SessionEndings(js),
                           idle_timeout=60.0, clock=lambda: 100.0)
        assert await idle.check_once() == [session_id]
        closed = await store.get(session_id)
        assert closed is not None and (closed.state, closed.reason) == (CLOSED, "idle for 99 s")
        stored = await stored_lifecycle_event(js, session_id)
        assert stored is not None, "the restarted env host will not publish it: the broker did"
        assert (stored[0].kind, stored[0].reason) == (events_pb2.SESSION_EVENT_KIND_CLOSED, "idle for 99 s")
    finally:
        await nc.close()
        await store.close()

"""Reconcile at start: ghost sessions are closed (their CLOSED events published), orphan
instances stopped (stand-in env host)."""

from __future__ import annotations

import time

from nats.js.errors import NotFoundError
from platform_broker.reconcile import GHOST_REASON
from platform_broker.session_endings import MSG_ID_HEADER
from platform_broker.store import CLOSED, RUNNING, STARTING, SessionStore
from platform_contracts import subjects
from simulusion.bus.v1 import events_pb2
from simulusion.control.v1 import control_pb2
from simulusion.session.v1.options_pb2 import SessionOptions


def session(session_id: str, host_id: str, state: int) -> control_pb2.SessionInfo:
    now = time.time()
    return control_pb2.SessionInfo(id=session_id, options=SessionOptions(env_id="cartpole", kwargs_json="{}"),
                                   host_id=host_id, host_address="127.0.0.1:7001", state=state, created_at=now,
                                   last_active_at=now)


async def has_lifecycle_event(js, session_id: str) -> bool:
    try:
        await js.get_last_msg(subjects.SESSIONS_STREAM, subjects.session_lifecycle(session_id))
    except NotFoundError:
        return False
    return True


async def test_reconcile_closes_ghosts_and_stops_orphans(broker, envhost, db_url, unique_prefix, nc):
    host = await envhost()
    gone = f"{unique_prefix}-gone"  # a host that sends no heartbeats
    ids = {name: f"s-{name}-{unique_prefix}" for name in ("healthy", "ghost", "deadhost", "starting", "notalive",
                                                          "closed", "orphan")}
    table = {
        ids["healthy"]: session(ids["healthy"], host.host_id, RUNNING),
        ids["ghost"]: session(ids["ghost"], host.host_id, RUNNING),         # no instance on its host
        ids["deadhost"]: session(ids["deadhost"], gone, RUNNING),           # its host is not live
        ids["starting"]: session(ids["starting"], host.host_id, STARTING),  # start never finished
        ids["notalive"]: session(ids["notalive"], host.host_id, RUNNING),   # instance listed, not alive
        ids["closed"]: session(ids["closed"], host.host_id, CLOSED),        # closed, instance still up
    }
    store = SessionStore.from_url(db_url)
    await store.create_tables()
    for info in table.values():
        await store.insert(info)
    await store.close()
    host.add_instance(ids["healthy"])
    host.add_instance(ids["starting"])
    host.add_instance(ids["notalive"], alive=False)
    host.add_instance(ids["closed"])
    host.add_instance(ids["orphan"])  # not in the table at all

    service = await broker()

    report = service.reconcile_report
    assert report is not None and report.hosts == [host.host_id]
    assert sorted(report.closed) == sorted(ids[name] for name in ("deadhost", "ghost", "notalive", "starting"))
    assert sorted(report.stopped) == sorted(ids[name] for name in ("closed", "orphan", "starting"))
    assert sorted(stop.session_id for stop in host.stops) == sorted(report.stopped)
    for session_id in report.closed:
        info = await service.store.get(session_id)
        assert info.state == CLOSED and info.reason == GHOST_REASON, session_id
    assert (await service.store.get(ids["healthy"])).state == RUNNING
    assert ids["healthy"] in host.instances

    # No env host publishes the ghosts' ends: the broker does, so their recordings get finished.
    js = nc.jetstream()
    for session_id in report.closed:
        msg = await js.get_last_msg(subjects.SESSIONS_STREAM, subjects.session_lifecycle(session_id))
        event = events_pb2.SessionEvent.FromString(msg.data)
        assert event.kind == events_pb2.SESSION_EVENT_KIND_CLOSED, session_id
        assert (event.session_id, event.reason, event.last_seq) == (session_id, GHOST_REASON, 0)
        assert event.host_id == table[session_id].host_id and event.options.env_id == "cartpole"
        assert msg.headers[MSG_ID_HEADER] == f"{session_id}:closed"
    for kept in (ids["healthy"], ids["closed"]):
        assert not await has_lifecycle_event(js, kept), f"{kept} was not ended by the reconcile"
    assert service.endings.pending == []
    # ... and its own lifecycle consumer, getting them, leaves the sessions as they are.
    assert await service.lifecycle.apply(event) is False
    assert (await service.store.get(event.session_id)).reason == GHOST_REASON

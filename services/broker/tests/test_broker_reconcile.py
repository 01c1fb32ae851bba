"""Reconcile at start: ghost sessions are closed, orphan instances stopped (stand-in env host)."""

from __future__ import annotations

import time

from platform_broker.reconcile import GHOST_REASON
from platform_broker.store import CLOSED, RUNNING, STARTING, SessionStore
from simulusion.control.v1 import control_pb2
from simulusion.session.v1.options_pb2 import SessionOptions


def session(session_id: str, host_id: str, state: int) -> control_pb2.SessionInfo:
    now = time.time()
    return control_pb2.SessionInfo(id=session_id, options=SessionOptions(env_id="cartpole", kwargs_json="{}"),
                                   host_id=host_id, host_address="127.0.0.1:7001", state=state, created_at=now,
                                   last_active_at=now)


async def test_reconcile_closes_ghosts_and_stops_orphans(broker, envhost, db_url, unique_prefix):
    host = await envhost()
    gone = f"{unique_prefix}-gone"  # a host that sends no heartbeats
    table = {
        "s-healthy00000": session("s-healthy00000", host.host_id, RUNNING),
        "s-ghost000000": session("s-ghost000000", host.host_id, RUNNING),        # no instance on its host
        "s-deadhost0000": session("s-deadhost0000", gone, RUNNING),               # its host is not live
        "s-starting0000": session("s-starting0000", host.host_id, STARTING),      # start never finished
        "s-notalive0000": session("s-notalive0000", host.host_id, RUNNING),      # instance listed, not alive
        "s-closed000000": session("s-closed000000", host.host_id, CLOSED),        # closed, instance still up
    }
    store = SessionStore.from_url(db_url)
    await store.create_tables()
    for info in table.values():
        await store.insert(info)
    await store.close()
    host.add_instance("s-healthy00000")
    host.add_instance("s-starting0000")
    host.add_instance("s-notalive0000", alive=False)
    host.add_instance("s-closed000000")
    host.add_instance("s-orphan000000")  # not in the table at all

    service = await broker()

    report = service.reconcile_report
    assert report is not None and report.hosts == [host.host_id]
    assert sorted(report.closed) == ["s-deadhost0000", "s-ghost000000", "s-notalive0000", "s-starting0000"]
    assert sorted(report.stopped) == ["s-closed000000", "s-orphan000000", "s-starting0000"]
    assert sorted(stop.session_id for stop in host.stops) == sorted(report.stopped)
    for session_id in report.closed:
        info = await service.store.get(session_id)
        assert info.state == CLOSED and info.reason == GHOST_REASON, session_id
    assert (await service.store.get("s-healthy00000")).state == RUNNING
    assert "s-healthy00000" in host.instances

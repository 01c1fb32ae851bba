"""Usage (instance-hours per UTC day, team and env id) from the session table: split at UTC
midnights, times the sub-environments, served on platform.broker.usage; every way a session ends
sets its `ended_at`; a broker restart and a killed instance lose nothing and count nothing twice."""

from __future__ import annotations

import datetime as dt
import time

import nats
import pytest
from platform_broker.hosts import HostRegistry
from platform_broker.lost_hosts import LostHostSweeper
from platform_broker.reconcile import GHOST_REASON
from platform_broker.session_endings import SessionEndings
from platform_broker.store import CLOSED, CRASHED, RUNNING, SessionSpan, SessionStore, sessions
from platform_broker.usage import day_start, instance_hours, month_start, parse_day, usage_rows
from platform_broker.errors import InvalidArgumentError
from platform_contracts import streams, subjects
from simulusion.bus.v1 import events_pb2
from simulusion.control.v1 import control_pb2
from simulusion.session.v1.options_pb2 import SessionOptions

H = 3600.0


def at(text: str) -> float:
    """Unix seconds of a UTC time 'YYYY-MM-DD HH:MM'."""
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc).timestamp()


def span(session_id: str, start: float, end: float | None, team: str = "acme", env_id: str = "cartpole",
         num_envs: int = 1, state: int = CLOSED, last_active_at: float | None = None) -> SessionSpan:
    return SessionSpan(session_id, team, env_id, num_envs, state, start,
                       start if last_active_at is None else last_active_at, end)


def as_tuples(rows) -> list[tuple[str, str, str, float, int]]:
    return [(r.day, r.team, r.env_id, round(r.instance_hours, 6), r.sessions) for r in rows]


def test_a_session_is_split_at_utc_midnights_times_its_sub_environments() -> None:
    spans = [
        span("s-vector", at("2024-03-01 22:00"), at("2024-03-03 02:30"), num_envs=2),
        span("s-short", at("2024-03-02 10:00"), at("2024-03-02 10:15")),
        span("s-blue", at("2024-03-02 23:00"), None, team="blue", env_id="pong", state=RUNNING),  # open: until now
        span("s-instant", at("2024-03-03 05:00"), at("2024-03-03 05:00")),  # ran no time: still ran that day
        span("s-old", at("2024-03-01 08:00"), None, last_active_at=at("2024-03-01 09:00")),  # ended before ended_at
    ]
    now = at("2024-03-03 01:00")
    rows = usage_rows(spans, 0.0, day_start(dt.date(2024, 3, 4)), now)
    assert as_tuples(rows) == [
        ("2024-03-01", "acme", "cartpole", 4.0 + 1.0, 2),   # 2 h x 2 sub-environments, and s-old's hour
        ("2024-03-02", "acme", "cartpole", 48.0 + 0.25, 2),
        ("2024-03-02", "blue", "pong", 1.0, 1),
        ("2024-03-03", "acme", "cartpole", 5.0, 2),         # 2.5 h x 2, and s-instant's none
        ("2024-03-03", "blue", "pong", 1.0, 1),
    ]
    # Clipped to the days asked for; the instance-hours of a month the same way.
    clipped = usage_rows(spans, day_start(dt.date(2024, 3, 2)), day_start(dt.date(2024, 3, 3)), now)
    assert [r.day for r in clipped] == ["2024-03-02", "2024-03-02"]
    assert instance_hours(spans[:1], at("2024-03-02 00:00"), at("2024-03-02 12:00"), now) == pytest.approx(24.0)
    assert month_start(at("2024-03-17 13:45")) == at("2024-03-01 00:00")


def test_days_are_yyyy_mm_dd() -> None:
    assert parse_day("2024-02-29", "since_day") == dt.date(2024, 2, 29)
    for bad in ("2024-02-30", "2024-2-1", "20240201", "2024-W05-1", "yesterday"):
        with pytest.raises(InvalidArgumentError, match=r"since_day must be a date YYYY-MM-DD \(UTC\)"):
            parse_day(bad, "since_day")


async def usage(ask, **request: str) -> control_pb2.UsageReply:
    reply: control_pb2.UsageReply = await ask(subjects.BROKER_USAGE, control_pb2.UsageRequest(**request),
                                              control_pb2.UsageReply)
    return reply


async def write(store: SessionStore, session_id: str, team: str, env_id: str, start: float, end: float | None,
                num_envs: int = 1) -> None:
    """A session's row as the broker leaves it, at made-up times."""
    state = RUNNING if end is None else CLOSED
    await store.insert(control_pb2.SessionInfo(
        id=session_id, state=state, created_at=start, last_active_at=start, host_id="h-gone",
        options=SessionOptions(env_id=env_id, team=team, num_envs=num_envs)))
    if end is not None:
        async with store.engine.begin() as conn:
            await conn.execute(sessions.update().where(sessions.c.id == session_id).values(ended_at=end))


async def test_the_usage_request_from_rows_of_made_up_times(broker, ask) -> None:
    service = await broker()
    store = service.store
    await write(store, "s-1", "acme", "pong", at("2024-05-01 23:30"), at("2024-05-02 00:30"), num_envs=4)
    await write(store, "s-2", "", "cartpole", at("2024-05-02 12:00"), at("2024-05-02 13:00"))
    await write(store, "s-3", "acme", "cartpole", at("2024-05-02 06:00"), at("2024-05-02 06:06"))
    await write(store, "s-4", "blue", "cartpole", at("2024-05-03 00:00"), at("2024-05-03 03:00"))

    everything = await usage(ask)
    assert not everything.error.code
    assert as_tuples(everything.rows) == [
        ("2024-05-01", "acme", "pong", 2.0, 1),
        ("2024-05-02", "acme", "cartpole", 0.1, 1),
        ("2024-05-02", "acme", "pong", 2.0, 1),
        ("2024-05-02", "default", "cartpole", 1.0, 1),
        ("2024-05-03", "blue", "cartpole", 3.0, 1),
    ]
    acme = await usage(ask, team="acme", since_day="2024-05-02", until_day="2024-05-02")
    assert as_tuples(acme.rows) == [("2024-05-02", "acme", "cartpole", 0.1, 1), ("2024-05-02", "acme", "pong", 2.0, 1)]
    assert [r.team for r in (await usage(ask, team="default")).rows] == ["default"]
    assert (await usage(ask, until_day="2024-05-01")).rows[0].day == "2024-05-01"
    assert len((await usage(ask, until_day="2024-05-01")).rows) == 1

    bad = await usage(ask, since_day="05/02/2024")
    assert (bad.error.code, bad.error.field) == ("invalid_argument", "since_day")
    assert bad.error.message == "since_day must be a date YYYY-MM-DD (UTC), not '05/02/2024'"
    backwards = await usage(ask, since_day="2024-05-03", until_day="2024-05-02")
    assert backwards.error.code == "invalid_argument" and "before since_day" in backwards.error.message


async def create(ask, team: str = "acme", num_envs: int = 1) -> control_pb2.SessionInfo:
    request = control_pb2.CreateSessionRequest(options=SessionOptions(env_id="cartpole", team=team, num_envs=num_envs))
    reply = await ask(subjects.BROKER_CREATE_SESSION, request, control_pb2.SessionReply)
    assert not reply.error.code, reply.error
    return reply.session


async def ended_at(store: SessionStore, session_id: str) -> float | None:
    found = await store.span(session_id)
    assert found is not None
    return found.ended_at


async def test_every_ending_through_the_broker_sets_ended_at(broker, envhost, ask, nc, eventually) -> None:
    host = await envhost(capacity=16)
    service = await broker(idle_timeout=1.5)
    store = service.store
    closed, crashed, idle = await create(ask), await create(ask), await create(ask)
    host.active.update({closed.id, crashed.id})

    before = time.time()
    await ask(subjects.BROKER_CLOSE_SESSION, control_pb2.CloseSessionRequest(session_id=closed.id),
              control_pb2.SessionReply)
    assert before <= (await ended_at(store, closed.id) or 0) <= time.time()

    event = events_pb2.SessionEvent(session_id=crashed.id, kind=events_pb2.SESSION_EVENT_KIND_CRASHED,
                                    options=crashed.options, reason="instance exited with code -9")
    await nc.jetstream().publish(subjects.session_lifecycle(crashed.id), event.SerializeToString())

    async def ended(session_id: str, state: int) -> bool:
        info = await store.get(session_id)
        return info is not None and info.state == state

    await eventually(lambda: ended(crashed.id, CRASHED), what="the crash to be applied")
    assert before <= (await ended_at(store, crashed.id) or 0) <= time.time()
    await eventually(lambda: ended(idle.id, CLOSED), what="the idle session to be stopped")
    idle_end = await ended_at(store, idle.id)
    assert idle_end is not None and idle_end >= idle.created_at + 1.5

    host.start_error = control_pb2.ControlError(code="internal", message="no such ROM")
    failed = await ask(subjects.BROKER_CREATE_SESSION,
                       control_pb2.CreateSessionRequest(options=SessionOptions(env_id="cartpole", team="acme")),
                       control_pb2.SessionReply)
    assert failed.error.code == "internal" and failed.session.state == CLOSED
    assert await ended_at(store, failed.session.id) is not None


async def test_a_lost_env_hosts_sessions_end_when_they_are_marked_crashed(tmp_path, broker_nats) -> None:
    clock = [1_000.0]
    hosts = HostRegistry(live_window=10.0, clock=lambda: clock[0])
    store = SessionStore.from_url(f"sqlite:///{tmp_path}/platform.db", clock=lambda: 5_000.0)
    await store.create_tables()
    client = await nats.connect(broker_nats.url)
    try:
        await streams.ensure_sessions_stream(client.jetstream())
        hosts.on_heartbeat(control_pb2.HostHeartbeat(host_id="lost-host", capacity=4))
        await write(store, "s-lost", "acme", "cartpole", 4_000.0, None)
        async with store.engine.begin() as conn:
            await conn.execute(sessions.update().where(sessions.c.id == "s-lost").values(host_id="lost-host"))
        sweeper = LostHostSweeper(client, store, hosts, SessionEndings(client.jetstream()), clock=lambda: clock[0])
        clock[0] += 11
        assert await sweeper.sweep_once() == ["s-lost"]
        assert await ended_at(store, "s-lost") == 5_000.0
        [row] = usage_rows(await store.spans(0.0, 1e10), 0.0, 1e10, now=9_999.0)
        assert (row.team, row.instance_hours) == ("acme", pytest.approx(1000 / H))  # until the crash, not now
    finally:
        await client.close()
        await store.close()


async def test_usage_across_a_broker_restart_and_a_killed_instance(broker, envhost, ask, nc, eventually) -> None:
    host = await envhost(capacity=16)
    first = await broker()
    store = first.store
    kept = await create(ask, num_envs=2)  # runs through the restart
    killed = await create(ask)            # its instance is killed: a CRASHED event
    ghost = await create(ask)             # its instance dies while the broker is down
    other = await create(ask, team="blue")
    host.active.update({kept.id, killed.id, ghost.id, other.id})

    host.instances.pop(killed.id)
    crash = events_pb2.SessionEvent(session_id=killed.id, kind=events_pb2.SESSION_EVENT_KIND_CRASHED,
                                    options=killed.options, reason="instance exited with code -9 (SIGKILL)")
    await nc.jetstream().publish(subjects.session_lifecycle(killed.id), crash.SerializeToString())

    async def crashed() -> bool:
        info = await store.get(killed.id)
        return info is not None and info.state == CRASHED

    await eventually(crashed, what="the killed instance's crash to be applied")
    killed_end = await ended_at(store, killed.id)
    await first.stop()
    host.instances.pop(ghost.id)
    down_until = time.time()
    second = await broker()  # the same database
    assert second.reconcile_report is not None and second.reconcile_report.closed == [ghost.id]
    ghost_info = await second.store.get(ghost.id)
    assert ghost_info is not None and ghost_info.reason == GHOST_REASON
    assert (await ended_at(second.store, ghost.id) or 0) >= down_until
    assert await ended_at(second.store, killed.id) == killed_end  # ended once, never moved
    assert await ended_at(second.store, kept.id) is None
    assert (await second.store.get(kept.id)).state == RUNNING  # type: ignore[union-attr]

    before = time.time()
    reply = await usage(ask)
    after = time.time()
    assert not reply.error.code
    totals: dict[str, float] = {}
    for row in reply.rows:
        totals[row.team] = totals.get(row.team, 0.0) + row.instance_hours
    spans = {s.id: s for s in await second.store.spans(0.0, 1e10)}
    assert set(spans) == {kept.id, killed.id, ghost.id, other.id}  # each session one row
    fixed = sum((spans[i].end(0.0) - spans[i].created_at) / H for i in (killed.id, ghost.id))
    low = fixed + 2 * (before - kept.created_at) / H
    high = fixed + 2 * (after - kept.created_at) / H
    assert low - 1e-9 <= totals["acme"] <= high + 1e-9, (low, totals["acme"], high)
    assert totals["blue"] == pytest.approx((after - other.created_at) / H, abs=(after - before) / H + 1e-6)
    acme_today = [r for r in reply.rows if r.team == "acme"][-1]
    assert acme_today.sessions == 3

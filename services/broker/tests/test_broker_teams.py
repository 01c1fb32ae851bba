"""Teams in the session table and their quotas, on SQLite and the machine's PostgreSQL: each row's
team ("" read as "default"), ListSessions' team filter, `ended_at` set by the update that ends a
session, the columns added to an older table, `max_sessions` held among concurrent creates (one
broker or two), and the broker's create refused with resource_exhausted past either quota."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from platform_broker.store import CLOSED, CRASHED, RUNNING, STARTING, SessionStore, sessions
from platform_broker.usage import month_start, usage_rows
from platform_contracts import subjects
from platform_database.teams import TeamStore
from simulusion.control.v1 import control_pb2
from simulusion.session.v1.options_pb2 import SessionOptions


class Clock:
    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path}/platform.db"
    return str(request.getfixturevalue("postgres_database"))


@pytest.fixture
async def store(url: str) -> AsyncIterator[SessionStore]:
    store = SessionStore.from_url(url, clock=Clock())
    await store.create_tables()
    yield store
    await store.close()


def make(session_id: str, team: str = "", state: int = RUNNING, created_at: float = 100.0,
         num_envs: int = 1, env_id: str = "cartpole") -> control_pb2.SessionInfo:
    return control_pb2.SessionInfo(id=session_id, state=state, created_at=created_at, last_active_at=created_at,
                                   host_id="h1", options=SessionOptions(env_id=env_id, team=team, num_envs=num_envs))


async def test_rows_keep_their_team_and_list_filters_by_it(store: SessionStore) -> None:
    await store.insert(make("s-acme", "acme"))
    await store.insert(make("s-blue", "blue", created_at=101.0))
    await store.insert(make("s-default", "", created_at=102.0))
    await store.insert(make("s-named-default", "default", created_at=103.0))
    await store.insert(make("s-acme-closed", "acme", CLOSED, created_at=104.0))
    assert [s.id for s in await store.list()] == ["s-acme", "s-blue", "s-default", "s-named-default",
                                                  "s-acme-closed"]
    assert [s.id for s in await store.list(team="acme")] == ["s-acme", "s-acme-closed"]
    assert [s.id for s in await store.list([RUNNING], team="acme")] == ["s-acme"]
    assert [s.id for s in await store.list(team="default")] == ["s-default", "s-named-default"]
    assert await store.list(team="nobody") == []
    assert (await store.get("s-default")).options.team == ""  # the options as sent: the column says "default"
    assert (await store.span("s-default")).team == "default"  # type: ignore[union-attr]
    assert await store.count_open("acme") == 1 and await store.count_open("default") == 2


async def test_ended_at_is_set_once_by_the_update_that_ends_a_session(store: SessionStore) -> None:
    clock = store.clock
    assert isinstance(clock, Clock)
    await store.insert(make("s-closed", state=STARTING))
    await store.insert(make("s-crashed"))
    assert (await store.span("s-closed")).ended_at is None  # type: ignore[union-attr]
    clock.now = 2_000.0
    assert await store.mark_closed("s-closed", "by the user")
    clock.now = 3_000.0
    assert await store.mark_crashed("s-crashed", "exit -9", "")
    clock.now = 4_000.0
    assert not await store.mark_closed("s-closed", "again") and not await store.mark_crashed("s-crashed", "x", "")
    closed, crashed = await store.span("s-closed"), await store.span("s-crashed")
    assert closed is not None and (closed.state, closed.ended_at) == (CLOSED, 2_000.0)
    assert crashed is not None and (crashed.state, crashed.ended_at) == (CRASHED, 3_000.0)


async def test_a_table_without_team_and_ended_at_gets_them(store: SessionStore) -> None:
    old_metadata = sa.MetaData()
    old_table = sa.Table("sessions", old_metadata,
                         *[sa.Column(c.name, c.type, primary_key=c.primary_key, nullable=c.nullable,
                                     server_default=c.server_default)
                           for c in sessions.columns if c.name not in ("team", "ended_at")])
    async with store.engine.begin() as conn:
        await conn.run_sync(lambda sync: sessions.drop(sync))
        await conn.run_sync(old_metadata.create_all)
        await conn.execute(old_table.insert().values(
            id="s-old", env_id="cartpole", kwargs_json="{}", record=False, host_id="h1", host_address="h1:7000",
            state="closed", created_at=1.0, last_active_at=61.0, spec=None, reason="done", log_tail="",
            step_address="", life="", options=SessionOptions(env_id="cartpole", num_envs=2).SerializeToString()))
    await store.create_tables()
    await store.create_tables()  # idempotent once added
    old = await store.span("s-old")
    assert old is not None and (old.team, old.ended_at, old.num_envs) == ("default", None, 2)
    assert old.end(now=1e9) == 61.0  # ended before ended_at existed: its last activity
    assert [s.id for s in await store.list(team="default")] == ["s-old"]
    await store.insert(make("s-new", "acme"))
    assert [s.id for s in await store.list(team="acme")] == ["s-new"]


async def test_max_open_holds_among_concurrent_inserts_of_two_brokers(store: SessionStore, url: str) -> None:
    other = SessionStore.from_url(url)  # a second broker on the same database
    try:
        await store.insert(make("s-other-team", "blue"))  # another team's open session counts not
        await store.insert(make("s-ended", "acme", CLOSED))  # nor an ended one
        writers = [store, other] * 6
        results = await asyncio.gather(*(writer.insert_within(make(f"s-{i:02d}", "acme"), 3)
                                         for i, writer in enumerate(writers)))
        assert results.count(True) == 3, results
        assert await store.count_open("acme") == 3
        assert await store.insert_within(make("s-late", "acme"), 3) is False
        assert await store.insert_within(make("s-no-limit", "acme"), None) is True
        assert await store.insert_within(make("s-default", ""), 1) is True
        assert await store.insert_within(make("s-default-2", "default"), 1) is False  # "" and "default" alike
    finally:
        await other.close()


# The broker: quotas checked on create.

async def create(ask, team: str, env_id: str = "cartpole", **options):
    request = control_pb2.CreateSessionRequest(options=SessionOptions(env_id=env_id, team=team, **options))
    return await ask(subjects.BROKER_CREATE_SESSION, request, control_pb2.SessionReply)


async def list_ids(ask, team: str = "", include_closed: bool = False) -> list[str]:
    reply = await ask(subjects.BROKER_LIST_SESSIONS,
                      control_pb2.ListSessionsRequest(team=team, include_closed=include_closed),
                      control_pb2.ListSessionsReply)
    assert not reply.error.code
    return [session.id for session in reply.sessions]


async def test_list_sessions_filters_by_team(broker, envhost, ask) -> None:
    await envhost()
    await broker()
    acme = (await create(ask, "acme")).session
    blue = (await create(ask, "blue")).session
    default = (await create(ask, "")).session
    assert acme.options.team == "acme"
    assert await list_ids(ask) == [acme.id, blue.id, default.id]
    assert await list_ids(ask, "acme") == [acme.id]
    assert await list_ids(ask, "default") == [default.id]
    await ask(subjects.BROKER_CLOSE_SESSION, control_pb2.CloseSessionRequest(session_id=acme.id),
              control_pb2.SessionReply)
    assert await list_ids(ask, "acme") == []
    assert await list_ids(ask, "acme", include_closed=True) == [acme.id]


async def test_max_sessions_refuses_a_create_past_it_naming_the_quota(broker, envhost, ask) -> None:
    host = await envhost(capacity=16)
    service = await broker()
    teams = TeamStore(service.store.engine)
    await teams.create("acme", max_sessions=2)
    await teams.create("solo", max_sessions=1)
    first, second = (await create(ask, "acme")).session, (await create(ask, "acme")).session
    refused = await create(ask, "acme")
    assert refused.error.code == "resource_exhausted"
    assert refused.error.message == ("team 'acme' has reached its quota of 2 concurrent sessions (max_sessions=2): "
                                     "close one first")
    assert len(host.starts) == 2  # nothing was placed or started for it
    assert not (await create(ask, "blue")).error.code  # other teams: no quota
    assert not (await create(ask, "solo")).error.code
    assert (await create(ask, "solo")).error.message == (
        "team 'solo' has reached its quota of 1 concurrent session (max_sessions=1): close one first")

    await ask(subjects.BROKER_CLOSE_SESSION, control_pb2.CloseSessionRequest(session_id=first.id),
              control_pb2.SessionReply)
    third = await create(ask, "acme")
    assert not third.error.code and third.session.state == RUNNING
    assert sorted(await list_ids(ask, "acme")) == sorted([second.id, third.session.id])

    await teams.update("acme", max_sessions=None)  # cleared: read on the next create
    assert not (await create(ask, "acme")).error.code


async def test_a_preview_counts_to_no_quota_and_no_usage(broker, envhost, ask) -> None:
    await envhost(capacity=16)
    service = await broker()
    teams = TeamStore(service.store.engine)
    await teams.create("default", max_sessions=1, instance_hours_per_month=0.0)  # used up already
    preview = await create(ask, "", preview=True)  # the gateway's preview of a catalog entry
    assert not preview.error.code and preview.session.state == RUNNING
    assert (await create(ask, "")).error.code == "resource_exhausted"  # the quota holds for the rest
    await teams.update("default", max_sessions=1, instance_hours_per_month=None)
    mine = await create(ask, "")  # the open preview takes no room under max_sessions=1
    assert not mine.error.code, mine.error
    assert await service.store.count_open("default") == 1
    spans = await service.store.spans(0.0, time.time() + 60, "default")
    assert [span.id for span in spans] == [mine.session.id]


async def test_concurrent_creates_never_pass_max_sessions(broker, envhost, ask) -> None:
    await envhost(capacity=64)
    service = await broker()
    await TeamStore(service.store.engine).create("acme", max_sessions=3)
    replies = await asyncio.gather(*(create(ask, "acme") for _ in range(10)))
    codes = sorted(reply.error.code for reply in replies)
    assert codes == [""] * 3 + ["resource_exhausted"] * 7, codes
    assert len(await list_ids(ask, "acme")) == 3


async def test_instance_hours_refuse_a_create_once_used_up(broker, envhost, ask) -> None:
    await envhost()
    service = await broker()
    teams = TeamStore(service.store.engine)
    await teams.create("acme", instance_hours_per_month=0.001)  # 3.6 s
    now = time.time()
    began = max(month_start(now), now - 7200)
    # Two hours of this month, as a session that ran earlier leaves it (written straight to the table).
    await service.store.insert(make("s-earlier", "acme", CLOSED, created_at=began))
    async with service.store.engine.begin() as conn:
        await conn.execute(sessions.update().where(sessions.c.id == "s-earlier").values(ended_at=now))
    refused = await create(ask, "acme")
    assert refused.error.code == "resource_exhausted"
    assert re.fullmatch(r"team 'acme' has used [0-9.]+ of its 0\.001 instance-hours this month "
                        r"\(instance_hours_per_month=0\.001\): the month's usage renews on the 1st \(UTC\); "
                        r"an admin can raise the quota \(PATCH /v0/teams/acme\)", refused.error.message), \
        refused.error.message
    await teams.update("acme", instance_hours_per_month=100.0)
    assert not (await create(ask, "acme")).error.code
    assert not (await create(ask, "blue")).error.code


async def test_a_teams_create_takes_a_warm_instance(broker, envhost, ask, eventually) -> None:
    host = await envhost()
    service = await broker(pools={"cartpole": 1})

    async def warm() -> bool:
        return service.pools is not None and len(service.pools.warm("cartpole")) == 1

    await eventually(warm, what="the warm instance")
    reply = await create(ask, "acme")
    assert not reply.error.code and len(host.claims) == 1  # the team is who owns it, not how it runs
    assert host.claims[0].options.team == "acme"


async def test_a_refused_create_puts_its_warm_instance_back(broker, envhost, ask, eventually) -> None:
    await envhost()
    service = await broker(pools={"cartpole": 1})
    assert service.pools is not None
    pools = service.pools

    async def warm() -> bool:
        return len(pools.warm("cartpole")) == 1

    await eventually(warm, what="the warm instance")
    slot = pools.warm("cartpole")[0]
    store = service.handlers.store
    original = store.count_open

    async def too_few(team: str) -> int:  # the pre-check passes, the atomic insert refuses (a race)
        return 0

    await TeamStore(store.engine).create("acme", max_sessions=0)
    store.count_open = too_few  # type: ignore[method-assign]
    try:
        refused = await create(ask, "acme")
    finally:
        store.count_open = original  # type: ignore[method-assign]
    assert refused.error.code == "resource_exhausted"
    assert slot.slot_id in [s.slot_id for s in pools.warm("cartpole")]



async def test_a_life_is_one_teams(broker, envhost, ask) -> None:
    """A life another team has recorded is refused (its recordings would join that team's life),
    whether or not it is open; the team's own next session appends as before."""
    await envhost(capacity=8)
    await broker()
    first = (await create(ask, "blue", record=True, life="robot-1")).session
    await ask(subjects.BROKER_CLOSE_SESSION, control_pb2.CloseSessionRequest(session_id=first.id),
              control_pb2.SessionReply)
    refused = await create(ask, "red", record=True, life="robot-1")
    assert refused.error.code == "failed_precondition"
    assert refused.error.message == "the life name robot-1 is taken by another team: choose another name"
    assert not (await create(ask, "blue", record=True, life="robot-1")).error.code
    assert not (await create(ask, "red", record=True, life="robot-2")).error.code


async def test_usage_spans_on_every_database(store: SessionStore) -> None:
    """The usage query on SQLite and PostgreSQL: sessions open at some time in the window, ended
    ones at their ended_at, open ones until now, split at a UTC midnight, times num_envs."""
    midnight = 86_400.0 * 20_000  # 2024-10-04T00:00:00Z
    await store.insert(make("s-night", "acme", created_at=midnight - 1800, num_envs=2))  # 23:30, two instances
    await store.mark_closed("s-night", "done")
    await store.insert(make("s-open", "blue", created_at=midnight + 3600))
    await store.insert(make("s-before", "acme", created_at=midnight - 90_000))
    await store.mark_closed("s-before", "done")
    async with store.engine.begin() as conn:  # when they ended, as the clock had said
        await conn.execute(sessions.update().where(sessions.c.id == "s-night").values(ended_at=midnight + 1800))
        await conn.execute(sessions.update().where(sessions.c.id == "s-before").values(ended_at=midnight - 86_000))
    now = midnight + 2 * 3600
    spans = await store.spans(midnight - 3600, now)
    assert [span.id for span in spans] == ["s-night", "s-open"]
    rows = usage_rows(spans, midnight - 3600, now, now)
    assert [(r.day, r.team, r.env_id, round(r.instance_hours, 6), r.sessions) for r in rows] == [
        ("2024-10-03", "acme", "cartpole", 1.0, 1),   # 23:30-24:00, two instances
        ("2024-10-04", "acme", "cartpole", 1.0, 1),   # 00:00-00:30, two instances
        ("2024-10-04", "blue", "cartpole", 1.0, 1),   # 01:00 until now (02:00), still open
    ]
    assert [span.id for span in await store.spans(midnight - 3600, now, team="blue")] == ["s-open"]

"""The session table on SQLite and on the real PostgreSQL server at 127.0.0.1:5432."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from platform_broker.config import async_database_url
from platform_broker.errors import ConfigError
from platform_broker.lives import LifeHeldError
from platform_broker.store import ADDED_COLUMNS, CLOSED, CRASHED, RUNNING, STARTING, SessionStore, sessions
from simulusion.control.v1 import control_pb2
from simulusion.env.v1 import environment_pb2, values_pb2
from simulusion.session.v1.options_pb2 import SessionOptions

@pytest.fixture(params=["sqlite", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path}/nested/dir/platform.db"
    else:
        url = request.getfixturevalue("postgres_database")  # plain postgresql://: mapped to asyncpg
    store = SessionStore.from_url(url)
    await store.create_tables()
    await store.create_tables()  # idempotent
    async with store.engine.begin() as conn:
        await conn.execute(sa.delete(sessions))
    yield store
    await store.close()


def make(session_id: str, created_at: float, state: int = STARTING) -> control_pb2.SessionInfo:
    options = SessionOptions(env_id="cartpole", kwargs_json='{"a": 1}', record=True, record_frames=True,
                             jpeg_quality=70, num_envs=1, auto_reset=True)
    return control_pb2.SessionInfo(id=session_id, options=options, host_id="h1", host_address="10.0.0.1:7000",
                                   state=state, created_at=created_at, last_active_at=created_at)


def spec() -> environment_pb2.SpecResponse:
    space = values_pb2.Space(discrete=values_pb2.DiscreteSpace(n=2))
    return environment_pb2.SpecResponse(env_id="CartPole-v1", action_space=space, render_mode="rgb_array")


async def test_insert_get_roundtrip(store):
    info = make("s-000000000001", 1_700_000_000.25)
    info.reason, info.log_tail, info.step_address = "why", "line 1\nline 2\n", "10.0.0.1:7001"
    await store.insert(info)
    assert await store.get("s-000000000001") == info
    assert await store.get("s-missing") is None


async def test_a_table_of_an_older_broker_gets_the_new_columns(store):
    # The table as the first broker version made it: no step_address column.
    old_metadata = sa.MetaData()
    old_table = sa.Table("sessions", old_metadata,
                         *[sa.Column(c.name, c.type, primary_key=c.primary_key, nullable=c.nullable)
                           for c in sessions.columns if c.name not in ADDED_COLUMNS])
    async with store.engine.begin() as conn:
        await conn.run_sync(lambda sync: sessions.drop(sync))
        await conn.run_sync(old_metadata.create_all)
        await conn.execute(old_table.insert().values(
            id="s-old", env_id="cartpole", kwargs_json="{}", record=False, host_id="h1", host_address="h1:7000",
            state="running", created_at=1.0, last_active_at=1.0, spec=None, reason="", log_tail=""))
    await store.create_tables()
    await store.create_tables()  # idempotent once added
    old = await store.get("s-old")
    assert old is not None and old.state == RUNNING and old.step_address == ""
    assert old.options == SessionOptions(env_id="cartpole", kwargs_json="{}")
    new = make("s-new", 2.0)
    new.step_address = "h1:7001"
    await store.insert(new)
    assert (await store.get("s-new")).step_address == "h1:7001"


def with_life(info: control_pb2.SessionInfo, name: str) -> control_pb2.SessionInfo:
    info.options.life = name
    return info


async def test_a_table_without_the_life_column_gets_it_and_its_lock(store):
    # The table as the broker before lives made it: step_address, no life column, no index.
    old_metadata = sa.MetaData()
    old_table = sa.Table("sessions", old_metadata,
                         *[sa.Column(c.name, c.type, primary_key=c.primary_key, nullable=c.nullable,
                                     server_default=c.server_default)
                           for c in sessions.columns if c.name != "life"])
    async with store.engine.begin() as conn:
        await conn.run_sync(lambda sync: sessions.drop(sync))
        await conn.run_sync(old_metadata.create_all)
        await conn.execute(old_table.insert().values(
            id="s-before", env_id="cartpole", kwargs_json="{}", record=True, host_id="h1", host_address="h1:7000",
            state="running", created_at=1.0, last_active_at=1.0, spec=None, reason="", log_tail="",
            step_address="h1:7001"))
    await store.create_tables()
    await store.create_tables()  # idempotent once added
    before = await store.get("s-before")
    assert before is not None and before.state == RUNNING and before.options.life == ""

    first = with_life(make("s-life-1", 2.0, RUNNING), "robot-1")
    await store.insert(first)
    assert (await store.get("s-life-1")).options.life == "robot-1"
    assert (await store.life_holder("robot-1")).id == "s-life-1"
    with pytest.raises(LifeHeldError, match="life robot-1 is being recorded by session s-life-1; close it first"):
        await store.insert(with_life(make("s-life-2", 3.0), "robot-1"))
    assert await store.get("s-life-2") is None
    await store.insert(make("s-no-life", 3.5))  # sessions without a life never collide
    await store.insert(make("s-no-life-2", 3.6))
    assert await store.mark_closed("s-life-1", "done")
    assert await store.life_holder("robot-1") is None
    await store.insert(with_life(make("s-life-3", 4.0), "robot-1"))
    assert [s.id for s in await store.list() if s.options.life == "robot-1"] == ["s-life-1", "s-life-3"]


async def test_a_table_without_the_options_column_gets_it_and_its_rows_still_read(store):
    # The table as the broker before SessionOptions made it: the options one column each.
    old_metadata = sa.MetaData()
    old_table = sa.Table("sessions", old_metadata,
                         *[sa.Column(c.name, c.type, primary_key=c.primary_key, nullable=c.nullable,
                                     server_default=c.server_default)
                           for c in sessions.columns if c.name != "options"])
    async with store.engine.begin() as conn:
        await conn.run_sync(lambda sync: sessions.drop(sync))
        await conn.run_sync(old_metadata.create_all)
        await conn.execute(old_table.insert().values(
            id="s-before", env_id="pendulum", kwargs_json='{"g": 9.5}', record=True, host_id="h1",
            host_address="h1:7000", state="closed", created_at=1.0, last_active_at=1.0, spec=None, reason="done",
            log_tail="", step_address="h1:7001", life="arm-1"))
    await store.create_tables()
    await store.create_tables()  # idempotent once added
    before = await store.get("s-before")
    assert before is not None and before.reason == "done"
    assert before.options == SessionOptions(env_id="pendulum", kwargs_json='{"g": 9.5}', record=True, life="arm-1")

    new = with_life(make("s-after", 2.0, RUNNING), "arm-1")
    await store.insert(new)
    assert (await store.get("s-after")).options == new.options  # whole, with what the columns never kept
    assert (await store.life_holder("arm-1")).id == "s-after"


async def test_one_open_session_per_life_among_concurrent_inserts(store):
    await store.insert(with_life(make("s-crashed", 0.5, CRASHED), "robot-9"))  # ended: holds nothing
    results = await asyncio.gather(*(store.insert(with_life(make(f"s-{i}", float(i)), "robot-9")) for i in range(8)),
                                   return_exceptions=True)
    refused = [r for r in results if isinstance(r, LifeHeldError)]
    assert len(refused) == 7 and results.count(None) == 1
    [holder] = [s for s in await store.list([STARTING]) if s.options.life == "robot-9"]
    assert all(error.holder_session_id == holder.id for error in refused)


async def test_running_with_spec(store):
    await store.insert(make("s-1", 10.0))
    assert await store.mark_running("s-1", spec())
    running = await store.get("s-1")
    assert running.state == RUNNING and running.spec == spec()
    assert not await store.mark_running("s-1", spec())  # only from STARTING


async def test_list_filters_by_state_oldest_first(store):
    for i, state in enumerate([RUNNING, CLOSED, STARTING, CRASHED]):
        await store.insert(make(f"s-{i}", 100.0 - i, state))
    assert [s.id for s in await store.list()] == ["s-3", "s-2", "s-1", "s-0"]
    assert [s.id for s in await store.list([STARTING, RUNNING])] == ["s-2", "s-0"]
    assert [s.id for s in await store.list([CRASHED])] == ["s-3"]


async def test_transitions_never_undo_an_ended_session(store):
    await store.insert(make("s-1", 1.0))
    assert await store.mark_crashed("s-1", "exit code 1", "Traceback\nBoom\n")
    assert not await store.mark_running("s-1", spec())
    assert not await store.mark_closed("s-1", "later close")
    crashed = await store.get("s-1")
    assert (crashed.state, crashed.reason, crashed.log_tail) == (CRASHED, "exit code 1", "Traceback\nBoom\n")

    await store.insert(make("s-2", 2.0, RUNNING))
    assert await store.mark_closed("s-2", "by the user")
    assert not await store.mark_crashed("s-2", "x", "y")
    assert not await store.mark_closed("s-2", "again")
    assert (await store.get("s-2")).reason == "by the user"
    assert not await store.mark_closed("s-unknown", "x")


async def test_touch_only_moves_forward(store):
    await store.insert(make("s-1", 50.0, RUNNING))
    assert await store.touch("s-1", 60.5)
    assert not await store.touch("s-1", 55.0)
    assert (await store.get("s-1")).last_active_at == 60.5


async def test_concurrent_writers(store):
    await asyncio.gather(*(store.insert(make(f"s-{i:03d}", float(i), RUNNING)) for i in range(20)))
    results = await asyncio.gather(*(store.mark_closed(f"s-{i:03d}", "bulk") for i in range(20)),
                                   *(store.mark_crashed(f"s-{i:03d}", "race", "") for i in range(20)))
    assert sum(results) == 20  # each session ended exactly once
    assert {s.state for s in await store.list()} <= {CLOSED, CRASHED}


def test_sqlite_folder_is_created(tmp_path):
    SessionStore.from_url(f"sqlite+aiosqlite:///{tmp_path}/a/b/platform.db")
    assert (tmp_path / "a" / "b").is_dir()


def test_database_urls():
    assert async_database_url("postgresql://u@h/db") == "postgresql+asyncpg://u@h/db"
    assert async_database_url("postgres://u:p@h:5/db") == "postgresql+asyncpg://u:p@h:5/db"
    assert async_database_url("postgresql+asyncpg://u@h/db") == "postgresql+asyncpg://u@h/db"
    assert async_database_url("sqlite:///./x.db") == "sqlite+aiosqlite:///./x.db"
    with pytest.raises(ConfigError, match="mysql") as info:
        async_database_url("mysql://root:secret@h/db")
    assert "secret" not in str(info.value)

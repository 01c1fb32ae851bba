"""The `teams` table (quotas) on SQLite and the machine's PostgreSQL: made twice (and by two
services at once) without harm, teams created, read, listed, changed, cleared and deleted."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from platform_database import open_engine
from platform_contracts.teams import owning_team
from platform_database.teams import UNSET, Team, TeamExistsError, TeamStore


@pytest.fixture(params=["sqlite", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TeamStore]:
    url = f"sqlite:///{tmp_path}/platform.db" if request.param == "sqlite" else request.getfixturevalue("postgres_database")
    store = TeamStore(open_engine(url))
    yield store
    await store.engine.dispose()


async def test_tables_made_by_two_services_at_once_and_again(store: TeamStore) -> None:
    other = TeamStore(open_engine(store.engine.url.render_as_string(hide_password=False)))
    try:
        await asyncio.gather(store.create_tables(), other.create_tables())
        await store.create_tables()  # again: nothing to do
        assert await store.list() == []
    finally:
        await other.engine.dispose()


async def test_create_get_list_update_delete(store: TeamStore) -> None:
    await store.create_tables()
    acme = await store.create("acme", max_sessions=2, instance_hours_per_month=10.0, now=100.0)
    assert acme == Team("acme", 2, 10.0, 100.0)
    free = await store.create("free")
    assert (free.max_sessions, free.instance_hours_per_month) == (None, None)
    with pytest.raises(TeamExistsError, match="team 'acme' exists already"):
        await store.create("acme")
    assert await store.get("acme") == acme and await store.get("nobody") is None
    assert [t.name for t in await store.list()] == ["acme", "free"]

    assert await store.update("acme", max_sessions=5) == Team("acme", 5, 10.0, 100.0)  # the other quota kept
    assert await store.update("acme", instance_hours_per_month=None) == Team("acme", 5, None, 100.0)  # cleared
    assert await store.update("acme") == Team("acme", 5, None, 100.0)  # nothing to change
    assert await store.update("nobody", max_sessions=1) is None
    assert await store.get("nobody") is None

    made = await store.update("default", UNSET, 3.5, create=True)  # the implicit team's first row
    assert made is not None and (made.name, made.max_sessions, made.instance_hours_per_month) == ("default", None, 3.5)
    assert (await store.update("default", 1, create=True)).max_sessions == 1  # type: ignore[union-attr]

    assert await store.delete("free") and not await store.delete("free")
    assert [t.name for t in await store.list()] == ["acme", "default"]


def test_an_empty_team_is_the_default_one() -> None:
    assert owning_team("") == "default" and owning_team("acme") == "acme"


async def test_a_table_an_older_version_made_gains_members_mint_tokens(store: TeamStore) -> None:
    async with store.engine.begin() as conn:  # the teams table before the setting existed, with a row
        await conn.execute(sa.text("CREATE TABLE teams (name VARCHAR(64) PRIMARY KEY, max_sessions INTEGER, "
                                   "instance_hours_per_month DOUBLE PRECISION, created_at DOUBLE PRECISION NOT NULL)"))
        await conn.execute(sa.text("INSERT INTO teams (name, max_sessions, created_at) VALUES ('old', 2, 1.0)"))
    other = TeamStore(open_engine(store.engine.url.render_as_string(hide_password=False)))
    try:
        await asyncio.gather(store.create_tables(), other.create_tables())  # two services upgrading at once
        await store.create_tables()  # again: nothing to do
    finally:
        await other.engine.dispose()
    assert await store.get("old") == Team("old", 2, None, 1.0, members_mint_tokens=True)
    closed = await store.update("old", members_mint_tokens=False)
    assert closed == Team("old", 2, None, 1.0, members_mint_tokens=False)
    assert (await store.update("old", max_sessions=3)) == Team("old", 3, None, 1.0, members_mint_tokens=False)
    made = await store.update("new", members_mint_tokens=False, create=True)
    assert made is not None and not made.members_mint_tokens and made.max_sessions is None

"""PLATFORM_DATABASE_URL opened with its async driver: the accepted URLs, a SQLite file's folder
made, tables made twice without harm on SQLite and the machine's PostgreSQL, and an unreachable
server named in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from platform_database import DatabaseUnavailableError, DatabaseUrlError, async_database_url, create_tables, open_engine
from platform_testing.ports import free_port

METADATA = sa.MetaData()
THINGS = sa.Table("things", METADATA, sa.Column("id", sa.Integer, primary_key=True))


def test_urls_get_their_async_driver_and_others_are_refused_without_the_password() -> None:
    assert async_database_url("sqlite:///x.db") == "sqlite+aiosqlite:///x.db"
    assert async_database_url("postgresql+psycopg://u@h/db?sslmode=require") == "postgresql+asyncpg://u@h/db?ssl=require"
    with pytest.raises(DatabaseUrlError, match="not supported: use one of sqlite://") as caught:
        async_database_url("mysql://root:hunter2@h/db")
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_tables_are_made_once_and_used(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    url = f"sqlite:///{tmp_path}/a/b/platform.db" if kind == "sqlite" else request.getfixturevalue("postgres_database")
    engine = open_engine(url)
    try:
        await create_tables(engine, METADATA)
        await create_tables(engine, METADATA)  # again: nothing to do
        async with engine.begin() as conn:
            await conn.execute(THINGS.insert().values(id=7))
            assert (await conn.execute(sa.select(THINGS.c.id))).scalar_one() == 7
    finally:
        await engine.dispose()
    if kind == "sqlite":
        assert (tmp_path / "a" / "b" / "platform.db").is_file()


async def test_an_unreachable_server_is_one_line_naming_it_without_the_password() -> None:
    engine = open_engine(f"postgresql://u:hunter2@127.0.0.1:{free_port()}/db")
    with pytest.raises(DatabaseUnavailableError) as caught:
        await create_tables(engine, METADATA)
    message = str(caught.value)
    assert message.startswith("cannot open the database postgresql+asyncpg://u:***@127.0.0.1:") and "\n" not in message
    assert "hunter2" not in message
    await engine.dispose()

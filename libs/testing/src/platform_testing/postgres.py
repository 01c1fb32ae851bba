"""A throwaway database on the machine's PostgreSQL (127.0.0.1:5432, user postgres, trust auth),
made for one test and dropped after it (`postgres_database`). A server that cannot be reached
fails the test naming it (the PostgreSQL path is not optional)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

PG_HOST, PG_PORT, PG_USER = "127.0.0.1", 5432, "postgres"


async def _admin(sql: str) -> None:
    import asyncpg  # the suites that use this fixture depend on it (platform-database)

    try:
        conn = await asyncpg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, database="postgres", timeout=5)
    except (TimeoutError, OSError, asyncpg.PostgresError) as exc:
        pytest.fail(f"PostgreSQL at {PG_HOST}:{PG_PORT} (user {PG_USER}) is not reachable: {exc!r}")
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def admin_sql(sql: str) -> None:
    """Run `sql` as the server's admin, in a loop of its own (callable from inside a test's loop)."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, _admin(sql)).result()


@pytest.fixture
def postgres_database() -> Iterator[str]:
    """A new database's plain URL (`postgresql://postgres@127.0.0.1:5432/<name>`), dropped after."""
    name = f"test_{uuid.uuid4().hex}"
    admin_sql(f'CREATE DATABASE "{name}"')
    yield f"postgresql://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"
    admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

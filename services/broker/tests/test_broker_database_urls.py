"""PLATFORM_DATABASE_URL: every accepted scheme opens the same database (SQLite, and the real
PostgreSQL server at 127.0.0.1:5432), an unknown one stops the broker with one line."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import pytest
from platform_broker.config import ASYNC_DRIVERS, async_database_url
from platform_broker.errors import ConfigError
from platform_broker.store import SessionStore

PG = {"host": "127.0.0.1", "port": 5432, "user": "postgres"}


@pytest.mark.parametrize(("given", "opened"), [
    ("sqlite:///platform.db", "sqlite+aiosqlite:///platform.db"),
    ("sqlite:////abs/platform.db", "sqlite+aiosqlite:////abs/platform.db"),
    ("sqlite+aiosqlite:///./data/platform.db", "sqlite+aiosqlite:///./data/platform.db"),
    ("postgresql+psycopg://u:p@h:5432/db", "postgresql+asyncpg://u:p@h:5432/db"),
    ("postgresql://u@h/db", "postgresql+asyncpg://u@h/db"),
    ("postgres://u:p@h:5/db", "postgresql+asyncpg://u:p@h:5/db"),
    ("postgresql+asyncpg://u@h/db", "postgresql+asyncpg://u@h/db"),
    ("postgresql+psycopg://u@h/db?sslmode=require", "postgresql+asyncpg://u@h/db?ssl=require"),
])
def test_each_accepted_form_maps_to_the_brokers_driver(given: str, opened: str) -> None:
    assert async_database_url(given) == opened


@pytest.mark.parametrize("url", ["mysql://root:secret@h/db", "platform.db", "", "postgresql+psycopg2://u@h/db"])
def test_an_unknown_scheme_is_one_line_naming_the_accepted_ones(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        async_database_url(url)
    message = str(caught.value)
    assert "\n" not in message and "secret" not in message
    assert all(f"{scheme}://" in message for scheme in ASYNC_DRIVERS)


async def test_sqlite_plain_form_is_the_file_relative_to_the_working_dir(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = SessionStore.from_url("sqlite:///platform.db")
    try:
        await store.create_tables()
    finally:
        await store.close()
    with sqlite3.connect(tmp_path / "platform.db") as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "sessions" in tables


@pytest.fixture
async def pg_database() -> AsyncIterator[str]:
    """A throwaway database on the local PostgreSQL server; its name."""
    name = f"broker_urls_{uuid.uuid4().hex}"
    try:
        admin = await asyncpg.connect(database="postgres", timeout=5, **PG)
    except (TimeoutError, OSError, asyncpg.PostgresError) as exc:
        pytest.fail(f"PostgreSQL at {PG['host']}:{PG['port']} is not reachable: {exc!r}")
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        yield name
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def test_the_psycopg_form_opens_the_postgresql_database(pg_database: str) -> None:
    store = SessionStore.from_url(f"postgresql+psycopg://{PG['user']}@{PG['host']}:{PG['port']}/{pg_database}")
    try:
        await store.create_tables()
    finally:
        await store.close()
    conn = await asyncpg.connect(database=pg_database, timeout=5, **PG)
    try:
        assert await conn.fetchval("SELECT to_regclass('public.sessions') IS NOT NULL")
    finally:
        await conn.close()


def test_the_broker_stops_at_start_on_an_unknown_scheme(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLATFORM_")}
    env["PLATFORM_DATABASE_URL"] = "mysql://root:secret@127.0.0.1/platform"
    result = subprocess.run([sys.executable, "-m", "platform_broker"], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("platform_broker: PLATFORM_DATABASE_URL 'mysql://root:***@127.0.0.1/platform' "
                               "is not supported: use one of sqlite://")

"""Opening the database and making a service's tables."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from platform_database.urls import async_database_url

CONNECT_TIMEOUT_S = 10.0


class DatabaseUnavailableError(RuntimeError):
    """The database cannot be reached or refuses; the message names it (password hidden)."""


def open_engine(url: str) -> AsyncEngine:
    """An engine on `url` (see `async_database_url`); makes a SQLite file's folder.

    Raises:
        DatabaseUrlError: an unsupported URL.
    """
    url = async_database_url(url)
    parsed = make_url(url)
    options: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        options["connect_args"] = {"timeout": 30}
    else:
        options["pool_pre_ping"] = True
        options["connect_args"] = {"timeout": CONNECT_TIMEOUT_S}
    return create_async_engine(url, **options)


async def create_tables(engine: AsyncEngine, metadata: sa.MetaData,
                        *upgrades: Callable[[sa.Connection], None]) -> None:
    """Create `metadata`'s tables when missing, then run each of `upgrades` (e.g. adding the
    columns an older version's table lacks) in the same transaction.

    Raises:
        DatabaseUnavailableError: the database cannot be reached (the message names it).
    """
    try:
        async with engine.begin() as conn:
            await conn.run_sync(metadata.create_all)
            for upgrade in upgrades:
                await conn.run_sync(upgrade)
    except (OSError, sa.exc.SQLAlchemyError) as exc:
        where = engine.url.render_as_string(hide_password=True)
        detail = str(exc).splitlines()[0] if str(exc) else repr(exc)
        raise DatabaseUnavailableError(f"cannot open the database {where}: {detail}") from None


def add_missing_columns(table: sa.Table, *names: str) -> Callable[[sa.Connection], None]:
    """An upgrade for `create_tables`: ALTER TABLE ... ADD COLUMN for each of `names` that
    `table` (made by an older version) lacks, with the column's type and server default. Two
    services may start at once: PostgreSQL skips a column added meanwhile (IF NOT EXISTS);
    SQLite says "duplicate column", which is taken as done."""

    def upgrade(conn: sa.Connection) -> None:
        present = {column["name"] for column in sa.inspect(conn).get_columns(table.name)}
        postgres = conn.dialect.name == "postgresql"
        for name in names:
            if name in present:
                continue
            column = table.c[name]
            ddl = (f"ALTER TABLE {table.name} ADD COLUMN {'IF NOT EXISTS ' if postgres else ''}"
                   f"{name} {column.type.compile(conn.dialect)}")
            if column.server_default is not None:
                default = column.server_default.arg  # type: ignore[attr-defined]
                text = str(default.compile(dialect=conn.dialect)) if isinstance(default, sa.ClauseElement) else \
                    f"'{default}'"
                ddl += f" DEFAULT {text}"
            if not column.nullable:
                ddl += " NOT NULL"
            try:
                conn.execute(sa.text(ddl))
            except sa.exc.OperationalError as exc:
                if "duplicate column" not in str(exc):
                    raise
        for index in table.indexes:
            if any(column.name in names for column in index.columns):
                conn.execute(sa.schema.CreateIndex(index, if_not_exists=True))

    return upgrade

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

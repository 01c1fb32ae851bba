"""Stores in PLATFORM_DATABASE_URL whose tables are made the first time they are asked for, on the
API tokens' engine when there is one (shared, not disposed here), so a platform that never asks
for them opens no database: the teams and members (`identity.team_directory`), the training runs
(`run_store.RunDirectory`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from platform_database import DatabaseUnavailableError, open_engine
from sqlalchemy.ext.asyncio import AsyncEngine

from platform_gateway.errors import UnavailableError

Stores = TypeVar("Stores")


class TablesOnFirstUse(Generic[Stores]):
    """`make(engine)` builds the stores and makes their tables, once, at the first `open()`.

    Args:
        url: PLATFORM_DATABASE_URL.
        engine: an engine already open on it (the API tokens'), shared and not disposed here.
    """

    def __init__(self, url: str, engine: AsyncEngine | None,
                 make: Callable[[AsyncEngine], Awaitable[Stores]]) -> None:
        self.url = url
        self._engine = engine
        self._owned = engine is None
        self._make = make
        self._stores: Stores | None = None
        self._lock = asyncio.Lock()

    async def open(self) -> Stores:
        """The stores, their tables made the first time.

        Raises:
            UnavailableError: the database cannot be opened (one line naming it, password hidden).
        """
        if self._stores is not None:
            return self._stores
        async with self._lock:
            if self._stores is None:
                if self._engine is None:
                    self._engine = open_engine(self.url)
                try:
                    self._stores = await self._make(self._engine)
                except DatabaseUnavailableError as exc:
                    raise UnavailableError(str(exc)) from None
        return self._stores

    async def close(self) -> None:
        if self._owned and self._engine is not None:
            await self._engine.dispose()

"""Teams (with their quotas) and members, in PLATFORM_DATABASE_URL: the `teams` table the broker
reads when it creates a session (`platform_database.teams`), and the gateway's `members` table
(`identity.members`). Opened on first use, on the API tokens' engine when there is one, so a
platform that never asks for them opens no database."""

from __future__ import annotations

import asyncio

from platform_database import DatabaseUnavailableError, open_engine
from platform_database.teams import TeamStore
from sqlalchemy.ext.asyncio import AsyncEngine

from platform_gateway.errors import UnavailableError
from platform_gateway.identity.members import MemberStore


class TeamDirectory:
    """The teams and members stores, their tables made on first use.

    Args:
        url: PLATFORM_DATABASE_URL.
        engine: an engine already open on it (the API tokens'), shared and not disposed here.
    """

    def __init__(self, url: str, engine: AsyncEngine | None = None) -> None:
        self.url = url
        self._engine = engine
        self._owned = engine is None
        self._stores: tuple[TeamStore, MemberStore] | None = None
        self._lock = asyncio.Lock()

    async def open(self) -> tuple[TeamStore, MemberStore]:
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
                teams, members = TeamStore(self._engine), MemberStore(self._engine)
                try:
                    await teams.create_tables()
                    await members.create_tables()
                except DatabaseUnavailableError as exc:
                    raise UnavailableError(str(exc)) from None
                self._stores = (teams, members)
        return self._stores

    async def teams(self) -> TeamStore:
        return (await self.open())[0]

    async def members(self) -> MemberStore:
        return (await self.open())[1]

    async def close(self) -> None:
        if self._owned and self._engine is not None:
            await self._engine.dispose()

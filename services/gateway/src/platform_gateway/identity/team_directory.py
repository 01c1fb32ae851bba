"""Teams (with their quotas) and members, in PLATFORM_DATABASE_URL: the `teams` table the broker
reads when it creates a session (`platform_database.teams`), and the gateway's `members` table
(`identity.members`). Opened on first use, on the API tokens' engine when there is one, so a
platform that never asks for them opens no database."""

from __future__ import annotations

from platform_database.teams import TeamStore
from sqlalchemy.ext.asyncio import AsyncEngine

from platform_gateway.identity.members import MemberStore
from platform_gateway.tables_on_first_use import TablesOnFirstUse


async def _team_stores(engine: AsyncEngine) -> tuple[TeamStore, MemberStore]:
    teams, members = TeamStore(engine), MemberStore(engine)
    await teams.create_tables()
    await members.create_tables()
    return teams, members


class TeamDirectory(TablesOnFirstUse[tuple[TeamStore, MemberStore]]):
    """The teams and members stores, their tables made on first use.

    Args:
        url: PLATFORM_DATABASE_URL.
        engine: an engine already open on it (the API tokens'), shared and not disposed here.
    """

    def __init__(self, url: str, engine: AsyncEngine | None = None) -> None:
        super().__init__(url, engine, _team_stores)

    async def teams(self) -> TeamStore:
        return (await self.open())[0]

    async def members(self) -> MemberStore:
        return (await self.open())[1]

"""The `teams` table: each team's quotas, written by the gateway (`/v0/teams`) and read by the
broker when it creates a session (it owns sessions, so it decides).

A team without a row has no quota; the team "default" exists whether or not it has one (a
self-hosted platform's one team). A quota left empty (NULL) is no limit:

- `max_sessions`: open (starting or running) sessions at once;
- `instance_hours_per_month`: instance-hours per UTC calendar month (a session of n
  sub-environments counts n instances).

And one setting of the team's admins: `members_mint_tokens` (default true), whether the team's
members may make API tokens (the gateway's `POST /v0/tokens`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine


from platform_database.engines import DatabaseUnavailableError, add_missing_columns, create_tables

CREATE_ATTEMPTS = 3

metadata = sa.MetaData()

teams = sa.Table(
    "teams",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("max_sessions", sa.Integer, nullable=True),
    sa.Column("instance_hours_per_month", sa.Double, nullable=True),
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("members_mint_tokens", sa.Boolean, nullable=False, server_default=sa.true()),
)
# Columns added after the first version: a table an older version made gains them on start.
ADDED_COLUMNS = ("members_mint_tokens",)


@dataclass(frozen=True)
class Team:
    """A team's row (quotas None: no limit)."""

    name: str
    max_sessions: int | None
    instance_hours_per_month: float | None
    created_at: float
    members_mint_tokens: bool = True


class TeamExistsError(Exception):
    """A team of that name exists already."""


class _Unset:
    pass


UNSET: Any = _Unset()  # `TeamStore.update`: leave that quota as it is


class TeamStore:
    """The `teams` table on an engine of `open_engine` (SQLite or PostgreSQL)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def create_tables(self) -> None:
        """Make the table if missing. The gateway and the broker both do, maybe at once: a
        second service's CREATE that loses the race is tried again (then it finds the table).

        Raises:
            DatabaseUnavailableError: the database cannot be reached (one line naming it).
        """
        for attempt in range(CREATE_ATTEMPTS):
            try:
                await create_tables(self.engine, metadata, add_missing_columns(teams, *ADDED_COLUMNS))
                return
            except DatabaseUnavailableError:
                if attempt == CREATE_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(0.2 * (attempt + 1))

    async def create(self, name: str, max_sessions: int | None = None,
                     instance_hours_per_month: float | None = None, now: float | None = None,
                     members_mint_tokens: bool = True) -> Team:
        """Add a team.

        Raises:
            TeamExistsError: a team of that name exists (a row; "default" without a row does not).
        """
        team = Team(name, max_sessions, instance_hours_per_month, time.time() if now is None else now,
                    members_mint_tokens)
        try:
            async with self.engine.begin() as conn:
                await conn.execute(teams.insert().values(**_row(team)))
        except sa.exc.IntegrityError:
            raise TeamExistsError(f"team {name!r} exists already") from None
        return team

    async def get(self, name: str) -> Team | None:
        """The team's row (one primary-key read), or None."""
        async with self.engine.connect() as conn:
            row = (await conn.execute(teams.select().where(teams.c.name == name))).first()
        return None if row is None else _team(row)

    async def list(self) -> list[Team]:
        """Every team with a row, by name."""
        async with self.engine.connect() as conn:
            rows = (await conn.execute(teams.select().order_by(teams.c.name))).all()
        return [_team(row) for row in rows]

    async def update(self, name: str, max_sessions: int | None = UNSET,
                     instance_hours_per_month: float | None = UNSET, *, members_mint_tokens: bool = UNSET,
                     create: bool = False) -> Team | None:
        """Set the quotas and setting given (None clears a quota; `UNSET` leaves it); the team as
        it is now, or None when there is no such team. With `create`, a missing team is made
        first (a team that exists without a row, like "default", gets it on its first change)."""
        values: dict[str, Any] = {}
        if max_sessions is not UNSET:
            values["max_sessions"] = max_sessions
        if instance_hours_per_month is not UNSET:
            values["instance_hours_per_month"] = instance_hours_per_month
        if members_mint_tokens is not UNSET:
            values["members_mint_tokens"] = members_mint_tokens
        if create and await self.get(name) is None:
            try:
                return await self.create(name, values.get("max_sessions"), values.get("instance_hours_per_month"),
                                         members_mint_tokens=values.get("members_mint_tokens", True))
            except TeamExistsError:
                pass  # made meanwhile: update it
        if values:
            async with self.engine.begin() as conn:
                await conn.execute(teams.update().where(teams.c.name == name).values(**values))
        return await self.get(name)

    async def delete(self, name: str) -> bool:
        """Remove the team's row; False when there was none."""
        async with self.engine.begin() as conn:
            return (await conn.execute(teams.delete().where(teams.c.name == name))).rowcount > 0


def _row(team: Team) -> dict[str, Any]:
    return {"name": team.name, "max_sessions": team.max_sessions,
            "instance_hours_per_month": team.instance_hours_per_month, "created_at": team.created_at,
            "members_mint_tokens": team.members_mint_tokens}


def _team(row: sa.Row[Any]) -> Team:
    m = row._mapping
    return Team(m["name"], m["max_sessions"], m["instance_hours_per_month"], m["created_at"],
                bool(m["members_mint_tokens"]))

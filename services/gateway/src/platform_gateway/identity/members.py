"""Members: the people who sign in through the identity provider (`PLATFORM_AUTH=oidc`), each in
one team with a role, added and removed by the team's admins or the operator (`/v0/members`)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import sqlalchemy as sa
from platform_database import create_tables
from sqlalchemy.ext.asyncio import AsyncEngine

from platform_gateway.identity.member_table import members, metadata


@dataclass(frozen=True)
class Member:
    subject: str
    team: str
    role: str
    added_by: str
    created_at: float


class MemberExistsError(Exception):
    """The subject is a member already (of the team the message names)."""


class MemberStore:
    """The members in the platform's database."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def create_tables(self) -> None:
        await create_tables(self.engine, metadata)

    async def add(self, subject: str, team: str, role: str, added_by: str) -> Member:
        """Add a member.

        Raises:
            MemberExistsError: `subject` is a member already.
        """
        member = Member(subject, team, role, added_by, time.time())
        try:
            async with self.engine.begin() as conn:
                await conn.execute(members.insert().values(subject=subject, team=team, role=role, added_by=added_by,
                                                           created_at=member.created_at))
        except sa.exc.IntegrityError:
            existing = await self.get(subject)
            where = f" of team {existing.team!r}" if existing is not None else ""
            raise MemberExistsError(f"{subject!r} is a member{where} already: remove them first "
                                    f"(DELETE /v0/members/{subject})") from None
        return member

    async def get(self, subject: str) -> Member | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(members.select().where(members.c.subject == subject))).first()
        return None if row is None else _member(row)

    async def find(self, *subjects: str) -> Member | None:
        """The member of the first of `subjects` (empty ones skipped) that is one, or None."""
        wanted = [subject for subject in subjects if subject]
        if not wanted:
            return None
        async with self.engine.connect() as conn:
            rows = (await conn.execute(members.select().where(members.c.subject.in_(wanted)))).all()
        found = {member.subject: member for member in map(_member, rows)}
        return next((found[subject] for subject in wanted if subject in found), None)

    async def list(self, team: str | None = None) -> list[Member]:
        """Every member (of `team` when given), by team and subject."""
        query = members.select().order_by(members.c.team, members.c.subject)
        if team is not None:
            query = query.where(members.c.team == team)
        async with self.engine.connect() as conn:
            return [_member(row) for row in (await conn.execute(query)).all()]

    async def count(self, team: str) -> int:
        query = sa.select(sa.func.count()).select_from(members).where(members.c.team == team)
        async with self.engine.connect() as conn:
            return int((await conn.execute(query)).scalar_one())

    async def remove(self, subject: str, team: str | None = None) -> Member | None:
        """Remove a member (of `team` when given); the member removed, or None when there was none."""
        member = await self.get(subject)
        if member is None or (team is not None and member.team != team):
            return None
        async with self.engine.begin() as conn:
            await conn.execute(members.delete().where(members.c.subject == subject, members.c.team == member.team))
        return member


def _member(row: sa.Row[object]) -> Member:
    m = row._mapping
    return Member(m["subject"], m["team"], m["role"], m["added_by"], m["created_at"])

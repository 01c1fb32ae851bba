"""API tokens: issued once in clear (`sim_` and 43 URL-safe characters, 256 random bits), kept
as their SHA-256 (a token this random needs no slow hash), found by that hash, revoked by id.

A token made by a token keeps its parent's id (`parent_id`): revoking a token revokes every
token it made, transitively, in one transaction, and a token whose parent is revoked cannot make
one (checked in the transaction that inserts it, so a revoke and a make at once never leave a
live child of a revoked token)."""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass

import sqlalchemy as sa
from platform_database import add_missing_columns, create_tables
from sqlalchemy.ext.asyncio import AsyncEngine

from platform_gateway.identity.token_table import ADDED_COLUMNS, api_tokens, metadata

PREFIX = "sim_"
ROLES = ("operator", "admin", "member")
# last_used_at is written at most this often per token (not on every request of the step path)
TOUCH_INTERVAL_S = 60.0


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True)
class TokenRecord:
    """An API token as listed (never its secret)."""

    id: str
    name: str
    owner: str
    team: str
    role: str
    created_at: float
    last_used_at: float | None
    expires_at: float | None
    revoked_at: float | None
    parent_id: str | None = None

    def refusal(self, now: float) -> str | None:
        """Why this token is refused now ("revoked", "expired"), or None when it is good."""
        if self.revoked_at is not None:
            return f"the API token {self.id} ({self.name}) was revoked"
        if self.expires_at is not None and now >= self.expires_at:
            return f"the API token {self.id} ({self.name}) expired"
        return None


class ParentRevokedError(Exception):
    """The token that asked to make one was revoked meanwhile (the message says so)."""


@dataclass(frozen=True)
class Revocation:
    """A revoked token as it is now, and every token revoked with it: its id first, then what it
    made, level by level (those revoked before are listed too; they keep their first time)."""

    record: TokenRecord
    revoked_ids: tuple[str, ...]


def lineage(records: list[TokenRecord], roots: set[str]) -> list[TokenRecord]:
    """The records whose id is in `roots` or whose parent, transitively, is; in `records`' order."""
    children: dict[str, list[str]] = {}
    for record in records:
        if record.parent_id is not None:
            children.setdefault(record.parent_id, []).append(record.id)
    found, frontier = set(roots), list(roots)
    while frontier:
        for child in children.get(frontier.pop(), ()):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return [record for record in records if record.id in found]


class TokenStore:
    """The API tokens in the platform's database."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def create_tables(self) -> None:
        """Make the table, or add the columns a table an older version made lacks."""
        await create_tables(self.engine, metadata, add_missing_columns(api_tokens, *ADDED_COLUMNS))

    async def issue(self, name: str, team: str, role: str, owner: str, expires_at: float | None = None,
                    parent_id: str | None = None) -> tuple[TokenRecord, str]:
        """A new token: its record and its secret (shown to the caller once, kept nowhere).

        Raises:
            ParentRevokedError: `parent_id` is revoked (or gone), maybe by a revoke at this moment.
        """
        secret = PREFIX + secrets.token_urlsafe(32)
        record = TokenRecord(f"tok-{secrets.token_hex(6)}", name, owner, team, role, time.time(), None, expires_at,
                             None, parent_id)
        async with self.engine.begin() as conn:
            await conn.execute(api_tokens.insert().values(secret_sha256=secret_hash(secret), **_row(record)))
            if parent_id is not None:
                # After the insert: SQLite holds its write lock now, and PostgreSQL's FOR UPDATE waits
                # for a revoke of the parent in flight (whose walk then finds this row, or which
                # committed first and is seen here).
                query = sa.select(api_tokens.c.revoked_at, api_tokens.c.name).where(api_tokens.c.id == parent_id)
                parent = (await conn.execute(query.with_for_update())).first()
                if parent is None or parent.revoked_at is not None:
                    what = f"({parent.name}) " if parent is not None else ""
                    raise ParentRevokedError(f"the API token {parent_id} {what}was revoked")
        return record, secret

    async def find(self, secret: str) -> TokenRecord | None:
        """The token whose secret is `secret` (revoked and expired ones too), or None."""
        async with self.engine.connect() as conn:
            row = (await conn.execute(api_tokens.select().where(api_tokens.c.secret_sha256 == secret_hash(secret)))).first()
        return None if row is None else _record(row)

    async def list(self, team: str | None = None) -> list[TokenRecord]:
        """Every token (of `team` when given), oldest first."""
        query = api_tokens.select().order_by(api_tokens.c.created_at, api_tokens.c.id)
        if team is not None:
            query = query.where(api_tokens.c.team == team)
        async with self.engine.connect() as conn:
            return [_record(row) for row in (await conn.execute(query)).all()]

    async def revoke(self, token_id: str, team: str | None = None) -> Revocation | None:
        """Revoke token `token_id` (of `team` when given) and every token it made, transitively,
        in one transaction at one time; None when there is no such token (a revoked one stays
        revoked at its first time)."""
        where = api_tokens.c.id == token_id
        if team is not None:
            where = sa.and_(where, api_tokens.c.team == team)
        now = time.time()
        async with self.engine.begin() as conn:
            await conn.execute(api_tokens.update().where(sa.and_(where, api_tokens.c.revoked_at.is_(None)))
                               .values(revoked_at=now))
            row = (await conn.execute(api_tokens.select().where(where))).first()
            if row is None:
                return None
            revoked, frontier = [token_id], [token_id]
            while frontier:  # level by level; FOR UPDATE waits for a make under one of them (see issue)
                query = (sa.select(api_tokens.c.id).where(api_tokens.c.parent_id.in_(frontier))
                         .order_by(api_tokens.c.created_at, api_tokens.c.id).with_for_update())
                frontier = [child for child in (await conn.execute(query)).scalars() if child not in revoked]
                revoked += frontier
            if len(revoked) > 1:
                await conn.execute(api_tokens.update()
                                   .where(api_tokens.c.id.in_(revoked[1:]), api_tokens.c.revoked_at.is_(None))
                                   .values(revoked_at=now))
        return Revocation(_record(row), tuple(revoked))

    async def touch(self, record: TokenRecord, now: float) -> bool:
        """Note a use, at most once a TOUCH_INTERVAL_S per token; whether it was written."""
        if record.last_used_at is not None and now - record.last_used_at < TOUCH_INTERVAL_S:
            return False
        async with self.engine.begin() as conn:
            await conn.execute(api_tokens.update().where(api_tokens.c.id == record.id).values(last_used_at=now))
        return True


def _row(record: TokenRecord) -> dict[str, object]:
    return {"id": record.id, "name": record.name, "owner": record.owner, "team": record.team, "role": record.role,
            "created_at": record.created_at, "last_used_at": record.last_used_at, "expires_at": record.expires_at,
            "revoked_at": record.revoked_at, "parent_id": record.parent_id}


def _record(row: sa.Row[object]) -> TokenRecord:
    m = row._mapping
    return TokenRecord(m["id"], m["name"], m["owner"], m["team"], m["role"], m["created_at"], m["last_used_at"],
                       m["expires_at"], m["revoked_at"], m["parent_id"])

"""API tokens: issued once in clear (`sim_` and 43 URL-safe characters, 256 random bits), kept
as their SHA-256 (a token this random needs no slow hash), found by that hash, revoked by id."""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass

import sqlalchemy as sa
from platform_database import create_tables
from sqlalchemy.ext.asyncio import AsyncEngine

from platform_gateway.identity.token_table import api_tokens, metadata

PREFIX = "sim_"
ROLES = ("admin", "member")
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

    def refusal(self, now: float) -> str | None:
        """Why this token is refused now ("revoked", "expired"), or None when it is good."""
        if self.revoked_at is not None:
            return f"the API token {self.id} ({self.name}) was revoked"
        if self.expires_at is not None and now >= self.expires_at:
            return f"the API token {self.id} ({self.name}) expired"
        return None


class TokenStore:
    """The API tokens in the platform's database."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def create_tables(self) -> None:
        await create_tables(self.engine, metadata)

    async def issue(self, name: str, team: str, role: str, owner: str,
                    expires_at: float | None = None) -> tuple[TokenRecord, str]:
        """A new token: its record and its secret (shown to the caller once, kept nowhere)."""
        secret = PREFIX + secrets.token_urlsafe(32)
        record = TokenRecord(f"tok-{secrets.token_hex(6)}", name, owner, team, role, time.time(), None, expires_at, None)
        async with self.engine.begin() as conn:
            await conn.execute(api_tokens.insert().values(secret_sha256=secret_hash(secret), **_row(record)))
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

    async def revoke(self, token_id: str, team: str | None = None) -> TokenRecord | None:
        """Revoke token `token_id` (of `team` when given); returns it, or None when there is no
        such token (a revoked one stays revoked at its first time)."""
        where = api_tokens.c.id == token_id
        if team is not None:
            where = sa.and_(where, api_tokens.c.team == team)
        async with self.engine.begin() as conn:
            await conn.execute(api_tokens.update().where(sa.and_(where, api_tokens.c.revoked_at.is_(None)))
                               .values(revoked_at=time.time()))
            row = (await conn.execute(api_tokens.select().where(where))).first()
        return None if row is None else _record(row)

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
            "revoked_at": record.revoked_at}


def _record(row: sa.Row[object]) -> TokenRecord:
    m = row._mapping
    return TokenRecord(m["id"], m["name"], m["owner"], m["team"], m["role"], m["created_at"], m["last_used_at"],
                       m["expires_at"], m["revoked_at"])

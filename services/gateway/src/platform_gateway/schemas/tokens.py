"""API tokens (PLATFORM_AUTH=token)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from platform_gateway.identity.tokens import TokenRecord

TEAM_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"


class TokenCreate(BaseModel):
    name: str = Field(min_length=1, max_length=200, description="what the token is for, e.g. 'training cluster'")
    role: Literal["member", "admin"] = Field(default="member", description="admin tokens are made by admins only")
    team: str | None = Field(default=None, pattern=TEAM_PATTERN,
                             description="its team (admins only; default the caller's)", examples=["default"])
    expires_in_days: float | None = Field(default=None, gt=0, le=3650, description="null: it never expires")


class TokenPublic(BaseModel):
    """An API token as listed: never its secret, which only its creation's answer holds."""

    id: str = Field(description="what DELETE /v0/tokens/{id} names", examples=["tok-3f2a9c0d1e4b"])
    name: str
    owner: str = Field(description="who made it: 'admin' (PLATFORM_ADMIN_TOKEN) or a token's id")
    team: str
    role: str
    created_at: float
    last_used_at: float | None = Field(description="within a minute; null: never used")
    expires_at: float | None
    revoked_at: float | None

    @classmethod
    def of(cls, record: TokenRecord) -> TokenPublic:
        return cls(id=record.id, name=record.name, owner=record.owner, team=record.team, role=record.role,
                   created_at=record.created_at, last_used_at=record.last_used_at, expires_at=record.expires_at,
                   revoked_at=record.revoked_at)


class TokenCreated(TokenPublic):
    token: str = Field(description="the secret: shown this once, kept by the platform only as its SHA-256")


class TokenListPublic(BaseModel):
    tokens: list[TokenPublic]

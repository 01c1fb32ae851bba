"""API tokens (PLATFORM_AUTH=token)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from platform_gateway.identity.tokens import TokenRecord

TEAM_PATTERN = r"^[a-z0-9][a-z0-9-]{0,62}$"


class TokenCreate(BaseModel):
    name: str = Field(min_length=1, max_length=200, description="what the token is for, e.g. 'training cluster'")
    role: Literal["member", "admin", "operator"] = Field(
        default="member", description="never above the caller's: admin tokens by admins and the operator, operator "
                                      "tokens by the operator")
    team: str | None = Field(default=None, pattern=TEAM_PATTERN,
                             description="its team (another than the caller's: the operator only; default the caller's)",
                             examples=["default"])
    expires_in_days: float | None = Field(
        default=None, gt=0, le=3650,
        description="null: it never expires. A token made by an API token expires no later than that token: left "
                    "out, it expires with it")


class TokenPublic(BaseModel):
    """An API token as listed: never its secret, which only its creation's answer holds."""

    id: str = Field(description="what DELETE /v0/tokens/{id} names", examples=["tok-3f2a9c0d1e4b"])
    name: str
    owner: str = Field(description="who made it: 'admin' (PLATFORM_ADMIN_TOKEN), a token's id, or 'oidc:<sub>'")
    team: str
    role: str
    created_at: float
    last_used_at: float | None = Field(description="within a minute; null: never used")
    expires_at: float | None
    revoked_at: float | None
    parent_id: str | None = Field(default=None, description="the API token that made it (revoking that one revokes "
                                                            "this one); null: made by PLATFORM_ADMIN_TOKEN or a "
                                                            "signed-in user")

    @classmethod
    def of(cls, record: TokenRecord) -> TokenPublic:
        return cls(id=record.id, name=record.name, owner=record.owner, team=record.team, role=record.role,
                   created_at=record.created_at, last_used_at=record.last_used_at, expires_at=record.expires_at,
                   revoked_at=record.revoked_at, parent_id=record.parent_id)


class TokenCreated(TokenPublic):
    token: str = Field(description="the secret: shown this once, kept by the platform only as its SHA-256")


class TokenListPublic(BaseModel):
    tokens: list[TokenPublic]

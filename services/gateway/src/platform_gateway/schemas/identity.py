"""Who is signed in, and how to sign in."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class SignInPublic(BaseModel):
    """How this platform is signed in to (no token needed to ask)."""

    mode: Literal["self-hosted", "managed"] = Field(default="self-hosted", description="PLATFORM_MODE")
    auth: Literal["none", "token", "oidc"] = Field(description="PLATFORM_AUTH")
    token_required: bool = Field(description="whether every /v0 call needs a bearer token")
    oidc_issuer: str | None = Field(default=None, description="PLATFORM_OIDC_ISSUER, with auth oidc")
    oidc_client_id: str | None = Field(default=None, description="PLATFORM_OIDC_CLIENT_ID, with auth oidc")
    oidc_audience: str | None = Field(default=None, description="PLATFORM_OIDC_AUDIENCE (default: the client id), with auth oidc")


class IdentityPublic(BaseModel):
    """The caller, as the platform sees it."""

    subject: str = Field(description='"admin", "anonymous", "api-token", an API token\'s id, or "oidc:<sub>"')
    team: str
    role: Literal["operator", "admin", "member"] = Field(
        description="operator: the platform's (every team, quotas, usage); admin: of its team; member")
    token_name: str | None = Field(default=None, description="the name given to the API token presented, if one was")

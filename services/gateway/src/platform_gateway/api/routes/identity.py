"""Signing in: how (`GET /v0/sign-in`, open to everyone) and as whom (`GET /v0/me`)."""

from __future__ import annotations

from fastapi import APIRouter

from platform_gateway.api.deps import GatewayDep, IdentityDep
from platform_gateway.schemas.identity import IdentityPublic, SignInPublic

open_router = APIRouter(tags=["identity"])
router = APIRouter(tags=["identity"])


@open_router.get("/sign-in", response_model=SignInPublic)
async def sign_in(gateway: GatewayDep) -> SignInPublic:
    """How to sign in to this platform: whether a token is needed, and the identity provider's
    issuer and client id when it signs in with one. Needs no token (the web app asks it first)."""
    settings = gateway.settings
    oidc = settings.auth == "oidc"
    return SignInPublic(mode=settings.mode, auth=settings.auth, token_required=gateway.identity.required,
                        oidc_issuer=settings.oidc_issuer if oidc else None,
                        oidc_client_id=settings.oidc_client_id if oidc else None,
                        oidc_audience=(settings.oidc_audience or settings.oidc_client_id) if oidc else None)


@router.get("/me", response_model=IdentityPublic)
async def me(identity: IdentityDep) -> IdentityPublic:
    """Who the token you sent is: its subject, team and role, and an API token's name (a 401 says
    why it is refused)."""
    token_name = identity.token.name if identity.token is not None else None
    return IdentityPublic(subject=identity.subject, team=identity.team, role=identity.role, token_name=token_name)

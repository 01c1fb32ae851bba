"""API tokens (PLATFORM_AUTH=token): made, listed and revoked by admins (any team) and members
(their own team's member tokens)."""

from __future__ import annotations

import time

from fastapi import APIRouter

from platform_gateway.api.deps import GatewayDep, IdentityDep
from platform_gateway.errors import ConflictError, NotFoundError, PermissionDeniedError
from platform_gateway.gateway import Gateway
from platform_gateway.identity.tokens import TokenStore
from platform_gateway.schemas.sessions import ErrorPublic
from platform_gateway.schemas.tokens import TokenCreate, TokenCreated, TokenListPublic, TokenPublic

router = APIRouter(prefix="/tokens", tags=["tokens"])
DAY_S = 86_400.0


def _store(gateway: Gateway) -> TokenStore:
    if gateway.identity.tokens is None:
        raise ConflictError(f"API tokens need PLATFORM_AUTH=token or oidc; this platform runs with "
                            f"PLATFORM_AUTH={gateway.identity.auth}")
    return gateway.identity.tokens


@router.post("", status_code=201, response_model=TokenCreated,
             responses={403: {"model": ErrorPublic}, 409: {"model": ErrorPublic},
                        422: {"model": ErrorPublic, "description": "a bad name, role, team or expiry"}})
async def create_token(body: TokenCreate, gateway: GatewayDep, identity: IdentityDep) -> TokenCreated:
    """Make an API token. The answer holds its secret, this once. Members make member tokens of
    their own team; admins any role, of any team."""
    store = _store(gateway)
    if not identity.is_admin and body.role == "admin":
        raise PermissionDeniedError("only admins make admin tokens: ask for role member", field="role")
    if not identity.is_admin and body.team not in (None, identity.team):
        raise PermissionDeniedError(f"members make tokens of their own team ({identity.team}) only", field="team")
    expires = time.time() + body.expires_in_days * DAY_S if body.expires_in_days is not None else None
    record, secret = await store.issue(body.name, body.team or identity.team, body.role, identity.subject, expires)
    return TokenCreated(**TokenPublic.of(record).model_dump(), token=secret)


@router.get("", response_model=TokenListPublic, responses={409: {"model": ErrorPublic}})
async def list_tokens(gateway: GatewayDep, identity: IdentityDep) -> TokenListPublic:
    """API tokens, oldest first: an admin sees every team's, a member their team's."""
    records = await _store(gateway).list(None if identity.is_admin else identity.team)
    return TokenListPublic(tokens=[TokenPublic.of(r) for r in records])


@router.delete("/{token_id}", response_model=TokenPublic,
               responses={404: {"model": ErrorPublic}, 409: {"model": ErrorPublic}})
async def revoke_token(token_id: str, gateway: GatewayDep, identity: IdentityDep) -> TokenPublic:
    """Revoke an API token: it is refused from now on (through other gateways within 5 s). A
    member revokes their team's; another team's token is a 404, as a missing one."""
    record = await _store(gateway).revoke(token_id, None if identity.is_admin else identity.team)
    if record is None:
        raise NotFoundError(f"no API token {token_id!r}")
    gateway.identity.forget(record.id)
    return TokenPublic.of(record)

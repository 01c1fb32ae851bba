"""API tokens (PLATFORM_AUTH=token): made, listed and revoked by the platform's operator (any
team, any role), a team's admins (their team's admin and member tokens) and members (member
tokens of their team, unless its admin turned that off; they see and revoke only their own).

A token made by an API token is its child (`parent_id`): it never outranks it, never outlives it
(left out, its expiry is the parent's), and revoking the parent revokes it."""

from __future__ import annotations

import datetime as dt
import math
import time

from fastapi import APIRouter

from platform_gateway.api.deps import GatewayDep, IdentityDep
from platform_gateway.errors import (ConflictError, InvalidArgumentError, NotFoundError, PermissionDeniedError,
                                     UnauthenticatedError)
from platform_gateway.gateway import Gateway
from platform_gateway.identity.authenticator import Identity
from platform_gateway.identity.tokens import ParentRevokedError, TokenRecord, TokenStore, lineage
from platform_gateway.schemas.sessions import ErrorPublic
from platform_gateway.schemas.tokens import TokenCreate, TokenCreated, TokenListPublic, TokenPublic

router = APIRouter(prefix="/tokens", tags=["tokens"])
DAY_S = 86_400.0
RANK = {"member": 0, "admin": 1, "operator": 2}


def _store(gateway: Gateway) -> TokenStore:
    if gateway.identity.tokens is None:
        raise ConflictError(f"API tokens need PLATFORM_AUTH=token or oidc; this platform runs with "
                            f"PLATFORM_AUTH={gateway.identity.auth}")
    return gateway.identity.tokens


async def _check_may_make(gateway: Gateway, identity: Identity, body: TokenCreate) -> None:
    """Raises PermissionDeniedError (403) for a role above the caller's, another team than the
    caller's (but for the operator), or a member of a team whose admin turned member tokens off."""
    if RANK[body.role] > RANK.get(identity.role, 0):
        if body.role == "operator":
            raise PermissionDeniedError("only the platform's operator makes operator tokens: ask for role admin "
                                        "or member", field="role")
        raise PermissionDeniedError("only admins make admin tokens: ask for role member", field="role")
    if not identity.is_operator and body.team not in (None, identity.team):
        raise PermissionDeniedError(f"{identity.role}s make tokens of their own team ({identity.team}) only",
                                    field="team")
    if identity.role == "member" and gateway.identity.directory is not None:
        row = await (await gateway.identity.directory.teams()).get(identity.team)
        if row is not None and not row.members_mint_tokens:
            raise PermissionDeniedError(f"the admin of team {identity.team!r} turned off API tokens made by members "
                                        "(members_mint_tokens=false): ask an admin of the team for one")


def _expiry(identity: Identity, body: TokenCreate, now: float) -> float | None:
    """When the new token expires: as asked, but never after the API token that makes it (left
    out: with it).

    Raises:
        InvalidArgumentError (422): a later expiry than the parent's, naming the latest allowed.
    """
    asked = body.expires_in_days
    parent = identity.token
    if parent is None or parent.expires_at is None:
        return None if asked is None else now + asked * DAY_S
    if "expires_in_days" not in body.model_fields_set:
        return parent.expires_at
    expires = None if asked is None else now + asked * DAY_S
    if expires is None or expires > parent.expires_at:
        left = max(parent.expires_at - now, 0.0) / DAY_S
        when = dt.datetime.fromtimestamp(parent.expires_at, dt.timezone.utc).isoformat(timespec="seconds")
        raise InvalidArgumentError(
            f"the API token {parent.id} expires {when}, and a token it makes expires no later: leave expires_in_days "
            f"out to expire with it, or ask for expires_in_days of at most {math.floor(left * 10_000) / 10_000:g}",
            field="expires_in_days")
    return expires


@router.post("", status_code=201, response_model=TokenCreated,
             responses={403: {"model": ErrorPublic}, 409: {"model": ErrorPublic},
                        422: {"model": ErrorPublic, "description": "a bad name, role, team or expiry"}})
async def create_token(body: TokenCreate, gateway: GatewayDep, identity: IdentityDep) -> TokenCreated:
    """Make an API token. The answer holds its secret, this once. The operator makes any role, of
    any team; a team's admin admin or member tokens of their team; a member member tokens of
    their team (unless its admin turned that off: `members_mint_tokens`). A token made by an API
    token expires no later than it (left out: with it) and is revoked with it."""
    store = _store(gateway)
    await _check_may_make(gateway, identity, body)
    expires = _expiry(identity, body, time.time())
    parent_id = identity.token.id if identity.token is not None else None
    try:
        record, secret = await store.issue(body.name, body.team or identity.team, body.role, identity.subject,
                                           expires, parent_id=parent_id)
    except ParentRevokedError as exc:  # revoked through another gateway, which this one remembers
        raise UnauthenticatedError(str(exc)) from None
    return TokenCreated(**TokenPublic.of(record).model_dump(), token=secret)


async def _visible(store: TokenStore, identity: Identity) -> list[TokenRecord]:
    """The tokens the caller sees, oldest first: the operator every team's, a team's admin their
    team's, a member the token they present (or, signed in, none) and those made by them,
    transitively."""
    if identity.is_operator:
        return await store.list()
    records = await store.list(identity.team)
    if identity.manages_team:
        return records
    own = {record.id for record in records if record.id == identity.subject or record.owner == identity.subject}
    return lineage(records, own)


@router.get("", response_model=TokenListPublic, responses={409: {"model": ErrorPublic}})
async def list_tokens(gateway: GatewayDep, identity: IdentityDep) -> TokenListPublic:
    """API tokens, oldest first: the operator sees every team's, a team's admin their team's, a
    member their own (the one they present, those they made and those made by those)."""
    records = await _visible(_store(gateway), identity)
    return TokenListPublic(tokens=[TokenPublic.of(r) for r in records])


@router.delete("/{token_id}", response_model=TokenPublic,
               responses={404: {"model": ErrorPublic}, 409: {"model": ErrorPublic}})
async def revoke_token(token_id: str, gateway: GatewayDep, identity: IdentityDep) -> TokenPublic:
    """Revoke an API token and every token it made, transitively: they are refused from now on
    (through other gateways within 5 s). A token the caller does not see (`GET /v0/tokens`) is a
    404, as a missing one."""
    store = _store(gateway)
    if not identity.is_operator and token_id not in {record.id for record in await _visible(store, identity)}:
        raise NotFoundError(f"no API token {token_id!r}")
    revocation = await store.revoke(token_id)
    if revocation is None:
        raise NotFoundError(f"no API token {token_id!r}")
    for revoked in revocation.revoked_ids:
        gateway.identity.forget(revoked)
    return TokenPublic.of(revocation.record)

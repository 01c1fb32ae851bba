"""Teams and their quotas: listed by everyone (an admin or member sees their own team), created,
deleted and given quotas by the platform's operator; a team's admin sets its own team's
`members_mint_tokens`. The broker reads the quotas when it creates a session
(`platform_broker.usage`).

A team exists when it has a row (`POST /v0/teams`), and "default" always does (a self-hosted
platform's one team; `PATCH /v0/teams/default` gives it quotas). A caller's own team is shown to
them whether or not it has a row (it has no quota then).
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter, defaultdict

from fastapi import APIRouter
from platform_contracts.teams import DEFAULT_TEAM, owning_team
from platform_database.teams import Team, TeamExistsError

from platform_gateway.api.deps import BrokerDep, GatewayDep, IdentityDep
from platform_gateway.broker import BrokerClient
from platform_gateway.errors import ConflictError, NotFoundError, PermissionDeniedError
from platform_gateway.gateway import Gateway
from platform_gateway.identity.authenticator import Identity
from platform_gateway.schemas.sessions import ErrorPublic
from platform_gateway.schemas.teams import TeamCreate, TeamListPublic, TeamPublic, TeamUpdate
from platform_gateway.identity.team_directory import TeamDirectory

router = APIRouter(prefix="/teams", tags=["teams"],
                   responses={code: {"model": ErrorPublic} for code in (403, 404, 409, 422, 503)})


def directory_of(gateway: Gateway) -> TeamDirectory:
    directory = gateway.identity.directory
    assert directory is not None, "Gateway.build gives the authenticator a TeamDirectory"
    return directory


def _who(identity: Identity) -> str:
    article = "an" if identity.role[0] in "aeiou" else "a"
    return f"you are {article} {identity.role} of team {identity.team!r}"


def require_admin(identity: Identity, what: str) -> None:
    """Raises PermissionDeniedError (403) naming the role `what` needs, unless a team's admin or
    the operator asks."""
    if not identity.manages_team:
        raise PermissionDeniedError(f"only admins {what}: {_who(identity)}")


def require_operator(identity: Identity, what: str) -> None:
    """Raises PermissionDeniedError (403) naming the operator role, unless the operator asks."""
    if not identity.is_operator:
        raise PermissionDeniedError(f"only the platform's operator {what} (role operator): {_who(identity)}")


def check_visible(identity: Identity, team: str) -> None:
    """Anyone but the operator asking about another team gets the 404 a missing team gets."""
    if not identity.reaches(team):
        raise NotFoundError(f"no team {team!r}")


def month_days(now: float | None = None) -> tuple[str, str]:
    """The current UTC month's first day and today, YYYY-MM-DD."""
    today = dt.datetime.fromtimestamp(time.time() if now is None else now, dt.timezone.utc).date()
    return today.replace(day=1).isoformat(), today.isoformat()


async def team_stats(broker: BrokerClient, team: str | None) -> tuple[Counter[str], dict[str, float]]:
    """Open sessions and instance-hours this month per team (only `team`'s when given)."""
    sessions = await broker.list_sessions(team=team)
    since, until = month_days()
    hours: dict[str, float] = defaultdict(float)
    for row in await broker.usage(team, since, until):
        hours[owning_team(row.team)] += row.instance_hours
    return Counter(owning_team(s.options.team) for s in sessions), hours


def public(name: str, row: Team | None, open_sessions: Counter[str], hours: dict[str, float]) -> TeamPublic:
    return TeamPublic(name=name, max_sessions=row.max_sessions if row else None,
                      instance_hours_per_month=row.instance_hours_per_month if row else None,
                      members_mint_tokens=row.members_mint_tokens if row else True,
                      created_at=row.created_at if row else None, open_sessions=open_sessions[name],
                      instance_hours_this_month=round(hours.get(name, 0.0), 6))


async def _existing(gateway: Gateway, identity: Identity, name: str) -> Team | None:
    """The team's row (None for a team that exists without one), checked visible to the caller.

    Raises:
        NotFoundError: no such team, or another team's for anyone but the operator.
    """
    check_visible(identity, name)
    row = await (await directory_of(gateway).teams()).get(name)
    if row is None and name not in (DEFAULT_TEAM, identity.team):
        raise NotFoundError(f"no team {name!r}")
    return row


@router.get("", response_model=TeamListPublic)
async def list_teams(gateway: GatewayDep, broker: BrokerDep, identity: IdentityDep) -> TeamListPublic:
    """Teams by name with their quotas and use: the operator sees every team, a team's admin or
    member their own."""
    store = await directory_of(gateway).teams()
    if identity.is_operator:
        rows = {row.name: row for row in await store.list()}
        names = sorted({*rows, DEFAULT_TEAM, identity.team})
        open_sessions, hours = await team_stats(broker, None)
    else:
        own = await store.get(identity.team)
        rows = {identity.team: own} if own is not None else {}
        names = [identity.team]
        open_sessions, hours = await team_stats(broker, identity.team)
    return TeamListPublic(teams=[public(name, rows.get(name), open_sessions, hours) for name in names])


@router.post("", status_code=201, response_model=TeamPublic,
             responses={403: {"model": ErrorPublic}, 409: {"model": ErrorPublic},
                        422: {"model": ErrorPublic, "description": "a bad name or quota"}})
async def create_team(body: TeamCreate, gateway: GatewayDep, identity: IdentityDep) -> TeamPublic:
    """Create a team, with its quotas (null or left out: no limit). The operator only."""
    require_operator(identity, "creates teams")
    if body.name == DEFAULT_TEAM:
        raise ConflictError(f"the team {DEFAULT_TEAM!r} always exists: set its quotas with PATCH /v0/teams/{DEFAULT_TEAM}")
    try:
        row = await (await directory_of(gateway).teams()).create(body.name, body.max_sessions,
                                                                 body.instance_hours_per_month,
                                                                 members_mint_tokens=body.members_mint_tokens is not False)
    except TeamExistsError:
        raise ConflictError(f"team {body.name!r} exists already") from None
    return public(row.name, row, Counter(), {})


@router.get("/{name}", response_model=TeamPublic, responses={404: {"model": ErrorPublic}})
async def get_team(name: str, gateway: GatewayDep, broker: BrokerDep, identity: IdentityDep) -> TeamPublic:
    """A team with its quotas and use. Anyone but the operator asking for another team gets a
    404, as for a missing one."""
    row = await _existing(gateway, identity, name)
    open_sessions, hours = await team_stats(broker, name)
    return public(name, row, open_sessions, hours)


@router.patch("/{name}", response_model=TeamPublic,
              responses={403: {"model": ErrorPublic}, 404: {"model": ErrorPublic}, 422: {"model": ErrorPublic}})
async def update_team(name: str, body: TeamUpdate, gateway: GatewayDep, broker: BrokerDep,
                      identity: IdentityDep) -> TeamPublic:
    """Set or clear a team's quotas (the operator only) and its `members_mint_tokens` (its
    admins too): a field left out stays, null clears a quota (no limit). The broker applies
    quotas to the next create. A team's admin naming another team gets a 404, as for a missing
    one; naming a quota, a 403."""
    require_admin(identity, "change a team's quotas or settings")
    check_visible(identity, name)
    changes = body.model_dump(include=body.model_fields_set)
    if changes.get("members_mint_tokens", False) is None:
        del changes["members_mint_tokens"]  # null: as it is
    if set(changes) - {"members_mint_tokens"}:
        require_operator(identity, "changes quotas")
    store = await directory_of(gateway).teams()
    row = await store.update(name, **changes, create=name in (DEFAULT_TEAM, identity.team))
    if row is None:
        raise NotFoundError(f"no team {name!r}")
    open_sessions, hours = await team_stats(broker, name)
    return public(name, row, open_sessions, hours)


@router.delete("/{name}", response_model=TeamPublic,
               responses={403: {"model": ErrorPublic}, 404: {"model": ErrorPublic}, 409: {"model": ErrorPublic}})
async def delete_team(name: str, gateway: GatewayDep, broker: BrokerDep, identity: IdentityDep) -> TeamPublic:
    """Delete a team (its row and quotas), which must have no open session and no member; its API
    tokens are revoked with it. The answer is the team as it was. The operator only."""
    require_operator(identity, "deletes teams")
    if name == DEFAULT_TEAM:
        raise ConflictError(f"the team {DEFAULT_TEAM!r} always exists: clear its quotas with PATCH /v0/teams/{DEFAULT_TEAM}")
    directory = directory_of(gateway)
    store = await directory.teams()
    row = await store.get(name)
    if row is None:
        raise NotFoundError(f"no team {name!r}")
    open_sessions, hours = await team_stats(broker, name)
    if open_sessions[name]:
        count = open_sessions[name]
        raise ConflictError(f"team {name!r} has {count} open session{'s' if count != 1 else ''}: close "
                            f"{'them' if count != 1 else 'it'} first (DELETE /v0/sessions/{{id}})")
    members = await (await directory.members()).count(name)
    if members:
        raise ConflictError(f"team {name!r} has {members} member{'s' if members != 1 else ''}: remove "
                            f"{'them' if members != 1 else 'it'} first (DELETE /v0/members/{{subject}})")
    await store.delete(name)
    await _revoke_tokens_of(gateway, name)
    return public(name, row, open_sessions, hours)


async def _revoke_tokens_of(gateway: Gateway, team: str) -> None:
    """Revoke the live API tokens of a deleted team (they would act for a team that is gone)."""
    authenticator = gateway.identity
    if authenticator.tokens is None:
        return
    for record in await authenticator.tokens.list(team):
        if record.revoked_at is None:
            revocation = await authenticator.tokens.revoke(record.id)
            for token_id in revocation.revoked_ids if revocation is not None else ():
                authenticator.forget(token_id)

"""Members: who signs in through the identity provider (PLATFORM_AUTH=oidc) into which team, with
which role. Listed by everyone (a team's admin or member sees their own team's), added and
removed by a team's admins (their own team's) and the platform's operator (any team's)."""

from __future__ import annotations

from fastapi import APIRouter, Query
from platform_contracts.teams import DEFAULT_TEAM

from platform_gateway.api.deps import GatewayDep, IdentityDep
from platform_gateway.api.routes.teams import check_visible, directory_of, require_admin
from platform_gateway.errors import ConflictError, NotFoundError, PermissionDeniedError
from platform_gateway.identity.members import Member, MemberExistsError
from platform_gateway.schemas.sessions import ErrorPublic
from platform_gateway.schemas.teams import MemberCreate, MemberListPublic, MemberPublic
from platform_gateway.schemas.tokens import TEAM_PATTERN

router = APIRouter(prefix="/members", tags=["teams"],
                   responses={code: {"model": ErrorPublic} for code in (403, 404, 409, 422, 503)})


def _public(member: Member) -> MemberPublic:
    return MemberPublic(subject=member.subject, team=member.team, role=member.role, added_by=member.added_by,
                        created_at=member.created_at)


@router.get("", response_model=MemberListPublic, responses={404: {"model": ErrorPublic}})
async def list_members(gateway: GatewayDep, identity: IdentityDep,
                       team: str | None = Query(default=None, pattern=TEAM_PATTERN,
                                                description="only this team's (the operator; others: their own)")
                       ) -> MemberListPublic:
    """Members by team and subject: the operator sees every team's (or `team`'s), a team's admin
    or member their own team's (another team is a 404, as a missing one)."""
    if team is not None:
        check_visible(identity, team)
    wanted = team if identity.is_operator else identity.team
    members = await (await directory_of(gateway).members()).list(wanted)
    return MemberListPublic(members=[_public(member) for member in members])


@router.post("", status_code=201, response_model=MemberPublic,
             responses={403: {"model": ErrorPublic}, 404: {"model": ErrorPublic, "description": "no such team"},
                        409: {"model": ErrorPublic}, 422: {"model": ErrorPublic}})
async def add_member(body: MemberCreate, gateway: GatewayDep, identity: IdentityDep) -> MemberPublic:
    """Add a member: from their next sign-in (within 5 s through other gateways) whoever signs in
    with that `sub` or email gets the team and role. A team's admins add to their own team (another
    team is a 403), the operator to any; the team must exist."""
    require_admin(identity, "add members")
    if not identity.is_operator and body.team != identity.team:
        raise PermissionDeniedError(f"team admins add members to their own team ({identity.team}) only", field="team")
    directory = directory_of(gateway)
    if body.team != DEFAULT_TEAM and await (await directory.teams()).get(body.team) is None:
        raise NotFoundError(f"no team {body.team!r}: create it first (POST /v0/teams)", field="team")
    try:
        member = await (await directory.members()).add(body.subject, body.team, body.role, identity.subject)
    except MemberExistsError as exc:
        raise ConflictError(str(exc), field="subject") from None
    gateway.identity.forget_members()
    return _public(member)


@router.delete("/{subject}", response_model=MemberPublic,
               responses={403: {"model": ErrorPublic}, 404: {"model": ErrorPublic}})
async def remove_member(subject: str, gateway: GatewayDep, identity: IdentityDep) -> MemberPublic:
    """Remove a member; the answer is the member as they were. Their identity-provider tokens stop
    giving them the team at once here, within 5 s through other gateways. A team's admins remove
    their own team's (another team's member is a 404, as a missing one), the operator any."""
    require_admin(identity, "remove members")
    member = await (await directory_of(gateway).members()).remove(subject, None if identity.is_operator
                                                                  else identity.team)
    if member is None:
        raise NotFoundError(f"no member {subject!r}")
    gateway.identity.forget_members()
    return _public(member)

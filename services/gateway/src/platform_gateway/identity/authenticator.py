"""The one place that decides who a request is (REST and the WebSocket alike).

Roles: `operator` (the platform's: every team, its quotas, members, tokens and usage), `admin`
(a team's: its own team's members, tokens, usage and token setting) and `member`. None of them
reaches another team's sessions, recordings or snapshots (`team_access`).

- `PLATFORM_AUTH=none` without `PLATFORM_API_TOKEN`: everyone is the operator, in the one team.
- `PLATFORM_AUTH=none` with `PLATFORM_API_TOKEN`: that shared token (the operator), and no other.
- `PLATFORM_AUTH=token`: `PLATFORM_ADMIN_TOKEN` (the bootstrap operator, of the default team), or
  an API token from `/v0/tokens` that is neither revoked nor expired (its team and role).
- `PLATFORM_AUTH=oidc`: the same, and the identity provider's tokens (`identity.oidc`): a
  token that is not an API token (`sim_...`) is checked as one of those. A signed-in user who
  is a member (`/v0/members`, by `sub` or by email) gets the member's team and role; an operator
  or admin of `PLATFORM_OIDC_ROLE_MAP` has that role either way (in the member's team, else the
  default one). Someone who is neither is a member of the default team on a self-hosted
  platform, and refused (403) on a managed one.

A refusal says why.

Found tokens are remembered for `CACHE_S` seconds, so the step path does not read the database
on every request; a revocation through this gateway takes effect at once, through another
gateway within `CACHE_S`. Members are remembered the same way (a change through this gateway at
once, through another within `CACHE_S`).
"""

from __future__ import annotations

import dataclasses
import secrets
import time
from dataclasses import dataclass

from platform_contracts.teams import DEFAULT_TEAM

from platform_gateway.errors import PermissionDeniedError, UnauthenticatedError, UnavailableError
from platform_gateway.identity.members import Member
from platform_gateway.identity.oidc import OidcClaims, OidcRefused, OidcUnavailable, OidcVerifier
from platform_gateway.identity.tokens import PREFIX, TokenRecord, TokenStore, secret_hash
from platform_gateway.identity.team_directory import TeamDirectory

CACHE_S = 5.0
MISSING = "send the header `Authorization: Bearer <token>`"


@dataclass(frozen=True)
class Identity:
    """Who a request is.

    Attributes:
        subject: "admin" (PLATFORM_ADMIN_TOKEN), "anonymous" (no sign-in needed), "api-token" (the
            shared PLATFORM_API_TOKEN), an API token's id, or "oidc:<sub>".
        team: the team whose resources it acts on.
        role: "operator", "admin" or "member".
        token: the API token it presented (None for the others): the parent of tokens it makes.
    """

    subject: str
    team: str
    role: str
    token: TokenRecord | None = None

    @property
    def is_operator(self) -> bool:
        """The platform's operator: every team, its quotas, members, tokens and usage."""
        return self.role == "operator"

    @property
    def manages_team(self) -> bool:
        """An admin of its team, or the operator: members and tokens of the team."""
        return self.role in ("operator", "admin")

    def reaches(self, team: str) -> bool:
        """Whether teams, members, tokens and usage of `team` are this caller's to see."""
        return self.is_operator or team == self.team


class Authenticator:
    def __init__(self, auth: str, api_token: str | None = None, admin_token: str | None = None,
                 tokens: TokenStore | None = None, oidc: OidcVerifier | None = None,
                 directory: TeamDirectory | None = None, managed: bool = False) -> None:
        self.auth = auth
        self.oidc = oidc
        self.directory = directory  # the members signed-in users are looked up in
        self.managed = managed
        self._members: dict[tuple[str, str], tuple[Member | None, float]] = {}
        self._api_token = api_token
        self._admin_token = admin_token
        self.tokens = tokens
        self._found: dict[str, tuple[TokenRecord, float]] = {}

    @property
    def required(self) -> bool:
        """Whether requests must bring a token."""
        return self.auth != "none" or bool(self._api_token)

    async def identify(self, presented: str | None) -> Identity:
        """The identity of a request that presented `presented` (None: no token).

        Raises:
            UnauthenticatedError: no token where one is needed, or one that is not good, saying why.
        """
        if self.auth == "none":
            if not self._api_token:
                return Identity("anonymous", DEFAULT_TEAM, "operator")
            if presented is None:
                raise UnauthenticatedError(f"this platform needs an API token: {MISSING}")
            if not _same(presented, self._api_token):
                raise UnauthenticatedError("the API token is not valid")
            return Identity("api-token", DEFAULT_TEAM, "operator")
        if presented is None:
            raise UnauthenticatedError(f"this platform needs an API token (PLATFORM_AUTH={self.auth}): {MISSING}")
        if self._admin_token and _same(presented, self._admin_token):
            return Identity("admin", DEFAULT_TEAM, "operator")
        if self.oidc is not None and not presented.startswith(PREFIX):
            return await self._signed_in(self.oidc, presented)
        record = await self._record(presented)
        if record is None:
            raise UnauthenticatedError("the API token is not valid: no such token on this platform")
        now = time.time()
        refusal = record.refusal(now)
        if refusal is not None:
            raise UnauthenticatedError(refusal)
        if self.tokens is not None and await self.tokens.touch(record, now):
            self._found[secret_hash(presented)] = (dataclasses.replace(record, last_used_at=now), time.monotonic())
        return Identity(record.id, record.team, record.role, record)

    async def _signed_in(self, oidc: OidcVerifier, presented: str) -> Identity:
        try:
            claims = await oidc.verify(presented)
        except OidcRefused as exc:
            raise UnauthenticatedError(str(exc)) from None
        except OidcUnavailable as exc:
            raise UnavailableError(str(exc)) from None
        subject = f"oidc:{claims.subject}"
        member = await self._member(claims)
        if member is not None:
            return Identity(subject, member.team, claims.role if claims.role != "member" else member.role)
        if claims.role != "member" or not self.managed:
            return Identity(subject, DEFAULT_TEAM, claims.role)
        who = f"{claims.subject!r}" + (f" ({claims.email})" if claims.email else "")
        raise PermissionDeniedError(f"the signed-in user {who} is not a member of any team: ask an admin to add "
                                    "them (POST /v0/members)")

    def forget_members(self) -> None:
        """Drop the remembered members (one was just added or removed here)."""
        self._members.clear()

    async def _member(self, claims: OidcClaims) -> Member | None:
        if self.directory is None:
            return None
        key = (claims.subject, claims.email)
        found = self._members.get(key)
        now = time.monotonic()
        if found is not None and now - found[1] < CACHE_S:
            return found[0]
        member = await (await self.directory.members()).find(claims.subject, claims.email)
        self._members[key] = (member, now)
        return member

    def forget(self, token_id: str) -> None:
        """Drop a remembered token (it was just revoked here)."""
        self._found = {key: value for key, value in self._found.items() if value[0].id != token_id}

    async def _record(self, presented: str) -> TokenRecord | None:
        if self.tokens is None:
            return None
        key = secret_hash(presented)
        found = self._found.get(key)
        now = time.monotonic()
        if found is not None and now - found[1] < CACHE_S:
            return found[0]
        record = await self.tokens.find(presented)
        if record is not None:
            self._found[key] = (record, now)
        return record


def _same(presented: str, expected: str) -> bool:
    return secrets.compare_digest(presented.encode(), expected.encode())

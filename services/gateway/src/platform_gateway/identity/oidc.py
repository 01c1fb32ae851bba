"""Identity-provider tokens (`PLATFORM_AUTH=oidc`): JWTs checked with `joserfc` against the
issuer's keys, never by hand.

The issuer's discovery document (`<PLATFORM_OIDC_ISSUER>/.well-known/openid-configuration`)
names its JWKS; the keys are fetched on first use and again when a token names a key id not
among them (at most once every `REFETCH_S`, so unknown ids cannot make the gateway hammer the
issuer). A token must be signed with one of those keys by an asymmetric algorithm (`ALGORITHMS`:
no `none`, no HMAC, so a public key used as an HMAC secret is refused), name the issuer
(`iss`) and the audience (`aud`: `PLATFORM_OIDC_AUDIENCE`, else the client id), and be within
its `exp` and `nbf` (`LEEWAY_S` of clock skew). Its groups (`groups`) give its role through
`PLATFORM_OIDC_ROLE_MAP` (`platform-admins=admin,...`; no match: member). Its `email` (unless
`email_verified` is false) is kept too: a member (`/v0/members`) may be named by it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from joserfc import errors as jose_errors
from joserfc import jwt
from joserfc.jwk import KeySet

ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"]
LEEWAY_S = 30
REFETCH_S = 30.0
ROLES = ("operator", "admin", "member")
UNKNOWN_KID = "the identity token is signed with a key the issuer does not have (unknown kid)"


class OidcRefused(Exception):
    """A token the issuer's keys and claims do not vouch for; the message says why."""


class OidcUnavailable(Exception):
    """The issuer's discovery document or keys cannot be fetched."""


def parse_role_map(text: str) -> dict[str, str]:
    """`platform-ops=operator,ml-leads=admin,ml-team=member` -> {"platform-ops": "operator", ...}.

    Raises:
        ValueError: an entry without `=` or with a role that is not operator, admin or member.
    """
    mapping: dict[str, str] = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        group, sep, role = (piece.strip() for piece in entry.partition("="))
        if not sep or not group or role not in ROLES:
            raise ValueError(f"PLATFORM_OIDC_ROLE_MAP entry {entry!r}: expected group=operator, group=admin "
                             "or group=member")
        mapping[group] = role
    return mapping


@dataclass(frozen=True)
class OidcClaims:
    """What the gateway takes from a good token."""

    subject: str
    role: str
    groups: tuple[str, ...]
    email: str = ""  # the `email` claim, unless `email_verified` is false; "" when none


class OidcVerifier:
    """Checks identity-provider tokens for one issuer and audience.

    Args:
        issuer: PLATFORM_OIDC_ISSUER, e.g. https://login.example.com/realms/acme.
        audience: what `aud` must hold (PLATFORM_OIDC_AUDIENCE, else PLATFORM_OIDC_CLIENT_ID).
        role_map: groups to roles (`parse_role_map`).
        keys: the issuer's keys when known already (tests); else fetched through discovery.
    """

    def __init__(self, issuer: str, audience: str, role_map: Mapping[str, str] | None = None,
                 keys: KeySet | None = None) -> None:
        self.issuer = issuer.rstrip("/")
        self.audience = audience
        self.role_map = dict(role_map or {})
        self._keys = keys
        self._fixed = keys is not None
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()

    async def verify(self, token: str) -> OidcClaims:
        """The claims of a good token.

        Raises:
            OidcRefused: the reason, e.g. "expired", "signed with a key the issuer does not have".
            OidcUnavailable: the issuer's keys cannot be fetched.
        """
        keys = await self._key_set(refresh=False)
        try:
            decoded = self._decode(token, keys)
        except jose_errors.InvalidKeyIdError:  # the issuer may have rotated its keys: ask again
            try:
                decoded = self._decode(token, await self._key_set(refresh=True))
            except jose_errors.InvalidKeyIdError:
                raise OidcRefused(UNKNOWN_KID) from None
        claims = decoded.claims
        registry = jwt.JWTClaimsRegistry(
            leeway=LEEWAY_S,
            iss={"essential": True, "value": self.issuer},
            aud={"essential": True, "value": self.audience},
            exp={"essential": True},
            sub={"essential": True},
        )
        try:
            registry.validate(claims)
        except jose_errors.ExpiredTokenError:
            raise OidcRefused("the identity token expired") from None
        except jose_errors.MissingClaimError as exc:
            raise OidcRefused(f"the identity token lacks a claim: {exc.description}") from None
        except jose_errors.InvalidClaimError as exc:
            claim = getattr(exc, "claim", "")
            if claim in ("nbf", "iat"):
                raise OidcRefused(f"the identity token is not valid yet ({claim} in the future)") from None
            raise OidcRefused(f"the identity token is for another issuer or audience ({exc.description}): "
                              f"expected issuer {self.issuer} and audience {self.audience}") from None
        groups = tuple(str(group) for group in claims.get("groups") or () if isinstance(group, str))
        mapped = {self.role_map.get(group) for group in groups}
        role = next((role for role in ROLES if role in mapped), "member")  # the highest of its groups' roles
        email = claims.get("email")
        verified = claims.get("email_verified") is not False
        return OidcClaims(str(claims["sub"]), role, groups, email if isinstance(email, str) and verified else "")

    def _decode(self, token: str, keys: KeySet) -> Any:
        try:
            return jwt.decode(token, keys, algorithms=ALGORITHMS)
        except jose_errors.InvalidKeyIdError:
            raise
        except jose_errors.BadSignatureError:
            raise OidcRefused("the identity token's signature does not match the issuer's key") from None
        except (jose_errors.UnsupportedAlgorithmError, jose_errors.MissingAlgorithmError) as exc:
            raise OidcRefused(f"the identity token's algorithm is not accepted ({exc.description}): "
                              f"one of {', '.join(ALGORITHMS)}") from None
        except (jose_errors.JoseError, ValueError) as exc:
            detail = getattr(exc, "description", None) or str(exc) or type(exc).__name__
            raise OidcRefused(f"the identity token is malformed: {detail}") from None

    async def _key_set(self, refresh: bool) -> KeySet:
        if self._fixed and self._keys is not None:
            if refresh:
                raise OidcRefused(UNKNOWN_KID)
            return self._keys
        async with self._lock:
            stale = self._keys is None or (refresh and time.monotonic() - self._fetched_at >= REFETCH_S)
            if stale:
                self._keys = await self._fetch()
                self._fetched_at = time.monotonic()
            elif refresh:
                raise OidcRefused(UNKNOWN_KID)
            assert self._keys is not None
            return self._keys

    async def _fetch(self) -> KeySet:
        try:
            async with httpx.AsyncClient(timeout=10) as http:
                discovery = (await http.get(f"{self.issuer}/.well-known/openid-configuration")).raise_for_status().json()
                jwks = (await http.get(discovery["jwks_uri"])).raise_for_status().json()
            return KeySet.import_key_set(jwks)
        except (httpx.HTTPError, KeyError, ValueError, jose_errors.JoseError) as exc:
            raise OidcUnavailable(f"the identity provider {self.issuer} cannot be asked for its keys: {exc}") from None

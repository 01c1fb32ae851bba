"""Identity-provider tokens checked by `OidcVerifier` against keys the test holds: a good one is
taken, and every way a token can be wrong is refused with its reason (none accepted)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from platform_gateway.identity.oidc import OidcRefused, OidcVerifier, parse_role_map

ISSUER, AUDIENCE = "https://login.example.test/realms/acme", "simulusion-platform"
KEY = RSAKey.generate_key(2048, parameters={"kid": "signing-1"})
OTHER = RSAKey.generate_key(2048, parameters={"kid": "signing-2"})


def claims(**over: object) -> dict[str, object]:
    now = int(time.time())
    return {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "iat": now, "exp": now + 300,
            "groups": ["ml-team"], **over}


def signed(payload: dict[str, object], key: RSAKey = KEY, header: dict[str, object] | None = None) -> str:
    return jwt.encode(header or {"alg": "RS256", "kid": key.kid}, payload, key)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@pytest.fixture
def verifier() -> OidcVerifier:
    public = KeySet([RSAKey.import_key(KEY.as_dict(private=False))])
    return OidcVerifier(ISSUER, AUDIENCE, parse_role_map("platform-ops=operator, platform-admins=admin, ml-team=member"), keys=public)


async def test_a_good_token_gives_its_subject_and_the_role_its_groups_map_to(verifier: OidcVerifier) -> None:
    member = await verifier.verify(signed(claims()))
    assert (member.subject, member.role, member.groups) == ("alice", "member", ("ml-team",))
    admin = await verifier.verify(signed(claims(sub="root", groups=["ml-team", "platform-admins"])))
    assert (admin.subject, admin.role) == ("root", "admin")
    operator = await verifier.verify(signed(claims(sub="ops", groups=["platform-admins", "platform-ops", "ml-team"])))
    assert operator.role == "operator"  # the highest of its groups' roles
    assert (await verifier.verify(signed(claims(groups=None)))).role == "member"  # no groups: member


def _tampered() -> str:
    head, _, sig = signed(claims()).split(".")
    return ".".join((head, b64(json.dumps(claims(sub="mallory", groups=["platform-admins"])).encode()), sig))


def _hs256_with_the_public_key() -> str:
    public_pem = KEY.as_pem(private=False)
    head = b64(json.dumps({"alg": "HS256", "kid": KEY.kid}).encode())
    body = b64(json.dumps(claims(groups=["platform-admins"])).encode())
    mac = hmac.new(public_pem, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(mac)}"


def _alg_none() -> str:
    head = b64(json.dumps({"alg": "none", "kid": KEY.kid}).encode())
    return f"{head}.{b64(json.dumps(claims()).encode())}."


@pytest.mark.parametrize(("make_token", "reason"), [
    (lambda: signed(claims(exp=int(time.time()) - 120)), "the identity token expired"),
    (lambda: signed(claims(nbf=int(time.time()) + 600)), "not valid yet"),
    (lambda: signed(claims(aud="another-app")), "another issuer or audience"),
    (lambda: signed(claims(iss="https://evil.example.test")), "another issuer or audience"),
    (_alg_none, "algorithm is not accepted"),
    (_hs256_with_the_public_key, "algorithm is not accepted"),
    (lambda: signed(claims(), key=OTHER), "unknown kid"),
    (lambda: signed(claims(), key=OTHER, header={"alg": "RS256", "kid": KEY.kid}), "signature does not match"),
    (_tampered, "signature does not match"),
    (lambda: signed({k: v for k, v in claims().items() if k != "sub"}), "lacks a claim"),
    (lambda: "not.a.jwt", "malformed"),
])
async def test_every_bad_token_is_refused_with_its_reason(verifier: OidcVerifier, make_token, reason: str) -> None:
    with pytest.raises(OidcRefused, match=reason):
        await verifier.verify(make_token())


def test_the_role_map_is_checked_when_read() -> None:
    assert parse_role_map("") == {} and parse_role_map("a=admin,b=member") == {"a": "admin", "b": "member"}
    assert parse_role_map("ops=operator") == {"ops": "operator"}
    for bad in ("a", "a=owner", "=admin"):
        with pytest.raises(ValueError, match="expected group=operator, group=admin or group=member"):
            parse_role_map(bad)

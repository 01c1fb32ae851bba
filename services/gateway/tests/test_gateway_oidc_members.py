"""Members signed in through a real OpenID provider (oidc-provider-mock): a member, named by the
provider's `sub` or by the token's email, gets their team and role; an operator or admin of the
role map has that role either way (an admin of the default team, or of the member's team);
someone who is not a member is a member of the default team on a
self-hosted platform and refused with a 403 saying what to do on a managed one."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from platform_testing.oidc_provider import OidcProvider

CLIENT = "simulusion-web"
ADMIN = "oidc-members-admin-token"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def sign_in(provider: OidcProvider, groups: list[str] | None = None) -> tuple[str, str, str]:
    """A new user's (sub, email, ID token)."""
    subject = f"user-{uuid.uuid4().hex[:8]}"
    email = f"{subject}@example.test"
    provider.set_claims(subject, {"email": email, "groups": groups or []})
    return subject, email, provider.sign_in(subject, CLIENT)["id_token"]


async def start(start_gateway: Any, provider: OidcProvider, tmp_path: Path, mode: str) -> Any:
    return await start_gateway(auth="oidc", oidc_issuer=provider.url, oidc_client_id=CLIENT, mode=mode,
                               oidc_role_map="platform-ops=operator,platform-admins=admin", admin_token=ADMIN,
                               database_url=f"sqlite:///{tmp_path}/{mode}.db")


async def me(gateway: Any, token: str) -> Any:
    return await gateway.http.get("/v0/me", headers=bearer(token))


async def test_members_get_their_team_and_role(start_gateway: Any, oidc_provider: OidcProvider, tmp_path: Path) -> None:
    gateway = await start(start_gateway, oidc_provider, tmp_path, "self-hosted")
    http = gateway.http
    assert (await http.post("/v0/teams", json={"name": "acme"}, headers=bearer(ADMIN))).status_code == 201
    by_sub, _, by_sub_token = sign_in(oidc_provider)
    _, by_email, by_email_token = sign_in(oidc_provider)
    stranger, _, stranger_token = sign_in(oidc_provider)
    boss, _, boss_token = sign_in(oidc_provider, ["platform-admins", "platform-ops"])
    lead, _, lead_token = sign_in(oidc_provider, ["platform-admins"])

    # Before being added: the default team, as a member (self-hosted); the role map's operator is
    # the operator, its admin an admin (of the default team).
    assert (await me(gateway, by_sub_token)).json() == {"subject": f"oidc:{by_sub}", "team": "default", "role": "member", "token_name": None}
    assert (await me(gateway, boss_token)).json()["role"] == "operator"
    assert (await me(gateway, lead_token)).json() == {"subject": f"oidc:{lead}", "team": "default", "role": "admin", "token_name": None}
    refused = await http.post("/v0/members", json={"subject": "x", "team": "acme"}, headers=bearer(lead_token))
    assert refused.status_code == 403 and refused.json()["detail"] == ("team admins add members to their own team "
                                                                       "(default) only")

    for subject, role in ((by_sub, "member"), (by_email, "admin"), (boss, "member")):
        added = await http.post("/v0/members", json={"subject": subject, "team": "acme", "role": role},
                                headers=bearer(boss_token))  # an identity-provider admin adds them
        assert added.status_code == 201, added.text
        assert added.json()["added_by"] == f"oidc:{boss}"
    lead_added = await http.post("/v0/members", json={"subject": lead, "team": "acme"}, headers=bearer(boss_token))
    assert lead_added.status_code == 201
    # Effective at once through this gateway (its member cache is dropped on a change).
    assert (await me(gateway, by_sub_token)).json() == {"subject": f"oidc:{by_sub}", "team": "acme", "role": "member", "token_name": None}
    by_email_me = (await me(gateway, by_email_token)).json()
    assert (by_email_me["team"], by_email_me["role"]) == ("acme", "admin")  # named by the email claim
    assert (await me(gateway, boss_token)).json() == {"subject": f"oidc:{boss}", "team": "acme", "role": "operator", "token_name": None}
    assert (await me(gateway, lead_token)).json() == {"subject": f"oidc:{lead}", "team": "acme", "role": "admin", "token_name": None}
    assert (await me(gateway, stranger_token)).json()["team"] == "default"

    member_sees = await http.get("/v0/members", headers=bearer(by_sub_token))
    assert sorted(m["subject"] for m in member_sees.json()["members"]) == sorted([by_sub, by_email, boss, lead])
    assert (await http.post("/v0/teams", json={"name": "x"}, headers=bearer(by_sub_token))).status_code == 403
    assert (await http.post("/v0/teams", json={"name": "x"}, headers=bearer(by_email_token))).status_code == 403
    assert (await http.post("/v0/teams", json={"name": "x"}, headers=bearer(boss_token))).status_code == 201

    assert (await http.delete(f"/v0/members/{by_sub}", headers=bearer(ADMIN))).status_code == 200
    assert (await me(gateway, by_sub_token)).json()["team"] == "default"


async def test_a_managed_platform_refuses_who_is_not_a_member(start_gateway: Any, oidc_provider: OidcProvider,
                                                              tmp_path: Path) -> None:
    gateway = await start(start_gateway, oidc_provider, tmp_path, "managed")
    http = gateway.http
    stranger, email, token = sign_in(oidc_provider)
    refused = await me(gateway, token)
    assert refused.status_code == 403
    assert refused.json() == {"code": "permission_denied", "detail": (
        f"the signed-in user '{stranger}' ({email}) is not a member of any team: ask an admin to add them "
        "(POST /v0/members)")}
    _, _, boss_token = sign_in(oidc_provider, ["platform-ops"])
    assert (await me(gateway, boss_token)).json()["role"] == "operator"  # let in to add members

    await http.post("/v0/teams", json={"name": "acme"}, headers=bearer(ADMIN))
    added = await http.post("/v0/members", json={"subject": email, "team": "acme"}, headers=bearer(boss_token))
    assert added.status_code == 201
    assert (await me(gateway, token)).json() == {"subject": f"oidc:{stranger}", "team": "acme", "role": "member", "token_name": None}
    own = await http.get("/v0/members", headers=bearer(token))
    assert [m["subject"] for m in own.json()["members"]] == [email]


async def test_an_unverified_email_names_no_member() -> None:
    import time

    from joserfc import jwt
    from joserfc.jwk import KeySet, RSAKey
    from platform_gateway.identity.oidc import OidcVerifier

    key = RSAKey.generate_key(2048, parameters={"kid": "k1"})
    verifier = OidcVerifier("https://issuer.test", CLIENT, keys=KeySet([RSAKey.import_key(key.as_dict(private=False))]))
    now = int(time.time())
    base = {"iss": "https://issuer.test", "aud": CLIENT, "sub": "alice", "iat": now, "exp": now + 60,
            "email": "alice@example.test"}
    for extra, email in (({}, "alice@example.test"), ({"email_verified": True}, "alice@example.test"),
                         ({"email_verified": False}, ""), ({"email": 42}, "")):
        token = jwt.encode({"alg": "RS256", "kid": "k1"}, {**base, **extra}, key)
        assert (await verifier.verify(token)).email == email, extra

"""PLATFORM_AUTH=oidc against a real OpenID provider (oidc-provider-mock, a process with its own
keys): users signed in with the code flow and PKCE call the API with their ID token, their
groups give their role, and API tokens still work for scripts; tokens for another client or
tampered ones are refused."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from platform_testing.oidc_provider import OidcProvider

CLIENT = "simulusion-web"


@pytest.fixture
async def oidc_gateway(start_gateway: Any, oidc_provider: OidcProvider, tmp_path: Path) -> Any:
    return await start_gateway(auth="oidc", oidc_issuer=oidc_provider.url, oidc_client_id=CLIENT,
                               oidc_role_map="platform-admins=admin", database_url=f"sqlite:///{tmp_path}/p.db")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def user(provider: OidcProvider, groups: list[str], client: str = CLIENT) -> str:
    subject = f"user-{uuid.uuid4().hex[:8]}"
    provider.set_claims(subject, {"email": f"{subject}@example.test", "groups": groups})
    token: str = provider.sign_in(subject, client)["id_token"]
    return token


async def test_signed_in_users_get_the_role_their_groups_map_to(oidc_gateway: Any, oidc_provider: OidcProvider) -> None:
    member = user(oidc_provider, ["ml-team"])
    assert (await oidc_gateway.http.get("/v0/tokens", headers=bearer(member))).status_code == 200
    denied = await oidc_gateway.http.post("/v0/tokens", json={"name": "x", "role": "admin"}, headers=bearer(member))
    assert denied.status_code == 403

    admin = user(oidc_provider, ["platform-admins"])
    made = await oidc_gateway.http.post("/v0/tokens", json={"name": "ci", "role": "admin"}, headers=bearer(admin))
    assert made.status_code == 201, made.text
    assert made.json()["owner"].startswith("oidc:user-")
    script = made.json()["token"]  # API tokens still work beside sign-in
    assert (await oidc_gateway.http.get("/v0/tokens", headers=bearer(script))).status_code == 200


async def test_tokens_for_another_client_or_tampered_are_refused(oidc_gateway: Any, oidc_provider: OidcProvider) -> None:
    other = user(oidc_provider, ["platform-admins"], client="another-app")
    refused = await oidc_gateway.http.get("/v0/tokens", headers=bearer(other))
    assert refused.status_code == 401 and "another issuer or audience" in refused.json()["detail"]

    head, body, signature = user(oidc_provider, []).split(".")
    flipped = signature[:-2] + ("AA" if signature[-2:] != "AA" else "BB")
    refused = await oidc_gateway.http.get("/v0/tokens", headers=bearer(f"{head}.{body}.{flipped}"))
    assert refused.status_code == 401 and "signature does not match" in refused.json()["detail"]

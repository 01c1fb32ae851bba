"""API tokens (PLATFORM_AUTH=token) on a real uvicorn with its database (SQLite here, and the
machine's PostgreSQL for the store): made by the bootstrap admin, used, listed per team,
revoked and expired, each refusal a 401 that says why, and never kept in clear."""

from __future__ import annotations

import asyncio
import hashlib
import time
from pathlib import Path
from typing import Any

import pytest
import websockets
from platform_gateway.identity.tokens import TokenStore
from platform_database import open_engine

ADMIN = "admin-bootstrap-secret"


@pytest.fixture
async def token_gateway(start_gateway: Any, tmp_path: Path) -> Any:
    return await start_gateway(auth="token", admin_token=ADMIN, database_url=f"sqlite:///{tmp_path}/platform.db")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def make(gateway: Any, by: str, **body: Any) -> Any:
    return await gateway.http.post("/v0/tokens", json={"name": "t", **body}, headers=bearer(by))


async def test_the_admin_makes_tokens_that_then_work_until_revoked(token_gateway: Any, tmp_path: Path) -> None:
    http = token_gateway.http
    missing = await http.get("/v0/tokens")
    assert missing.status_code == 401 and "needs an API token (PLATFORM_AUTH=token)" in missing.json()["detail"]
    assert missing.headers["www-authenticate"] == "Bearer"

    created = await make(token_gateway, ADMIN, name="training cluster", expires_in_days=30)
    assert created.status_code == 201, created.text
    token = created.json()
    assert token["token"].startswith("sim_") and len(token["token"]) == 47
    assert (token["name"], token["team"], token["role"], token["owner"]) == ("training cluster", "default", "member", "admin")
    assert token["expires_at"] == pytest.approx(time.time() + 30 * 86_400, abs=60)

    listed = await http.get("/v0/tokens", headers=bearer(token["token"]))
    assert listed.status_code == 200
    [shown] = listed.json()["tokens"]
    assert shown["id"] == token["id"] and "token" not in shown and shown["last_used_at"] is not None

    revoked = await http.delete(f"/v0/tokens/{token['id']}", headers=bearer(ADMIN))
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    refused = await http.get("/v0/tokens", headers=bearer(token["token"]))
    assert refused.status_code == 401
    assert refused.json()["detail"] == f"the API token {token['id']} (training cluster) was revoked"

    # Nothing in clear at rest: the database holds the SHA-256, never the secret.
    data = (tmp_path / "platform.db").read_bytes()
    assert token["token"].encode() not in data and ADMIN.encode() not in data
    assert hashlib.sha256(token["token"].encode()).hexdigest().encode() in data


async def test_unknown_and_tampered_tokens_are_refused_saying_why(token_gateway: Any) -> None:
    real = (await make(token_gateway, ADMIN, name="real")).json()["token"]
    tampered = real[:-1] + ("A" if real[-1] != "A" else "B")
    for presented in ("sim_" + "x" * 43, ADMIN + "x", tampered, real.upper()):
        answer = await token_gateway.http.get("/v0/tokens", headers=bearer(presented))
        assert answer.status_code == 401, (presented, answer.text)
        assert answer.json()["detail"] == "the API token is not valid: no such token on this platform"


async def test_an_expired_token_is_refused(token_gateway: Any) -> None:
    token = (await make(token_gateway, ADMIN, name="short", expires_in_days=1.2 / 86_400)).json()
    assert (await token_gateway.http.get("/v0/tokens", headers=bearer(token["token"]))).status_code == 200
    await asyncio.sleep(1.5)
    answer = await token_gateway.http.get("/v0/tokens", headers=bearer(token["token"]))
    assert answer.status_code == 401 and answer.json()["detail"] == f"the API token {token['id']} (short) expired"


async def test_members_act_on_their_own_team_only(token_gateway: Any) -> None:
    member = (await make(token_gateway, ADMIN, name="alice")).json()["token"]
    blue = (await make(token_gateway, ADMIN, name="bob", team="blue")).json()
    admin_of_blue = (await make(token_gateway, ADMIN, name="carol", team="blue", role="admin")).json()
    assert (blue["team"], admin_of_blue["role"]) == ("blue", "admin")

    denied = await make(token_gateway, member, role="admin")
    assert denied.status_code == 403 and "only admins make admin tokens" in denied.json()["detail"]
    denied = await make(token_gateway, member, team="blue")
    assert denied.status_code == 403 and "their own team (default)" in denied.json()["detail"]
    own = await make(token_gateway, member, name="alice's script")
    assert own.status_code == 201 and own.json()["owner"] != "admin"

    seen = {t["name"] for t in (await token_gateway.http.get("/v0/tokens", headers=bearer(member))).json()["tokens"]}
    assert seen == {"alice", "alice's script"}  # not blue's
    other = await token_gateway.http.delete(f"/v0/tokens/{blue['id']}", headers=bearer(member))
    assert other.status_code == 404 and other.json()["detail"] == f"no API token {blue['id']!r}"  # as a missing one
    everyone = (await token_gateway.http.get("/v0/tokens", headers=bearer(ADMIN))).json()["tokens"]
    assert {t["team"] for t in everyone} == {"default", "blue"}


async def test_the_websocket_takes_the_same_tokens(token_gateway: Any) -> None:
    token = (await make(token_gateway, ADMIN, name="ws")).json()
    url = token_gateway.ws_url + "/v0/sessions/s-000000000000/stream"
    with pytest.raises(websockets.InvalidStatus) as refused:
        async with websockets.connect(url):
            pass
    assert refused.value.response.status_code == 401
    await token_gateway.http.delete(f"/v0/tokens/{token['id']}", headers=bearer(ADMIN))
    with pytest.raises(websockets.InvalidStatus) as revoked:
        async with websockets.connect(f"{url}?token={token['token']}"):
            pass
    assert revoked.value.response.status_code == 401 and b"was revoked" in revoked.value.response.body


async def test_without_token_auth_tokens_cannot_be_made(gateway: Any) -> None:
    answer = await gateway.http.post("/v0/tokens", json={"name": "x"})
    assert answer.status_code == 409
    assert answer.json()["detail"] == "API tokens need PLATFORM_AUTH=token or oidc; this platform runs with PLATFORM_AUTH=none"


async def test_the_token_store_on_postgresql(postgres_database: str) -> None:
    store = TokenStore(open_engine(postgres_database))
    await store.create_tables()
    await store.create_tables()  # idempotent
    try:
        record, secret = await store.issue("pg", "default", "member", "admin", time.time() + 60)
        assert await store.find(secret) == record
        assert await store.find(secret + "x") is None
        assert await store.touch(record, time.time()) and not await store.touch(
            (await store.find(secret)), time.time())  # type: ignore[arg-type]
        assert [r.id for r in await store.list("default")] == [record.id] and await store.list("blue") == []
        assert (await store.revoke(record.id, "blue")) is None
        revoked = await store.revoke(record.id)
        assert revoked is not None and revoked.refusal(time.time()) == f"the API token {record.id} (pg) was revoked"
    finally:
        await store.engine.dispose()

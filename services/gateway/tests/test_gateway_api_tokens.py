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
from platform_gateway.identity.tokens import ParentRevokedError, TokenStore
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
        assert revoked is not None and revoked.revoked_ids == (record.id,)
        assert revoked.record.refusal(time.time()) == f"the API token {record.id} (pg) was revoked"
    finally:
        await store.engine.dispose()


async def test_revoking_a_token_revokes_what_it_made_transitively(token_gateway: Any) -> None:
    http = token_gateway.http
    parent = (await make(token_gateway, ADMIN, name="parent")).json()
    assert parent["parent_id"] is None  # made by the bootstrap token
    child = (await make(token_gateway, parent["token"], name="child")).json()
    grandchild = (await make(token_gateway, child["token"], name="grandchild")).json()
    sibling = (await make(token_gateway, ADMIN, name="sibling")).json()
    assert (child["parent_id"], grandchild["parent_id"]) == (parent["id"], child["id"])
    assert (child["owner"], grandchild["owner"]) == (parent["id"], child["id"])
    for token in (child, grandchild):  # used first, so this gateway remembers them
        me = await http.get("/v0/me", headers=bearer(token["token"]))
        assert me.status_code == 200 and (me.json()["subject"], me.json()["token_name"]) == (token["id"], token["name"])
    assert (await http.get("/v0/me", headers=bearer(ADMIN))).json()["token_name"] is None  # the bootstrap token

    revoked = await http.delete(f"/v0/tokens/{parent['id']}", headers=bearer(ADMIN))
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    for token in (parent, child, grandchild):
        refused = await http.get("/v0/me", headers=bearer(token["token"]))
        assert refused.status_code == 401, token["name"]
        assert refused.json()["detail"] == f"the API token {token['id']} ({token['name']}) was revoked"
    listed = {t["id"]: t for t in (await http.get("/v0/tokens", headers=bearer(ADMIN))).json()["tokens"]}
    assert listed[grandchild["id"]]["revoked_at"] == listed[parent["id"]]["revoked_at"]  # at once
    assert (await http.get("/v0/me", headers=bearer(sibling["token"]))).status_code == 200


async def test_a_token_never_makes_one_that_outlives_or_outranks_it(token_gateway: Any) -> None:
    one_day = (await make(token_gateway, ADMIN, name="one day", expires_in_days=1)).json()
    longer = await make(token_gateway, one_day["token"], name="ten years", expires_in_days=3650)
    assert longer.status_code == 422 and longer.json()["field"] == "expires_in_days"
    assert longer.json()["detail"].startswith(f"the API token {one_day['id']} expires ")
    assert "leave expires_in_days out to expire with it, or ask for expires_in_days of at most 0.9999" in \
        longer.json()["detail"]
    never = await make(token_gateway, one_day["token"], name="never", expires_in_days=None)
    assert never.status_code == 422 and never.json()["field"] == "expires_in_days"
    inherited = await make(token_gateway, one_day["token"], name="inherited")
    assert inherited.status_code == 201 and inherited.json()["expires_at"] == one_day["expires_at"]
    shorter = await make(token_gateway, one_day["token"], name="shorter", expires_in_days=0.5)
    assert shorter.status_code == 201 and shorter.json()["expires_at"] < one_day["expires_at"]

    forever = (await make(token_gateway, ADMIN, name="forever")).json()
    assert (await make(token_gateway, forever["token"], name="c")).json()["expires_at"] is None
    admin = (await make(token_gateway, ADMIN, name="admin", role="admin", expires_in_days=2)).json()
    assert (await make(token_gateway, admin["token"], role="admin")).status_code == 201
    up = await make(token_gateway, admin["token"], role="operator")
    assert up.status_code == 403 and up.json()["field"] == "role"
    up = await make(token_gateway, one_day["token"], role="admin")
    assert up.status_code == 403 and up.json()["field"] == "role"


async def test_an_old_api_tokens_table_gains_parent_id(tmp_path: Path) -> None:
    await _upgrades_old_table(f"sqlite:///{tmp_path}/old.db")


async def test_an_old_api_tokens_table_gains_parent_id_on_postgresql(postgres_database: str) -> None:
    await _upgrades_old_table(postgres_database)


async def _upgrades_old_table(url: str) -> None:
    import sqlalchemy as sa

    engine = open_engine(url)
    try:
        async with engine.begin() as conn:  # the table before lineage, with one token
            await conn.execute(sa.text(
                "CREATE TABLE api_tokens (id VARCHAR(32) PRIMARY KEY, secret_sha256 VARCHAR(64) NOT NULL UNIQUE, "
                "name VARCHAR(200) NOT NULL, owner VARCHAR(200) NOT NULL, team VARCHAR(64) NOT NULL, "
                "role VARCHAR(16) NOT NULL, created_at DOUBLE PRECISION NOT NULL, last_used_at DOUBLE PRECISION, "
                "expires_at DOUBLE PRECISION, revoked_at DOUBLE PRECISION)"))
            await conn.execute(sa.text("INSERT INTO api_tokens (id, secret_sha256, name, owner, team, role, created_at) "
                                       "VALUES ('tok-000000000001', 'x', 'old', 'admin', 'default', 'admin', 1.0)"))
        store, other = TokenStore(engine), TokenStore(open_engine(url))
        try:
            await asyncio.gather(store.create_tables(), other.create_tables())  # two gateways upgrading at once
        finally:
            await other.engine.dispose()
        [old] = await store.list()
        assert (old.id, old.parent_id) == ("tok-000000000001", None)
        child, _ = await store.issue("child", "default", "member", old.id, parent_id=old.id)
        grandchild, _ = await store.issue("grandchild", "default", "member", child.id, parent_id=child.id)
        revoked = await store.revoke(old.id)
        assert revoked is not None and revoked.revoked_ids == (old.id, child.id, grandchild.id)
        assert all(r.revoked_at is not None for r in await store.list())
    finally:
        await engine.dispose()


async def test_a_revoke_reaches_what_was_made_through_another_gateway(start_gateway: Any, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/shared.db"
    here = await start_gateway(auth="token", admin_token=ADMIN, database_url=url)
    there = await start_gateway(auth="token", admin_token=ADMIN, database_url=url)
    parent = (await make(here, ADMIN, name="parent")).json()
    child = (await make(there, parent["token"], name="child")).json()  # `there` now remembers the parent
    assert (await there.http.get("/v0/me", headers=bearer(child["token"]))).status_code == 200  # and the child
    assert (await here.http.delete(f"/v0/tokens/{parent['id']}", headers=bearer(ADMIN))).status_code == 200
    # `there` still remembers both as good for up to 5 s, but no token is made with the revoked parent.
    refused = await make(there, parent["token"], name="late")
    assert refused.status_code == 401 and refused.json()["detail"] == f"the API token {parent['id']} (parent) was revoked"
    names = {t["name"] for t in (await here.http.get("/v0/tokens", headers=bearer(ADMIN))).json()["tokens"]}
    assert "late" not in names
    deadline = time.monotonic() + 8
    while (answer := await there.http.get("/v0/me", headers=bearer(child["token"]))).status_code == 200:
        assert time.monotonic() < deadline, "the child still works through the other gateway after 8 s"
        await asyncio.sleep(0.25)
    assert answer.status_code == 401 and "was revoked" in answer.json()["detail"]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_makes_racing_a_revoke_leave_no_live_child(backend: str, request: pytest.FixtureRequest,
                                                         tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/race.db" if backend == "sqlite" else str(request.getfixturevalue("postgres_database"))
    store = TokenStore(open_engine(url))
    await store.create_tables()
    try:
        parent, _ = await store.issue("parent", "default", "member", "admin")
        child, _ = await store.issue("child", "default", "member", parent.id, parent_id=parent.id)

        async def make_under(parent_id: str) -> None:
            await store.issue("racer", "default", "member", parent_id, parent_id=parent_id)

        results = await asyncio.gather(*(make_under(p) for p in (parent.id, child.id) * 10), store.revoke(parent.id),
                                       *(make_under(p) for p in (parent.id, child.id) * 10), return_exceptions=True)
        assert not [r for r in results if isinstance(r, Exception) and not isinstance(r, ParentRevokedError)]
        live = [r for r in await store.list() if r.revoked_at is None]
        assert live == []  # every child made before the revoke was revoked with it; none made after
    finally:
        await store.engine.dispose()

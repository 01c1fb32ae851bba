"""Who may do what to whom (issue 29), route by route, on a real uvicorn with its database: the
platform's operator (PLATFORM_ADMIN_TOKEN, operator tokens) manages every team, its quotas,
members, tokens and usage; a team's admin manages its own team's members, tokens, usage and
token setting, and nothing of another team; a member sees their team and their own tokens.

The matrix: for the operator, beta's admin and beta's member, every route of `/v0/teams*`,
`/v0/members*`, `/v0/tokens*` and `/v0/usage` with alpha's names and ids in paths, queries and
bodies, then alpha checked unchanged (its quota, its members, its tokens still working)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from platform_bus import flush_queued
from platform_contracts import subjects
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.env.v1 import environment_pb2 as env_pb

OPERATOR = "roles-operator-bootstrap-secret"
DAY = "2024-05-02"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class Token:
    id: str
    secret: str


@dataclass
class World:
    gateway: Any
    alpha_admin: Token
    alpha_member: Token
    beta_admin: Token
    beta_member: Token
    beta_other: Token  # another member of beta: not beta_member's to see or revoke

    async def call(self, token: str, method: str, path: str, body: Any = None) -> Any:
        return await self.gateway.http.request(method, path, json=body, headers=bearer(token))


@pytest.fixture
async def usage_rows(nats_client: Any) -> AsyncIterator[list[ctl.UsageRequest]]:
    requests: list[ctl.UsageRequest] = []
    rows = [ctl.UsageRow(day=DAY, team=team, env_id="cartpole", instance_hours=1.0, sessions=1)
            for team in ("alpha", "beta", "default")]

    async def respond(msg: Any) -> None:
        request = ctl.UsageRequest.FromString(msg.data)
        requests.append(request)
        await msg.respond(ctl.UsageReply(rows=[r for r in rows if not request.team or r.team == request.team])
                          .SerializeToString())

    sub = await nats_client.subscribe(subjects.BROKER_USAGE, queue=subjects.BROKER_QUEUE, cb=respond)
    await flush_queued(nats_client)
    yield requests
    await sub.unsubscribe()


async def mint(gateway: Any, by: str, **body: Any) -> Token:
    made = await gateway.http.post("/v0/tokens", json={"name": "t", **body}, headers=bearer(by))
    assert made.status_code == 201, made.text
    return Token(made.json()["id"], made.json()["token"])


@pytest.fixture
async def world(start_gateway: Any, start_broker: Any, tmp_path: Path, usage_rows: Any) -> World:
    await start_broker("127.0.0.1:1", env_pb.SpecResponse(env_id="CartPole-v1"))  # answers the teams' open sessions
    gateway = await start_gateway(auth="token", admin_token=OPERATOR, mode="managed",
                                  database_url=f"sqlite:///{tmp_path}/platform.db")
    for name, quota in (("alpha", 2), ("beta", 3)):
        made = await gateway.http.post("/v0/teams", json={"name": name, "max_sessions": quota}, headers=bearer(OPERATOR))
        assert made.status_code == 201, made.text
    for subject, team in (("al@alpha.test", "alpha"), ("bo@beta.test", "beta")):
        added = await gateway.http.post("/v0/members", json={"subject": subject, "team": team},
                                        headers=bearer(OPERATOR))
        assert added.status_code == 201, added.text
    return World(gateway,
                 await mint(gateway, OPERATOR, team="alpha", role="admin"),
                 await mint(gateway, OPERATOR, team="alpha"),
                 await mint(gateway, OPERATOR, team="beta", role="admin"),
                 await mint(gateway, OPERATOR, team="beta"),
                 await mint(gateway, OPERATOR, team="beta"))


async def alpha_is_untouched(w: World) -> None:
    team = (await w.call(OPERATOR, "GET", "/v0/teams/alpha")).json()
    assert (team["max_sessions"], team["members_mint_tokens"]) == (2, True)
    members = (await w.call(OPERATOR, "GET", "/v0/members?team=alpha")).json()["members"]
    assert [m["subject"] for m in members] == ["al@alpha.test"]
    for token in (w.alpha_admin, w.alpha_member):
        me = await w.call(token.secret, "GET", "/v0/me")
        assert me.status_code == 200 and me.json()["team"] == "alpha", me.text
    teams = [t["name"] for t in (await w.call(OPERATOR, "GET", "/v0/teams")).json()["teams"]]
    assert teams == ["alpha", "beta", "default"]


@pytest.mark.parametrize("who", ["admin", "member"])
async def test_beta_reaches_nothing_of_alpha(world: World, who: str) -> None:
    w = world
    caller = (w.beta_admin if who == "admin" else w.beta_member).secret
    admin = who == "admin"
    # (method, path, body, answer for beta's admin, answer for beta's member)
    matrix: list[tuple[str, str, Any, int, int]] = [
        ("GET", "/v0/teams/alpha", None, 404, 404),
        ("PATCH", "/v0/teams/alpha", {"max_sessions": 99}, 404, 403),
        ("PATCH", "/v0/teams/alpha", {"members_mint_tokens": False}, 404, 403),
        ("DELETE", "/v0/teams/alpha", None, 403, 403),
        ("POST", "/v0/teams", {"name": "gamma"}, 403, 403),
        ("GET", "/v0/members?team=alpha", None, 404, 404),
        ("POST", "/v0/members", {"subject": "mallory@beta.test", "team": "alpha"}, 403, 403),
        ("POST", "/v0/members", {"subject": "mallory@beta.test", "team": "alpha", "role": "admin"}, 403, 403),
        ("DELETE", "/v0/members/al@alpha.test", None, 404, 403),
        ("POST", "/v0/tokens", {"name": "x", "team": "alpha"}, 403, 403),
        ("POST", "/v0/tokens", {"name": "x", "team": "alpha", "role": "admin"}, 403, 403),
        ("POST", "/v0/tokens", {"name": "x", "role": "operator"}, 403, 403),
        ("DELETE", f"/v0/tokens/{w.alpha_member.id}", None, 404, 404),
        ("DELETE", f"/v0/tokens/{w.alpha_admin.id}", None, 404, 404),
        ("GET", "/v0/usage?team=alpha", None, 404, 404),
        ("GET", "/v0/usage?team=alpha&format=csv", None, 404, 404),
    ]
    for method, path, body, for_admin, for_member in matrix:
        answer = await w.call(caller, method, path, body)
        expected = for_admin if admin else for_member
        assert answer.status_code == expected, (who, method, path, body, answer.text)
    missing_team = await w.call(caller, "GET", "/v0/teams/nowhere")
    assert (await w.call(caller, "GET", "/v0/teams/alpha")).json()["detail"] == \
        missing_team.json()["detail"].replace("nowhere", "alpha")  # as a missing one
    if admin:
        gone = await w.call(caller, "DELETE", "/v0/members/nobody@nowhere.test")
        assert (await w.call(caller, "DELETE", "/v0/members/al@alpha.test")).json()["detail"] == \
            gone.json()["detail"].replace("nobody@nowhere.test", "al@alpha.test")
    unknown = await w.call(caller, "DELETE", "/v0/tokens/tok-000000000000")
    assert (await w.call(caller, "DELETE", f"/v0/tokens/{w.alpha_member.id}")).json()["detail"] == \
        unknown.json()["detail"].replace("tok-000000000000", w.alpha_member.id)

    # Listings hold beta's only.
    teams = (await w.call(caller, "GET", "/v0/teams")).json()["teams"]
    assert [t["name"] for t in teams] == ["beta"]
    members = (await w.call(caller, "GET", "/v0/members")).json()["members"]
    assert [m["team"] for m in members] == ["beta"]
    tokens = (await w.call(caller, "GET", "/v0/tokens")).json()["tokens"]
    assert {t["team"] for t in tokens} == {"beta"}
    usage = (await w.call(caller, "GET", "/v0/usage?since=2024-05-01&until=2024-05-31")).json()
    assert {r["team"] for r in usage["data"]} == {"beta"}
    await alpha_is_untouched(w)


async def test_a_team_admin_manages_its_own_team_but_not_quotas(world: World) -> None:
    w, caller = world, world.beta_admin.secret
    assert (await w.call(caller, "GET", "/v0/me")).json()["role"] == "admin"
    quota = await w.call(caller, "PATCH", "/v0/teams/beta", {"max_sessions": 99})
    assert quota.status_code == 403
    assert quota.json()["detail"].startswith("only the platform's operator changes quotas (role operator)")
    both = await w.call(caller, "PATCH", "/v0/teams/beta", {"max_sessions": 99, "members_mint_tokens": False})
    assert both.status_code == 403
    assert (await w.call(OPERATOR, "GET", "/v0/teams/beta")).json()["max_sessions"] == 3
    assert (await w.call(OPERATOR, "GET", "/v0/teams/beta")).json()["members_mint_tokens"] is True
    setting = await w.call(caller, "PATCH", "/v0/teams/beta", {"members_mint_tokens": False})
    assert setting.status_code == 200 and setting.json()["members_mint_tokens"] is False, setting.text
    assert setting.json()["max_sessions"] == 3

    added = await w.call(caller, "POST", "/v0/members", {"subject": "cy@beta.test", "team": "beta", "role": "admin"})
    assert added.status_code == 201 and added.json()["added_by"] == w.beta_admin.id
    assert (await w.call(caller, "DELETE", "/v0/members/cy@beta.test")).status_code == 200
    operator_member = await w.call(caller, "POST", "/v0/members", {"subject": "op@beta.test", "team": "beta",
                                                                   "role": "operator"})
    assert operator_member.status_code == 422

    made = await w.call(caller, "POST", "/v0/tokens", {"name": "beta ci", "role": "admin"})
    assert made.status_code == 201 and (made.json()["team"], made.json()["role"]) == ("beta", "admin")
    listed = {t["id"] for t in (await w.call(caller, "GET", "/v0/tokens")).json()["tokens"]}
    assert {w.beta_admin.id, w.beta_member.id, w.beta_other.id, made.json()["id"]} <= listed
    assert w.alpha_member.id not in listed
    revoked = await w.call(caller, "DELETE", f"/v0/tokens/{w.beta_other.id}")
    assert revoked.status_code == 200
    assert (await w.call(w.beta_other.secret, "GET", "/v0/me")).status_code == 401
    assert (await w.call(caller, "GET", "/v0/usage?team=beta")).status_code == 200
    assert (await w.call(caller, "DELETE", "/v0/teams/beta")).status_code == 403
    await alpha_is_untouched(w)


async def test_a_member_sees_and_revokes_only_its_own_tokens(world: World) -> None:
    w, caller = world, world.beta_member.secret
    child = await mint(w.gateway, caller, name="child")
    seen = {t["id"] for t in (await w.call(caller, "GET", "/v0/tokens")).json()["tokens"]}
    assert seen == {w.beta_member.id, child.id}  # itself and what it made; not beta's admin's or other member's
    for other in (w.beta_admin, w.beta_other):
        denied = await w.call(caller, "DELETE", f"/v0/tokens/{other.id}")
        assert denied.status_code == 404 and denied.json()["detail"] == f"no API token {other.id!r}"
        assert (await w.call(other.secret, "GET", "/v0/me")).status_code == 200
    assert (await w.call(caller, "DELETE", f"/v0/tokens/{child.id}")).status_code == 200
    assert (await w.call(child.secret, "GET", "/v0/me")).status_code == 401
    for method, path, body in (("PATCH", "/v0/teams/beta", {"members_mint_tokens": False}),
                               ("POST", "/v0/members", {"subject": "x@beta.test", "team": "beta"}),
                               ("DELETE", "/v0/members/bo@beta.test", None)):
        denied = await w.call(caller, method, path, body)
        assert denied.status_code == 403 and "you are a member of team 'beta'" in denied.json()["detail"], denied.text


async def test_the_operator_manages_every_team(world: World, usage_rows: list[ctl.UsageRequest]) -> None:
    w = world
    for caller in (OPERATOR, (await mint(w.gateway, OPERATOR, name="ops", role="operator")).secret):
        me = (await w.call(caller, "GET", "/v0/me")).json()
        assert (me["role"], me["team"]) == ("operator", "default")
        changed = await w.call(caller, "PATCH", "/v0/teams/alpha", {"max_sessions": 5, "members_mint_tokens": False})
        assert changed.status_code == 200 and (changed.json()["max_sessions"], changed.json()["members_mint_tokens"]) \
            == (5, False)
        await w.call(caller, "PATCH", "/v0/teams/alpha", {"max_sessions": 2, "members_mint_tokens": True})
        added = await w.call(caller, "POST", "/v0/members", {"subject": "new@alpha.test", "team": "alpha"})
        assert added.status_code == 201
        assert (await w.call(caller, "DELETE", "/v0/members/new@alpha.test")).status_code == 200
        made = await w.call(caller, "POST", "/v0/tokens", {"name": "for alpha", "team": "alpha", "role": "admin"})
        assert made.status_code == 201 and made.json()["team"] == "alpha"
        assert (await w.call(caller, "DELETE", f"/v0/tokens/{made.json()['id']}")).status_code == 200
        listed = {t["team"] for t in (await w.call(caller, "GET", "/v0/tokens")).json()["tokens"]}
        assert {"alpha", "beta"} <= listed
        everyone = (await w.call(caller, "GET", "/v0/usage?since=2024-05-01&until=2024-05-31")).json()
        assert {r["team"] for r in everyone["data"]} == {"alpha", "beta", "default"}
        alpha = (await w.call(caller, "GET", "/v0/usage?team=alpha&since=2024-05-01&until=2024-05-31")).json()
        assert {r["team"] for r in alpha["data"]} == {"alpha"} and usage_rows[-1].team == "alpha"
        assert {m["team"] for m in (await w.call(caller, "GET", "/v0/members")).json()["members"]} == {"alpha", "beta"}
        made_team = await w.call(caller, "POST", "/v0/teams", {"name": "gamma"})
        assert made_team.status_code == 201
        assert (await w.call(caller, "DELETE", "/v0/teams/gamma")).status_code == 200
    await alpha_is_untouched(w)
    # A team admin never makes an operator token, nor a token of another role than theirs or lower.
    denied = await w.call(w.alpha_admin.secret, "POST", "/v0/tokens", {"name": "up", "role": "operator"})
    assert denied.status_code == 403 and "operator" in denied.json()["detail"]


async def test_members_may_be_barred_from_minting_by_their_admin(world: World) -> None:
    w = world
    assert (await w.call(w.beta_admin.secret, "PATCH", "/v0/teams/beta", {"members_mint_tokens": False})).status_code \
        == 200
    refused = await w.call(w.beta_member.secret, "POST", "/v0/tokens", {"name": "mine"})
    assert refused.status_code == 403
    assert refused.json()["detail"] == ("the admin of team 'beta' turned off API tokens made by members "
                                        "(members_mint_tokens=false): ask an admin of the team for one")
    assert (await w.call(w.beta_admin.secret, "POST", "/v0/tokens", {"name": "admins still do"})).status_code == 201
    assert (await w.call(w.alpha_member.secret, "POST", "/v0/tokens", {"name": "alpha's members still do"})
            ).status_code == 201
    assert (await w.call(w.beta_admin.secret, "PATCH", "/v0/teams/beta", {"members_mint_tokens": True})).status_code \
        == 200
    assert (await w.call(w.beta_member.secret, "POST", "/v0/tokens", {"name": "again"})).status_code == 201


COVERED = {("GET", "/v0/teams"), ("POST", "/v0/teams"), ("GET", "/v0/teams/{name}"), ("PATCH", "/v0/teams/{name}"),
           ("DELETE", "/v0/teams/{name}"), ("GET", "/v0/members"), ("POST", "/v0/members"),
           ("DELETE", "/v0/members/{subject}"), ("GET", "/v0/tokens"), ("POST", "/v0/tokens"),
           ("DELETE", "/v0/tokens/{token_id}"), ("GET", "/v0/usage")}


async def test_the_matrix_covers_every_admin_and_member_route(world: World) -> None:
    """A route added under /v0/teams, /v0/members, /v0/tokens or /v0/usage fails here until the
    matrix above (and docs/auth.md's table) says who may call it."""
    document = (await world.gateway.http.get("/openapi.json")).json()
    served = {(method.upper(), path) for path, item in document["paths"].items()
              if path.split("/")[2:3] in (["teams"], ["members"], ["tokens"], ["usage"]) for method in item}
    assert served == COVERED

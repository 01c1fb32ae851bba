"""Teams, members and usage on a real uvicorn with its database (SQLite here; the teams table on
PostgreSQL is tested in libs/database): admins create, change and delete teams and members,
members see their own team only (another team is a 404, as a missing one) and are refused the
rest with a 403 naming the role; usage as JSON and CSV, with the machines service's GPU-hours
(and without them when it does not answer); a quota the broker reports is a 429."""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from platform_bus import flush_queued
from platform_contracts import subjects
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.machines.v1 import machines_pb2 as machines_pb
from simulusion.session.v1.options_pb2 import SessionOptions

ADMIN = "teams-admin-bootstrap-secret"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class StandInUsage:
    """The broker's usage subject: answers the rows it holds, filtered as the broker does."""

    def __init__(self, nc: Any) -> None:
        self.nc = nc
        self.rows: list[ctl.UsageRow] = []
        self.requests: list[ctl.UsageRequest] = []
        self.sub: Any = None

    async def start(self) -> StandInUsage:
        async def respond(msg: Any) -> None:
            request = ctl.UsageRequest.FromString(msg.data)
            self.requests.append(request)
            rows = [r for r in self.rows if (not request.team or r.team == request.team)
                    and (not request.since_day or r.day >= request.since_day)
                    and (not request.until_day or r.day <= request.until_day)]
            await msg.respond(ctl.UsageReply(rows=rows).SerializeToString())

        self.sub = await self.nc.subscribe(subjects.BROKER_USAGE, queue=subjects.BROKER_QUEUE, cb=respond)
        await flush_queued(self.nc)
        return self


class StandInGpuUsage:
    """The machines service's GPU-hours subject: answers the rows it holds, filtered as it does."""

    def __init__(self, nc: Any) -> None:
        self.nc = nc
        self.rows: list[machines_pb.GpuUsageRow] = []
        self.requests: list[machines_pb.ExperimentUsageRequest] = []
        self.sub: Any = None

    async def start(self) -> StandInGpuUsage:
        async def respond(msg: Any) -> None:
            request = machines_pb.ExperimentUsageRequest.FromString(msg.data)
            self.requests.append(request)
            rows = [r for r in self.rows if (not request.team or r.team == request.team)
                    and request.since_day <= r.day <= request.until_day]
            await msg.respond(machines_pb.ExperimentUsageReply(rows=rows).SerializeToString())

        self.sub = await self.nc.subscribe(subjects.EXPERIMENTS_USAGE, queue=subjects.MACHINES_QUEUE, cb=respond)
        await flush_queued(self.nc)
        return self

    async def stop(self) -> None:
        """Answer no more (the machines service gone)."""
        if self.sub is not None:
            await self.sub.unsubscribe()
            self.sub = None
            await flush_queued(self.nc)


@pytest.fixture
async def gpu_usage(nats_client: Any) -> AsyncIterator[StandInGpuUsage]:
    stand_in = await StandInGpuUsage(nats_client).start()
    yield stand_in
    await stand_in.stop()


@pytest.fixture
async def usage(nats_client: Any) -> AsyncIterator[StandInUsage]:
    stand_in = await StandInUsage(nats_client).start()
    yield stand_in
    await stand_in.sub.unsubscribe()


@pytest.fixture
async def stand_in_broker(start_broker: Any) -> Any:
    return await start_broker("127.0.0.1:1", env_pb.SpecResponse(env_id="CartPole-v1"))


@pytest.fixture
async def token_gateway(start_gateway: Any, tmp_path: Path) -> Any:
    return await start_gateway(auth="token", admin_token=ADMIN, database_url=f"sqlite:///{tmp_path}/platform.db")


async def member_token(gateway: Any, team: str, role: str = "member") -> str:
    made = await gateway.http.post("/v0/tokens", json={"name": f"{team}-{role}", "team": team, "role": role},
                                   headers=bearer(ADMIN))
    assert made.status_code == 201, made.text
    token: str = made.json()["token"]
    return token


def this_month() -> str:
    return dt.datetime.now(dt.timezone.utc).date().replace(day=3).isoformat()


async def test_admins_manage_teams_and_members_see_their_own(token_gateway: Any, stand_in_broker: Any,
                                                              usage: StandInUsage) -> None:
    http, admin = token_gateway.http, bearer(ADMIN)
    created = await http.post("/v0/teams", json={"name": "acme", "max_sessions": 2, "instance_hours_per_month": 10},
                              headers=admin)
    assert created.status_code == 201, created.text
    acme = created.json()
    assert {k: v for k, v in acme.items() if k != "created_at"} == {
        "name": "acme", "max_sessions": 2, "instance_hours_per_month": 10.0, "open_sessions": 0,
        "instance_hours_this_month": 0.0, "members_mint_tokens": True}
    assert isinstance(acme["created_at"], float)
    assert (await http.post("/v0/teams", json={"name": "blue"}, headers=admin)).status_code == 201

    again = await http.post("/v0/teams", json={"name": "acme"}, headers=admin)
    assert again.status_code == 409 and again.json()["detail"] == "team 'acme' exists already"
    default = await http.post("/v0/teams", json={"name": "default"}, headers=admin)
    assert default.status_code == 409 and "PATCH /v0/teams/default" in default.json()["detail"]
    bad = await http.post("/v0/teams", json={"name": "Acme Corp"}, headers=admin)
    assert bad.status_code == 422 and bad.json()["field"] == "name"
    negative = await http.post("/v0/teams", json={"name": "x", "max_sessions": -1}, headers=admin)
    assert negative.status_code == 422 and negative.json()["field"] == "max_sessions"

    # Use: open sessions from the broker, instance-hours of this month from its usage.
    stand_in_broker.add(options=SessionOptions(env_id="cartpole", team="acme"))
    stand_in_broker.add(options=SessionOptions(env_id="cartpole", team="blue"))
    stand_in_broker.add(options=SessionOptions(env_id="cartpole"))  # the default team's
    usage.rows = [ctl.UsageRow(day=this_month(), team="acme", env_id="cartpole", instance_hours=1.25, sessions=2),
                  ctl.UsageRow(day=this_month(), team="acme", env_id="pong", instance_hours=0.5, sessions=1),
                  ctl.UsageRow(day="2000-01-01", team="acme", env_id="pong", instance_hours=99, sessions=1)]
    listed = (await http.get("/v0/teams", headers=admin)).json()["teams"]
    assert [(t["name"], t["open_sessions"], t["instance_hours_this_month"]) for t in listed] == [
        ("acme", 1, 1.75), ("blue", 1, 0.0), ("default", 1, 0.0)]
    assert listed[2]["created_at"] is None and listed[2]["max_sessions"] is None  # exists without a row

    member = await member_token(token_gateway, "acme")
    seen = await http.get("/v0/teams", headers=bearer(member))
    assert [t["name"] for t in seen.json()["teams"]] == ["acme"]
    assert (await http.get("/v0/teams/acme", headers=bearer(member))).json()["max_sessions"] == 2
    other = await http.get("/v0/teams/blue", headers=bearer(member))
    missing = await http.get("/v0/teams/nowhere", headers=bearer(member))
    assert other.status_code == missing.status_code == 404
    assert other.json()["detail"] == "no team 'blue'" and missing.json()["detail"] == "no team 'nowhere'"
    assert (await http.get("/v0/teams/nowhere", headers=admin)).json()["detail"] == "no team 'nowhere'"
    for method, path, body, needs in (("POST", "/v0/teams", {"name": "mine"}, "only the platform's operator "),
                                      ("PATCH", "/v0/teams/acme", {"max_sessions": 9}, "only admins "),
                                      ("DELETE", "/v0/teams/acme", None, "only the platform's operator ")):
        denied = await http.request(method, path, json=body, headers=bearer(member))
        assert denied.status_code == 403, (method, path)
        assert denied.json()["detail"].startswith(needs) and "you are a member of team 'acme'" in \
            denied.json()["detail"]

    # Quotas set and cleared field by field; the default team gets its row on its first change.
    changed = (await http.patch("/v0/teams/acme", json={"instance_hours_per_month": None}, headers=admin)).json()
    assert (changed["max_sessions"], changed["instance_hours_per_month"]) == (2, None)
    changed = (await http.patch("/v0/teams/acme", json={"max_sessions": 5}, headers=admin)).json()
    assert (changed["max_sessions"], changed["instance_hours_per_month"]) == (5, None)
    assert (await http.patch("/v0/teams/nowhere", json={"max_sessions": 1}, headers=admin)).status_code == 404
    default_team = (await http.patch("/v0/teams/default", json={"max_sessions": 1}, headers=admin)).json()
    assert default_team["max_sessions"] == 1 and default_team["created_at"] is not None

    # Deleting: not while it has open sessions or members; "default" never.
    busy = await http.delete("/v0/teams/blue", headers=admin)
    assert busy.status_code == 409 and busy.json()["detail"].startswith("team 'blue' has 1 open session: close it first")
    await http.post("/v0/members", json={"subject": "carol@example.test", "team": "acme"}, headers=admin)
    for session in list(stand_in_broker.sessions.values()):
        session.state = ctl.SESSION_STATE_CLOSED
    staffed = await http.delete("/v0/teams/acme", headers=admin)
    assert staffed.status_code == 409 and staffed.json()["detail"].startswith("team 'acme' has 1 member: remove it")
    assert (await http.delete("/v0/teams/default", headers=admin)).status_code == 409
    blue_token = await member_token(token_gateway, "blue")
    assert (await http.get("/v0/me", headers=bearer(blue_token))).json()["team"] == "blue"
    deleted = await http.delete("/v0/teams/blue", headers=admin)
    assert deleted.status_code == 200 and deleted.json()["name"] == "blue"
    gone = await http.get("/v0/me", headers=bearer(blue_token))  # its tokens went with it
    assert gone.status_code == 401 and "revoked" in gone.json()["detail"]
    assert (await http.get("/v0/teams/blue", headers=admin)).status_code == 404
    assert (await http.delete("/v0/teams/blue", headers=admin)).status_code == 404


async def test_members_are_added_listed_and_removed_by_admins(token_gateway: Any) -> None:
    http, admin = token_gateway.http, bearer(ADMIN)
    await http.post("/v0/teams", json={"name": "acme"}, headers=admin)
    await http.post("/v0/teams", json={"name": "blue"}, headers=admin)
    added = await http.post("/v0/members", json={"subject": "alice@example.test", "team": "acme", "role": "admin"},
                            headers=admin)
    assert added.status_code == 201, added.text
    assert {k: v for k, v in added.json().items() if k != "created_at"} == {
        "subject": "alice@example.test", "team": "acme", "role": "admin", "added_by": "admin"}
    await http.post("/v0/members", json={"subject": "bob-sub-123", "team": "blue"}, headers=admin)
    await http.post("/v0/members", json={"subject": "dan", "team": "default"}, headers=admin)  # exists implicitly

    twice = await http.post("/v0/members", json={"subject": "alice@example.test", "team": "blue"}, headers=admin)
    assert twice.status_code == 409
    assert twice.json()["detail"] == ("'alice@example.test' is a member of team 'acme' already: remove them first "
                                      "(DELETE /v0/members/alice@example.test)")
    nowhere = await http.post("/v0/members", json={"subject": "eve", "team": "nowhere"}, headers=admin)
    assert nowhere.status_code == 404 and nowhere.json()["detail"] == "no team 'nowhere': create it first (POST /v0/teams)"
    bad_role = await http.post("/v0/members", json={"subject": "eve", "team": "acme", "role": "owner"}, headers=admin)
    assert bad_role.status_code == 422 and bad_role.json()["field"] == "role"

    everyone = (await http.get("/v0/members", headers=admin)).json()["members"]
    assert [(m["team"], m["subject"]) for m in everyone] == [("acme", "alice@example.test"), ("blue", "bob-sub-123"),
                                                            ("default", "dan")]
    assert [m["subject"] for m in (await http.get("/v0/members?team=blue", headers=admin)).json()["members"]] == [
        "bob-sub-123"]

    member = await member_token(token_gateway, "acme")
    own = (await http.get("/v0/members", headers=bearer(member))).json()["members"]
    assert [m["subject"] for m in own] == ["alice@example.test"]
    other = await http.get("/v0/members?team=blue", headers=bearer(member))
    assert other.status_code == 404 and other.json()["detail"] == "no team 'blue'"
    denied = await http.post("/v0/members", json={"subject": "x", "team": "acme"}, headers=bearer(member))
    assert denied.status_code == 403 and denied.json()["detail"].startswith("only admins add members")
    denied = await http.delete("/v0/members/bob-sub-123", headers=bearer(member))
    assert denied.status_code == 403 and denied.json()["detail"].startswith("only admins remove members")

    removed = await http.delete("/v0/members/bob-sub-123", headers=admin)
    assert removed.status_code == 200 and removed.json()["team"] == "blue"
    gone = await http.delete("/v0/members/bob-sub-123", headers=admin)
    assert gone.status_code == 404 and gone.json()["detail"] == "no member 'bob-sub-123'"


async def test_usage_as_json_and_csv_per_role(token_gateway: Any, usage: StandInUsage,
                                              gpu_usage: StandInGpuUsage) -> None:
    http, admin = token_gateway.http, bearer(ADMIN)
    gpu_usage.rows = [
        machines_pb.GpuUsageRow(day="2024-05-02", team="acme", machine_id="m-1", machine_name="h100-box",
                                gpu_hours=1.5000001, experiments=2),
        machines_pb.GpuUsageRow(day="2024-05-03", team="blue", machine_id="m-2", machine_name="a100", gpu_hours=4.0,
                                experiments=1),
    ]
    usage.rows = [
        ctl.UsageRow(day="2024-05-01", team="acme", env_id="pong", instance_hours=2.0, sessions=1),
        ctl.UsageRow(day="2024-05-02", team="acme", env_id="cartpole", instance_hours=0.1000004, sessions=1),
        ctl.UsageRow(day="2024-05-02", team="blue", env_id="cartpole", instance_hours=1.0, sessions=3),
    ]
    answer = await http.get("/v0/usage?since=2024-05-01&until=2024-05-31", headers=admin)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body == {"data": [
        {"day": "2024-05-01", "team": "acme", "env_id": "pong", "instance_hours": 2.0, "sessions": 1},
        {"day": "2024-05-02", "team": "acme", "env_id": "cartpole", "instance_hours": 0.1, "sessions": 1},
        {"day": "2024-05-02", "team": "blue", "env_id": "cartpole", "instance_hours": 1.0, "sessions": 3},
    ], "total_instance_hours": 3.1, "gpu_data": [
        {"day": "2024-05-02", "team": "acme", "machine_id": "m-1", "machine_name": "h100-box", "gpu_hours": 1.5,
         "experiments": 2},
        {"day": "2024-05-03", "team": "blue", "machine_id": "m-2", "machine_name": "a100", "gpu_hours": 4.0,
         "experiments": 1},
    ], "total_gpu_hours": 5.5, "gpu_hours_error": None, "since": "2024-05-01", "until": "2024-05-31"}
    assert (usage.requests[-1].team, usage.requests[-1].since_day, usage.requests[-1].until_day) == (
        "", "2024-05-01", "2024-05-31")
    asked = gpu_usage.requests[-1]
    assert (asked.team, asked.since_day, asked.until_day) == ("", "2024-05-01", "2024-05-31")
    blue = (await http.get("/v0/usage?since=2024-05-01&until=2024-05-31&team=blue", headers=admin)).json()
    assert [r["team"] for r in blue["data"]] == ["blue"] and blue["total_instance_hours"] == 1.0
    assert [r["machine_id"] for r in blue["gpu_data"]] == ["m-2"] and blue["total_gpu_hours"] == 4.0
    assert gpu_usage.requests[-1].team == "blue"

    exported = await http.get("/v0/usage?since=2024-05-01&until=2024-05-02&format=csv", headers=admin)
    assert exported.status_code == 200
    assert exported.headers["content-type"].startswith("text/csv")
    assert exported.headers["content-disposition"] == 'attachment; filename="usage-2024-05-01-2024-05-02.csv"'
    assert list(csv.reader(io.StringIO(exported.text))) == [
        ["day", "team", "env_id", "instance_hours", "sessions", "machine_id", "machine_name", "gpu_hours",
         "experiments"],
        ["2024-05-01", "acme", "pong", "2.0", "1", "", "", "", ""],
        ["2024-05-02", "acme", "cartpole", "0.1", "1", "", "", "", ""],
        ["2024-05-02", "blue", "cartpole", "1.0", "3", "", "", "", ""],
        ["2024-05-02", "acme", "", "", "", "m-1", "h100-box", "1.5", "2"],
    ]

    member = await member_token(token_gateway, "acme")
    own = (await http.get("/v0/usage?since=2024-05-01&until=2024-05-31", headers=bearer(member))).json()
    assert {r["team"] for r in own["data"]} == {"acme"} and own["total_instance_hours"] == 2.1
    assert usage.requests[-1].team == "acme" and gpu_usage.requests[-1].team == "acme"
    assert [r["machine_id"] for r in own["gpu_data"]] == ["m-1"] and own["total_gpu_hours"] == 1.5
    assert (await http.get("/v0/usage?team=acme&since=2024-05-01", headers=bearer(member))).status_code == 200
    other = await http.get("/v0/usage?team=blue", headers=bearer(member))
    assert other.status_code == 404 and other.json()["detail"] == "no team 'blue'"

    defaults = (await http.get("/v0/usage", headers=admin)).json()  # this month so far
    today = dt.datetime.now(dt.timezone.utc).date()
    assert (defaults["since"], defaults["until"]) == (today.replace(day=1).isoformat(), today.isoformat())

    for query, field, value in (("since=2024/05/01", "since", "2024/05/01"), ("until=2024-02-30", "until", "2024-02-30")):
        bad = await http.get(f"/v0/usage?{query}", headers=admin)
        assert bad.status_code == 422 and bad.json()["field"] == field
        assert bad.json()["detail"] == f"{field} must be a date YYYY-MM-DD (UTC), not {value!r}"
    backwards = await http.get("/v0/usage?since=2024-05-02&until=2024-05-01", headers=admin)
    assert backwards.status_code == 422 and backwards.json()["detail"] == "until (2024-05-01) is before since (2024-05-02)"
    assert (await http.get("/v0/usage?format=xml", headers=admin)).status_code == 422

    # The machines service does not answer: the instance-hours come with the reason GPU-hours are
    # missing; the CSV, a file that must be whole, is a 503.
    await gpu_usage.stop()
    without = (await http.get("/v0/usage?since=2024-05-01&until=2024-05-31", headers=admin)).json()
    assert without["total_instance_hours"] == 3.1 and without["gpu_data"] == [] and without["total_gpu_hours"] == 0
    assert without["gpu_hours_error"].startswith("GPU-hours of experiments are missing: ")
    assert "machines" in without["gpu_hours_error"]
    no_csv = await http.get("/v0/usage?since=2024-05-01&until=2024-05-31&format=csv", headers=admin)
    assert no_csv.status_code == 503 and no_csv.json()["detail"].startswith("GPU-hours of experiments: ")


async def test_a_quota_the_broker_reports_is_a_429_with_its_message(gateway: Any, stand_in_broker: Any) -> None:
    message = "team 'default' has reached its quota of 2 concurrent sessions (max_sessions=2): close one first"
    stand_in_broker.create_error = ctl.ControlError(code="resource_exhausted", message=message)
    refused = await gateway.http.post("/v0/sessions", json={"env_id": "cartpole"})
    assert refused.status_code == 429
    assert refused.json() == {"detail": message, "code": "resource_exhausted"}


async def test_teams_work_without_token_auth_on_the_platforms_database(start_gateway: Any, tmp_path: Path,
                                                                       stand_in_broker: Any, usage: StandInUsage) -> None:
    gateway = await start_gateway(database_url=f"sqlite:///{tmp_path}/open.db")  # PLATFORM_AUTH=none: everyone admin
    assert not (tmp_path / "open.db").exists()  # opened on first use only
    made = await gateway.http.patch("/v0/teams/default", json={"max_sessions": 3})
    assert made.status_code == 200 and made.json()["max_sessions"] == 3
    assert (tmp_path / "open.db").is_file()

"""Quotas and usage across the whole platform (PLATFORM_MODE=managed, real broker and env host):
an admin gives a team quotas, the team's member is refused with a 429 naming the quota past
either, and the team's usage (JSON and CSV) counts its sessions once, through a broker restart
and a killed instance; a warm pool instance counts only from the create of the session that
claims it."""

from __future__ import annotations

import csv
import io
import os
import re
import signal
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.waiting import instance_pids, wait_for

ADMIN = "quotas-admin-token-0123456789"
WARM_UNCLAIMED_S = 5.0  # a warm instance waits this long before a session claims it


@pytest.fixture(scope="module")
def managed_platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    env = {"PLATFORM_MODE": "managed", "PLATFORM_AUTH": "token", "PLATFORM_ADMIN_TOKEN": ADMIN}
    with running_platform(tmp_path_factory.mktemp("quotas"), extra_env=env) as stack:
        yield stack


def _client(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60)


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, f"{response.request.method} {response.request.url}: {response.text}"
    return response.json() if response.content else None


def _usage(client: httpx.Client) -> dict[str, Any]:
    return _ok(client.get("/v0/usage"))  # this month so far


def test_quotas_refuse_with_a_429_and_usage_counts_each_session_once(managed_platform: PlatformStack) -> None:
    url = managed_platform.url
    admin = _client(url, ADMIN)
    _ok(admin.post("/v0/teams", json={"name": "acme", "max_sessions": 1}), 201)
    token = _ok(admin.post("/v0/tokens", json={"name": "acme-member", "team": "acme"}), 201)["token"]
    acme = _client(url, token)

    first = _ok(acme.post("/v0/sessions", json={"env_id": "cartpole", "num_envs": 2}), 201)
    assert first["team"] == "acme"
    refused = acme.post("/v0/sessions", json={"env_id": "cartpole"})
    assert refused.status_code == 429, refused.text
    assert refused.json() == {"code": "resource_exhausted", "detail": (
        "team 'acme' has reached its quota of 1 concurrent session (max_sessions=1): close one first")}
    team = _ok(acme.get("/v0/teams/acme"))
    assert (team["max_sessions"], team["open_sessions"]) == (1, 1)
    other_team = _ok(admin.post("/v0/sessions", json={"env_id": "cartpole"}), 201)  # the admin's team: no quota
    _ok(admin.delete(f"/v0/sessions/{other_team['id']}"))

    # A killed instance: its session crashes, and counts until then.
    _ok(admin.patch("/v0/teams/acme", json={"max_sessions": 2}))
    doomed = _ok(acme.post("/v0/sessions", json={"env_id": "cartpole"}), 201)
    _ok(acme.post(f"/v0/sessions/{doomed['id']}/reset", json={"seed": 1}))
    pids = instance_pids(doomed["id"])
    assert pids, f"the environment process of session {doomed['id']} is running"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while _ok(acme.get(f"/v0/sessions/{doomed['id']}"))["state"] != "crashed":
        assert time.monotonic() < deadline, "the killed instance's session never crashed"
        time.sleep(0.2)

    before = _usage(acme)
    assert {r["team"] for r in before["data"]} == {"acme"}
    assert sum(r["sessions"] for r in before["data"] if r["day"] == before["until"]) == 2

    managed_platform.restart("broker")  # the same database: nothing lost, nothing doubled
    after = _usage(acme)
    today = [r for r in after["data"] if r["day"] == after["until"]]
    assert [(r["env_id"], r["sessions"]) for r in today] == [("cartpole", 2)]
    assert after["total_instance_hours"] >= before["total_instance_hours"]  # the open one goes on counting
    assert _ok(acme.get(f"/v0/sessions/{first['id']}"))["state"] == "running"

    exported = acme.get("/v0/usage", params={"format": "csv"})
    assert exported.status_code == 200 and exported.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(exported.text)))
    assert rows[0] == ["day", "team", "env_id", "instance_hours", "sessions", "machine_id", "machine_name",
                       "gpu_hours", "experiments"]  # GPU-hours' columns, empty on instance rows
    assert all(row[5:] == ["", "", "", ""] for row in rows[1:]), rows  # no experiment ran here
    assert {row[1] for row in rows[1:]} == {"acme"}
    everyone = _usage(admin)
    assert {r["team"] for r in everyone["data"]} >= {"acme", "default"}

    # Instance-hours: a quota the team has used up refuses the next create too.
    _ok(admin.patch("/v0/teams/acme", json={"max_sessions": None, "instance_hours_per_month": 0.000001}))
    hours = acme.post("/v0/sessions", json={"env_id": "cartpole"})
    assert hours.status_code == 429, hours.text
    assert "instance-hours this month (instance_hours_per_month=1e-06)" in hours.json()["detail"]
    _ok(admin.patch("/v0/teams/acme", json={"instance_hours_per_month": None}))
    _ok(acme.delete(f"/v0/sessions/{first['id']}"))



def test_a_warm_instance_counts_to_nobody_until_claimed_then_from_its_sessions_create(tmp_path) -> None:
    env = {"PLATFORM_MODE": "managed", "PLATFORM_AUTH": "token", "PLATFORM_ADMIN_TOKEN": ADMIN,
           "PLATFORM_POOLS": "pendulum=1"}
    with running_platform(tmp_path, extra_env=env) as stack:
        admin = _client(stack.url, ADMIN)
        _ok(admin.post("/v0/teams", json={"name": "lab"}), 201)
        lab = _client(stack.url, _ok(admin.post("/v0/tokens", json={"name": "lab-member", "team": "lab"}), 201)["token"])
        wait_for(lambda: "pool pendulum: " in stack.log("broker") and "warm on env host" in stack.log("broker"),
                 timeout=90, what="the pendulum pool to be warm")
        warm_since = time.monotonic()
        time.sleep(WARM_UNCLAIMED_S)
        assert _usage(lab)["data"] == [] and _usage(admin)["total_instance_hours"] == 0, "a warm instance is no one's"

        opened = time.monotonic()
        session = _ok(lab.post("/v0/sessions", json={"env_id": "pendulum"}), 201)
        assert re.search(rf"session {session['id']} \(pendulum\) claimed pool instance", stack.log("envhost"))
        _ok(lab.post(f"/v0/sessions/{session['id']}/reset", json={"seed": 0}))
        _ok(lab.delete(f"/v0/sessions/{session['id']}"))
        open_s = time.monotonic() - opened

        rows = _usage(lab)["data"]
        assert [(r["env_id"], r["sessions"]) for r in rows] == [("pendulum", 1)]
        counted_s = rows[0]["instance_hours"] * 3600
        assert 0 < counted_s <= open_s + 0.5, (counted_s, open_s)  # the session's own time ...
        assert counted_s < opened - warm_since, "... not the instance's time in the pool"

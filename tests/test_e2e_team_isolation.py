"""PLATFORM_MODE=managed across the whole platform: team red reaches none of team blue's
resources, and no token is kept in clear. Every route of the OpenAPI document the gateway serves is called with blue's ids
by a member of red, by an admin of red, and by the platform's operator (on the routes of
sessions, recordings, snapshots, comparisons and WADs: it manages teams, not their resources),
and answers exactly as it does for ids that exist nowhere (status and message); listings never
show blue's ids; the stream refuses blue's session and blue's snapshot. A route added later is
covered without a change here."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from platform_testing.doom_wads import write_corridor_wad
from platform_testing.platform import PlatformStack, running_platform
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

ADMIN = "isolation-admin-token-0123456789"
ISSUED: list[str] = []  # every API token made by the tests, for the scan of the data at rest
METHODS = ("get", "post", "put", "patch", "delete")


@pytest.fixture(scope="module")
def managed_platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    """A managed platform; once stopped, no token issued during its tests is anywhere in its data
    folder (the database, the logs, the NATS store, the recordings) in clear."""
    root = tmp_path_factory.mktemp("managed")
    env = {"PLATFORM_MODE": "managed", "PLATFORM_AUTH": "token", "PLATFORM_ADMIN_TOKEN": ADMIN}
    with running_platform(root, extra_env=env) as stack:
        yield stack
    issued = [ADMIN.encode(), *(token.encode() for token in ISSUED)]
    assert len(issued) >= 3, issued
    files = [path for path in root.rglob("*") if path.is_file()]
    assert any(path.name == "platform.db" for path in files), files
    for path in files:
        content = path.read_bytes()
        assert not any(token in content for token in issued), f"a token in clear in {path}"


def _client(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60)


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, f"{response.request.method} {response.request.url}: {response.text}"
    return response.json() if response.content else None


def _member_of(admin: httpx.Client, team: str, role: str = "member") -> tuple[str, str]:
    _ok(admin.post("/v0/teams", json={"name": team}), 201)
    made = _ok(admin.post("/v0/tokens", json={"name": f"{team}-{role}", "team": team, "role": role}), 201)
    ISSUED.append(made["token"])
    return made["token"], made["id"]


# Resources whose team isolation their own tests check, each on a machine of the test's sshd
# (this module has none): a route naming one is theirs, not this sweep's.
ISOLATED_ELSEWHERE = {
    "machine_id": "tests/test_e2e_machines.py",
    "experiment_id": "tests/test_e2e_experiments.py and tests/web/test_experiments_page.py",
    "eval_id": "tests/test_e2e_evals.py (another team's eval is a 404 on every route)",
}


def _blue_resources(blue: httpx.Client, folder: Path) -> dict[str, str]:
    """Blue's session (running, recorded, one finished episode), saved snapshot, comparison, WAD
    and training run: their ids by the path parameter that names each."""
    session = _ok(blue.post("/v0/sessions", json={"env_id": "cartpole", "record": True}), 201)["id"]
    _ok(blue.post(f"/v0/sessions/{session}/reset", json={"seed": 1}))
    _ok(blue.post(f"/v0/sessions/{session}/hold", json={"action": 0, "steps": 200}))  # the episode ends
    _ok(blue.post(f"/v0/sessions/{session}/reset", json={"seed": 2}))
    snapshot = _ok(blue.post(f"/v0/sessions/{session}/saved-snapshots", json={"label": "blue's"}), 201)["id"]
    comparison = _ok(blue.post("/v0/comparisons", json={"env": "cartpole", "agents": [
        {"name": "blue-agent", "session_id": session, "recording_id": session}]}), 201)["id"]
    wad = write_corridor_wad(folder / "blue.wad")
    uploaded = _ok(blue.post("/v0/doom/wads", params={"name": "blue.wad"}, content=wad.read_bytes(),
                             headers={"Content-Type": "application/octet-stream"}), 201)["id"]
    run = _ok(blue.post("/v0/runs", json={"name": "blue-run", "tags": ["blue"]}), 201)["id"]
    _ok(blue.post(f"/v0/runs/{run}/metrics", json={"points": [{"name": "loss", "step": 0, "value": 1.0}]}))
    for _ in range(100):  # the recorder has written the finished episode
        recording = blue.get(f"/v0/recordings/{session}")
        if recording.status_code == 200 and recording.json().get("episodes"):
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"blue's recording {session} has no finished episode: {recording.text}")
    return {"session_id": session, "recording_id": session, "snapshot_id": snapshot,
            "comparison_id": comparison, "wad_id": uploaded, "run_id": run}


def _missing_like(value: str) -> str:
    """An id of the same shape as `value` that names nothing."""
    head, _, tail = value.rpartition("-")
    return f"{head}-{'0' * len(tail)}" if head else "nothing-" + value


def _path_with(template: str, values: dict[str, str]) -> str | None:
    """`template` with its parameters filled from `values`; None when one has no value."""
    filled = template
    for name in re.findall(r"{(\w+)}", template):
        value = "rewards" if (name == "name" and "/arrays/" in template) else values.get(name)
        if value is None:
            return None
        filled = filled.replace("{" + name + "}", value)
    return filled


def _answer(client: httpx.Client, method: str, path: str) -> tuple[int, str]:
    body = {} if method in ("post", "put", "patch") else None
    response = client.request(method.upper(), path, json=body)
    return response.status_code, response.text


@pytest.mark.parametrize("who", ["member", "admin", "operator"])
def test_every_route_answers_another_teams_ids_as_missing_ones(managed_platform: PlatformStack,
                                                                tmp_path: Path, who: str) -> None:
    url = managed_platform.url
    admin = _client(url, ADMIN)
    blue_name = f"blue-{who}"  # each caller's own pair of teams on the module's platform
    blue_token, blue_token_id = _member_of(admin, blue_name)
    red_token = ADMIN if who == "operator" else _member_of(admin, f"red-{who}", role=who)[0]
    operator = who == "operator"
    blue, red = _client(url, blue_token), _client(url, red_token)
    owned = _blue_resources(blue, tmp_path)
    others = {**owned, "token_id": blue_token_id, "name": blue_name, "team": blue_name, "subject": "blue-member",
              "index": "0", "frame": "0", "env_id": "cartpole"}
    missing = {name: (_missing_like(value) if name in owned or name == "token_id" else value)
               for name, value in others.items()}
    missing["name"] = missing["team"] = "no-such-team"

    document = _ok(red.get("/openapi.json"))
    checked, leaks = [], []
    # the catalog's env_id is everyone's; teams, members and tokens are the operator's to manage
    team_owned = set(owned) if operator else {*owned, "token_id", "name", "team", "subject"}
    for template, operations in document["paths"].items():
        parameters = set(re.findall(r"{(\w+)}", template))
        if not team_owned & parameters or parameters & set(ISOLATED_ELSEWHERE):
            continue
        for method in METHODS:
            if method not in operations:
                continue
            theirs, nowhere = _path_with(template, others), _path_with(template, missing)
            assert theirs is not None and nowhere is not None, f"no value for a parameter of {template}"
            status, text = _answer(red, method, theirs)
            expected_status, expected_text = _answer(red, method, nowhere)
            for name, value in others.items():  # the answers may name the id asked for, nothing else
                if name in owned or name == "token_id":
                    text = text.replace(value, missing[name])
            text = text.replace(f"'{blue_name}'", "'no-such-team'").replace(f'"{blue_name}"', '"no-such-team"')
            checked.append(f"{method.upper()} {template}")
            if status < 400 or (status, text) != (expected_status, expected_text):
                leaks.append(f"{method.upper()} {theirs}: {status} {text[:200]} (missing: {expected_status} "
                             f"{expected_text[:200]})")
    assert len(checked) >= (20 if operator else 25), checked  # every resource's routes were reached
    assert not leaks, "\n".join(leaks)

    # Listings (every GET without a path parameter, with blue's ids as filters) never show them.
    filters = {"session_id": owned["session_id"], "env_id": "cartpole", "include_closed": "true",
               "life": None, "team": None}
    for template, operations in document["paths"].items():
        if "{" in template or "get" not in operations or "wheels" in template:
            continue
        params = {p["name"]: filters.get(p["name"]) for p in operations["get"].get("parameters", [])
                  if p.get("in") == "query" and filters.get(p["name"]) is not None}
        response = red.get(template, params=params)
        shown = [value for value in (*owned.values(), *(() if operator else (blue_token_id,))) if value in response.text]
        assert not shown, f"GET {template} {params} shows blue's {shown}: {response.text[:300]}"
        checked.append(f"GET {template}")

    # Body references: a session may not use blue's WAD, nor restore blue's snapshot.
    def create_with_wad(wad: str) -> tuple[int, str]:
        answer = red.post("/v0/sessions", json={"env_id": "cartpole", "kwargs": {"wad": wad}})
        return answer.status_code, answer.text.replace(wad, "WAD")

    assert create_with_wad(owned["wad_id"]) == create_with_wad(missing["wad_id"])
    assert create_with_wad(owned["wad_id"])[0] == 422
    red_session = _ok(red.post("/v0/sessions", json={"env_id": "cartpole"}), 201)["id"]
    try:
        _ok(red.post(f"/v0/sessions/{red_session}/reset", json={"seed": 3}))

        def restore(snapshot: str) -> tuple[int, str]:
            answer = red.post(f"/v0/sessions/{red_session}/restore-saved", json={"id": snapshot})
            return answer.status_code, answer.text.replace(snapshot, "SNAPSHOT")

        assert restore(owned["snapshot_id"]) == restore(missing["snapshot_id"])
        assert restore(owned["snapshot_id"])[0] == 404

        # The stream: blue's session as a missing one, blue's snapshot as a missing one.
        ws_url = url.replace("http", "ws", 1)
        for session in (owned["session_id"], missing["session_id"]):
            with pytest.raises(ConnectionClosed) as closed, ws_connect(
                    f"{ws_url}/v0/sessions/{session}/stream?token={red_token}") as ws:
                ws.recv(timeout=30)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404, closed.value
        answers = []
        with ws_connect(f"{ws_url}/v0/sessions/{red_session}/stream?token={red_token}") as ws:
            for snapshot in (owned["snapshot_id"], missing["snapshot_id"]):
                ws.send(json.dumps({"id": 1, "op": "restore_saved", "snapshot_id": snapshot}))
                answers.append(str(ws.recv(timeout=60)).replace(snapshot, "SNAPSHOT"))
        assert answers[0] == answers[1] and "not found" in answers[0], answers
    finally:
        red.delete(f"/v0/sessions/{red_session}")

    # Nothing of blue's was touched by red's calls (DELETE among them).
    for kind, path in (("session", f"/v0/sessions/{owned['session_id']}"),
                       ("recording", f"/v0/recordings/{owned['recording_id']}"),
                       ("snapshot", f"/v0/snapshots/{owned['snapshot_id']}"),
                       ("comparison", f"/v0/comparisons/{owned['comparison_id']}"),
                       ("wad", f"/v0/doom/wads/{owned['wad_id']}")):
        assert blue.get(path).status_code == 200, kind
    listed = _ok(blue.get("/v0/sessions"))["data"]
    assert [s["id"] for s in listed] == [owned["session_id"]]
    _ok(blue.delete(f"/v0/sessions/{owned['session_id']}"))

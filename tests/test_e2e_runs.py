"""Training runs (`/v0/runs`) on the whole platform: a run made (and made again by its client id),
its metrics logged, re-sent without duplicates, read back whole and thinned, patched, listed by
filter, deleted; bad input answered with what to fix; and, on a managed platform, one team's runs
out of another's reach."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from platform_testing.platform import PlatformStack, running_platform


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, f"{response.request.method} {response.request.url}: {response.text}"
    return response.json() if response.content else None


def test_runs_end_to_end(platform_stack: PlatformStack) -> None:
    http = httpx.Client(base_url=platform_stack.url, timeout=60)
    body = {"id": "run-e2e-s1", "name": "ppo", "group": "ppo-cartpole", "seed": 1, "tags": ["e2e", "ppo"],
            "hparams": {"lr": 0.0003, "algo": "ppo", "clip": None, "norm": True}, "experiment_id": "exp-e2e"}
    run = _ok(http.post("/v0/runs", json=body), 201)
    assert run["id"] == "run-e2e-s1" and run["state"] == "running" and run["metrics"] == []
    # the client's retry (a lost answer): the same run, the new tag and session merged in
    again = _ok(http.post("/v0/runs", json={**body, "tags": ["retried"], "session_ids": ["s-1"]}), 200)
    assert again["tags"] == ["e2e", "ppo", "retried"] and again["session_ids"] == ["s-1"]
    assert again["created_at"] == run["created_at"]
    other = _ok(http.post("/v0/runs", json={"name": "dqn", "tags": ["e2e"]}), 201)
    assert other["id"].startswith("run-") and other["group"] == "dqn"

    points = [{"name": "train/return", "step": step, "value": step / 10, "time": 1_800_000_000 + step,
               "frames": step * 4} for step in range(0, 5000)]
    points += [{"name": "loss", "step": step, "value": 1 / (step + 1)} for step in range(0, 5000, 50)]
    assert _ok(http.post("/v0/runs/run-e2e-s1/metrics", json={"points": points[:5000]})) == {"accepted": 5000}
    assert _ok(http.post("/v0/runs/run-e2e-s1/metrics", json={"points": points[5000:]})) == {"accepted": 100}
    # the same points again: replaced, never duplicated
    assert _ok(http.post("/v0/runs/run-e2e-s1/metrics", json={"points": points[:5000]})) == {"accepted": 5000}
    _ok(http.post("/v0/runs/run-e2e-s1/metrics", json={"points": [
        {"name": "train/return", "step": 4999, "value": 123.5, "time": 1_800_009_999, "frames": 19996}]}))

    read = _ok(http.get("/v0/runs/run-e2e-s1/metrics"))
    assert read["run_id"] == "run-e2e-s1" and set(read["series"]) == {"train/return", "loss"}
    series = read["series"]["train/return"]
    assert series["step"] == list(range(5000)) and series["value"][-1] == 123.5
    assert series["time"][0] == 1_800_000_000 and series["frames"][10] == 40
    assert read["series"]["loss"]["frames"][0] is None and len(read["series"]["loss"]["step"]) == 100
    thinned = _ok(http.get("/v0/runs/run-e2e-s1/metrics", params={"names": "train/return", "max_points": 50}))
    steps = thinned["series"]["train/return"]["step"]
    assert list(thinned["series"]) == ["train/return"] and len(steps) == 50 and steps[0] == 0 and steps[-1] == 4999

    got = _ok(http.get("/v0/runs/run-e2e-s1"))
    assert {m["name"]: (m["points"], m["last_step"], m["last_value"]) for m in got["metrics"]} == {
        "train/return": (5000, 4999, 123.5), "loss": (100, 4950, 1 / 4951)}
    patched = _ok(http.patch("/v0/runs/run-e2e-s1", json={"state": "finished", "summary": {"best": 123.5},
                                                           "hparams": {"lr": 0.001}, "recording_ids": ["s-1"]}))
    assert patched["state"] == "finished" and patched["summary"] == {"best": 123.5}
    assert patched["hparams"]["lr"] == 0.001 and patched["hparams"]["algo"] == "ppo"
    assert patched["recording_ids"] == ["s-1"]

    def listed(**params: Any) -> list[str]:
        return [r["id"] for r in _ok(http.get("/v0/runs", params=params))["data"]]

    assert listed()[:2] == [other["id"], "run-e2e-s1"]  # newest first
    assert listed(tag="ppo") == ["run-e2e-s1"]
    assert set(listed(tag="e2e")) == {other["id"], "run-e2e-s1"}
    assert listed(group="dqn") == [other["id"]]
    assert listed(experiment_id="exp-e2e") == ["run-e2e-s1"]
    assert len(listed(limit=1)) == 1

    # bad input: what to fix
    bad = http.post("/v0/runs/run-e2e-s1/metrics", content=b'{"points": [{"name": "loss", "step": 1, "value": Infinity}]}',
                    headers={"Content-Type": "application/json"})
    assert bad.status_code == 422 and "points[0]" in bad.json()["detail"] and "finite" in bad.json()["detail"]
    assert http.post("/v0/runs/run-e2e-s1/metrics", json={"points": [{"name": "l", "step": i, "value": 0}
                                                                     for i in range(5001)]}).status_code == 422
    assert "a run id" in http.post("/v0/runs", json={"id": "bad id", "name": "x"}).json()["detail"]
    unknown = http.get("/v0/runs/run-nowhere/metrics")
    assert unknown.status_code == 404 and "run 'run-nowhere' not found" in unknown.json()["detail"]

    assert http.delete("/v0/runs/run-e2e-s1").status_code == 204
    assert http.get("/v0/runs/run-e2e-s1").status_code == 404
    assert http.get("/v0/runs/run-e2e-s1/metrics").status_code == 404
    # the same id again starts afresh: the deleted run's metrics went with it
    assert _ok(http.post("/v0/runs", json=body), 201)["metrics"] == []
    assert http.delete("/v0/runs/run-e2e-s1").status_code == 204
    assert http.delete(f"/v0/runs/{other['id']}").status_code == 204


ADMIN = "runs-admin-token-0123456789"


def test_a_teams_runs_are_its_own(tmp_path: Path) -> None:
    env = {"PLATFORM_MODE": "managed", "PLATFORM_AUTH": "token", "PLATFORM_ADMIN_TOKEN": ADMIN}
    with running_platform(tmp_path / "platform", extra_env=env) as stack:
        admin = httpx.Client(base_url=stack.url, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60)
        clients = {}
        for team in ("blue", "red"):
            _ok(admin.post("/v0/teams", json={"name": team}), 201)
            token = _ok(admin.post("/v0/tokens", json={"name": team, "team": team}), 201)["token"]
            clients[team] = httpx.Client(base_url=stack.url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
        blue, red = clients["blue"], clients["red"]
        _ok(blue.post("/v0/runs", json={"id": "run-blue", "name": "b", "tags": ["t"]}), 201)
        _ok(blue.post("/v0/runs/run-blue/metrics", json={"points": [{"name": "loss", "step": 0, "value": 1}]}))
        _ok(red.post("/v0/runs", json={"id": "run-red", "name": "r", "tags": ["t"]}), 201)
        assert [r["id"] for r in _ok(red.get("/v0/runs"))["data"]] == ["run-red"]
        assert [r["id"] for r in _ok(red.get("/v0/runs", params={"tag": "t"}))["data"]] == ["run-red"]
        for method, path, body in (("GET", "/v0/runs/{}", None), ("PATCH", "/v0/runs/{}", {"state": "failed"}),
                                   ("GET", "/v0/runs/{}/metrics", None),
                                   ("POST", "/v0/runs/{}/metrics", {"points": [{"name": "x", "step": 0, "value": 0}]}),
                                   ("DELETE", "/v0/runs/{}", None)):
            theirs = red.request(method, path.format("run-blue"), json=body)
            nowhere = red.request(method, path.format("run-bluf"), json=body)
            assert theirs.status_code == nowhere.status_code == 404, theirs.text
            assert theirs.json()["detail"] == nowhere.json()["detail"].replace("run-bluf", "run-blue")
        # blue's run is untouched, and its id is not red's to take
        assert _ok(blue.get("/v0/runs/run-blue"))["state"] == "running"
        assert len(_ok(blue.get("/v0/runs/run-blue/metrics"))["series"]["loss"]["step"]) == 1
        assert red.post("/v0/runs", json={"id": "run-blue", "name": "r"}).status_code == 409

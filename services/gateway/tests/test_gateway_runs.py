"""Training runs: the store (`platform_gateway.run_store`) on SQLite and on the real PostgreSQL,
and the `/v0/runs` routes' answers to bad input on a gateway of its own."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from platform_database import open_engine
from platform_gateway.run_store import Point, RunIdTakenError, RunStore, thin


@pytest.fixture(params=["sqlite", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RunStore]:
    url = (f"sqlite+aiosqlite:///{tmp_path}/platform.db" if request.param == "sqlite"
           else str(request.getfixturevalue("postgres_database")))
    runs = RunStore(open_engine(url))
    await runs.create_tables()
    await runs.create_tables()  # a second gateway starting on the same database
    yield runs
    await runs.engine.dispose()


async def test_a_run_is_made_merged_listed_and_deleted(store: RunStore) -> None:
    run, made = await store.create("run-a", "acme", name="ppo", seed=1, tags=["x"], hparams={"lr": 0.001},
                                   session_ids=["s1"], now=100.0)
    assert made and run.group == "ppo" and run.state == "running" and run.metrics == []
    # the same id again (a client's retry): merged, not made
    again, made = await store.create("run-a", "acme", name="ppo", tags=["y", "x"], hparams={"gamma": 0.99},
                                     session_ids=["s2", "s1"], now=101.0)
    assert not made
    assert again.tags == ["x", "y"] and again.session_ids == ["s1", "s2"]
    assert again.hparams == {"lr": 0.001, "gamma": 0.99} and again.seed == 1 and again.created_at == 100.0
    with pytest.raises(RunIdTakenError):
        await store.create("run-a", "blue", name="other")
    await store.create("run-b", "acme", name="ppo", group="g", seed=2, tags=["y"], experiment_id="exp-1", now=102.0)
    await store.create("run-c", "blue", name="dqn", tags=["x"], now=103.0)
    assert [r.id for r in await store.list("acme")] == ["run-b", "run-a"]
    assert [r.id for r in await store.list(None)] == ["run-c", "run-b", "run-a"]
    assert [r.id for r in await store.list("acme", tag="x")] == ["run-a"]
    assert [r.id for r in await store.list(None, tag="x")] == ["run-c", "run-a"]
    assert [r.id for r in await store.list("acme", group="g")] == ["run-b"]
    assert [r.id for r in await store.list("acme", experiment_id="exp-1")] == ["run-b"]
    assert [r.id for r in await store.list("acme", limit=1)] == ["run-b"]
    assert await store.get("run-c", "acme") is None  # another team's
    patched = await store.update("run-a", "acme", state="finished", summary={"best": 3.5}, tags=["z"])
    assert patched is not None and patched.state == "finished" and patched.summary == {"best": 3.5}
    assert patched.tags == ["x", "y", "z"]
    assert await store.update("run-c", "acme", state="failed") is None
    assert await store.delete("run-c", "acme") is False
    assert await store.delete("run-a", "acme") is True
    assert await store.get("run-a", None) is None


async def test_points_are_upserted_by_name_and_step(store: RunStore) -> None:
    await store.create("run-m", "acme", name="m")
    points = [Point("loss", step, 1.0 / (step + 1), 1000.0 + step, step * 4) for step in range(5000)]
    points += [Point("return", step, float(step), 1000.0 + step, None) for step in range(0, 5000, 10)]
    started = time.perf_counter()
    assert await store.add_points("run-m", "acme", points) == len(points)
    first = time.perf_counter() - started
    # the same batch again (a retry): replaced, never duplicated
    started = time.perf_counter()
    assert await store.add_points("run-m", "acme", points) == len(points)
    again = time.perf_counter() - started
    assert first < 5 and again < 5, (first, again)  # one statement per batch, not a round trip per point
    # a changed value and a repeated key inside one batch: the last one wins
    assert await store.add_points("run-m", "acme", [Point("loss", 3, 7.0, 1.0, None),
                                                    Point("loss", 3, 8.0, 2.0, 12)]) == 2
    assert await store.add_points("run-m", "blue", points[:1]) is None  # another team's run
    assert await store.add_points("run-missing", None, points[:1]) is None
    series = await store.series("run-m")
    assert set(series) == {"loss", "return"}
    loss = series["loss"]
    assert len(loss.step) == 5000 and loss.step == sorted(loss.step)
    assert loss.value[3] == 8.0 and loss.time[3] == 2.0 and loss.frames[3] == 12
    assert series["return"].frames[0] is None
    thinned = (await store.series("run-m", ["loss"], max_points=100))["loss"]
    assert len(thinned.step) == 100 and thinned.step[0] == 0 and thinned.step[-1] == 4999
    run = await store.get("run-m", "acme")
    assert run is not None
    assert [(m.name, m.points, m.last_step, m.last_value) for m in run.metrics] == [
        ("loss", 5000, 4999, 1.0 / 5000), ("return", 500, 4990, 4990.0)]
    assert await store.delete("run-m", None)
    assert await store.series("run-m") == {}


def test_thinning_keeps_the_first_and_last_evenly() -> None:
    assert thin(5, 10) == [0, 1, 2, 3, 4]
    assert thin(11, 3) == [0, 5, 10]
    assert thin(1000, 2) == [0, 999]
    kept = thin(10_001, 1000)
    assert len(kept) == 1000 and kept[0] == 0 and kept[-1] == 10_000


async def test_the_routes_say_what_to_fix(start_gateway: Any, tmp_path: Path) -> None:
    gateway = await start_gateway(database_url=f"sqlite+aiosqlite:///{tmp_path}/platform.db")
    http = gateway.http

    async def refused(method: str, path: str, status: int, *words: str, **kwargs: Any) -> dict[str, Any]:
        answer = await http.request(method, path, **kwargs)
        assert answer.status_code == status, answer.text
        body: dict[str, Any] = answer.json()
        for word in words:
            assert word in body["detail"], body
        return body

    await refused("POST", "/v0/runs", 422, "a run id", json={"id": "nope", "name": "x"})
    await refused("POST", "/v0/runs", 422, "name", json={"name": ""})
    created = await http.post("/v0/runs", json={"name": "ppo", "hparams": {"lr": 0.1, "algo": "ppo", "big": True}})
    assert created.status_code == 201, created.text
    run = created.json()
    assert run["id"].startswith("run-") and run["group"] == "ppo" and run["created_at"].endswith("Z")
    assert run["hparams"] == {"lr": 0.1, "algo": "ppo", "big": True}
    path = f"/v0/runs/{run['id']}/metrics"
    body = await refused("POST", path, 422, "points[1]", "'loss' at step 2", "finite",
                         content='{"points": [{"name": "loss", "step": 1, "value": 1.0}, '
                                 '{"name": "loss", "step": 2, "value": NaN}]}',
                         headers={"content-type": "application/json"})
    assert body["field"] == "points.1.value"
    await refused("POST", path, 422, "a metric name", json={"points": [{"name": "has space", "step": 1, "value": 1}]})
    await refused("POST", path, 422, "step", json={"points": [{"name": "loss", "step": -1, "value": 1}]})
    await refused("POST", path, 422, "5000", json={"points": [{"name": "l", "step": i, "value": 1}
                                                              for i in range(5001)]})
    await refused("POST", path, 422, "points", json={"points": []})
    await refused("POST", "/v0/runs/run-unknown/metrics", 404, "run 'run-unknown' not found",
                  json={"points": [{"name": "loss", "step": 1, "value": 1}]})
    await refused("GET", "/v0/runs/run-unknown", 404, "run-unknown")
    await refused("GET", f"{path}?names=a%20b", 422, "metric name")
    await refused("PATCH", f"/v0/runs/{run['id']}", 422, "state", json={"state": "done"})
    await refused("DELETE", "/v0/runs/run-unknown", 404, "run-unknown")
    assert (await http.delete(f"/v0/runs/{run['id']}")).status_code == 204


async def test_the_routes_on_postgresql(start_gateway: Any, postgres_database: str) -> None:
    gateway = await start_gateway(database_url=postgres_database)
    http = gateway.http
    body = {"id": "run-pg-1", "name": "ppo", "group": "ppo-cartpole", "seed": 1, "tags": ["pg"],
            "hparams": {"lr": 0.0003, "algo": "ppo"}}
    assert (await http.post("/v0/runs", json=body)).status_code == 201
    assert (await http.post("/v0/runs", json={**body, "tags": ["again"]})).json()["tags"] == ["pg", "again"]
    points = [{"name": "train/return", "step": step, "value": step / 2, "frames": step * 4} for step in range(5000)]
    for _ in range(2):  # the second time replaces them
        answer = await http.post("/v0/runs/run-pg-1/metrics", json={"points": points})
        assert answer.status_code == 200 and answer.json() == {"accepted": 5000}, answer.text
    series = (await http.get("/v0/runs/run-pg-1/metrics", params={"max_points": 1000})).json()["series"]
    assert len(series["train/return"]["step"]) == 1000 and series["train/return"]["value"][-1] == 4999 / 2
    listed = (await http.get("/v0/runs", params={"tag": "again"})).json()["data"]
    assert [r["id"] for r in listed] == ["run-pg-1"]
    assert listed[0]["metrics"] == [{"name": "train/return", "points": 5000, "last_step": 4999, "last_value": 2499.5}]
    assert (await http.patch("/v0/runs/run-pg-1", json={"state": "finished"})).json()["state"] == "finished"
    assert (await http.delete("/v0/runs/run-pg-1")).status_code == 204
    assert (await http.get("/v0/runs/run-pg-1/metrics")).status_code == 404

"""The comparisons of agents kept by the recorder: the store and its NATS API on a real
nats-server, over a folder and over a real S3 API server (moto), and the recorder service
serving them beside the recordings."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from platform_contracts import subjects
from platform_contracts.limits import MAX_COMPARISON_BYTES
from platform_recorder.comparisons.comparison_store import ID_PATTERN, ComparisonStore
from platform_recorder.comparisons.comparisons_api import ComparisonsApi
from platform_recorder.storage.folder import FolderStorage
from platform_testing.nats_server import NatsServer
from recorder_testkit import ask as ask_recorder
from simulusion.recorder.v1 import recorder_pb2 as rec


def agent(name: str, recording_id: str | None = None, means: tuple[float, ...] = (-0.3, -0.2)) -> dict[str, Any]:
    return {
        "name": name, "agent": f"my_agent:{name}", "load": None, "session_id": f"s-{name}",
        "recording_id": recording_id, "steps": 100, "episodes": 2,
        "measures": {"success": 0.5, "success_of": "episodes", "compute_s": 0.0012,
                     "recovery": [{"at": 150, "changes": [{"at": 150, "change": "mass", "body": "hand", "scale": 2.0}],
                                   "before": -0.3, "steps": 50, "worst": -0.9, "recovered": True,
                                   "too_close": False}],
                     "retention": []},
        "reward_windows": [{"step": 100 + 50 * i, "mean": mean} for i, mean in enumerate(means)],
    }


def document(env: str = "menagerie-franka-emika-panda-reach", *agents: dict[str, Any], **more: Any) -> dict[str, Any]:
    changes = [{"at": 150, "change": "mass", "body": "hand", "scale": 2.0}]
    return {"env": env, "kwargs": {"world_changes": changes}, "world_changes": changes, "warmup": 100,
            "steps": 100, "window": 50, "seed": 0, "snapshot_id": "snap-0123456789ab", "first_step": 100,
            "agents": list(agents) or [agent("mine", "s-mine"), agent("base")], **more}


@pytest.fixture(params=["folder", "s3"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "folder":
        return FolderStorage(tmp_path / "recordings")
    return request.getfixturevalue("s3_storage")


@pytest.fixture
async def nc(recorder_nats: NatsServer, storage: Any) -> AsyncIterator[Any]:
    """A client of the test's own nats-server, where a ComparisonsApi serves `storage`."""
    import nats

    served = await nats.connect(recorder_nats.url)
    api = ComparisonsApi(served, ComparisonStore(storage))
    await api.start()
    client = await nats.connect(recorder_nats.url)
    yield client
    await client.drain()
    await api.stop()
    await served.drain()


async def ask(nc: Any, subject: str, body: Any) -> dict[str, Any]:
    return await ask_recorder(nc, subject, body, timeout=20)


async def save(nc: Any, doc: Any) -> dict[str, Any]:
    reply = await ask(nc, subjects.RECORDER_SAVE_COMPARISON, {"document": doc})
    assert "error" not in reply, reply
    return reply["comparison"]


async def error_of(nc: Any, subject: str, body: Any) -> dict[str, str]:
    reply = await ask(nc, subject, body)
    assert set(reply) == {"error"}, reply
    return reply["error"]


async def test_save_get_and_list_newest_first(nc: Any, storage: Any) -> None:
    before = datetime.now(UTC)
    first = await save(nc, document())
    assert ID_PATTERN.match(first["id"])
    created = datetime.fromisoformat(first["created"].replace("Z", "+00:00"))
    assert first["created"].endswith("Z") and before.replace(microsecond=0) <= created <= datetime.now(UTC)
    assert {k: v for k, v in first.items() if k not in ("id", "created")} == document()
    assert json.loads(storage.get(f"comparisons/{first['id']}.json")) == first
    got = await ask(nc, subjects.RECORDER_GET_COMPARISON, {"id": first["id"]})
    assert got == {"comparison": first}

    # the recorder's id and created replace the caller's; members it does not know are kept
    second = await save(nc, document("cartpole", agent("solo"), id="cmp-ffffffffffff", created="1999-01-01T00:00:00Z",
                                     note={"by": "a test"}))
    assert second["id"] not in ("cmp-ffffffffffff", first["id"]) and second["created"] >= first["created"]
    assert second["note"] == {"by": "a test"}
    # non-finite numbers are kept as meta.json keeps them: as strings
    third = await save(nc, document("cartpole", agent("odd", means=(float("nan"), float("inf")))))
    assert [w["mean"] for w in third["agents"][0]["reward_windows"]] == ["nan", "inf"]
    assert (await ask(nc, subjects.RECORDER_GET_COMPARISON, {"id": third["id"]}))["comparison"] == third

    listed = (await ask(nc, subjects.RECORDER_LIST_COMPARISONS, {}))["comparisons"]
    assert [c["id"] for c in listed] == [third["id"], second["id"], first["id"]]
    assert listed[2] == {"id": first["id"], "created": first["created"], "env": "menagerie-franka-emika-panda-reach",
                         "agents": ["mine", "base"], "steps": 100, "window": 50,
                         "team": "default"}
    assert listed[1]["agents"] == ["solo"]
    assert (await ask(nc, subjects.RECORDER_LIST_COMPARISONS, b""))["comparisons"] == listed  # an empty body too

    # another recorder sharing the storage lists and reads them as well
    other = ComparisonStore(storage)
    assert other.list_summaries() == listed and other.get(first["id"]) == first


async def test_refusals_say_what_to_fix_and_store_nothing(nc: Any, storage: Any) -> None:
    save_subject = subjects.RECORDER_SAVE_COMPARISON
    refused: list[tuple[Any, str]] = [
        (b"\xff\xff", "the request is not a simulusion.recorder.v1.SaveComparisonRequest"),
        (rec.SaveComparisonRequest(document_json="{not json"), "the document is not JSON"),
        ({}, "'document' is required"),
        ({"document": [1]}, "a comparison must be a JSON object, not list"),
        ({"document": document(env="")}, "'env' is required"),
        ({"document": {**document(), "agents": []}}, "'agents' is required: a non-empty list"),
        ({"document": {**document(), "agents": "mine"}}, "'agents' is required: a non-empty list"),
        ({"document": document("cartpole", "mine")}, "agents[0] must be an object with the agent's 'name', not str"),
        ({"document": document("cartpole", {"steps": 3})}, "agents[0].name is required: a non-empty string"),
        ({"document": document("cartpole", agent("a"), agent("a"))}, "agents[1].name: two agents are named 'a'"),
        ({"document": document("cartpole", {**agent("a"), "steps": "100"})},
         "agents[0].steps must be a whole number or null, not '100'"),
        ({"document": document("cartpole", {**agent("a"), "recording_id": "../s-1"})},
         "agents[0].recording_id: invalid recording id '../s-1'"),
        ({"document": document("cartpole", {**agent("a"), "reward_windows": {"step": 1}})},
         "agents[0].reward_windows must be a JSON list or null"),
        ({"document": {**document(), "window": True}}, "'window' must be a whole number or null, not True"),
        ({"document": {**document(), "world_changes": {"at": 1}}}, "'world_changes' must be a JSON list or null"),
    ]
    for body, message in refused:
        error = await error_of(nc, save_subject, body)
        assert error["code"] == "invalid_argument" and message in error["message"], (body, error)

    windows = [{"step": i, "mean": -0.123456789} for i in range(MAX_COMPARISON_BYTES // 30)]
    large = document("cartpole", {**agent("big"), "reward_windows": windows})
    assert len(json.dumps(large)) > MAX_COMPARISON_BYTES
    error = await error_of(nc, save_subject, {"document": large})
    assert error["code"] == "invalid_argument"
    assert f"the most stored is {MAX_COMPARISON_BYTES} bytes (4 MiB)" in error["message"]
    assert "a larger --window" in error["message"]

    get = subjects.RECORDER_GET_COMPARISON
    assert await error_of(nc, get, {"id": "cmp-000000000000"}) == {
        "code": "not_found", "message": "comparison 'cmp-000000000000' not found"}
    for bad in ("../../meta", "cmp-0123", "s-1"):
        error = await error_of(nc, get, {"id": bad})
        assert error["code"] == "not_found" and f"comparison {bad!r} not found" in error["message"]
        assert "'cmp-' and 12 hex digits" in error["message"]
    for missing in ({}, {"id": ""}):
        error = await error_of(nc, get, missing)
        assert error["code"] == "invalid_argument" and "'id' is required" in error["message"]
    assert (await ask(nc, subjects.RECORDER_LIST_COMPARISONS, {}))["comparisons"] == []
    assert storage.list("comparisons/") == []


async def test_a_listing_skips_what_is_not_a_stored_comparison(nc: Any, storage: Any) -> None:
    kept = await save(nc, document())
    storage.put_atomic("comparisons/.tmp-cmp-0123456789ab.json", b"{}")  # what a crashed write may leave
    storage.put_atomic("comparisons/notes.txt", b"hello")
    storage.put_atomic("comparisons/cmp-0000000000aa.json", b"not json")
    listed = (await ask(nc, subjects.RECORDER_LIST_COMPARISONS, {}))["comparisons"]
    assert [c["id"] for c in listed] == [kept["id"]]
    error = await error_of(nc, subjects.RECORDER_GET_COMPARISON, {"id": "cmp-0000000000aa"})
    assert error["code"] == "internal" and "JSONDecodeError" in error["message"]


async def test_the_recorder_service_serves_comparisons_beside_the_recordings(
    recorder_js: tuple[Any, Any], recorder_service: Any, tmp_path: Path
) -> None:
    nc, _ = recorder_js
    stored = await save(nc, document())
    path = tmp_path / "recordings" / "comparisons" / f"{stored['id']}.json"
    assert json.loads(path.read_text()) == stored
    listed = await ask(nc, subjects.RECORDER_LIST_COMPARISONS, {})
    assert [c["id"] for c in listed["comparisons"]] == [stored["id"]]
    # the comparisons folder is not taken for a recording
    assert await ask(nc, subjects.RECORDER_LIST_RECORDINGS, {}) == {"recordings": []}
    error = await error_of(nc, subjects.RECORDER_GET_RECORDING, {"id": "comparisons"})
    assert error["code"] == "not_found"

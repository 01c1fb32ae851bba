"""The comparisons routes against the recorder's contract (simulusion.recorder.v1), answered by a
stand-in recorder over the test's NATS server (recorder_stand_in)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from platform_contracts import subjects
from platform_contracts.limits import MAX_COMPARISON_BYTES
from recorder_stand_in import StandInRecorder

CHANGES = [{"at": 2200, "change": "mass", "body": "hand", "scale": 2.0},
           {"at": 4200, "change": "mass", "body": "hand", "scale": 1.0}]


def agent(name: str, recording_id: str | None = None) -> dict[str, Any]:
    return {
        "name": name, "agent": f"my_agent:{name}", "load": None, "session_id": f"s-{name}",
        "recording_id": recording_id, "steps": 6000, "episodes": 30,
        "measures": {
            "success": 0.4, "success_of": "episodes", "compute_s": 0.0021,
            "recovery": [{"at": 2200, "changes": CHANGES[:1], "before": -0.3, "steps": 150, "worst": -0.8,
                          "recovered": True, "too_close": False},
                         {"at": 4200, "changes": CHANGES[1:], "before": -0.5, "steps": None, "worst": -0.9,
                          "recovered": False, "too_close": False}],
            "retention": [{"at": 4200, "returns_to": 200, "before": -0.3, "after": -0.33, "retention": 0.9,
                           "too_close": False}],
        },
        "reward_windows": [{"step": 200 + 50 * i, "mean": -0.3 - 0.001 * i} for i in range(4)],
        "world_changes_met": [{"at": 2200, "session_step": 2200}],
    }


def document(**more: Any) -> dict[str, Any]:
    return {"env": "menagerie-franka-emika-panda-reach", "kwargs": {"world_changes": CHANGES},
            "world_changes": CHANGES, "warmup": 200, "steps": 6000, "window": 50, "seed": 0,
            "snapshot_id": "snap-0123456789ab", "first_step": 200,
            "agents": [agent("mine", "s-0123456789ab"), agent("base")], **more}


def as_stored(posted: dict[str, Any]) -> dict[str, Any]:
    """A document posted without `--seeds` fields, as answered: the caller's team, no seeds, no runs."""
    return {**posted, "team": "default", "seeds": None, "agents": [{**a, "runs": []} for a in posted["agents"]]}


@pytest.fixture
def comparisons(stand_in_recorder: StandInRecorder) -> StandInRecorder:
    return stand_in_recorder


async def test_post_list_and_get(gateway, comparisons: StandInRecorder) -> None:
    posted = await gateway.http.post("/v0/comparisons", json=document())
    assert posted.status_code == 201, posted.text
    first = posted.json()
    assert first["id"].startswith("cmp-") and len(first["id"]) == 16 and first["created"].endswith("Z")
    assert {k: v for k, v in first.items() if k not in ("id", "created")} == as_stored(document())
    [saved] = comparisons.requests[subjects.RECORDER_SAVE_COMPARISON]
    assert json.loads(saved.document_json) == {**document(), "team": "default"}  # as sent, the caller's team set
    stored = comparisons.comparisons[first["id"]]
    assert {**stored, "seeds": None, "agents": [{**a, "runs": []} for a in stored["agents"]]} == first

    second = (await gateway.http.post("/v0/comparisons", json=document(env="cartpole", agents=[agent("solo")]))).json()
    listed = await gateway.http.get("/v0/comparisons")
    assert listed.status_code == 200
    assert listed.json() == {"comparisons": [
        {"id": second["id"], "created": second["created"], "env": "cartpole", "agents": ["solo"], "steps": 6000,
         "window": 50, "team": "default"},
        {"id": first["id"], "created": first["created"], "env": "menagerie-franka-emika-panda-reach",
         "agents": ["mine", "base"], "steps": 6000, "window": 50,
         "team": "default"},
    ]}
    got = await gateway.http.get(f"/v0/comparisons/{first['id']}")
    assert got.status_code == 200 and got.json() == first

    # a number that was not finite comes back as a string, as in the recordings
    odd = await gateway.http.post("/v0/comparisons", content=json.dumps(
        document(agents=[{"name": "odd", "reward_windows": [{"step": 0, "mean": float("nan")}]}])),
        headers={"Content-Type": "application/json"})
    assert odd.status_code == 201, odd.text
    assert odd.json()["agents"][0]["reward_windows"] == [{"step": 0, "mean": "nan"}]
    sent = json.loads(comparisons.requests[subjects.RECORDER_SAVE_COMPARISON][-1].document_json)
    assert sent["agents"][0]["reward_windows"] == [{"step": 0, "mean": "nan"}]  # strict JSON on the bus


async def test_unknown_ids_and_bad_bodies(gateway, comparisons: StandInRecorder) -> None:
    missing = await gateway.http.get("/v0/comparisons/cmp-000000000000")
    assert missing.status_code == 404
    assert missing.json() == {"detail": "comparison 'cmp-000000000000' not found", "code": "not_found"}
    other = await gateway.http.get("/v0/comparisons/nothing-like-it")
    assert other.status_code == 404 and "comparison 'nothing-like-it' not found" in other.json()["detail"]

    bad: list[tuple[Any, str]] = [
        ({**document(), "env": ""}, "env: String should have at least 1 character"),
        ({k: v for k, v in document().items() if k != "env"}, "env: Field required"),
        ({**document(), "agents": []}, "agents: List should have at least 1 item"),
        ({**document(), "agents": [{"agent": "x:y"}]}, "agents.0.name: Field required"),
        ({**document(), "agents": [{**agent("a"), "recording_id": "../s-1"}]}, "agents.0.recording_id"),
        ({**document(), "agents": [{**agent("a"), "steps": -1}]}, "agents.0.steps"),
        ({**document(), "window": 0}, "window: Input should be greater than or equal to 1"),
        # strict types: a boolean is no number, a fraction no step
        ({**document(), "agents": [{**agent("a"), "reward_windows": [{"step": 0, "mean": False}]}]},
         "agents.0.reward_windows.0.mean"),
        ({**document(), "agents": [{**agent("a"), "reward_windows": [{"step": 0.5, "mean": 1.0}]}]},
         "agents.0.reward_windows.0.step: Input should be a valid integer"),
        ({**document(), "steps": True}, "steps: Input should be a valid integer"),
        ({**document(), "oversized": True}, "the comparison is too large"),  # the recorder refuses it
        ([document()], "Input should be a valid dictionary"),
    ]
    for body, message in bad:
        reply = await gateway.http.post("/v0/comparisons", json=body)
        assert reply.status_code == 422, (body, reply.text)
        assert reply.json()["code"] == "invalid_argument" and message in reply.json()["detail"], reply.json()
    not_json = await gateway.http.post("/v0/comparisons", content=b"{no", headers={"Content-Type": "application/json"})
    assert not_json.status_code == 422 and "not valid JSON" in not_json.json()["detail"]

    windows = [{"step": i, "mean": -0.123456789} for i in range(MAX_COMPARISON_BYTES // 30)]
    large = await gateway.http.post("/v0/comparisons", json=document(agents=[{"name": "big", "reward_windows": windows}]))
    assert large.status_code == 413
    assert f"the most stored is {MAX_COMPARISON_BYTES} bytes" in large.json()["detail"]
    assert (await gateway.http.get("/v0/comparisons")).json() == {"comparisons": []}
    assert len(comparisons.requests[subjects.RECORDER_SAVE_COMPARISON]) == 1  # only the refused one was asked

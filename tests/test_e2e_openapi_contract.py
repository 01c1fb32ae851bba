"""The gateway keeps the promises of its own OpenAPI document, checked by schemathesis against
the real platform: no answer is a 5xx, and every answer is one the document lists, with the
content type and body it declares.

Every operation gets examples, coverage cases (boundaries, missing and wrong-typed parts) and
fuzzed requests, bounded (MAX_EXAMPLES fuzzed cases an operation, no shrinking) so the whole run
takes about two minutes on two cores. A case with ids in its path is sent twice: as generated,
then with ids of things that exist (a live CartPole session, the catalog's `cartpole`, a saved
snapshot, a recording with a finished episode and its frames, a training run with points), so the routes are reached beyond
their 404: steps, holds, snapshots, closing, episodes, arrays, frames, downloads.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from platform_gateway.app import api_app
from platform_testing.waiting import wait_for

from contract_ids import ContractIds, contract_config

MAX_EXAMPLES = 20  # fuzzed cases an operation (the coverage phase adds its own)

CONFIG = contract_config(MAX_EXAMPLES)

# The gateway's document, made in-process (no service needed, so pytest sees one test per
# operation, and nothing global such as tracing is set up in this process);
# test_the_platform_serves_this_document checks the platform serves the same one.
DOCUMENT = api_app(auth_required=False).openapi()
schema = schemathesis.openapi.from_dict(DOCUMENT, config=CONFIG)


@pytest.fixture(scope="module")
def real_ids(platform_stack) -> Iterator[ContractIds]:
    """A recorded session (with frames) that finished one episode and saved a snapshot."""
    http = httpx.Client(base_url=platform_stack.url, timeout=60)
    created = http.post("/v0/sessions", json={"env_id": "cartpole", "record": True, "record_frames": True})
    assert created.status_code == 201, created.text
    first = created.json()["id"]
    assert http.post(f"/v0/sessions/{first}/reset", json={"seed": 0}).status_code == 200
    for _ in range(500):  # pushing left, CartPole falls within a few dozen steps
        if http.post(f"/v0/sessions/{first}/step", json={"action": 0}).json()["terminated"]:
            break
    assert http.post(f"/v0/sessions/{first}/reset", json={"seed": 1}).status_code == 200
    saved = http.post(f"/v0/sessions/{first}/saved-snapshots", json={"label": "contract"})
    assert saved.status_code == 201, saved.text
    episode = wait_for(lambda: _finished_episode(http, first), timeout=60, what="the recorded episode")
    run = http.post("/v0/runs", json={"id": "run-contract", "name": "contract", "hparams": {"lr": 0.1}})
    assert run.status_code == 201, run.text
    points = [{"name": "loss", "step": step, "value": 1 / (step + 1), "frames": step} for step in range(10)]
    assert http.post("/v0/runs/run-contract/metrics", json={"points": points}).status_code == 200
    fixed = {"env_id": "cartpole", "recording_id": first, "snapshot_id": saved.json()["id"],
             "index": 0, "name": episode["array_names"][0], "frame": 1,  # the episode, its first frame
             "run_id": "run-contract"}
    ids = ContractIds(http, fixed, made=[first])
    yield ids
    ids.close_all()
    http.close()


def _finished_episode(http: httpx.Client, recording_id: str) -> dict | None:
    response = http.get(f"/v0/recordings/{recording_id}/episodes/0")
    return response.json() if response.status_code == 200 else None


def test_the_platform_serves_this_document(platform_stack):
    assert httpx.get(f"{platform_stack.url}/openapi.json").json() == DOCUMENT


def test_what_schemathesis_found_first(platform_stack):
    """A render before the first reset, and a seed beyond int64: both were plain 500s."""
    with httpx.Client(base_url=platform_stack.url, timeout=60) as http:
        session_id = http.post("/v0/sessions", json={"env_id": "cartpole"}).json()["id"]
        try:
            render = http.get(f"/v0/sessions/{session_id}/render")
            assert render.status_code == 409, render.text
            assert "call reset first" in render.json()["detail"]
            seed = http.post(f"/v0/sessions/{session_id}/reset", json={"seed": -356576458973957006032896})
            assert seed.status_code == 422, seed.text
            assert "seed: Input should be greater than or equal to 0" in seed.json()["detail"]
            assert http.post(f"/v0/sessions/{session_id}/reset", json={"seed": 2**63 - 1}).status_code == 200
            assert http.get(f"/v0/sessions/{session_id}/render").headers["content-type"] == "image/jpeg"
        finally:
            http.delete(f"/v0/sessions/{session_id}")


@schema.parametrize()
def test_every_answer_is_one_the_document_promises(case, platform_stack, real_ids):
    real_ids.call(case, platform_stack.url)

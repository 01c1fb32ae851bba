"""The gateway keeps the promises of its own OpenAPI document, checked by schemathesis against
the real platform: no answer is a 5xx, and every answer is one the document lists, with the
content type and body it declares.

Every operation gets examples, coverage cases (boundaries, missing and wrong-typed parts) and
fuzzed requests, bounded (MAX_EXAMPLES fuzzed cases an operation, no shrinking) so the whole run
takes about two minutes on two cores. A case with ids in its path is sent twice: as generated,
then with ids of things that exist (a live CartPole session, the catalog's `cartpole`, a saved
snapshot, a recording with a finished episode and its frames), so the routes are reached beyond
their 404: steps, holds, snapshots, closing, episodes, arrays, frames, downloads.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx
import pytest
import schemathesis
from platform_gateway.app import api_app
from platform_testing.waiting import wait_for
from schemathesis.config import SchemathesisConfig

MAX_EXAMPLES = 20  # fuzzed cases an operation (the coverage phase adds its own)

CONFIG = SchemathesisConfig.from_dict({
    "generation": {"max-examples": MAX_EXAMPLES, "no-shrink": True, "database": "none"},
    "request-timeout": 60,
    "checks": {
        # Left out, and why: a body can fit the schema and still be refused with a documented 4xx,
        # because what it must hold depends on data the document cannot know: an action must be
        # an element of the session's action space (422 naming it), kwargs must be ones the
        # environment takes, a session may be closed (410), a life needs record (422), ids must
        # name existing things and be safe as file names (422). not_a_server_error and
        # status_code_conformance still check that every such answer is a documented 4xx.
        "positive_data_acceptance": {"enabled": False},
    },
    # Unknown query parameters are ignored, as web servers do (a cache-buster must not break a
    # GET): they are no negative data. Bodies still are (unknown fields there are 422s).
    "operations": [{"include-method": "GET", "generation": {"allow-extra-parameters": False}}],
})

# The gateway's document, made in-process (no service needed, so pytest sees one test per
# operation, and nothing global such as tracing is set up in this process);
# test_the_platform_serves_this_document checks the platform serves the same one.
DOCUMENT = api_app(auth_required=False).openapi()
schema = schemathesis.openapi.from_dict(DOCUMENT, config=CONFIG)


@dataclass
class RealIds:
    """Ids of things that exist on the platform, put in place of generated path parameters.

    The session is made again when a case closed it, so later cases reach a live one."""

    http: httpx.Client
    snapshot_id: str
    recording_id: str
    array_name: str
    session_id: str = ""
    made: list[str] = field(default_factory=list)

    def live_session(self) -> str:
        if not self.session_id:
            response = self.http.post("/v0/sessions", json={"env_id": "cartpole", "record": True})
            assert response.status_code == 201, response.text
            self.session_id = response.json()["id"]
            self.made.append(self.session_id)
        return self.session_id

    def value(self, name: str) -> str | int | None:
        return {
            "session_id": self.live_session,
            "env_id": lambda: "cartpole",
            "recording_id": lambda: self.recording_id,
            "snapshot_id": lambda: self.snapshot_id,
            "index": lambda: 0,  # the recording's finished episode
            "name": lambda: self.array_name,
            "frame": lambda: 1,  # the first step's frame
        }.get(name, lambda: None)()

    def after(self, method: str, path_parameters: dict[str, object], status: int) -> None:
        """Forget the session once a case closed it (or found it gone)."""
        if path_parameters.get("session_id") == self.session_id and (
            status == 410 or (method == "DELETE" and status == 200)
        ):
            self.session_id = ""

    def close_all(self) -> None:
        for session_id in self.made:
            self.http.delete(f"/v0/sessions/{session_id}")


@pytest.fixture(scope="module")
def real_ids(platform_stack) -> Iterator[RealIds]:
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
    ids = RealIds(http, snapshot_id=saved.json()["id"], recording_id=first, array_name=episode["array_names"][0],
                  made=[first])
    yield ids
    ids.close_all()
    http.close()


def _finished_episode(http: httpx.Client, recording_id: str) -> dict | None:
    response = http.get(f"/v0/recordings/{recording_id}/episodes/0")
    return response.json() if response.status_code == 200 else None


@pytest.fixture(scope="module")
def new_sessions(platform_stack) -> Iterator[list[str]]:
    """Sessions the cases made with POST /v0/sessions, closed at the end."""
    made: list[str] = []
    yield made
    with httpx.Client(base_url=platform_stack.url, timeout=60) as http:
        for session_id in made:
            http.delete(f"/v0/sessions/{session_id}")


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
def test_every_answer_is_one_the_document_promises(case, platform_stack, real_ids, new_sessions):
    _call_and_validate(case, platform_stack.url, new_sessions)
    real = {name: real_ids.value(name) for name in case.path_parameters or {}}
    real = {name: value for name, value in real.items() if value is not None}
    if real:  # again, on things that exist
        _use_ids(case, real)
        response = _call_and_validate(case, platform_stack.url, new_sessions)
        real_ids.after(case.method, case.path_parameters, response.status_code)


def _use_ids(case, ids: dict[str, str | int]) -> None:
    """Put `ids` in the case's path. Reading `meta` then revalidates the edited case, so a case
    that was negative only for its generated ids is checked as the positive one it now is."""
    case.path_parameters.update(ids)
    _ = case.meta


def _call_and_validate(case, url: str, new_sessions: list[str]):
    response = case.call_and_validate(base_url=url)
    if case.method == "POST" and case.path == "/v0/sessions" and response.status_code == 201:
        new_sessions.append(response.json()["id"])
    return response

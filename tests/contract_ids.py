"""Ids of things that exist on a running platform, which the OpenAPI contract tests put in place
of schemathesis' generated path parameters so a route is reached beyond its 404 (steps, holds,
snapshots, closing, episodes, arrays, frames, downloads)."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx
from schemathesis.config import SchemathesisConfig


@dataclass
class ContractIds:
    """`fixed` gives a path parameter's id by name (`env_id`, `recording_id`, ...); `session_id`
    is a live CartPole session, made again when a case closed it so later cases reach a live one.
    Every session made here or by a case (POST /v0/sessions) is closed by `close_all`."""

    http: httpx.Client
    fixed: dict[str, str | int] = field(default_factory=dict)
    session_id: str = ""
    made: list[str] = field(default_factory=list)

    def live_session(self) -> str:
        if not self.session_id:
            response = self.http.post("/v0/sessions", json={"env_id": "cartpole", "record": True})
            assert response.status_code == 201, response.text
            self.session_id = response.json()["id"]
            self.made.append(self.session_id)
        return self.session_id

    def call(self, case, url: str):
        """Call and validate the case once as generated, then, when its path has ids, again with
        real ones. Reading `meta` revalidates the edited case, so a case that was negative only for
        its generated ids is checked as the positive one it now is."""
        self._call(case, url)
        real = {name: self._value(name) for name in case.path_parameters or {}}
        real = {name: value for name, value in real.items() if value is not None}
        if not real:
            return
        case.path_parameters.update(real)
        # The first call froze its metadata (schemathesis does while it prepares a request): thaw it
        # so reading `meta` sees the new ids and revalidates the case.
        object.__setattr__(case, "_freeze_metadata", False)
        _ = case.meta
        response = self._call(case, url)
        closed = response.status_code == 410 or (case.method == "DELETE" and response.status_code == 200)
        if case.path_parameters.get("session_id") == self.session_id and closed:
            self.session_id = ""

    def close_all(self) -> None:
        for session_id in self.made:
            self.http.delete(f"/v0/sessions/{session_id}")

    def _value(self, name: str) -> str | int | None:
        return self.live_session() if name == "session_id" else self.fixed.get(name)

    def _call(self, case, url: str):
        response = case.call_and_validate(base_url=url)
        if case.method == "POST" and case.path == "/v0/sessions" and response.status_code == 201:
            self.made.append(response.json()["id"])
        return response


POSITIVE_STATUSES = ["2xx", "401", "403", "404", "409", "410"]
DATA_DEPENDENT = [
    ("POST", "/v0/sessions"),
    ("POST", "/v0/sessions/{session_id}/reset"),
    ("POST", "/v0/sessions/{session_id}/step"),
    ("POST", "/v0/sessions/{session_id}/hold"),
    ("POST", "/v0/sessions/{session_id}/restore"),
    ("POST", "/v0/sessions/{session_id}/restore-saved"),
    ("POST", "/v0/comparisons"),
    ("POST", "/v0/doom/wads"),
    ("GET", "/v0/usage"),
]


def contract_config(max_examples: int) -> SchemathesisConfig:
    """The contract tests' schemathesis settings: `max_examples` fuzzed cases an operation, no
    shrinking, and every check, positive data acceptance included."""
    return SchemathesisConfig.from_dict({
        "generation": {"max-examples": max_examples, "no-shrink": True, "database": "none"},
        "request-timeout": 60,
        "checks": {
            # No request the document allows is refused as invalid (a 422): what it cannot know is
            # whether ids name things that exist (404), the state a session is in (409, 410).
            "positive_data_acceptance": {"enabled": True, "expected-statuses": POSITIVE_STATUSES},
        },
        "operations": [
            # Unknown query parameters are ignored, as web servers do (a cache-buster must not break a
            # GET): they are no negative data. Bodies still are (unknown fields there are 422s).
            {"include-method": "GET", "generation": {"allow-extra-parameters": False}},
            # Where what a valid request must hold depends on data the document cannot describe, a
            # 422 naming it is a right answer to a schema-valid request: an action must be an element
            # of the session's own action space; kwargs must be ones the environment takes and a life
            # needs record; a comparison's agents need distinct names; an uploaded file must be a WAD;
            # `until` must not be before `since`.
            *({"include-method": method, "include-path": path,
               "checks": {"positive_data_acceptance": {"expected-statuses": [*POSITIVE_STATUSES, "422"]}}}
              for method, path in DATA_DEPENDENT),
        ],
    })

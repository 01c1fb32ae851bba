"""Ids of things that exist on a running platform, which the OpenAPI contract tests put in place
of schemathesis' generated path parameters so a route is reached beyond its 404 (steps, holds,
snapshots, closing, episodes, arrays, frames, downloads)."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx


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

"""The episode browser's API (`GET /v0/episodes`) on the whole platform: the finished episodes of
real recordings, through the gateway and the recorder, filtered, sorted and paged; bad query
values are a 422 naming the parameter."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from platform_testing.waiting import wait_for


def _ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, f"{response.request.method} {response.request.url}: {response.text}"
    return response.json()


def _recorded_episodes(http: httpx.Client, holds: list[int]) -> str:
    """A recorded CartPole session with one finished episode per entry of `holds` (steps of
    action 0, which ends an episode within 200): its recording's id."""
    session = _ok(http.post("/v0/sessions", json={"env_id": "cartpole", "record": True}), 201)["id"]
    for seed, steps in enumerate(holds):
        _ok(http.post(f"/v0/sessions/{session}/reset", json={"seed": seed}))
        _ok(http.post(f"/v0/sessions/{session}/hold", json={"action": seed % 2, "steps": steps}))
    _ok(http.delete(f"/v0/sessions/{session}"))
    wait_for(lambda: len(http.get(f"/v0/recordings/{session}").json().get("episodes", [])) == len(holds),
             what=f"the recording of {session} with {len(holds)} episodes")
    return session


def test_episodes_across_recordings_sorted_filtered_and_paged(platform_stack) -> None:
    http = httpx.Client(base_url=platform_stack.url, timeout=60)
    first = _recorded_episodes(http, [200, 200])
    second = _recorded_episodes(http, [200])
    ours = {first, second}

    def listed(**params: Any) -> list[dict[str, Any]]:
        body = _ok(http.get("/v0/episodes", params={"env_id": "cartpole", "limit": 500, **params}))
        assert body["count"] == len(body["data"]) and body["total"] >= body["count"]
        return [e for e in body["data"] if e["recording_id"] in ours]

    newest = listed()
    assert [(e["recording_id"], e["episode"]["index"]) for e in newest] == [(second, 0), (first, 0), (first, 1)]
    lengths = {(e["recording_id"], e["episode"]["index"]): e["episode"]["length"] for e in newest}
    assert all(e["env_id"] == "cartpole" and e["session_id"] == e["recording_id"] for e in newest)
    assert all(e["episode"]["terminated"] and e["episode"]["return"] == e["episode"]["length"] for e in newest)

    by_length = [e["episode"]["length"] for e in listed(sort="-length")]
    assert by_length == sorted(lengths.values(), reverse=True)
    assert [e["episode"]["length"] for e in listed(sort="length")] == sorted(lengths.values())
    assert listed(success="false") == [] and listed(outcome="died") == []  # CartPole reports neither
    assert listed(env_id="freedoom-e1m1") == []

    pages, cursor = [], None
    while True:  # one episode a page, cursor to cursor, until the last page says there is none
        params = {"env_id": "cartpole", "limit": 1, **({"cursor": cursor} if cursor else {})}
        body = _ok(http.get("/v0/episodes", params=params))
        pages += [(e["recording_id"], e["episode"]["index"]) for e in body["data"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert len(pages) == body["total"] and [p for p in pages if p[0] in ours] == [(second, 0), (first, 0), (first, 1)]


@pytest.mark.parametrize(("params", "named"), [
    ({"sort": "best"}, "sort"), ({"success": "maybe"}, "success"), ({"limit": 0}, "limit"),
    ({"limit": 501}, "limit"), ({"cursor": "page-2"}, "cursor"), ({"outcome": ""}, "outcome"),
])
def test_a_bad_query_value_is_a_422_naming_the_parameter(platform_stack, params: dict[str, Any],
                                                         named: str) -> None:
    answer = httpx.get(f"{platform_stack.url}/v0/episodes", params=params, timeout=30)
    assert answer.status_code == 422 and answer.json()["field"] == named, answer.text
    assert named in answer.json()["detail"]

"""The episode browser's listing (platform.recorder.recordings.episodes): every finished episode
across the recordings of a FolderStorage, filtered, sorted and paged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from platform_recorder.errors import InvalidRequestError
from platform_recorder.reading.episode_listing import list_episodes
from platform_recorder.reading.recording_store import RecordingStore
from platform_recorder.storage.folder import FolderStorage
from simulusion.recorder.v1 import recorder_pb2 as rec


def write_recording(root: Path, sid: str, created_at: str, episodes: list[dict[str, Any]], **fields: Any) -> None:
    folder = root / sid
    folder.mkdir(parents=True)
    meta = {"id": sid, "session_id": sid, "env_id": "CartPole-v1", "created_at": created_at, "status": "closed",
            "episodes": episodes, **fields}
    (folder / "meta.json").write_text(json.dumps(meta))


def episode(index: int, length: int, ret: float | str | None, **fields: Any) -> dict[str, Any]:
    return {"index": index, "file": f"episode-{index:06d}.npz", "length": length, "return": ret, **fields}


@pytest.fixture
def store(tmp_path: Path) -> RecordingStore:
    write_recording(tmp_path, "old", "2025-01-01T00:00:00Z", [episode(0, 10, 10.0), episode(1, 30, 30.0)])
    write_recording(tmp_path, "doom", "2025-01-02T00:00:00Z", [
        episode(0, 50, -5.0, outcome="died", is_success=False),
        episode(1, 80, 12.0, outcome="exit", is_success=True),
        episode(2, 5, "nan", outcome="died", is_success=False),
    ], env_id="freedoom-e1m1")
    write_recording(tmp_path, "other-team", "2025-01-03T00:00:00Z", [episode(0, 99, 99.0)], team="ml-research")
    (tmp_path / "not-a-recording").mkdir()
    return RecordingStore(FolderStorage(tmp_path))


def listed(store: RecordingStore, **fields: Any) -> list[tuple[str, int]]:
    reply = list_episodes(store, rec.ListEpisodesRequest(**fields))
    return [(e.recording_id, e.episode.index) for e in reply.episodes]


def test_newest_recordings_first_their_episodes_in_order_and_oldest_reverses_it(store: RecordingStore) -> None:
    newest = [("other-team", 0), ("doom", 0), ("doom", 1), ("doom", 2), ("old", 0), ("old", 1)]
    assert listed(store) == newest
    assert listed(store, sort="oldest") == newest[::-1]


def test_sorted_by_return_or_length_either_way_with_no_return_last(store: RecordingStore) -> None:
    assert listed(store, sort="-return", team="default") == [("old", 1), ("doom", 1), ("old", 0), ("doom", 0),
                                                               ("doom", 2)]
    assert listed(store, sort="return", team="default")[0] == ("doom", 0)
    assert listed(store, sort="return", team="default")[-1] == ("doom", 2)  # "nan": no return
    assert listed(store, sort="length", team="default") == [("doom", 2), ("old", 0), ("old", 1), ("doom", 0),
                                                              ("doom", 1)]
    assert listed(store, sort="-length")[0] == ("other-team", 0)


def test_filters_by_team_environment_success_and_outcome(store: RecordingStore) -> None:
    assert listed(store, team="ml-research") == [("other-team", 0)]
    assert [r for r, _ in listed(store, env_id="freedoom-e1m1")] == ["doom"] * 3
    assert listed(store, is_success=False) == [("doom", 0), ("doom", 2)]  # the failures
    assert listed(store, is_success=True) == [("doom", 1)]
    reply = list_episodes(store, rec.ListEpisodesRequest(outcome="died"))
    assert [(e.recording_id, e.episode.index) for e in reply.episodes] == [("doom", 0), ("doom", 2)]
    assert reply.total == 2 and list(reply.outcomes) == ["died", "exit"]  # the choices, whatever outcome is picked
    first = reply.episodes[0]
    assert (first.session_id, first.env_id, first.created_at) == ("doom", "freedoom-e1m1", "2025-01-02T00:00:00Z")
    assert (first.episode.length, first.episode.episode_return, first.episode.is_success) == (50, -5.0, False)


def test_pages_by_offset_and_limit_with_the_total(store: RecordingStore) -> None:
    first = list_episodes(store, rec.ListEpisodesRequest(limit=4))
    rest = list_episodes(store, rec.ListEpisodesRequest(limit=4, offset=4))
    assert (len(first.episodes), len(rest.episodes), first.total, rest.total) == (4, 2, 6, 6)
    assert listed(store, limit=4) + listed(store, limit=4, offset=4) == listed(store)


@pytest.mark.parametrize(("fields", "named"), [
    ({"sort": "best"}, "'sort' is 'best': one of newest, oldest"),
    ({"offset": -1}, "'offset' is -1"),
    ({"limit": 501}, "'limit' is 501"),
])
def test_a_bad_request_names_what_to_fix(store: RecordingStore, fields: dict[str, Any], named: str) -> None:
    with pytest.raises(InvalidRequestError, match=named):
        list_episodes(store, rec.ListEpisodesRequest(**fields))

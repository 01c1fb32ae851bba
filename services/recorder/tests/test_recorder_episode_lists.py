"""A long recording's episode entries go to sealed list files (platform_recorder.episode_lists):
meta.json stays small, each list is written once, and every reader (the recordings API's store,
the writer's reload, NumPy with json; EpisodeFolder: sdk's test_sdk_episode_lists) finds every episode, in order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from platform_recorder import episode_lists
from platform_recorder.errors import InvalidMetaError
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import closed, episode_events, read_meta, started, subject_of

LIST = 4  # entries per sealed list, small for the test


@pytest.fixture(autouse=True)
def small_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(episode_lists, "LIST_SIZE", LIST)


def msgs(*events: Any) -> list[tuple[str, bytes]]:
    return [(subject_of(e), e.SerializeToString()) for e in events]


def episodes(sid: str, first: int, count: int, steps: int = 2) -> list[Any]:
    """`count` episodes of `steps` steps from episode `first` (seqs follow on)."""
    out: list[Any] = []
    for episode in range(first, first + count):
        out += episode_events(sid, episode * (steps + 1) + 1, episode, steps)
    return out


def on_disk(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "meta.json").read_bytes())


def test_meta_json_holds_the_entries_after_the_sealed_lists(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    folder = tmp_path / "s1"
    writer.process(msgs(started("s1")))
    for first in range(0, 11, 3):  # batch after batch, as a recording grows
        writer.process(msgs(*episodes("s1", first, min(3, 11 - first))))
    raw = on_disk(folder)
    assert raw["episode_lists"] == ["episodes-000000.json", "episodes-000001.json"]
    assert [e["index"] for e in raw["episodes"]] == [8, 9, 10]
    assert [e["index"] for e in json.loads((folder / "episodes-000001.json").read_bytes())] == [4, 5, 6, 7]
    assert [e["index"] for e in read_meta(tmp_path, "s1").episodes] == list(range(11))

    # NumPy and json alone: the lists' entries, then meta.json's, name every episode's file
    entries = [e for name in raw["episode_lists"] for e in json.loads((folder / name).read_bytes())]
    entries += raw["episodes"]
    assert [int(np.load(folder / e["file"])["seq"][0]) for e in entries] == [i * 3 + 2 for i in range(11)]


def test_a_sealed_list_is_written_once_and_a_restart_goes_on_from_it(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    folder = tmp_path / "s1"
    writer.process(msgs(started("s1"), *episodes("s1", 0, 5)))
    first_list = (folder / "episodes-000000.json").stat()
    writer.process(msgs(*episodes("s1", 5, 2)))
    writer.close()

    again = RecordingWriter(tmp_path)  # a new writer (a restart) loads the lists and goes on
    again.process(msgs(*episodes("s1", 7, 3), closed("s1", last_seq=30)))
    kept = (folder / "episodes-000000.json").stat()
    assert (kept.st_ino, kept.st_mtime_ns) == (first_list.st_ino, first_list.st_mtime_ns)
    meta = read_meta(tmp_path, "s1")
    assert meta.status == "closed" and [e["index"] for e in meta.episodes] == list(range(10))
    assert on_disk(folder)["episode_lists"] == ["episodes-000000.json", "episodes-000001.json"]
    assert not list(folder.glob("*.part")) and not list(folder.glob("*.tmp"))


def test_an_old_meta_json_without_lists_is_read_whole_and_written_with_them(tmp_path: Path) -> None:
    """A recording written before the lists (all entries in meta.json) is read as it is; when its
    writer goes on, its entries are sealed then."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(episode_lists, "LIST_SIZE", 1000)  # as before the lists: all in meta.json
        writer = RecordingWriter(tmp_path)
        writer.process(msgs(started("s1"), *episodes("s1", 0, 9)))
        writer.close()
    assert "episode_lists" not in on_disk(tmp_path / "s1") and len(on_disk(tmp_path / "s1")["episodes"]) == 9
    assert [e["index"] for e in read_meta(tmp_path, "s1").episodes] == list(range(9))
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(*episodes("s1", 9, 1)))
    writer.close()
    raw = on_disk(tmp_path / "s1")
    assert len(raw["episode_lists"]) == 2 and [e["index"] for e in raw["episodes"]] == [8, 9]
    assert [e["index"] for e in read_meta(tmp_path, "s1").episodes] == list(range(10))


def test_a_missing_list_is_a_clear_error(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("s1"), *episodes("s1", 0, 5)))
    writer.close()
    (tmp_path / "s1" / "episodes-000000.json").unlink()
    with pytest.raises(InvalidMetaError, match="names the episode list episodes-000000.json, which is missing"):
        read_meta(tmp_path, "s1")

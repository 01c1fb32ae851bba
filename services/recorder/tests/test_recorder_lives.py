"""Lives in the writer, on real files (a folder and S3), without NATS: the life index across
sessions and restarts, exactly once under redelivery, life_start per episode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from platform_recorder.reading.recording_store import RecordingStore
from platform_recorder.storage.folder import FolderStorage
from platform_recorder.storage.interface import Storage
from platform_recorder.writing.lives import join_life, read_life
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import (
    closed,
    episode_events,
    list_recordings,
    load_episode,
    read_meta,
    read_recording_info,
    started,
    step_event,
    subject_of,
    summaries,
)

LIFE = "robot-1"


def msgs(*events: Any) -> list[tuple[str, bytes]]:
    return [(subject_of(e), e.SerializeToString()) for e in events]


def first_session(sid: str = "s1") -> list[Any]:
    """5 steps: episode 0 (reset, 3 steps, terminated), episode 1 (reset, 2 steps, truncated)."""
    return [*episode_events(sid, 1, 0, 3), *episode_events(sid, 5, 1, 2, last="truncated")]


def second_session(sid: str = "s2") -> list[Any]:
    """4 steps, one episode ended by the close."""
    return episode_events(sid, 1, 0, 4, last="")


def life_starts(root: Path | Storage, sid: str) -> list[tuple[int, int]]:
    """(meta entry life_start, the episode file's life_start) of each episode."""
    return [(e["life_start"], int(load_episode(root, sid, e["index"])["life_start"]))
            for e in read_meta(root, sid).episodes]


def sessions(root: Path | Storage) -> list[tuple[str, int, int, str]]:
    life = read_life(FolderStorage(root) if isinstance(root, Path) else root, LIFE)
    assert life is not None
    return [(s["session_id"], s["first_step"], s["steps"], s["status"]) for s in life["sessions"]]


def test_a_second_session_continues_the_life_after_the_first(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    counts = writer.process(msgs(started("s1", life=LIFE), *first_session(), closed("s1", last_seq=7),
                                 started("s2", life=LIFE), *second_session()))  # one batch: close first
    assert counts["started"] == 2 and counts["closed"] == 1 and counts["written"] == 12
    writer.process(msgs(closed("s2", last_seq=5)))
    life = read_life(FolderStorage(tmp_path), LIFE)
    assert life is not None and life["format"] == 1 and life["name"] == LIFE and life["total_steps"] == 9
    assert (life["frame_every"], life["max_frames"]) == (0, 0)
    assert sessions(tmp_path) == [("s1", 0, 5, "closed"), ("s2", 5, 4, "closed")]
    assert life_starts(tmp_path, "s1") == [(0, 0), (3, 3)]
    assert life_starts(tmp_path, "s2") == [(5, 5)]
    meta = read_meta(tmp_path, "s2")
    assert (meta.life, meta.life_offset, meta.life_session) == (LIFE, 5, 1)
    assert (meta.frame_every, meta.max_frames) == (0, 0)
    info = read_recording_info(tmp_path, "s2")
    assert (info["life"], info["life_offset"]) == (LIFE, 5)
    assert sorted(m["session_id"] for m in list_recordings(tmp_path, life=LIFE)) == ["s1", "s2"]
    assert list_recordings(tmp_path, life="robot-2") == []
    store = RecordingStore(FolderStorage(tmp_path))
    assert [m["session_id"] for m in summaries(store, life=LIFE)] == ["s2", "s1"]  # newest first
    assert summaries(store, life=LIFE)[0]["life"] == LIFE and summaries(store, life="x") == []
    assert "lives" not in [m["session_id"] for m in summaries(store)]


def test_the_life_goes_on_across_recorder_restarts(tmp_path: Path) -> None:
    RecordingWriter(tmp_path).process(msgs(started("s1", life=LIFE), *first_session()[:6]))
    writer = RecordingWriter(tmp_path)  # restart mid-session
    writer.recover()
    writer.process(msgs(*first_session()[4:], closed("s1", last_seq=7)))  # redelivered overlap
    # restart between the sessions
    RecordingWriter(tmp_path).process(msgs(started("s2", life=LIFE), *second_session()[:3]))
    writer = RecordingWriter(tmp_path)  # restart inside the second one
    writer.recover()
    writer.process(msgs(*second_session(), closed("s2", last_seq=5)))
    assert sessions(tmp_path) == [("s1", 0, 5, "closed"), ("s2", 5, 4, "closed")]
    assert life_starts(tmp_path, "s1") == [(0, 0), (3, 3)] and life_starts(tmp_path, "s2") == [(5, 5)]
    # a third session, crashed, after one more restart
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("s3", life=LIFE), *episode_events("s3", 1, 0, 2, last=""),
                        closed("s3", last_seq=3, crashed=True)))
    assert sessions(tmp_path)[-1] == ("s3", 9, 2, "crashed")
    assert read_life(FolderStorage(tmp_path), LIFE)["total_steps"] == 11  # type: ignore[index]


def test_redelivered_lifecycle_events_do_not_count_twice(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("s1", life=LIFE), *first_session(), closed("s1", last_seq=7)))
    index = tmp_path / "lives" / f"{LIFE}.json"
    before = index.read_bytes()
    assert writer.process(msgs(closed("s1", last_seq=7)))["closed"] == 1  # redelivered close
    assert RecordingWriter(tmp_path).process(msgs(closed("s1", last_seq=7)))["closed"] == 1  # after a restart
    assert index.read_bytes() == before  # keyed by session id: nothing changed, nothing rewritten
    writer.process(msgs(started("s2", life=LIFE), *second_session()))
    assert RecordingWriter(tmp_path).process(msgs(started("s2", life=LIFE)))["duplicate"] == 1
    writer.process(msgs(closed("s1", last_seq=7), closed("s2", last_seq=5), closed("s2", last_seq=5)))
    assert sessions(tmp_path) == [("s1", 0, 5, "closed"), ("s2", 5, 4, "closed")]
    assert json.loads(index.read_text())["total_steps"] == 9


def test_a_start_redelivered_after_its_index_write_keeps_its_place(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("s1", life=LIFE), *first_session(), closed("s1", last_seq=7)))
    # a recorder killed after writing s2 into the index, before its meta.json: the STARTED comes again
    join_life(FolderStorage(tmp_path), LIFE, "s2", 0, 0, lambda _: None)
    RecordingWriter(tmp_path).process(msgs(started("s2", life=LIFE), *second_session(), closed("s2")))
    assert sessions(tmp_path) == [("s1", 0, 5, "closed"), ("s2", 5, 4, "closed")]
    assert read_meta(tmp_path, "s2").life_offset == 5


def test_a_session_that_never_closed_is_counted_before_the_next(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    writer = RecordingWriter(tmp_path)
    events = first_session()
    writer.process(msgs(started("s1", life=LIFE), *events[:6]))  # episode 1 open after 1 step: 4 steps
    writer = RecordingWriter(tmp_path)  # its env host died: no CLOSED event, and the recorder restarted
    writer.process(msgs(started("s2", life=LIFE), *second_session(), closed("s2", last_seq=5)))
    assert "session s1 never closed; its 4 steps so far come before session s2" in caplog.text
    assert sessions(tmp_path) == [("s1", 0, 4, "recording"), ("s2", 4, 4, "closed")]
    assert life_starts(tmp_path, "s2") == [(4, 4)]


def test_settings_of_later_sessions_and_bad_lives(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    writer = RecordingWriter(tmp_path)
    writer.process(msgs(started("s1", life=LIFE, frame_every=4), closed("s1")))
    writer.process(msgs(started("s2", life=LIFE, max_frames=100), closed("s2")))
    assert "asks for {'max_frames': 100} but the life keeps its first settings" in caplog.text
    assert (read_meta(tmp_path, "s2").frame_every, read_meta(tmp_path, "s2").max_frames) == (4, 0)
    writer.process(msgs(started("s3", life="no/slash"), started("lives"), closed("s3")))
    assert "recorded without its life: invalid life name 'no/slash'" in caplog.text
    assert read_meta(tmp_path, "s3").life is None and read_meta(tmp_path, "s3").status == "closed"
    assert not (tmp_path / "lives" / "meta.json").exists()
    assert sorted(p.name for p in (tmp_path / "lives").iterdir()) == [f"{LIFE}.json"]


def test_a_life_on_s3(s3_storage: Any, tmp_path: Path) -> None:
    writer = RecordingWriter(s3_storage, spool=tmp_path / "spool")
    writer.process(msgs(started("s1", life=LIFE), *first_session(), closed("s1", last_seq=7)))
    writer = RecordingWriter(s3_storage, spool=tmp_path / "spool")  # a restart between sessions
    writer.process(msgs(started("s2", life=LIFE), *second_session(), step_event("s2", 6, 0, 5),
                        closed("s2", last_seq=6)))
    assert sessions(s3_storage) == [("s1", 0, 5, "closed"), ("s2", 5, 5, "closed")]
    assert life_starts(s3_storage, "s2") == [(5, 5)]
    assert sorted(m["session_id"] for m in list_recordings(s3_storage, life=LIFE)) == ["s1", "s2"]
    assert [m["session_id"] for m in summaries(RecordingStore(s3_storage), life=LIFE)] == ["s2", "s1"]

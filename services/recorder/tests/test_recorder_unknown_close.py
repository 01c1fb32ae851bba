"""A close whose publisher's last seq is unknown (`last_seq` 0: the broker's, for a session whose
env host is gone) finishes the recording with what was recorded, and the first close wins: a
late one from the env host does not undo it (the writer on real files, without NATS)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import closed, episode_events, load_episode, read_meta, started, subject_of

LOST_HOST = "its env host h1 stopped (no heartbeat for 10 s)"


def msgs(*events: Any) -> list[tuple[str, bytes]]:
    return [(subject_of(e), e.SerializeToString()) for e in events]


def meta_json(root: Path, session_id: str) -> dict[str, Any]:
    return json.loads((root / session_id / "meta.json").read_text())


def recorded_seqs(root: Path, session_id: str) -> list[int]:
    meta = read_meta(root, session_id)
    assert meta is not None
    seqs: list[int] = []
    for episode in meta.episodes:
        seqs += [episode["first_seq"], *load_episode(root, session_id, episode["index"])["seq"].tolist()]
    return seqs


def crashed_by_the_broker(session_id: str) -> Any:
    return closed(session_id, last_seq=0, crashed=True, reason=LOST_HOST)


def record_then_lose_the_host(root: Path, session_id: str) -> RecordingWriter:
    """Two episodes, the second still open, then the broker's CRASHED (last seq unknown)."""
    writer = RecordingWriter(root)
    finished = episode_events(session_id, 1, 0, 3)  # seqs 1..4, terminated
    open_one = episode_events(session_id, 5, 1, 4, last="")  # seqs 5..9, no end
    writer.process(msgs(started(session_id), *finished, *open_one))
    writer.process(msgs(crashed_by_the_broker(session_id)))
    return writer


def test_an_unknown_last_seq_ends_the_recording_with_every_recorded_step_and_no_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="platform_recorder"):
        record_then_lose_the_host(tmp_path, "s1")
    meta = read_meta(tmp_path, "s1")
    assert meta is not None and meta.status == "crashed" and meta.reason == LOST_HOST
    assert meta.last_seq == 9 and not meta.missing_seqs
    assert [(e["index"], e["length"], e["terminated"]) for e in meta.episodes] == [(0, 3, True), (1, 4, False)]
    assert recorded_seqs(tmp_path, "s1") == list(range(1, 10))
    assert "published_last_seq" not in meta_json(tmp_path, "s1"), "not known, so not written as 0"
    assert not list((tmp_path / "s1").glob("*.part"))
    assert not caplog.records, [r.getMessage() for r in caplog.records]


def test_a_late_close_of_the_env_host_keeps_the_first_and_the_files(tmp_path: Path,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    writer = record_then_lose_the_host(tmp_path, "s2")
    first = meta_json(tmp_path, "s2")
    files = {p.name: p.read_bytes() for p in (tmp_path / "s2").glob("*.npz")}
    with caplog.at_level(logging.WARNING, logger="platform_recorder"):
        writer.process(msgs(closed("s2", last_seq=9, reason="closed by its env host")))
        writer.process(msgs(crashed_by_the_broker("s2")))  # and the broker's again (a redelivery)
    after = meta_json(tmp_path, "s2")
    assert after["published_last_seq"] == 9, "what the late event knew is kept"
    del after["published_last_seq"], after["updated_at"], first["updated_at"]
    assert after == first, "status, reason, closed_at and episodes are the first close's"
    assert json.loads((tmp_path / "s2" / "recording.json").read_text())["status"] == "crashed"
    assert {p.name: p.read_bytes() for p in (tmp_path / "s2").glob("*.npz")} == files
    assert recorded_seqs(tmp_path, "s2") == list(range(1, 10))
    assert not caplog.records, [r.getMessage() for r in caplog.records]

    # Started again from its files (a recorder restart), a late close still changes nothing.
    RecordingWriter(tmp_path).process(msgs(closed("s2", last_seq=9, reason="closed by its env host")))
    assert read_meta(tmp_path, "s2").status == "crashed"


def test_a_late_close_that_knows_of_unrecorded_steps_says_so(tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    writer = record_then_lose_the_host(tmp_path, "s3")
    with caplog.at_level(logging.ERROR, logger="platform_recorder"):
        writer.process(msgs(closed("s3", last_seq=12, reason="closed by its env host")))
    assert read_meta(tmp_path, "s3").published_last_seq == 12
    assert any("closed after publishing seq 12 but only seq 9 was recorded" in r.getMessage()
               for r in caplog.records)

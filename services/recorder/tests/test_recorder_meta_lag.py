"""meta.json may lag behind finished episodes by `meta_interval`: their parts stay until it is
written, a restart lists them at once, and a close, a gap or `close()` writes it at once."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import closed, episode_events, load_episode, read_meta, started, subject_of


def msgs(*events: Any) -> list[tuple[str, bytes]]:
    return [(subject_of(e), e.SerializeToString()) for e in events]


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_finished_episodes_are_listed_when_due_and_their_parts_kept_until_then(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path, meta_interval=60)
    folder = tmp_path / "s1"
    writer.process(msgs(started("s1"), *episode_events("s1", 1, 0, 3), *episode_events("s1", 5, 1, 2)))
    # both episodes are finished (npz written) but meta.json does not list them yet
    assert files(folder) == [
        "episode-000000.npz", "episode-000000.part", "episode-000001.npz", "episode-000001.part", "meta.json",
        "recording.json",
    ]
    assert read_meta(tmp_path, "s1").episodes == [] and writer.meta_pending
    writer.flush_due(time.monotonic() + 1)  # not due yet
    assert read_meta(tmp_path, "s1").episodes == []
    writer.flush_due(time.monotonic() + 61)
    meta = read_meta(tmp_path, "s1")
    assert [e["length"] for e in meta.episodes] == [3, 2] and meta.last_seq == 7
    assert files(folder) == ["episode-000000.npz", "episode-000001.npz", "meta.json", "recording.json"]
    assert not writer.meta_pending
    assert load_episode(tmp_path, "s1", 1)["seq"].tolist() == [6, 7]


def test_a_restart_lists_what_the_lagging_meta_missed(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path, meta_interval=60)
    writer.process(msgs(started("s1"), *episode_events("s1", 1, 0, 4)))
    assert read_meta(tmp_path, "s1").episodes == []
    # killed here: a new writer finds the part next to its npz and lists the episode at once
    again = RecordingWriter(tmp_path, meta_interval=60)
    assert again.recover() == 1
    meta = read_meta(tmp_path, "s1")
    assert [e["length"] for e in meta.episodes] == [4] and meta.last_seq == 5
    assert files(tmp_path / "s1") == ["episode-000000.npz", "meta.json", "recording.json"]
    assert again.process(msgs(*episode_events("s1", 1, 0, 4)))["duplicate"] == 5  # redelivered


def test_an_npz_that_meta_does_not_name_yet_is_written_again_on_restart(tmp_path: Path) -> None:
    """Such an npz had no fsync of its own (made durable with the others before meta.json names
    it): after an OS crash it may be torn, so a restart writes it again from its part file."""
    writer = RecordingWriter(tmp_path, meta_interval=60)
    writer.process(msgs(started("s1"), *episode_events("s1", 1, 0, 4)))
    npz = tmp_path / "s1" / "episode-000000.npz"
    whole = npz.read_bytes()
    npz.write_bytes(whole[: len(whole) // 3])  # what an OS crash may leave of an unsynced file
    again = RecordingWriter(tmp_path, meta_interval=60)
    assert again.recover() == 1
    assert npz.read_bytes() == whole
    assert [e["length"] for e in read_meta(tmp_path, "s1").episodes] == [4]
    assert load_episode(tmp_path, "s1", 0)["seq"].tolist() == [2, 3, 4, 5]


def test_close_gap_and_stop_write_meta_at_once(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path, meta_interval=60)
    events = episode_events("s1", 1, 0, 3) + episode_events("s1", 5, 1, 3)
    writer.process(msgs(started("s1"), *events[:4]))
    assert read_meta(tmp_path, "s1").episodes == []
    writer.process(msgs(events[5]))  # seq 5 missing: a gap is written to meta.json at once
    meta = read_meta(tmp_path, "s1")
    assert meta.missing_seqs == [5] and [e["length"] for e in meta.episodes] == [3]
    writer.process(msgs(events[4], *events[6:7]))  # the late one, then seq 7
    writer.process(msgs(closed("s1", last_seq=7)))
    meta = read_meta(tmp_path, "s1")
    assert meta.status == "closed" and meta.missing_seqs == []
    assert [e["length"] for e in meta.episodes] == [3, 2] and not meta.episodes[1]["terminated"]
    assert not list((tmp_path / "s1").glob("*.part"))

    other = RecordingWriter(tmp_path, meta_interval=60)
    other.process(msgs(started("s2"), *episode_events("s2", 1, 0, 2)))
    other.close()  # stopping writes what lags
    assert [e["length"] for e in read_meta(tmp_path, "s2").episodes] == [2]

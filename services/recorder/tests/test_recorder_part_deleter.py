"""The service's writer deletes listed episodes' part files on a thread of its own
(`background_deletes`): in order, all of them, a spool folder after its parts, and a reload waits
for them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from platform_recorder.storage.folder import FolderStorage
from platform_recorder.writing.part_deleter import PartDeleter
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import closed, episode_events, read_meta, started, subject_of


def msgs(*events: Any) -> list[tuple[str, bytes]]:
    return [(subject_of(e), e.SerializeToString()) for e in events]


def test_listed_parts_are_deleted_off_the_thread_and_a_reload_waits_for_them(tmp_path: Path) -> None:
    writer = RecordingWriter(tmp_path, background_deletes=True)
    events = [e for ep in range(30) for e in episode_events("s1", ep * 3 + 1, ep, 2)]
    writer.process(msgs(started("s1"), *events[:45]))
    writer.reset()  # the state goes; the next batch reloads it, after the deletes asked
    writer.process(msgs(*events[45:], closed("s1", last_seq=90)))
    writer.wait_deletes()
    assert not list((tmp_path / "s1").glob("*.part"))
    assert [e["index"] for e in read_meta(tmp_path, "s1").episodes] == list(range(30))
    writer.close()


def test_a_closed_spooled_recording_s_folder_goes_after_its_parts(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    writer = RecordingWriter(FolderStorage(tmp_path / "recordings"), spool=spool, background_deletes=True)
    writer.process(msgs(started("s1"), *episode_events("s1", 1, 0, 3), closed("s1", last_seq=4)))
    writer.close()  # waits for the deletes
    assert not (spool / "s1").exists()
    assert read_meta(tmp_path / "recordings", "s1").status == "closed"


def test_the_deleter_keeps_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    deleter = PartDeleter()
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.part").write_bytes(b"x")
    (tmp_path / "a" / "orphans.part").write_bytes(b"y")
    deleter.delete(tmp_path / "a" / "x.part")
    deleter.delete(tmp_path / "a" / "gone.part")  # missing: no error
    deleter.remove_empty_folder(tmp_path / "a")
    deleter.stop()
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["orphans.part"]

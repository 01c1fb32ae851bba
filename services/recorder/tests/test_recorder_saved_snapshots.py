"""The saved snapshot store on real files: save/get/list, unknown and path ids, atomic folders."""

from __future__ import annotations

import errno
import json
import os
import time
from pathlib import Path

import pytest
from platform_recorder.storage import folder as folder_storage
from platform_recorder.errors import (
    InvalidSnapshotIdError,
    SavedSnapshotCorruptError,
    SavedSnapshotNotFoundError,
)
from platform_recorder.snapshots.snapshot_store import INFO_FILE, SavedSnapshotStore
from platform_recorder.writing.writer import RecordingWriter
from recorder_testkit import started, subject_of
from simulusion.env.v1 import environment_pb2 as env_pb


def snapshot(env_id: str = "CartPole-v1", session_id: str = "s-1", **fields: object) -> env_pb.SavedSnapshot:
    return env_pb.SavedSnapshot(env_id=env_id, session_id=session_id, kwargs_json='{"g": 9}', **fields)


def test_save_assigns_id_time_and_size_and_get_returns_it(tmp_path: Path) -> None:
    store = SavedSnapshotStore(tmp_path)
    state = os.urandom(10_000)
    before = time.time()
    saved = store.save(snapshot(label="before the swing", seq=42, id="ignored"), state, "pickle")
    assert saved.id.startswith("snap-") and len(saved.id) == 17 and int(saved.id[5:], 16) >= 0
    assert saved.size_bytes == 10_000 and before <= saved.created_at <= time.time()
    assert (saved.label, saved.seq, saved.kwargs_json) == ("before the swing", 42, '{"g": 9}')
    folder = tmp_path / "snapshots" / saved.id
    assert sorted(p.name for p in folder.iterdir()) == ["snapshot.json", "state.bin"]
    assert (folder / "state.bin").read_bytes() == state
    info = json.loads((folder / "snapshot.json").read_text())
    assert info["format"] == "pickle" and info["id"] == saved.id and info["env_id"] == "CartPole-v1"
    got, got_state, fmt = store.get(saved.id, with_state=True)
    assert got == saved and got_state == state and fmt == "pickle"
    got, no_state, _ = store.get(saved.id)
    assert got == saved and no_state is None
    kept = store.save(snapshot(created_at=1234.5), b"x", "pickle")
    assert kept.created_at == 1234.5 and kept.id != saved.id


def test_list_filters_newest_first(tmp_path: Path) -> None:
    store = SavedSnapshotStore(tmp_path)
    assert store.list_snapshots() == []
    a = store.save(snapshot(created_at=100.0), b"a", "pickle")
    b = store.save(snapshot(env_id="Pong", session_id="s-2", created_at=300.0), b"b", "pickle")
    c = store.save(snapshot(session_id="s-2", created_at=200.0), b"c", "pickle")
    assert [s.id for s in store.list_snapshots()] == [b.id, c.id, a.id]
    assert [s.id for s in store.list_snapshots(env_id="CartPole-v1")] == [c.id, a.id]
    assert [s.id for s in store.list_snapshots(session_id="s-2")] == [b.id, c.id]
    assert [s.id for s in store.list_snapshots(env_id="CartPole-v1", session_id="s-2")] == [c.id]
    assert store.list_snapshots(env_id="nope") == []


def test_unknown_ids_and_path_ids(tmp_path: Path) -> None:
    store = SavedSnapshotStore(tmp_path)
    with pytest.raises(SavedSnapshotNotFoundError, match="'snap-000000000000' not found"):
        store.get("snap-000000000000")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "snapshot.json").write_text("{}")
    for bad in ("../secret", "a/b", "..", "snap\\x", "", ".tmp-x", "x\x00"):
        with pytest.raises(InvalidSnapshotIdError, match="id"):
            store.get(bad, with_state=True)


def test_a_failed_save_leaves_no_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = SavedSnapshotStore(tmp_path)
    real_write = folder_storage.write_new_file

    def disk_full_at_the_json(path: Path, data: bytes | memoryview) -> None:
        if path.name == INFO_FILE:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(path, data)  # the state is written whole first

    monkeypatch.setattr(folder_storage, "write_new_file", disk_full_at_the_json)
    with pytest.raises(OSError, match="No space left"):
        store.save(snapshot(), os.urandom(1000), "pickle")
    assert list((tmp_path / "snapshots").iterdir()) == []
    assert store.list_snapshots() == []
    monkeypatch.undo()
    saved = store.save(snapshot(), b"ok", "pickle")
    assert [s.id for s in store.list_snapshots()] == [saved.id]


def test_a_crashed_saves_temp_folder_is_never_listed_and_removed_once_old(tmp_path: Path) -> None:
    store = SavedSnapshotStore(tmp_path)
    saved = store.save(snapshot(), b"whole", "pickle")
    old = tmp_path / "snapshots" / ".tmp-snap-0123456789ab-x1"
    fresh = tmp_path / "snapshots" / ".tmp-snap-ba9876543210-x2"
    for folder in (old, fresh):  # what a recorder killed mid-save leaves: a state, no snapshot.json
        folder.mkdir()
        (folder / "state.bin").write_bytes(b"half")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    assert [s.id for s in store.list_snapshots()] == [saved.id]
    with pytest.raises(SavedSnapshotNotFoundError):
        store.get("snap-0123456789ab")
    assert store.remove_stale_temps() == 1
    assert not old.exists() and fresh.exists()  # a save in progress elsewhere is left alone


def test_a_damaged_state_is_reported_not_returned(tmp_path: Path) -> None:
    store = SavedSnapshotStore(tmp_path)
    saved = store.save(snapshot(), b"0123456789", "pickle")
    (tmp_path / "snapshots" / saved.id / "state.bin").write_bytes(b"0123456788")
    with pytest.raises(SavedSnapshotCorruptError, match="does not match"):
        store.get(saved.id, with_state=True)
    assert store.get(saved.id)[0] == saved  # its description still reads


def test_the_snapshots_folder_is_not_a_recording(tmp_path: Path) -> None:
    SavedSnapshotStore(tmp_path).save(snapshot(), b"s", "pickle")
    writer = RecordingWriter(tmp_path)
    assert writer.recover() == 0
    event = started("snapshots")
    assert writer.process([(subject_of(event), event.SerializeToString())])["ignored"] == 1
    assert not (tmp_path / "snapshots" / "meta.json").exists()

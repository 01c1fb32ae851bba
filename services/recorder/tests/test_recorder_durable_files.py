"""Group commits of the recorder's files: one syncfs(2) per filesystem on Linux, an fsync each
without it; a failed commit keeps its files for the next."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from platform_recorder.storage import durable_files
from platform_recorder.storage.durable_files import SyncGroup, write_file_atomic


def test_a_commit_syncs_each_filesystem_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert durable_files._SYNCFS is not None, "syncfs(2) is missing from this Linux libc"
    real = durable_files._SYNCFS
    calls: list[int] = []

    def counting(fd: int) -> int:
        calls.append(fd)
        return real(fd)  # type: ignore[operator]

    monkeypatch.setattr(durable_files, "_SYNCFS", counting)
    group = SyncGroup()
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        for n in range(3):
            write_file_atomic(tmp_path / folder / f"{n}.npz", b"x" * 100, group=group)
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["0.npz", "1.npz", "2.npz"]  # renamed already
    assert len(group) == 6
    group.commit()
    assert len(calls) == 1 and len(group) == 0  # both folders are on one filesystem
    group.commit()  # nothing to do
    assert len(calls) == 1


def test_without_syncfs_each_file_and_folder_is_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(durable_files, "_SYNCFS", None)
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    group = SyncGroup()
    for n in range(3):
        write_file_atomic(tmp_path / f"{n}.part", b"y", group=group)
    assert synced == []  # written without a sync
    group.commit()
    assert len(synced) == 3 + 1  # each file, then their folder


def test_a_failed_commit_keeps_its_files_for_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(durable_files, "_SYNCFS", lambda fd: -1)
    group = SyncGroup()
    group.add_file(tmp_path / "f")
    (tmp_path / "f").write_bytes(b"z")
    with pytest.raises(OSError, match="syncfs of the filesystem of"):
        group.commit()
    assert len(group) == 1
    monkeypatch.setattr(durable_files, "_SYNCFS", lambda fd: 0)
    group.commit()
    assert len(group) == 0

"""Durable local files: whole writes, fsync, atomic replacement, directory fsync."""

from __future__ import annotations

import os
from pathlib import Path


def fsync_dir(path: Path) -> None:
    """Make a directory's entries (created, renamed, deleted files) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all_and_sync(fd: int, data: bytes | memoryview) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def write_new_file(path: Path, data: bytes | memoryview) -> None:
    """Create `path` (it must not exist) with `data`, fsynced (plain os calls: no file object)."""
    _write_all_and_sync(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), data)


def write_file_atomic(path: Path, data: bytes | memoryview, sync_dir: bool = True) -> None:
    """Write `path` so that readers (and a crash) see either the old or the new content: a temp
    file, fsync, rename. Without `sync_dir` the rename is not yet durable: the caller fsyncs the
    directory later."""
    target = os.fspath(path)
    tmp = target + ".tmp"
    _write_all_and_sync(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), data)
    os.replace(tmp, target)
    if sync_dir:
        fsync_dir(Path(target).parent)

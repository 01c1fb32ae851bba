"""Durable local files: whole writes, fsync, atomic replacement, directory fsync, and group
commits (`SyncGroup`: files written without fsync, made durable together)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
from pathlib import Path


def fsync_path(path: str | os.PathLike[str]) -> None:
    """fsync a file, or a directory: its entries (created, renamed, deleted files) become durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """Make a directory's entries (created, renamed, deleted files) durable."""
    fsync_path(path)


def _write_all_and_sync(fd: int, data: bytes | memoryview, sync: bool = True) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def write_new_file(path: Path, data: bytes | memoryview) -> None:
    """Create `path` (it must not exist) with `data`, fsynced (plain os calls: no file object)."""
    _write_all_and_sync(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), data)


def write_unsynced(path: str | os.PathLike[str], data: bytes | memoryview) -> None:
    """Write `path` whole (created or truncated), without an fsync (a `SyncGroup` makes it durable)."""
    _write_all_and_sync(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), data, sync=False)


def write_file_atomic(path: Path, data: bytes | memoryview, sync_dir: bool = True,
                      group: SyncGroup | None = None) -> None:
    """Write `path` so that readers (and a crash) see either the old or the new content: a temp
    file, fsync, rename. Without `sync_dir` the rename is not yet durable: the caller fsyncs the
    directory later. With a `group`, nothing is synced here: the file and its directory are added
    to the group, and only its commit makes them durable (until then, an OS crash may leave the
    file torn or missing; a process crash cannot)."""
    target = os.fspath(path)
    tmp = target + ".tmp"
    _write_all_and_sync(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), data, sync=group is None)
    os.replace(tmp, target)
    if group is not None:
        group.add_file(target)
    elif sync_dir:
        fsync_dir(Path(target).parent)


def _load_syncfs() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        syncfs = libc.syncfs
    except (OSError, AttributeError):
        return None
    syncfs.argtypes = [ctypes.c_int]
    syncfs.restype = ctypes.c_int
    return syncfs


_SYNCFS = _load_syncfs()


class SyncGroup:
    """Files (and their folders) written without fsync, made durable together by `commit`.

    On Linux the commit is one syncfs(2) per filesystem: one journal commit for every file
    written since, instead of an fsync (and a journal commit) each, which for many small files
    (the part files of a batch, the npz of short episodes) costs a fraction of the CPU time.
    Elsewhere it fsyncs each file and folder. Thread-safe.
    """

    def __init__(self) -> None:
        self._files: set[str] = set()
        self._lock = threading.Lock()

    def add_file(self, path: str | os.PathLike[str]) -> None:
        """`path` and its entry in its folder become durable at the next `commit`."""
        with self._lock:
            self._files.add(os.fspath(path))

    def __len__(self) -> int:
        return len(self._files)

    def commit(self) -> None:
        """Make every added file durable (raises OSError when the system reports a failed write)."""
        with self._lock:
            files, self._files = self._files, set()
        if not files:
            return
        folders = {os.path.dirname(path) for path in files}
        try:
            if _SYNCFS is not None:
                _sync_filesystems(folders)
            else:
                for path in sorted(files | folders):
                    fsync_path(path)
        except BaseException:
            with self._lock:
                self._files |= files  # not known to be durable: the next commit tries again
            raise


def _sync_filesystems(folders: set[str]) -> None:
    """syncfs(2) once for each filesystem holding one of `folders`."""
    done: set[int] = set()
    for folder in sorted(folders):
        fd = os.open(folder, os.O_RDONLY)
        try:
            device = os.fstat(fd).st_dev
            if device in done:
                continue
            if _SYNCFS(fd) != 0:  # type: ignore[operator]
                errno = ctypes.get_errno()
                raise OSError(errno, f"syncfs of the filesystem of {folder} failed: {os.strerror(errno)}")
            done.add(device)
        finally:
            os.close(fd)


"""Where finished recordings live: a folder, or an S3 bucket (`PLATFORM_RECORDINGS`).

Keys are `/`-separated paths relative to the storage's root, e.g. `s-1a2b/meta.json`. Every
write is atomic: a reader sees the whole object or none (a folder: temp file, fsync, rename,
directory fsync, or for several files one group commit; S3: one PUT, complete or absent).
Methods are blocking: call them in a thread from asyncio code.

On an object store (`needs_manifest`) a recording's `manifest.json` lists its finished objects
and is written last after every change; readers trust only what it lists (see
platform_recorder.manifest). A folder needs none: its files appear whole, by rename.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Protocol

from platform_recorder.durable_files import SyncGroup, fsync_dir, write_file_atomic
from platform_recorder.errors import RecorderError


class ObjectNotFoundError(RecorderError):
    code = "not_found"


class StorageConfigError(RecorderError, ValueError):
    """The recordings storage settings are unusable; the message names the variable to fix."""

    code = "invalid_argument"


class Storage(Protocol):
    """The recordings storage."""

    description: str  # e.g. "/data/recordings" or "s3://bucket/prefix", for messages
    needs_manifest: bool  # True: readers trust only the objects a recording's manifest.json lists

    def put_atomic(self, key: str, data: bytes | memoryview, *, sync_folder: bool = True) -> None:
        """Write `key` whole (replacing it), durably. `sync_folder=False`: a folder storage leaves
        the durability of the file and its rename to a later `sync_folder(prefix)` (several puts,
        one group commit: `durable_files.SyncGroup`); until then an OS crash may leave the file
        torn, so nothing may name it before. An object store ignores it (a PUT is durable when
        it returns)."""

    def sync_folder(self, prefix: str) -> None:
        """Make the `sync_folder=False` puts under `prefix` (and any others not yet) durable."""

    def get(self, key: str) -> bytes:
        """The whole object. Raises ObjectNotFoundError."""

    def get_range(self, key: str, offset: int, length: int) -> bytes:
        """`length` bytes from `offset` (fewer at the end). Raises ObjectNotFoundError."""

    def size(self, key: str) -> int:
        """The object's size in bytes. Raises ObjectNotFoundError."""

    def exists(self, key: str) -> bool: ...

    def list(self, prefix: str) -> list[str]:
        """Every key under `prefix` (a folder, e.g. "s-1a2b/"), sorted."""

    def list_sizes(self, prefix: str) -> dict[str, int]:
        """Every key under `prefix` with its size in bytes (one listing request on S3)."""

    def children(self, prefix: str = "", name_prefix: str = "") -> list[str]:
        """The names of the immediate sub-folders of `prefix` (those starting with `name_prefix`),
        sorted."""

    def delete_prefix(self, prefix: str) -> int:
        """Delete every key under `prefix` (objects named manifest.json first, so a reader that
        trusts manifests never sees a half-deleted recording); returns how many."""


def check_key(key: str) -> str:
    """`key` if it is a safe relative key (no absolute path, no `..`, `.` or empty part; a
    trailing `/` names a folder). Raises ValueError otherwise."""
    parts = key[:-1].split("/") if key.endswith("/") else key.split("/")
    if not key or key.startswith("/") or "\\" in key or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"not a storage key: {key!r}")
    return key


class FolderStorage:
    """Recordings in a local folder (the default: `./recordings`)."""

    needs_manifest = False

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).absolute()
        self.description = str(self.root)
        self._not_durable = SyncGroup()  # the `sync_folder=False` puts since the last `sync_folder`

    def path(self, key: str) -> Path:
        return self.root / check_key(key)

    def _make_parents(self, target: Path) -> None:
        """Create the missing folders above `target`, each durably (its parent fsynced)."""
        missing: list[Path] = []
        folder = target.parent
        while not folder.is_dir():
            missing.append(folder)
            folder = folder.parent
        for folder in reversed(missing):
            try:
                folder.mkdir()
            except FileExistsError:
                continue
            fsync_dir(folder.parent)

    def put_atomic(self, key: str, data: bytes | memoryview, *, sync_folder: bool = True) -> None:
        target = self.path(key)
        self._make_parents(target)
        write_file_atomic(target, data, group=None if sync_folder else self._not_durable)

    def sync_folder(self, prefix: str) -> None:
        if prefix:
            check_key(prefix)
        self._not_durable.commit()

    def get(self, key: str) -> bytes:
        try:
            return self.path(key).read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise ObjectNotFoundError(f"no {key} in {self.description}") from None

    def get_range(self, key: str, offset: int, length: int) -> bytes:
        try:
            with open(self.path(key), "rb") as file:
                file.seek(max(0, offset))
                return file.read(max(0, length))
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise ObjectNotFoundError(f"no {key} in {self.description}") from None

    def size(self, key: str) -> int:
        path = self.path(key)
        try:
            if path.is_file():
                return path.stat().st_size
        except OSError:
            pass
        raise ObjectNotFoundError(f"no {key} in {self.description}")

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def list(self, prefix: str) -> list[str]:
        return sorted(self.list_sizes(prefix))

    def list_sizes(self, prefix: str) -> dict[str, int]:
        base = self.root / check_key(prefix) if prefix else self.root
        if not base.is_dir():
            return {}
        out: dict[str, int] = {}
        for path in base.rglob("*"):
            try:
                if path.is_file():
                    out[path.relative_to(self.root).as_posix()] = path.stat().st_size
            except FileNotFoundError:  # renamed or deleted while listing
                continue
        return dict(sorted(out.items()))

    def children(self, prefix: str = "", name_prefix: str = "") -> list[str]:
        base = self.root / check_key(prefix) if prefix else self.root
        try:
            entries = list(os.scandir(base))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(e.name for e in entries if e.name.startswith(name_prefix) and e.is_dir())

    def delete_prefix(self, prefix: str) -> int:
        base = self.path(check_key(prefix).rstrip("/"))
        if not base.exists():
            return 0
        if not base.is_dir():
            base.unlink()
            return 1
        count = 0
        for manifest in base.rglob("manifest.json"):
            manifest.unlink(missing_ok=True)
            count += 1
        count += sum(1 for p in base.rglob("*") if p.is_file())
        shutil.rmtree(base)
        fsync_dir(base.parent)
        return count


def as_storage(root: str | os.PathLike[str] | Storage) -> Storage:
    """`root` itself when it is a Storage, else a FolderStorage of that folder."""
    if isinstance(root, (str, os.PathLike)):
        return FolderStorage(root)
    return root


def storage_from_settings(
    recordings: str,
    endpoint: str = "",
    access_key: str = "",
    secret_key: str = "",
    region: str = "",
    secure: bool = True,
) -> Storage:
    """The storage `PLATFORM_RECORDINGS` names: a folder, or `s3://bucket/prefix` (then the
    `PLATFORM_S3_*` values are required, except region). Makes an S3 bucket that is missing.

    Raises:
        StorageConfigError: a value is missing or malformed, or the bucket cannot be used
            (the message names the variable).
    """
    if not recordings.startswith("s3://"):
        if "://" in recordings:
            raise StorageConfigError(
                f"PLATFORM_RECORDINGS={recordings!r}: expected a folder or s3://bucket/prefix"
            )
        return FolderStorage(recordings)
    from platform_recorder.s3_storage import open_s3_storage

    return open_s3_storage(recordings, endpoint, access_key, secret_key, region, secure)

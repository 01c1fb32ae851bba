"""What a recordings storage can do (`Storage`), its errors, and the rule for its keys.

Keys are `/`-separated paths relative to the storage's root, e.g. `s-1a2b/meta.json`. Every
write is atomic: a reader sees the whole object or none (a folder: temp file, fsync, rename,
directory fsync, or for several files one group commit; S3: one PUT, complete or absent).
Methods are blocking: call them in a thread from asyncio code.

Two kinds exist (platform_recorder.storage.folder, platform_recorder.storage.s3); code that uses a
storage asks it what it can do, never which kind it is: `needs_manifest` (readers trust only what
a recording's manifest.json lists: an object store), `local_root` (a local folder, where a
recording's part files may live beside its finished files).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from platform_recorder.errors import RecorderError


class ObjectNotFoundError(RecorderError):
    code = "not_found"


class ObjectExistsError(RecorderError):
    """A new folder (`Storage.put_new_folder`) whose name is taken."""

    code = "internal"


class StorageConfigError(RecorderError, ValueError):
    """The recordings storage settings are unusable; the message names the variable to fix."""

    code = "invalid_argument"


class StorageUnavailableError(RecorderError):
    """The storage cannot be reached or refuses an operation (an S3 endpoint, a bucket)."""

    code = "unavailable"


class Storage(Protocol):
    """The recordings storage."""

    description: str  # e.g. "/data/recordings" or "s3://bucket/prefix", for messages
    needs_manifest: bool  # True: readers trust only the objects a recording's manifest.json lists
    local_root: Path | None  # the local folder its keys are files in; None: not a local folder

    def put_atomic(self, key: str, data: bytes | memoryview, *, sync_folder: bool = True) -> None:
        """Write `key` whole (replacing it), durably. `sync_folder=False`: a folder storage leaves
        the durability of the file and its rename to a later `sync_folder(prefix)` (several puts,
        one group commit: `durable_files.SyncGroup`); until then an OS crash may leave the file
        torn, so nothing may name it before. An object store ignores it (a PUT is durable when
        it returns)."""

    def sync_folder(self, prefix: str) -> None:
        """Make the `sync_folder=False` puts under `prefix` (and any others not yet) durable."""

    def put_new_folder(self, prefix: str, files: Sequence[tuple[str, bytes]]) -> None:
        """Create the folder `prefix` (e.g. "snapshots/snap-1") holding `files` (name, bytes),
        durably. A folder storage makes it appear whole (written into a temporary folder whose
        name starts with ".", renamed into place); an object store PUTs the files in the order
        given, so a reader must trust the folder only once its last file is there.

        Raises:
            ObjectExistsError: the folder exists already.
        """

    def remove_stale_temporaries(self, prefix: str, older_than: float) -> int:
        """Remove what interrupted `put_new_folder`s left under `prefix` (a crash), older than
        `older_than` seconds (a younger one may be another writer's, in progress); how many."""

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

    def children(self, prefix: str = "", name_prefix: str = "") -> builtins.list[str]:
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

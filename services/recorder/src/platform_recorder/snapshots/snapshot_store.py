"""Saved snapshots: an environment's full state kept durably in the recordings storage.

Layout: `<recordings>/snapshots/<id>/` holding
    state.bin       the state's bytes as exported by the environment (e.g. a pickle)
    snapshot.json   {"id", "label", "session_id", "env_id", "kwargs_json", "created_at", "seq",
                     "size_bytes", "format", "sha256", "version"}
Ids are "snap-" + 12 hex digits. Readers trust only a snapshot whose snapshot.json exists, and
check state.bin against its size and sha256.

A snapshot is written by one `Storage.put_new_folder`, state.bin then snapshot.json: in a folder
storage its folder appears complete or not at all (written into a temporary folder `.tmp-<id>-...`
beside it, renamed into place; one left by a crash is never listed and is removed by
`remove_stale_temps` once it is old, so a save in progress on another recorder sharing the
storage is left alone); on S3 (no renames) snapshot.json is PUT last, so a save a crash
interrupted leaves at most a state.bin that is never listed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import time
from pathlib import Path
from typing import Any

from platform_contracts.teams import owning_team
from platform_recorder.errors import (
    InvalidSnapshotIdError,
    SavedSnapshotCorruptError,
    SavedSnapshotNotFoundError,
)
from platform_recorder.layout import SNAPSHOTS_DIR
from platform_recorder.storage.interface import ObjectExistsError, ObjectNotFoundError, Storage
from platform_recorder.storage.opening import as_storage
from simulusion.env.v1 import environment_pb2

log = logging.getLogger(__name__)

STATE_FILE = "state.bin"
INFO_FILE = "snapshot.json"
ID_PREFIX = "snap-"
FORMAT_VERSION = 1
# A temporary folder older than this is what a crashed save left.
STALE_TMP_S = 3600.0
_FIELDS = ("id", "label", "session_id", "env_id", "kwargs_json", "created_at", "seq", "size_bytes", "team")


def new_snapshot_id() -> str:
    return ID_PREFIX + secrets.token_hex(6)


def check_snapshot_id(snapshot_id: str) -> str:
    """Return `snapshot_id` if it can name a folder; raise InvalidSnapshotIdError otherwise."""
    if not isinstance(snapshot_id, str) or not snapshot_id:
        raise InvalidSnapshotIdError("a saved snapshot id is required")
    bad = ("/", "\\", "\x00", os.sep) + ((os.altsep,) if os.altsep else ())
    if any(c in snapshot_id for c in bad) or ".." in snapshot_id:
        raise InvalidSnapshotIdError(
            f"invalid saved snapshot id {snapshot_id!r}: it must not contain a path separator or '..'"
        )
    if snapshot_id.startswith("."):
        raise InvalidSnapshotIdError(f"invalid saved snapshot id {snapshot_id!r}: it must not start with '.'")
    return snapshot_id


def _to_json(snapshot: environment_pb2.SavedSnapshot, fmt: str, digest: str) -> bytes:
    info: dict[str, Any] = {name: getattr(snapshot, name) for name in _FIELDS}
    info.update(format=fmt, sha256=digest, version=FORMAT_VERSION)
    return json.dumps(info, indent=1).encode()


def _from_json(info: dict[str, Any]) -> environment_pb2.SavedSnapshot:
    return environment_pb2.SavedSnapshot(**{name: info[name] for name in _FIELDS if name in info})


class SavedSnapshotStore:
    """The saved snapshots under `snapshots/` of the recordings storage (several recorders may
    share it); a path: a folder storage."""

    def __init__(self, recordings: Storage | Path | str) -> None:
        self.storage = as_storage(recordings)

    def _key(self, snapshot_id: str, name: str) -> str:
        return f"{SNAPSHOTS_DIR}/{snapshot_id}/{name}"

    def save(
        self, snapshot: environment_pb2.SavedSnapshot, state: bytes, fmt: str
    ) -> environment_pb2.SavedSnapshot:
        """Store a snapshot durably; return it with its new id, size_bytes and created_at (now,
        unless given). The id the caller set, if any, is replaced."""
        saved = environment_pb2.SavedSnapshot()
        saved.CopyFrom(snapshot)
        saved.size_bytes = len(state)
        if not saved.created_at:
            saved.created_at = time.time()
        digest = hashlib.sha256(state).hexdigest()
        for attempt in range(3):  # a new id when one is taken (48 random bits: never, in practice)
            saved.id = new_snapshot_id()
            files = [(STATE_FILE, state), (INFO_FILE, _to_json(saved, fmt, digest))]  # snapshot.json last
            try:
                self.storage.put_new_folder(f"{SNAPSHOTS_DIR}/{saved.id}", files)
                break
            except ObjectExistsError:
                if attempt == 2:
                    raise
        log.info("saved snapshot %s of session %s env %s (%d bytes)", saved.id, saved.session_id,
                 saved.env_id, saved.size_bytes)
        return saved

    def _read_info(self, snapshot_id: str) -> dict[str, Any]:
        try:
            info: dict[str, Any] = json.loads(self.storage.get(self._key(check_snapshot_id(snapshot_id), INFO_FILE)))
            return info
        except ObjectNotFoundError:
            raise SavedSnapshotNotFoundError(f"saved snapshot {snapshot_id!r} not found") from None

    def get(
        self, snapshot_id: str, with_state: bool = False
    ) -> tuple[environment_pb2.SavedSnapshot, bytes | None, str]:
        """(the snapshot, its state's bytes when `with_state` else None, the state's format).

        Raises:
            InvalidSnapshotIdError: the id cannot name a folder.
            SavedSnapshotNotFoundError: no such snapshot.
            SavedSnapshotCorruptError: its state does not match its size or checksum.
        """
        info = self._read_info(snapshot_id)
        snapshot, fmt = _from_json(info), str(info.get("format", ""))
        if not with_state:
            return snapshot, None, fmt
        try:
            state = self.storage.get(self._key(snapshot_id, STATE_FILE))
        except ObjectNotFoundError:
            raise SavedSnapshotCorruptError(f"saved snapshot {snapshot_id!r} has no {STATE_FILE}") from None
        if len(state) != snapshot.size_bytes or hashlib.sha256(state).hexdigest() != info.get("sha256"):
            raise SavedSnapshotCorruptError(
                f"saved snapshot {snapshot_id!r}: {STATE_FILE} does not match its size or sha256"
            )
        return snapshot, state, fmt

    def list_snapshots(self, env_id: str = "", session_id: str = "",
                       team: str = "") -> list[environment_pb2.SavedSnapshot]:
        """Every saved snapshot, newest first; empty filters match any (`team`: its owner's,
        "default" for a snapshot saved before teams)."""
        names = [n for n in self.storage.children(f"{SNAPSHOTS_DIR}/") if not n.startswith(".")]
        out: list[environment_pb2.SavedSnapshot] = []
        for name in names:
            try:
                snapshot = _from_json(self._read_info(name))
            except SavedSnapshotNotFoundError:
                continue
            except (OSError, ValueError, TypeError) as exc:
                log.warning("saved snapshot %s is unreadable, not listed: %s", name, exc)
                continue
            if (env_id and snapshot.env_id != env_id) or (session_id and snapshot.session_id != session_id):
                continue
            if team and owning_team(snapshot.team) != team:
                continue
            out.append(snapshot)
        out.sort(key=lambda s: (s.created_at, s.id), reverse=True)
        return out

    def remove_stale_temps(self, older_than: float = STALE_TMP_S) -> int:
        """Remove what crashed saves left (older than `older_than` seconds); how many."""
        return self.storage.remove_stale_temporaries(f"{SNAPSHOTS_DIR}/", older_than)

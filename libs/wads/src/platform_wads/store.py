"""The WAD store: each WAD as `<id>.wad` with its record `<id>.json` beside it, in a folder or
under an S3 prefix (`open_wad_store`). The record is written after the file, so a WAD is in
the store once its record is; ids are content hashes, so a WAD never changes once stored.
The storage is a `platform_wads.backend.Backend` (`folder_backend`, `s3_backend`); the errors
are `platform_wads.errors`' (re-exported here and by `platform_wads`).

Methods block: call them in a thread from asyncio code.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from platform_contracts.teams import DEFAULT_TEAM

from platform_wads.backend import Backend
from platform_wads.errors import WadNotFoundError, WadStoreError
from platform_wads.folder_backend import FolderBackend
from platform_wads.records import ID_PATTERN, WadRecord

__all__ = ["WadNotFoundError", "WadStore", "WadStoreError", "open_wad_store"]


class WadStore:
    """The WADs under one `PLATFORM_WADS`."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self.description = backend.description

    def put(self, record: WadRecord, source: Path) -> WadRecord:
        """Store the file at `source` as `record.id`; returns the record kept (an earlier one
        when that id is stored already: the same bytes, now also owned by `record.teams`)."""
        existing = self.get(record.id)
        if existing is not None:
            added = tuple(team for team in record.teams if not existing.owned_by(team))
            if not added:
                return existing
            existing = dataclasses.replace(existing, teams=(existing.teams or (DEFAULT_TEAM,)) + added)
            self._backend.put_bytes(f"{record.id}.json", existing.to_json())
            return existing
        self._backend.put_file(f"{record.id}.wad", source)
        self._backend.put_bytes(f"{record.id}.json", record.to_json())
        return record

    def get(self, wad_id: str) -> WadRecord | None:
        """The record of `wad_id`; None when there is no such WAD (or the id is malformed)."""
        if not ID_PATTERN.match(wad_id):
            return None
        data = self._backend.get_bytes(f"{wad_id}.json")
        return None if data is None else WadRecord.from_json(data)

    def records(self, team: str | None = None) -> list[WadRecord]:
        """Every stored WAD's record (only `team`'s when given), oldest first."""
        ids = [name[: -len(".json")] for name in self._backend.names() if name.endswith(".json")]
        found = [self.get(wad_id) for wad_id in ids if ID_PATTERN.match(wad_id)]
        kept = (r for r in found if r is not None and (team is None or r.owned_by(team)))
        return sorted(kept, key=lambda r: (r.uploaded_at, r.id))

    def require(self, wad_id: str) -> WadRecord:
        """The record of `wad_id`.

        Raises:
            WadNotFoundError: no such WAD; the message names the stored ones.
        """
        record = self.get(wad_id) if isinstance(wad_id, str) else None
        if record is None:
            raise WadNotFoundError(f"no uploaded WAD {wad_id!r}: {self.describe_ids()}")
        return record

    def describe_ids(self, team: str | None = None) -> str:
        """"the uploaded WADs are wad-… (name.wad), …" or "no WAD has been uploaded" (of `team`
        when given); for messages."""
        records = self.records(team)
        if not records:
            return "no WAD has been uploaded (POST /v0/doom/wads)"
        return "the uploaded WADs are " + ", ".join(f"{r.id} ({r.name})" for r in records)

    def copy_to(self, wad_id: str, dest: Path) -> WadRecord:
        """Copy WAD `wad_id` to the file `dest` (its folder is made); returns its record.

        Raises:
            WadNotFoundError: no such WAD.
        """
        record = self.require(wad_id)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not self._backend.get_file(f"{wad_id}.wad", dest):
            raise WadNotFoundError(f"WAD {wad_id} has a record but no file in {self.description}")
        return record


def open_wad_store(
    wads: str | os.PathLike[str],
    endpoint: str = "",
    access_key: str = "",
    secret_key: str = "",
    region: str = "",
    secure: bool = True,
) -> WadStore:
    """The store `PLATFORM_WADS` names: a folder (made when missing), or `s3://bucket/prefix`
    with the `PLATFORM_S3_*` settings (the bucket is made when missing).

    Raises:
        WadStoreError: a missing or malformed setting (named), or a bucket that cannot be used.
    """
    setting = os.fspath(wads)
    if setting.startswith("s3://"):
        # Imported here: platform_s3 brings pydantic, which `import platform_wads` (the WAD
        # format check of the Doom environments among its users) does not otherwise load.
        from platform_wads.s3_backend import S3Backend

        return WadStore(S3Backend.open(setting, endpoint, access_key, secret_key, region, secure))
    if "://" in setting or not setting:
        raise WadStoreError(f"PLATFORM_WADS={setting!r}: expected a folder or s3://bucket/prefix")
    return WadStore(FolderBackend(Path(setting)))

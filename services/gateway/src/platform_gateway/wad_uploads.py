"""Uploaded Doom WADs (`/v0/doom/wads`): an upload streamed to a temporary file, never more
than the limit, checked as a WAD (`platform_wads.wad_format`: header, directory inside the
file, at least one map), and kept in the store `PLATFORM_WADS` names (`platform_wads`) under
its content id.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

from platform_contracts.limits import MAX_WAD_BYTES
from platform_contracts.names import WAD_NAME, WAD_NAME_RULE
from platform_contracts.teams import DEFAULT_TEAM
from platform_wads import WadRecord, WadStore, WadStoreError, wad_id
from platform_wads.settings import WadSettings
from platform_wads.wad_format import WadFormatError, read_wad_file

from platform_gateway.errors import (
    InvalidArgumentError,
    NotFoundError,
    PayloadTooLargeError,
    UnavailableError,
)

MEGABYTE = 1024 * 1024
T = TypeVar("T")


def check_name(name: str) -> str:
    """`name` if it is a plain WAD file name, e.g. "memory_test.wad".

    Raises:
        InvalidArgumentError: a path (a `/` or `\\`), no `.wad` ending, odd characters, too long.
    """
    if "/" in name or "\\" in name:
        base = re.split(r"[/\\]", name)[-1]
        raise InvalidArgumentError(f"name {name!r} is a path: give the file's name alone, e.g. {base!r}",
                                   field="name")
    if not WAD_NAME.fullmatch(name):
        raise InvalidArgumentError(f"name {name!r} must be {WAD_NAME_RULE}", field="name")
    return name


class WadUploads:
    """The gateway's side of the WAD store: uploads, listings, lookups.

    Args:
        settings: where the store is; opened on first use (an S3 store asks for its bucket).
        limit: the largest upload taken, in bytes.
    """

    def __init__(self, settings: WadSettings | None = None, limit: int = MAX_WAD_BYTES) -> None:
        self._settings = settings
        self.limit = limit
        self._store: WadStore | None = None
        self._lock = asyncio.Lock()

    async def upload(self, name: str, chunks: AsyncIterator[bytes], declared_size: int | None,
                     team: str = DEFAULT_TEAM) -> tuple[WadRecord, bool]:
        """Take the WAD `chunks` bring for `team`; returns its record and whether it is new to
        that team (the same bytes uploaded before keep their first record).

        Raises:
            InvalidArgumentError: a bad name, an empty body, or not a whole WAD with a map.
            PayloadTooLargeError: more than `limit` bytes (declared or sent).
            UnavailableError: the store cannot be used.
        """
        check_name(name)
        if declared_size is not None and declared_size > self.limit:
            raise self._too_large(f"{declared_size} bytes")
        store = await self._open()
        with tempfile.TemporaryDirectory(prefix="wad-upload-") as folder:
            path = Path(folder) / "upload.wad"
            size, digest = await self._receive(chunks, path)
            if size == 0:
                raise InvalidArgumentError("the upload is empty: send the WAD file's bytes as the request body",
                                           field="body")
            try:
                directory = await asyncio.to_thread(read_wad_file, path)
            except WadFormatError as exc:
                raise InvalidArgumentError(f"{name} is not a usable WAD: {exc}", field="body") from None
            record = WadRecord(wad_id(digest), name, size, digest, directory.kind, directory.maps, time.time(),
                               (team,))
            known = await self._call(store.get, record.id)
            kept = await self._call(store.put, record, path)
        return kept, known is None or not known.owned_by(team)

    async def records(self, team: str | None = None) -> list[WadRecord]:
        """Every WAD (only `team`'s when given)."""
        store = await self._open()
        return await self._call(store.records, team)

    async def get(self, wad_id: str, team: str | None = None) -> WadRecord:
        """The WAD `wad_id` (when `team` is given, only if that team uploaded it).

        Raises:
            NotFoundError: no such WAD (of `team`), naming the ones there are (of `team`).
        """
        store = await self._open()
        record = await self._call(store.get, wad_id)
        if record is None or (team is not None and not record.owned_by(team)):
            raise NotFoundError(f"no uploaded WAD {wad_id!r}: {await self._call(store.describe_ids, team)}")
        return record

    async def _receive(self, chunks: AsyncIterator[bytes], path: Path) -> tuple[int, str]:
        """Write the chunks to `path`; (size, sha256 hex). Stops at the first byte over the limit."""
        digest, size = hashlib.sha256(), 0
        with open(path, "wb") as file:  # noqa: ASYNC230 - local disk, chunks of the request body
            async for chunk in chunks:
                size += len(chunk)
                if size > self.limit:
                    raise self._too_large(f"more than {self.limit} bytes")
                digest.update(chunk)
                file.write(chunk)
        return size, digest.hexdigest()

    def _too_large(self, size: str) -> PayloadTooLargeError:
        return PayloadTooLargeError(f"the WAD is {size}: uploads are at most {self.limit // MEGABYTE} MB "
                                    f"({self.limit} bytes)")

    async def _open(self) -> WadStore:
        async with self._lock:
            if self._store is None:
                settings = self._settings or WadSettings()
                try:
                    self._store = await asyncio.to_thread(settings.open_store)
                except WadStoreError as exc:
                    raise UnavailableError(f"the WAD store cannot be used: {exc}") from None
            return self._store

    async def _call(self, function: Callable[..., T], *args: Any) -> T:
        try:
            return await asyncio.to_thread(function, *args)
        except (WadStoreError, OSError) as exc:
            raise UnavailableError(f"the WAD store ({self._store.description if self._store else '?'}) "
                                   f"failed: {exc}") from None

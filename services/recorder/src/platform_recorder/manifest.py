"""A recording's finished files, as readers may trust them, and its manifest.json (object stores).

Finished files: `meta.json`, `recording.json`, `episode-NNNNNN.npz`. On S3 the recorder writes
`<id>/manifest.json` last after every change to a recording:

    {"format": 1, "files": [{"name": "episode-000000.npz", "size": 1234}, ...]}

It lists meta.json, recording.json and every episode file written so far (each new episode file
is listed before the meta.json naming it is written: see platform_recorder.writing.recording_objects), so
a reader that trusts only listed objects never sees an object half written, nor an episode that
meta.json names but the manifest does not, nor a recording half deleted (deletes take the
manifest first). Episode files never change once written; meta.json and recording.json are
replaced whole (their listed size is the one when the manifest was written: read them whole).
A folder storage has no manifest: its files appear whole by rename, so its listing is the truth
(part and temporary files left out).
"""

from __future__ import annotations

import json
from typing import Any

from platform_recorder.layout import MANIFEST_FILE
from platform_recorder.storage.interface import ObjectNotFoundError, Storage

MANIFEST_FORMAT = 1


def encode_manifest(files: dict[str, int]) -> bytes:
    entries = [{"name": name, "size": size} for name, size in sorted(files.items())]
    return json.dumps({"format": MANIFEST_FORMAT, "files": entries}, separators=(",", ":")).encode()


def decode_manifest(data: bytes) -> dict[str, int]:
    """name -> size from manifest.json's bytes. Raises ValueError when it is not one."""
    body: Any = json.loads(data)
    try:
        return {str(entry["name"]): int(entry["size"]) for entry in body["files"]}
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a recording manifest: {type(exc).__name__}: {exc}") from None


def read_manifest(storage: Storage, recording_id: str) -> dict[str, int] | None:
    """The files a recording's manifest lists (name -> size), or None without a manifest."""
    try:
        return decode_manifest(storage.get(f"{recording_id}/{MANIFEST_FILE}"))
    except ObjectNotFoundError:
        return None


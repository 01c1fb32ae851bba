"""Read recordings: listings, meta.json, recording.json, finished files and episodes. Used by the
API and tests.

Every function takes the recordings storage (or a folder path, read as a FolderStorage) and sees
only a recording's finished files (`meta.json`, `recording.json`, `episode-NNNNNN.npz`) that a
reader may trust: on S3 those its manifest.json lists (see platform_recorder.manifest), so an
object being written, or a recording being deleted, is never seen half done.
"""

from __future__ import annotations

import io
import json
import os
from typing import Any

import numpy as np

from platform_recorder.errors import InvalidRecordingIdError, RecordingNotFoundError
from platform_recorder.lives import LIVES_DIR
from platform_recorder.manifest import finished_files, is_finished_name
from platform_recorder.meta import META_FILE
from platform_recorder.recording_json import RECORDING_FILE, info_from_meta
from platform_recorder.saved_snapshots import SNAPSHOTS_DIR
from platform_recorder.session_files import npz_name
from platform_recorder.storage import ObjectNotFoundError, Storage, as_storage

Root = Storage | str | os.PathLike[str]


def check_id(recording_id: str) -> str:
    """Return `recording_id` if it is a plain folder name; raise InvalidRecordingIdError otherwise."""
    if not isinstance(recording_id, str) or not recording_id:
        raise InvalidRecordingIdError(f"invalid recording id {recording_id!r}: expected a non-empty string")
    bad = ("/", "\\", "\x00", os.sep) + ((os.altsep,) if os.altsep else ())
    if any(c in recording_id for c in bad) or ".." in recording_id:
        raise InvalidRecordingIdError(
            f"invalid recording id {recording_id!r}: it must not contain a path separator or '..'"
        )
    if recording_id.startswith("."):
        raise InvalidRecordingIdError(f"invalid recording id {recording_id!r}: it must not start with '.'")
    return recording_id


def recording_files(root: Root, recording_id: str) -> dict[str, int]:
    """The finished files of a recording (name -> size in bytes, sorted by name).

    Raises:
        InvalidRecordingIdError: the id is not a plain folder name.
        RecordingNotFoundError: no such recording.
    """
    files = finished_files(as_storage(root), check_id(recording_id))
    if files is None:
        raise RecordingNotFoundError(f"recording {recording_id!r} not found")
    return files


def read_file(
    root: Root, recording_id: str, name: str, offset: int = 0, length: int | None = None
) -> bytes:
    """Bytes of one finished file of a recording: all of it, or `length` from `offset` (fewer at
    the end).

    Raises:
        InvalidRecordingIdError: the id is not a plain folder name.
        RecordingNotFoundError: no such recording, or no such finished file in it.
    """
    storage = as_storage(root)
    if not _trusted(storage, recording_id, name):
        raise RecordingNotFoundError(f"recording {recording_id!r} has no file {name!r}")
    key = f"{recording_id}/{name}"
    try:
        if length is None and offset <= 0:
            return storage.get(key)
        return storage.get_range(key, offset, length if length is not None else 1 << 62)
    except ObjectNotFoundError:  # deleted meanwhile
        raise RecordingNotFoundError(f"recording {recording_id!r} has no file {name!r}") from None


def _trusted(storage: Storage, recording_id: str, name: str) -> bool:
    """`name` is a finished file of the recording a reader may read (S3: its manifest lists it;
    a folder: it is there, no listing needed). Raises RecordingNotFoundError for no recording."""
    if storage.needs_manifest:
        return name in recording_files(storage, recording_id)
    if not storage.exists(f"{check_id(recording_id)}/{META_FILE}"):
        raise RecordingNotFoundError(f"recording {recording_id!r} not found")
    return is_finished_name(name) and storage.exists(f"{recording_id}/{name}")


def _json_file(storage: Storage, recording_id: str, name: str) -> dict[str, Any]:
    try:
        body = json.loads(storage.get(f"{recording_id}/{name}"))
    except ObjectNotFoundError:
        raise RecordingNotFoundError(f"recording {recording_id!r} not found") from None
    if not isinstance(body, dict):
        raise RecordingNotFoundError(f"recording {recording_id!r}: its {name} is not a JSON object")
    return body


def read_meta(root: Root, recording_id: str) -> dict[str, Any]:
    """The meta.json of recording `recording_id`.

    Raises:
        InvalidRecordingIdError: the id is not a plain folder name.
        RecordingNotFoundError: no such recording.
    """
    storage = as_storage(root)
    check_id(recording_id)
    if storage.needs_manifest:
        recording_files(storage, recording_id)  # listed in its manifest, or not there
    return _json_file(storage, recording_id, META_FILE)


def read_recording_info(root: Root, recording_id: str) -> dict[str, Any]:
    """The recording.json of a recording (rebuilt from meta.json for one made before it existed).

    Raises:
        InvalidRecordingIdError, RecordingNotFoundError: as `read_meta`.
    """
    storage = as_storage(root)
    if RECORDING_FILE in recording_files(storage, recording_id):
        try:
            return _json_file(storage, recording_id, RECORDING_FILE)
        except RecordingNotFoundError:
            pass
    return info_from_meta(read_meta(storage, recording_id))


def list_recordings(
    root: Root, env_id: str | None = None, session_id: str | None = None, life: str | None = None
) -> list[dict[str, Any]]:
    """The meta.json of every recording, newest first, optionally filtered (`life`: the sessions of
    that life, whose meta.json has "life")."""
    storage = as_storage(root)
    if session_id is not None:
        ids = [check_id(session_id)]
    else:
        ids = [name for name in storage.children("")
               if name not in (SNAPSHOTS_DIR, LIVES_DIR) and not name.startswith(".")]
    out: list[dict[str, Any]] = []
    for recording_id in ids:
        try:
            meta = read_meta(storage, recording_id)
        except (RecordingNotFoundError, InvalidRecordingIdError, OSError, ValueError):
            continue
        if env_id is not None and meta.get("env_id") != env_id:
            continue
        if life is not None and meta.get("life") != life:
            continue
        out.append(meta)
    out.sort(key=lambda m: (str(m.get("created_at", "")), str(m.get("session_id", ""))), reverse=True)
    return out


def _check_index(recording_id: str, index: Any) -> int:
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
        raise InvalidRecordingIdError(f"invalid episode index {index!r} of recording {recording_id!r}")
    return int(index)


def open_episode(root: Root, recording_id: str, index: int) -> Any:
    """Finished episode `index` as a `numpy.lib.npyio.NpzFile` (arrays read on access; use it in a
    `with` block).

    Raises:
        InvalidRecordingIdError: the id is not a plain folder name or the index not a natural number.
        RecordingNotFoundError: no such recording or no finished episode with that index.
    """
    name = npz_name(_check_index(recording_id, index))
    try:
        data = read_file(root, recording_id, name)
    except RecordingNotFoundError:
        recording_files(root, recording_id)  # an unknown recording says so
        raise RecordingNotFoundError(f"recording {recording_id!r} has no finished episode {index}") from None
    return np.load(io.BytesIO(data), allow_pickle=False)


def load_episode(root: Root, recording_id: str, index: int) -> dict[str, np.ndarray]:
    """The arrays of finished episode `index` of a recording (see platform_recorder.episodes).

    Raises:
        InvalidRecordingIdError, RecordingNotFoundError: as `open_episode`.
    """
    with open_episode(root, recording_id, index) as data:
        return {key: data[key] for key in data.files}

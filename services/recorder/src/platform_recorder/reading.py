"""Read recordings: listings, meta.json and finished episodes. Used by the API and tests."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from platform_recorder.errors import InvalidRecordingIdError, RecordingNotFoundError
from platform_recorder.meta import read_meta_file
from platform_recorder.session_files import npz_path


def check_id(recording_id: str) -> str:
    """Return `recording_id` if it is a plain folder name; raise InvalidRecordingIdError otherwise."""
    if not isinstance(recording_id, str) or not recording_id:
        raise InvalidRecordingIdError(f"invalid recording id {recording_id!r}: expected a non-empty string")
    bad = ("/", "\\", "\x00", os.sep) + ((os.altsep,) if os.altsep else ())
    if any(c in recording_id for c in bad) or ".." in recording_id or recording_id == ".":
        raise InvalidRecordingIdError(
            f"invalid recording id {recording_id!r}: it must not contain a path separator or '..'"
        )
    return recording_id


def _recording_dir(root: str | os.PathLike[str], recording_id: str) -> Path:
    return Path(root) / check_id(recording_id)


def read_meta(root: str | os.PathLike[str], recording_id: str) -> dict[str, Any]:
    """The meta.json of recording `recording_id` under `root`.

    Raises:
        InvalidRecordingIdError: the id is not a plain folder name.
        RecordingNotFoundError: no such recording.
    """
    try:
        meta = read_meta_file(_recording_dir(root, recording_id))
    except NotADirectoryError:
        meta = None
    if meta is None:
        raise RecordingNotFoundError(f"recording {recording_id!r} not found")
    return meta


def list_recordings(
    root: str | os.PathLike[str], env_id: str | None = None, session_id: str | None = None
) -> list[dict[str, Any]]:
    """The meta.json of every recording under `root`, newest first, optionally filtered."""
    base = Path(root)
    if session_id is not None:
        check_id(session_id)
    try:
        folders = [p for p in base.iterdir() if p.is_dir()]
    except FileNotFoundError:
        return []
    out: list[dict[str, Any]] = []
    for folder in folders:
        if session_id is not None and folder.name != session_id:
            continue
        try:
            meta = read_meta_file(folder)
        except (OSError, ValueError):
            continue
        if meta is None or (env_id is not None and meta.get("env_id") != env_id):
            continue
        out.append(meta)
    out.sort(key=lambda m: (str(m.get("created_at", "")), str(m.get("session_id", ""))), reverse=True)
    return out


def load_episode(root: str | os.PathLike[str], recording_id: str, index: int) -> dict[str, np.ndarray]:
    """The arrays of finished episode `index` of a recording (see platform_recorder.episodes).

    Raises:
        InvalidRecordingIdError: the id is not a plain folder name.
        RecordingNotFoundError: no such recording or no finished episode with that index.
    """
    folder = _recording_dir(root, recording_id)
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or index < 0:
        raise InvalidRecordingIdError(f"invalid episode index {index!r} of recording {recording_id!r}")
    path = npz_path(folder, int(index))
    try:
        with np.load(path, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except FileNotFoundError:
        raise RecordingNotFoundError(f"recording {recording_id!r} has no finished episode {index}") from None

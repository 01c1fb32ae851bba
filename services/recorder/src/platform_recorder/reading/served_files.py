"""The finished files of a recording as the API may serve them.

Finished files are `meta.json`, `recording.json` and the episodes' `episode-NNNNNN.npz`
(platform_recorder.layout). On an object store (`Storage.needs_manifest`) only what a
recording's manifest.json lists is served; a folder's files are served as they are (each one
appears whole, by rename).
"""

from __future__ import annotations

from platform_recorder.errors import InvalidRequestError, RecordingNotFoundError
from platform_recorder.layout import META_FILE, check_recording_id, is_finished_name
from platform_recorder.manifest import read_manifest
from platform_recorder.storage.interface import ObjectNotFoundError, Storage


def served_files(storage: Storage, recording_id: str) -> dict[str, int]:
    """Name -> size of the recording's finished files, by name (empty when it has none)."""
    check_recording_id(recording_id)
    if storage.needs_manifest:
        listed = read_manifest(storage, recording_id) or {}
        return {name: size for name, size in sorted(listed.items()) if is_finished_name(name)}
    prefix = f"{recording_id}/"
    found = {key[len(prefix):]: size for key, size in storage.list_sizes(prefix).items()}
    return {name: size for name, size in sorted(found.items()) if is_finished_name(name)}


def served_file_size(storage: Storage, recording_id: str, name: str) -> int:
    """The size of one finished file (on an object store: as its manifest lists it; meta.json
    and recording.json may have been replaced since, so read those to their end).

    Raises:
        InvalidRecordingIdError: a bad id.
        InvalidRequestError: a name that is a path.
        RecordingNotFoundError: no such finished file.
    """
    check_recording_id(recording_id)
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise InvalidRequestError(f"invalid file name {name!r}: a plain file name of the recording is needed")
    missing = RecordingNotFoundError(
        f"recording {recording_id!r} has no finished file {name!r} (finished files: meta.json, "
        "recording.json, episode-NNNNNN.npz; the recording's list: recordings.files)"
    )
    if not is_finished_name(name):
        raise missing
    if storage.needs_manifest:
        listed = read_manifest(storage, recording_id) or {}
        if name not in listed:
            raise missing
        return listed[name]
    try:
        return storage.size(f"{recording_id}/{name}")
    except ObjectNotFoundError:
        raise missing from None


def has_trusted_meta(storage: Storage, recording_id: str) -> bool:
    """On an object store, whether the manifest lists meta.json (a recording being created or
    deleted has none); always True on a folder."""
    return not storage.needs_manifest or META_FILE in (read_manifest(storage, recording_id) or {})

"""The names in the recordings storage, shared by its writer and its readers.

    <session_id>/                   a recording (a vector session's sub-environment: <session_id>-<i>)
        meta.json, recording.json   its state and its session-level facts
        episode-NNNNNN.npz          a finished episode
        manifest.json               on an object store: its finished files (platform_recorder.manifest)
    lives/<name>.json               a life's index (platform_recorder.writing.lives)
    snapshots/<id>/                 a saved snapshot (platform_recorder.snapshots)
    comparisons/<id>.json           a comparison of agents (platform_recorder.comparisons)
    evals/<id>/<name>.eval          an eval's Inspect logs (written by the evals service: platform_evals.log_storage)

The finished files of a recording are meta.json, recording.json and its episodes' npz files; a
recording's other files (part files, temporaries) are never served.
"""

from __future__ import annotations

import re
from typing import Any

from platform_recorder.errors import InvalidRecordingIdError

META_FILE = "meta.json"
RECORDING_FILE = "recording.json"
MANIFEST_FILE = "manifest.json"
LIVES_DIR = "lives"
SNAPSHOTS_DIR = "snapshots"
COMPARISONS_DIR = "comparisons"
EVALS_DIR = "evals"
# Top-level folders that are not recordings.
NOT_RECORDINGS = frozenset({LIVES_DIR, SNAPSHOTS_DIR, COMPARISONS_DIR, EVALS_DIR})
ID_RULE = "a recording id must not contain '/', '\\' or '..', nor start with '.'"
_NPZ_RE = re.compile(r"^episode-(\d{6,})\.npz$")
_EPISODE_LIST_RE = re.compile(r"^episodes-(\d{6,})\.json$")


def episode_stem(index: int) -> str:
    return f"episode-{index:06d}"


def npz_name(index: int) -> str:
    """The file (object) name of finished episode `index`: `episode-NNNNNN.npz`."""
    return f"{episode_stem(index)}.npz"


def npz_index(name: str) -> int | None:
    """The episode index of an `episode-NNNNNN.npz` name, else None."""
    match = _NPZ_RE.match(name)
    return int(match.group(1)) if match else None


def episode_list_name(number: int) -> str:
    """The file (object) name of a recording's sealed episode list `number`: `episodes-NNNNNN.json`
    (see platform_recorder.episode_lists)."""
    return f"episodes-{number:06d}.json"


def is_episode_list_name(name: str) -> bool:
    return _EPISODE_LIST_RE.match(name) is not None


def is_finished_name(name: str) -> bool:
    """A finished file of a recording: meta.json, recording.json, an episode's npz or a sealed
    episode list."""
    return name in (META_FILE, RECORDING_FILE) or npz_index(name) is not None or is_episode_list_name(name)


def check_recording_id(recording_id: Any) -> str:
    """`recording_id` if it can name a recording (a session or sub-session id).

    Raises:
        InvalidRecordingIdError: not a string, empty, or against ID_RULE (named in the message).
    """
    if not isinstance(recording_id, str) or not recording_id:
        raise InvalidRecordingIdError(f"invalid recording id {recording_id!r}: a non-empty string is required")
    if "/" in recording_id or "\\" in recording_id or ".." in recording_id or recording_id.startswith("."):
        raise InvalidRecordingIdError(f"invalid recording id {recording_id!r}: {ID_RULE}")
    if "\x00" in recording_id:
        raise InvalidRecordingIdError(f"invalid recording id {recording_id!r}: it must not hold a NUL byte")
    return recording_id

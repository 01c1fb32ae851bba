"""`EpisodeFolder`: a recording folder read episode by episode, with plain NumPy arrays.

A recording folder (docs/recording-format.md) holds meta.json and one `episode-NNNNNN.npz` per
finished episode; an episode still being written is an `episode-NNNNNN.part` file (raw step
events) and is skipped, with a note, until the recorder finishes it. A copy of a recording kept
on S3 has a manifest.json: then only the episode files it lists are read (the others were not
complete when the copy was made).
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from platform_sdk.errors import PlatformWarning
from platform_sdk.recordings.episode import Episode
from platform_sdk.recordings.errors import ThinnedRecordingError, thinned_message

META_FILE = "meta.json"
RECORDING_FILE = "recording.json"
MANIFEST_FILE = "manifest.json"
_PART = re.compile(r"episode-(\d+)\.part$")


class EpisodeFolder:
    """A recording's finished episodes, in order: `len(folder)`, `folder[i]` (an `Episode`),
    `for episode in folder`.

    Args:
        path: the recording's folder, e.g. `recordings/<session id>` (or a downloaded archive,
            unpacked).

    Raises:
        FileNotFoundError: `path` is not a folder or holds no meta.json.
        ThinnedRecordingError: the recording keeps thinned frames (a life's): read it with the
            life reader.

    Attributes:
        path: the folder.
        meta: meta.json as a dict.
        notes: what was skipped and why (open episodes, episodes that failed); also given as one
            `PlatformWarning` when the folder is opened.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if str(path).startswith("s3://"):
            raise FileNotFoundError(
                f"{path} is an S3 location: EpisodeFolder reads a folder; download the recording first "
                "(GET /v0/recordings/<id>/archive gives it as a .tar)"
            )
        if not self.path.is_dir():
            raise FileNotFoundError(f"no recording folder at {self.path}: it does not exist or is not a folder")
        meta_path = self.path / META_FILE
        if not meta_path.is_file():
            raise FileNotFoundError(
                f"{self.path} is not a recording folder: it holds no {META_FILE} "
                "(a recording holds meta.json and one episode-NNNNNN.npz per finished episode)"
            )
        self.meta: dict[str, Any] = _with_episode_lists(self.path, json.loads(meta_path.read_text()))
        self._check_frames()
        listed = self.meta.get("episodes") or []
        self._entries = [e for e in listed if e.get("file")]
        self.notes: list[str] = self._skipped(listed)
        manifest = self._manifest_names()
        if manifest is not None:
            unlisted = [e for e in self._entries if e["file"] not in manifest]
            self._entries = [e for e in self._entries if e["file"] in manifest]
            if unlisted:
                indexes = ", ".join(str(e.get("index")) for e in unlisted)
                self.notes.append(f"episode(s) {indexes} not in {MANIFEST_FILE} (incomplete in this copy), skipped")
        if self.notes:
            warnings.warn(f"{self.path}: " + "; ".join(self.notes), PlatformWarning, stacklevel=2)

    def _check_frames(self) -> None:
        """Refuse a recording with thinned frames (a life's): its frame rows are not its steps."""
        thinned = {k: self.meta[k] for k in ("frame_every", "max_frames") if self.meta.get(k) not in (None, 0, 1)}
        if thinned:
            why = ", ".join(f"{k}={v}" for k, v in thinned.items())
            raise ThinnedRecordingError(thinned_message(f"recording {self.path}", why))

    def _episode(self, path: Path, entry: dict[str, Any]) -> Episode:
        return Episode(path, entry)

    def _manifest_names(self) -> set[str] | None:
        """The files manifest.json lists (a copy of an S3 recording), or None without one."""
        path = self.path / MANIFEST_FILE
        if not path.is_file():
            return None
        body = json.loads(path.read_text())
        return {str(entry["name"]) for entry in body.get("files", [])}

    def _skipped(self, listed: list[dict[str, Any]]) -> list[str]:
        notes = []
        finished = {int(e["index"]) for e in self._entries}
        for entry in listed:
            if not entry.get("file"):
                notes.append(f"episode {entry.get('index')} failed to build and is left out ({entry.get('error', '')})")
        open_parts = sorted(
            int(m.group(1)) for p in self.path.glob("episode-*.part") if (m := _PART.match(p.name))
        )
        still_open = [i for i in open_parts if i not in finished]
        if still_open:
            notes.append(f"episode(s) {', '.join(map(str, still_open))} still open (.part files), skipped until finished")
        if not listed and int(self.meta.get("num_envs") or 1) > 1:
            notes.append(
                f"a vector session of {self.meta['num_envs']} environments: its episodes are in the "
                f"recordings {self.meta.get('session_id', self.path.name)}-<i>, one per environment"
            )
        return notes

    @property
    def episodes(self) -> list[dict[str, Any]]:
        """meta.json's entries of the finished episodes (`index`, `file`, `length`, `return`, ...)."""
        return list(self._entries)

    @property
    def agent_keys(self) -> list[str]:
        """The names of the agent data recorded with its steps (arrays `agent.<name>`)."""
        return list(self.meta.get("agent_keys") or [])

    @property
    def recording(self) -> dict[str, Any] | None:
        """recording.json (the session's spec and other session-level facts), when the folder has one."""
        path = self.path / RECORDING_FILE
        return json.loads(path.read_text()) if path.is_file() else None

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, i: int) -> Episode:
        """The i-th finished episode (negative counts from the end); `Episode.index` is its number
        in the session.

        Raises:
            IndexError: no such episode.
            FileNotFoundError: meta.json lists a file the folder lacks.
            ThinnedRecordingError: the episode file keeps thinned frames.
        """
        if not isinstance(i, int):
            raise TypeError(f"episodes are indexed by int, not {type(i).__name__}")
        if not -len(self._entries) <= i < len(self._entries):
            raise IndexError(f"{self.path} has {len(self._entries)} finished episodes, not {i}")
        entry = self._entries[i]
        path = self.path / entry["file"]
        if not path.is_file():
            raise FileNotFoundError(f"{path}: listed in meta.json, missing from the folder")
        episode = self._episode(path, entry)
        episode.names  # noqa: B018 - reads the file's directory: a thinned file fails here, not later
        return episode

    def __iter__(self) -> Iterator[Episode]:
        for i in range(len(self._entries)):
            yield self[i]

    def __repr__(self) -> str:
        return (
            f"EpisodeFolder({str(self.path)!r}, env_id={self.meta.get('env_id')!r}, "
            f"episodes={len(self)}, status={self.meta.get('status')!r})"
        )


EPISODE_LISTS = "episode_lists"


def _with_episode_lists(folder: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """meta.json with every episode entry in `episodes`: a long recording's first entries are in
    the sealed lists its `episode_lists` names (`episodes-NNNNNN.json`, each a JSON array of
    entries, in order; docs/recording-format.md), the rest in its `episodes`."""
    names = meta.pop(EPISODE_LISTS, None)
    if not names:
        return meta
    entries: list[Any] = []
    for name in names:
        path = folder / str(name)
        if path.parent != folder or not path.is_file():
            raise FileNotFoundError(f"{folder}: meta.json names the episode list {name}, which is not in the folder")
        entries.extend(json.loads(path.read_text()))
    meta["episodes"] = entries + list(meta.get("episodes") or [])
    return meta

"""Many recordings' meta.json (and recording.json) written together, with three filesystem syncs
in all rather than a directory sync, a file fsync and a rename's directory fsync each.

A vector session of 64 sub-environments makes 64 recordings whose meta.json files fall due every
second or so: written one by one, their syncs took a fifth of the recorder's time. In a batch:
each new content goes to a temporary file (no fsync); one commit makes those and the episode
files they name durable; then every temporary file is renamed into place and one more commit
makes the renames durable; only then are the listed episodes' part files deleted
(`Recording.meta_written`). So, as with a single write, a reader (and a crash at any point) sees
the old meta.json or the new one, never a torn one, and a meta.json never names an episode file
that is not durable. An object store's PUTs are durable one by one: there a batch writes each
recording's objects in turn (`RecordingObjects.stage` writes them at once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from platform_recorder.storage.durable_files import SyncGroup
from platform_recorder.storage.interface import Storage

if TYPE_CHECKING:
    from platform_recorder.writing.recording import Recording


class MetaBatch:
    """The recordings whose meta.json is to be written together (`write`)."""

    def __init__(self) -> None:
        self._recordings: dict[str, Recording] = {}

    def add(self, rec: Recording) -> None:
        self._recordings[rec.session_id] = rec

    def __len__(self) -> int:
        return len(self._recordings)

    def write(self, storage: Storage) -> None:
        """Write every added recording's meta.json (see the module docstring), then forget them."""
        recordings = list(self._recordings.values())
        self._recordings.clear()
        if not recordings:
            return
        group = SyncGroup()
        staged = [(rec, rec.stage_meta(group)) for rec in recordings]
        storage.sync_folder("")  # the episode files the new meta.json files name
        group.commit()  # the new contents, in their temporary files
        for rec, files in staged:
            rec.objects.publish(files, group)
        group.commit()  # the renames
        for rec, _ in staged:
            rec.meta_written()

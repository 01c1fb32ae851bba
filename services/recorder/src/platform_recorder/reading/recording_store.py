"""Recordings as the API sees them: listings with saved snapshots, meta.json, file reads,
episodes, deletion. The one way recordings are read (the API and the tests).

Everything goes through the Storage protocol (a folder or S3), so the same code serves both, and
sees only the finished files a reader may trust (on S3 those a recording's manifest.json lists:
platform_recorder.manifest). Methods block: call them in a thread from asyncio code.
"""

from __future__ import annotations

import json
import logging
import os
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from platform_contracts.recorder_json import dumps, message_from_json
from platform_contracts.teams import owning_team
from platform_recorder.errors import (
    InvalidMetaError,
    InvalidRecordingIdError,
    InvalidRequestError,
    RecorderError,
    RecordingNotFoundError,
)
from platform_recorder.episode_lists import read_meta
from platform_recorder.layout import META_FILE, NOT_RECORDINGS, RECORDING_FILE, check_recording_id, npz_name
from platform_recorder.meta import RecordingMeta
from platform_recorder.reading.episode_digests import observation_digests
from platform_recorder.reading.episode_files import EpisodeArrays, EpisodeFile, open_episode
from platform_recorder.reading.open_parts import OpenParts
from platform_recorder.reading.recent_frames import RecentFrames
from platform_recorder.reading.served_files import has_trusted_meta, served_file_size, served_files
from platform_recorder.snapshots.snapshot_store import SavedSnapshotStore
from platform_recorder.storage.interface import ObjectNotFoundError, Storage
from platform_recorder.storage.opening import as_storage
from simulusion.recorder.v1 import recorder_pb2 as rec

log = logging.getLogger(__name__)

MAX_READ_BYTES = 4 * 1024 * 1024


class RecordingOpenError(RecorderError):
    """The recording is still being written (status "recording")."""

    code = "failed_precondition"


class RecordingStore:
    """Reads (and deletes) the recordings of one Storage (a folder path: a folder storage).

    Args:
        storage: the recordings storage.
        parts_root: the folder of the recordings' part files (`RecordingWriter.parts_root`),
            whose open episodes are served as written so far (`open_parts`); by default a folder
            storage's own folder, and none with S3 (whose part files are in its writer's spool).
    """

    def __init__(self, storage: Storage | str | os.PathLike[str], parts_root: Path | None = None) -> None:
        self.storage = as_storage(storage)
        self.recent_frames = RecentFrames()
        self.open_parts = OpenParts(parts_root if parts_root is not None else self.storage.local_root)

    def read_meta(self, recording_id: str) -> RecordingMeta:
        """The recording's meta.json.

        Raises:
            InvalidRecordingIdError: the id breaks the id rule (named in the message).
            RecordingNotFoundError: no such recording.
            InvalidMetaError: its meta.json is not a recording's.
        """
        check_recording_id(recording_id)
        try:
            if not has_trusted_meta(self.storage, recording_id):
                raise ObjectNotFoundError(recording_id)
            data = self.storage.get(f"{recording_id}/{META_FILE}")
        except ObjectNotFoundError:
            raise RecordingNotFoundError(f"recording {recording_id!r} not found") from None
        try:
            return read_meta(self.storage, recording_id, data)[0]
        except InvalidMetaError as exc:
            raise InvalidMetaError(f"recording {recording_id!r}: {exc}") from None
        except ValueError as exc:  # not JSON
            raise InvalidMetaError(f"recording {recording_id!r}: meta.json is not JSON: {exc}") from None

    def list_summaries(
        self, env_id: str | None = None, session_id: str | None = None, life: str | None = None,
        team: str | None = None,
    ) -> list[rec.RecordingSummary]:
        """Summaries of the recordings, newest first: meta.json without its episode list, plus
        `episode_count`, `step_count`, `total_return` and `open_episode` (the episode in progress,
        `RecordingMeta.summary`) and `saved_snapshots` (those its session saved, newest first).

        Args:
            env_id: only this environment's.
            session_id: only this session's recording and, for a vector session, its
                sub-sessions' (`<session_id>-<i>`).
            life: only the recordings of this life (meta.json's "life").
            team: only this team's (meta.json's "team"; "default" when it has none).
        """
        if session_id is not None:
            check_recording_id(session_id)
        snapshots = self._saved_snapshots_by_session()
        out: list[tuple[RecordingMeta, rec.RecordingSummary]] = []
        for name in self.storage.children("", name_prefix=session_id or ""):
            if name in NOT_RECORDINGS or name.startswith("."):
                continue
            if session_id is not None and name != session_id and not name.startswith(f"{session_id}-"):
                continue
            try:
                meta = self.read_meta(name)
            except (InvalidRecordingIdError, RecordingNotFoundError):
                continue  # not a recording's folder, or one whose meta.json is not written yet
            except (OSError, ValueError, RecorderError) as exc:
                log.warning("recording %s is unreadable, not listed: %s", name, exc)
                continue
            if session_id is not None and session_id not in (meta.session_id, meta.parent_session_id):
                continue
            if env_id is not None and meta.env_id != env_id:
                continue
            if life is not None and meta.life != life:
                continue
            if team is not None and owning_team(meta.team) != team:
                continue
            summary = meta.summary(open_episode=self.open_parts.progress(meta))
            summary.saved_snapshots.extend(snapshots.get(meta.session_id, []))
            out.append((meta, summary))
        out.sort(key=lambda found: (str(found[0].created_at or ""), found[0].session_id), reverse=True)
        return [summary for _meta, summary in out]

    def get(self, recording_id: str) -> rec.GetRecordingReply:
        """The recording's meta.json with what its recording.json adds (`session_facts`) and its
        episode in progress (`open_episode`: its steps so far)."""
        meta = self.read_meta(recording_id)  # first: it checks the id
        changes, spec = self.session_facts(recording_id)
        reply = rec.GetRecordingReply(recording=meta.to_message(), world_changes_json=dumps(changes),
                                      spec_json=dumps(spec))
        progress = self.open_parts.progress(meta)
        if progress is not None:
            reply.open_episode.CopyFrom(progress)
        return reply

    def files(self, recording_id: str) -> list[rec.RecordingFile]:
        """The recording's finished files, by name."""
        self.read_meta(recording_id)  # not_found for an unknown id
        found = served_files(self.storage, recording_id)
        return [rec.RecordingFile(name=name, size=size) for name, size in found.items()]

    def read(self, recording_id: str, name: str, offset: int, length: int) -> bytes:
        """Up to `length` (<= MAX_READ_BYTES) bytes of a finished file from `offset`; fewer at its end.

        Raises:
            InvalidRecordingIdError: a bad id.
            InvalidRequestError: a bad name, offset or length.
            RecordingNotFoundError: no such recording or finished file.
        """
        for what, value in (("offset", offset), ("length", length)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidRequestError(f"{what!r} must be an integer >= 0, got {value!r}")
        if length > MAX_READ_BYTES:
            raise InvalidRequestError(
                f"'length' is at most {MAX_READ_BYTES} bytes (4 MiB) per read, got {length}: read in chunks"
            )
        served_file_size(self.storage, recording_id, name)  # not_found unless a finished file
        if length == 0:
            return b""
        try:  # to the object's end: a meta.json replaced since a manifest listed it may have grown
            return self.storage.get_range(f"{recording_id}/{name}", offset, length)
        except ObjectNotFoundError:
            raise RecordingNotFoundError(f"recording {recording_id!r} has no file {name!r}") from None

    def episode(
        self, recording_id: str, index: int, arrays: list[str] | None = None, frames: list[int] | None = None
    ) -> rec.EpisodeReply:
        """An episode: its entry in meta.json, its arrays' names, dtypes and shapes, its frame
        count, and the `arrays` (whole) and `frames` (JPEG by row) asked for. The open episode of a
        recording in progress is served as written so far (`in_progress`; its entry is what
        meta.json would list were it to end now).

        Raises:
            InvalidRequestError: a bad index.
            RecordingNotFoundError: no such recording, episode, array or frame.
        """
        with self.open_episode(recording_id, index) as (entry, episode):
            if not frames:
                jpegs = {}
            elif isinstance(episode, EpisodeFile):
                jpegs = self.recent_frames.frames(f"{recording_id}/{index}", episode, frames)
            else:
                jpegs = episode.frames(frames)
            reply = rec.EpisodeReply(
                episode=message_from_json(entry, rec.EpisodeEntry()),
                array_names=episode.array_names,
                frame_count=episode.frame_count(),
                frames=jpegs,
                in_progress=not isinstance(episode, EpisodeFile),
            )
            for name in episode.array_names:
                dtype, shape = episode.array_info(name)
                reply.array_shapes[name].CopyFrom(rec.Array(dtype=dtype, shape=shape))
            for name in arrays or []:
                reply.arrays[name].CopyFrom(array_message(episode.array(name)))
            return reply

    def episode_digests(self, recording_id: str, index: int) -> list[str]:
        """The hex digest of each observation row of an episode (the open one's so far)
        (`platform_contracts.digests.observation_digest`: what a play back compares).

        Raises:
            InvalidRequestError: a bad index.
            RecordingNotFoundError: no such recording or episode, or no observations.
        """
        with self.open_episode(recording_id, index) as (_entry, episode):
            return observation_digests(episode)

    def session_facts(self, recording_id: str) -> tuple[list[Any], dict[str, Any] | None]:
        """What recording.json adds to meta.json for a reader: `world_changes` (a list; [] when it
        lists none) and `spec` (the environment's spec as the session started: spaces, labels,
        metadata such as `control_rate`; None when unknown). Both are empty when the recording has
        no recording.json (one made before it existed, or one whose file is not written yet)."""
        try:
            served_file_size(self.storage, recording_id, RECORDING_FILE)
            info = json.loads(self.storage.get(f"{recording_id}/{RECORDING_FILE}"))
        except (RecordingNotFoundError, ObjectNotFoundError):
            info = {}
        except ValueError as exc:
            log.warning("recording %s: recording.json is not JSON (%s); no world changes or spec shown",
                        recording_id, exc)
            info = {}
        if not isinstance(info, dict):
            info = {}
        changes, spec = info.get("world_changes"), info.get("spec")
        return (changes if isinstance(changes, list) else []), (spec if isinstance(spec, dict) else None)

    @contextmanager
    def open_episode(self, recording_id: str, index: int) -> Iterator[tuple[dict[str, Any], EpisodeArrays]]:
        """(its entry in meta.json, its arrays) of a finished episode (its file, open for reading
        member by member) or of the open episode of a recording in progress (built in memory
        from its part file as written so far: `open_parts`).

        Raises:
            InvalidRequestError: a bad index.
            RecordingNotFoundError: no such recording or episode.
        """
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise InvalidRequestError(f"'episode' must be an episode index (an integer >= 0), got {index!r}")
        meta = self.read_meta(recording_id)
        name = npz_name(index)
        try:
            size: int | None = served_file_size(self.storage, recording_id, name)
        except RecordingNotFoundError:
            size = None
        if size is None:
            in_progress = self.open_parts.episode(meta, index, self.session_facts(recording_id)[1])
            if in_progress is None:
                raise RecordingNotFoundError(
                    f"recording {recording_id!r} has no finished episode {index} ({len(meta.episodes)} in its "
                    "meta.json) and none in progress by that index"
                )
            yield in_progress
            return
        listed = [e for e in meta.episodes if isinstance(e, dict) and e.get("index") == index]
        where = f"recording {recording_id!r} episode {index}"
        with open_episode(self.storage, f"{recording_id}/{name}", size, where) as episode:
            yield (listed[0] if listed else {"index": index, "file": name}), episode

    def delete(self, recording_id: str) -> int:
        """Delete a closed (or crashed) recording's objects; returns how many.

        Only that recording goes: the saved snapshots its session made stay (they are listed and
        restored on their own, see saved_snapshots), and a vector session's sub-session
        recordings are recordings of their own, deleted by their own ids.

        Raises:
            RecordingOpenError: its status is still "recording".
        """
        if self.read_meta(recording_id).is_recording:
            raise RecordingOpenError(
                f"recording {recording_id!r} is still being recorded (status 'recording'): close its "
                "session first, then delete it"
            )
        deleted = self.storage.delete_prefix(f"{recording_id}/")
        log.info("deleted recording %s (%d objects)", recording_id, deleted)
        return deleted

    def _saved_snapshots_by_session(self) -> dict[str, list[rec.SavedSnapshotRef]]:
        """{session_id: [its saved snapshots, newest first]} of every saved snapshot."""
        by_session: dict[str, list[rec.SavedSnapshotRef]] = defaultdict(list)
        for snapshot in SavedSnapshotStore(self.storage).list_snapshots():  # newest first
            if snapshot.session_id:
                by_session[snapshot.session_id].append(rec.SavedSnapshotRef(
                    id=snapshot.id, label=snapshot.label, seq=snapshot.seq, created_at=snapshot.created_at))
        return by_session


def array_message(array: np.ndarray) -> rec.Array:
    """The array whole: its dtype, shape and bytes in C order."""
    return rec.Array(dtype=array.dtype.str, shape=list(array.shape), data=np.ascontiguousarray(array).tobytes())

"""A stand-in for the recorder: its request/reply contract (simulusion.recorder.v1) answered over a
real NATS connection from recordings and comparisons held in memory, built from the messages.

The gateway's tests run against it instead of the recorder's code: what the recorder does with
its files is the recorder's tests' business; what these check is that the gateway asks with the
contract's messages and turns the replies into its REST answers. Every request is kept in
`requests` (subject -> the request messages), so a test can check what the gateway asked.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from google.protobuf.message import Message
from platform_bus import flush_queued
from platform_contracts import subjects
from platform_contracts.recorder_json import dumps, message_from_json
from simulusion.control.v1.control_pb2 import ControlError
from simulusion.recorder.v1 import recorder_pb2 as rec


class Refused(Exception):
    """An error the stand-in answers with (a ControlError)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class StoredEpisode:
    arrays: dict[str, np.ndarray]
    frames: dict[int, bytes] = field(default_factory=dict)  # JPEG by row; rows without one: none
    frame_count: int = 0


@dataclass
class StoredRecording:
    meta: rec.RecordingMeta
    world_changes: list[Any] = field(default_factory=list)
    spec: dict[str, Any] | None = None
    files: dict[str, bytes] = field(default_factory=dict)  # the finished files, by name
    episodes: dict[int, StoredEpisode] = field(default_factory=dict)
    saved_snapshots: list[rec.SavedSnapshotRef] = field(default_factory=list)


def meta(recording_id: str, status: str = "closed", episodes: list[dict[str, Any]] | None = None,
         **members: Any) -> rec.RecordingMeta:
    """A RecordingMeta message of a meta.json with these members."""
    body = {"id": recording_id, "session_id": recording_id, "env_id": "cartpole", "status": status,
            "episodes": episodes or [], **members}
    return message_from_json(body, rec.RecordingMeta())


class StandInRecorder:
    def __init__(self, nc: Any) -> None:
        self.nc = nc
        self.recordings: dict[str, StoredRecording] = {}
        self.comparisons: dict[str, dict[str, Any]] = {}
        self.requests: dict[str, list[Message]] = defaultdict(list)
        self._subs: list[Any] = []

    def add(self, recording: StoredRecording) -> StoredRecording:
        self.recordings[recording.meta.id] = recording
        return recording

    async def start(self) -> None:
        handlers: dict[str, tuple[type[Any], type[Any], Callable[[Any], Message]]] = {
            subjects.RECORDER_LIST_RECORDINGS: (rec.ListRecordingsRequest, rec.ListRecordingsReply, self._list),
            subjects.RECORDER_GET_RECORDING: (rec.GetRecordingRequest, rec.GetRecordingReply, self._get),
            subjects.RECORDER_RECORDING_FILES: (rec.RecordingFilesRequest, rec.RecordingFilesReply, self._files),
            subjects.RECORDER_EPISODE: (rec.EpisodeRequest, rec.EpisodeReply, self._episode),
            subjects.RECORDER_EPISODE_DIGESTS: (rec.EpisodeDigestsRequest, rec.EpisodeDigestsReply, self._digests),
            subjects.RECORDER_DELETE_RECORDING: (rec.DeleteRecordingRequest, rec.DeleteRecordingReply,
                                                 self._delete),
            subjects.RECORDER_SAVE_COMPARISON: (rec.SaveComparisonRequest, rec.ComparisonReply, self._save_comparison),
            subjects.RECORDER_LIST_COMPARISONS: (rec.ListComparisonsRequest, rec.ListComparisonsReply,
                                                 self._list_comparisons),
            subjects.RECORDER_GET_COMPARISON: (rec.GetComparisonRequest, rec.ComparisonReply, self._get_comparison),
        }
        for subject, (request_type, reply_type, work) in handlers.items():
            self._subs.append(await self.nc.subscribe(subject, cb=self._handler(subject, request_type, reply_type,
                                                                                 work)))
        self._subs.append(await self.nc.subscribe(subjects.RECORDER_READ_FILE, cb=self._read))
        await flush_queued(self.nc)

    async def stop(self) -> None:
        for sub in self._subs:
            await sub.unsubscribe()
        self._subs = []

    def _handler(self, subject: str, request_type: type[Any], reply_type: type[Any],
                 work: Callable[[Any], Message]) -> Callable[[Any], Awaitable[None]]:
        async def on_request(msg: Any) -> None:
            request = request_type.FromString(msg.data)
            self.requests[subject].append(request)
            try:
                reply = work(request)
            except Refused as exc:
                reply = reply_type(error=ControlError(code=exc.code, message=str(exc)))
            await msg.respond(reply.SerializeToString())

        return on_request

    def _recording(self, recording_id: str) -> StoredRecording:
        if recording_id not in self.recordings:
            raise Refused("not_found", f"recording {recording_id!r} not found")
        return self.recordings[recording_id]

    def _list(self, request: rec.ListRecordingsRequest) -> rec.ListRecordingsReply:
        if "/" in request.session_id or ".." in request.session_id:
            raise Refused("invalid_argument", f"invalid recording id {request.session_id!r}")
        out = []
        for stored in self.recordings.values():
            m = stored.meta
            if request.env_id and m.env_id != request.env_id:
                continue
            if request.life and m.life != request.life:
                continue
            if request.session_id and request.session_id not in (m.session_id, m.parent_session_id):
                continue
            summary = rec.RecordingSummary(episode_count=len(m.episodes), saved_snapshots=stored.saved_snapshots,
                                           step_count=sum(e.length for e in m.episodes))
            summary.meta.CopyFrom(m)
            del summary.meta.episodes[:]
            returns = [e.episode_return for e in m.episodes if e.HasField("episode_return")]
            if returns:
                summary.total_return = sum(returns)
            out.append(summary)
        return rec.ListRecordingsReply(recordings=out)

    def _get(self, request: rec.GetRecordingRequest) -> rec.GetRecordingReply:
        stored = self._recording(request.id)
        return rec.GetRecordingReply(recording=stored.meta, world_changes_json=dumps(stored.world_changes),
                                     spec_json=dumps(stored.spec))

    def _files(self, request: rec.RecordingFilesRequest) -> rec.RecordingFilesReply:
        files = self._recording(request.id).files
        return rec.RecordingFilesReply(files=[rec.RecordingFile(name=n, size=len(files[n])) for n in sorted(files)])

    def _episode_of(self, recording_id: str, index: int) -> StoredEpisode:
        stored = self._recording(recording_id)
        if index not in stored.episodes:
            raise Refused("not_found", f"recording {recording_id!r} has no finished episode {index}")
        return stored.episodes[index]

    def _episode(self, request: rec.EpisodeRequest) -> rec.EpisodeReply:
        episode = self._episode_of(request.id, request.episode)
        entries = [e for e in self._recording(request.id).meta.episodes if e.index == request.episode]
        reply = rec.EpisodeReply(array_names=list(episode.arrays), frame_count=episode.frame_count)
        if entries:
            reply.episode.CopyFrom(entries[0])
        for name, array in episode.arrays.items():
            reply.array_shapes[name].CopyFrom(rec.Array(dtype=array.dtype.str, shape=list(array.shape)))
        for name in request.arrays:
            if name not in episode.arrays:
                raise Refused("not_found", f"episode {request.episode} has no array {name!r}")
            array = episode.arrays[name]
            reply.arrays[name].CopyFrom(rec.Array(dtype=array.dtype.str, shape=list(array.shape),
                                                  data=np.ascontiguousarray(array).tobytes()))
        for row in request.frames:
            if row >= episode.frame_count:
                raise Refused("not_found", f"frames 0..{episode.frame_count - 1} ({episode.frame_count} frames); "
                                           f"there is no frame {row}")
            if row not in episode.frames:
                raise Refused("not_found", f"episode {request.episode} has no frame {row}")
            reply.frames[row] = episode.frames[row]
        return reply

    def _digests(self, request: rec.EpisodeDigestsRequest) -> rec.EpisodeDigestsReply:
        episode = self._episode_of(request.id, request.episode)
        rows = episode.arrays["observations"]
        return rec.EpisodeDigestsReply(observations=[f"digest-{i}" for i in range(len(rows))])

    def _delete(self, request: rec.DeleteRecordingRequest) -> rec.DeleteRecordingReply:
        stored = self._recording(request.id)
        if stored.meta.status == rec.RECORDING_STATUS_RECORDING:
            raise Refused("failed_precondition", f"recording {request.id!r} is still being recorded")
        del self.recordings[request.id]
        return rec.DeleteRecordingReply(deleted=len(stored.files))

    async def _read(self, msg: Any) -> None:
        request = rec.ReadFileRequest.FromString(msg.data)
        self.requests[subjects.RECORDER_READ_FILE].append(request)
        stored = self.recordings.get(request.id)
        if stored is None or request.name not in stored.files:
            error = {"code": "not_found", "message": f"recording {request.id!r} has no file {request.name!r}"}
            await msg.respond(b"", headers={subjects.RECORDER_ERROR_HEADER: json.dumps(error)})
            return
        await msg.respond(stored.files[request.name][request.offset:request.offset + request.length])

    def _save_comparison(self, request: rec.SaveComparisonRequest) -> rec.ComparisonReply:
        document = json.loads(request.document_json)
        if "oversized" in document:
            raise Refused("invalid_argument", "the comparison is too large")
        document = {**document, "id": f"cmp-{len(self.comparisons) + 1:012x}", "created": "2026-01-01T00:00:00.000Z"}
        self.comparisons[document["id"]] = document
        return rec.ComparisonReply(comparison_json=dumps(document))

    def _list_comparisons(self, request: rec.ListComparisonsRequest) -> rec.ListComparisonsReply:
        found = []
        for document in reversed(self.comparisons.values()):
            summary = {name: document.get(name) for name in ("id", "created", "env", "steps", "window")}
            summary["team"] = document.get("team") or "default"
            summary["agents"] = [a.get("name") for a in document.get("agents", [])]
            found.append(message_from_json(summary, rec.ComparisonSummary()))
        return rec.ListComparisonsReply(comparisons=found)

    def _get_comparison(self, request: rec.GetComparisonRequest) -> rec.ComparisonReply:
        if request.id not in self.comparisons:
            raise Refused("not_found", f"comparison {request.id!r} not found")
        return rec.ComparisonReply(comparison_json=dumps(self.comparisons[request.id]))

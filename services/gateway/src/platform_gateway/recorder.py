"""The recorder's request/reply API (protobuf messages of simulusion.recorder.v1 and, for saved
snapshots, simulusion.control.v1) as async calls."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message
from nats.aio.client import Client as NATS
from platform_contracts import subjects
from platform_contracts.limits import MAX_RECORDING_READ_BYTES, NATS_DEFAULT_MAX_PAYLOAD
from platform_contracts.recorder_json import dumps
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.env.v1 import environment_pb2 as env_pb
from simulusion.recorder.v1 import recorder_pb2 as rec

from platform_gateway import nats_rpc
from platform_gateway.errors import NotFoundError, UnavailableError, from_control_error

_Reply = TypeVar("_Reply", bound=Message)
_READ_HEADROOM = 64 * 1024  # of a NATS message, for headers
_INT64_MAX = 2**63 - 1  # the largest episode index or frame row a request message holds


class RecorderClient:
    """Lists recordings and saved snapshots and reads their metadata through the recorder; stores
    and reads comparisons of agents."""

    def __init__(self, nc: NATS, *, timeout: float = 10.0) -> None:
        self._nc = nc
        self._timeout = timeout

    async def list_recordings(
        self, env_id: str | None = None, session_id: str | None = None, life: str | None = None,
        team: str | None = None,
    ) -> list[rec.RecordingSummary]:
        """Recording summaries (only `team`'s when given), newest first: meta.json without
        episodes, with the episode count, steps, return and saved snapshots."""
        request = rec.ListRecordingsRequest(env_id=env_id or "", session_id=session_id or "", life=life or "",
                                            team=team or "")
        reply = await self._call(subjects.RECORDER_LIST_RECORDINGS, request, rec.ListRecordingsReply)
        return list(reply.recordings)

    async def get_recording(self, recording_id: str) -> rec.GetRecordingReply:
        """The recording's meta.json, with its recording.json's world changes and spec."""
        return await self._call(subjects.RECORDER_GET_RECORDING, rec.GetRecordingRequest(id=recording_id),
                                rec.GetRecordingReply)

    async def recording_files(self, recording_id: str) -> list[rec.RecordingFile]:
        """The recording's finished files, by name."""
        reply = await self._call(subjects.RECORDER_RECORDING_FILES, rec.RecordingFilesRequest(id=recording_id),
                                 rec.RecordingFilesReply)
        return list(reply.files)

    async def episode(
        self, recording_id: str, index: int, arrays: list[str] | None = None, frames: list[int] | None = None
    ) -> rec.EpisodeReply:
        """A finished episode: its entry, array names, dtypes and shapes, frame count, and the
        arrays (whole) and frames (JPEG) asked for."""
        _check_episode(recording_id, index)
        for frame in frames or []:
            if frame > _INT64_MAX:
                raise NotFoundError(f"recording {recording_id!r} episode {index} has no frame {frame}")
        request = rec.EpisodeRequest(id=recording_id, episode=index, arrays=arrays or [], frames=frames or [])
        return await self._call(subjects.RECORDER_EPISODE, request, rec.EpisodeReply)

    async def episode_digests(self, recording_id: str, index: int) -> list[str]:
        """The hex digest of each observation row of a finished episode."""
        _check_episode(recording_id, index)
        request = rec.EpisodeDigestsRequest(id=recording_id, episode=index)
        reply = await self._call(subjects.RECORDER_EPISODE_DIGESTS, request, rec.EpisodeDigestsReply)
        return list(reply.observations)

    async def delete_recording(self, recording_id: str) -> int:
        """Delete a closed recording; returns how many objects went."""
        reply = await self._call(subjects.RECORDER_DELETE_RECORDING, rec.DeleteRecordingRequest(id=recording_id),
                                 rec.DeleteRecordingReply)
        return reply.deleted

    async def list_episodes(
        self, *, env_id: str | None, team: str | None, outcome: str | None, is_success: bool | None, sort: str,
        offset: int, limit: int,
    ) -> rec.ListEpisodesReply:
        """A page of the finished episodes across recordings (the episode browser), with how many match."""
        request = rec.ListEpisodesRequest(env_id=env_id or "", team=team or "", outcome=outcome or "", sort=sort,
                                          offset=offset, limit=limit)
        if is_success is not None:
            request.is_success = is_success
        return await self._call(subjects.RECORDER_LIST_EPISODES, request, rec.ListEpisodesReply)

    @property
    def read_chunk(self) -> int:
        """Bytes per read: MAX_RECORDING_READ_BYTES, or less when the NATS server's max payload is smaller."""
        max_payload = int(getattr(self._nc, "max_payload", 0) or NATS_DEFAULT_MAX_PAYLOAD)
        return max(1, min(MAX_RECORDING_READ_BYTES, max_payload - _READ_HEADROOM))

    async def read_file(self, recording_id: str, name: str, offset: int, length: int) -> bytes:
        """Up to `length` bytes of a finished file from `offset` (fewer at its end)."""
        request = rec.ReadFileRequest(id=recording_id, name=name, offset=offset, length=length)
        msg = await nats_rpc.request_msg(self._nc, subjects.RECORDER_READ_FILE, request.SerializeToString(),
                                         timeout=self._timeout, service="recorder")
        error = (msg.headers or {}).get(subjects.RECORDER_ERROR_HEADER)
        if error:
            try:
                parsed = json.loads(error)
            except ValueError:
                parsed = {"code": "internal", "message": error}
            raise from_control_error(str(parsed.get("code", "internal")), str(parsed.get("message", error)))
        return msg.data

    async def list_saved_snapshots(
        self, env_id: str | None = None, session_id: str | None = None, team: str | None = None
    ) -> list[env_pb.SavedSnapshot]:
        request = ctl.ListSavedSnapshotsRequest(env_id=env_id or "", session_id=session_id or "", team=team or "")
        reply = await self._call(subjects.RECORDER_LIST_SNAPSHOTS, request, ctl.ListSavedSnapshotsReply)
        return list(reply.snapshots)

    async def get_saved_snapshot(self, snapshot_id: str) -> env_pb.SavedSnapshot:
        request = ctl.GetSavedSnapshotRequest(id=snapshot_id, with_state=False)
        reply = await self._call(subjects.RECORDER_GET_SNAPSHOT, request, ctl.GetSavedSnapshotReply)
        return reply.snapshot

    async def save_comparison(self, document: dict[str, Any]) -> dict[str, Any]:
        """Store a comparison (a JSON document); the stored document, with the `id` and `created`
        the recorder gave it."""
        request = rec.SaveComparisonRequest(document_json=dumps(document))
        reply = await self._call(subjects.RECORDER_SAVE_COMPARISON, request, rec.ComparisonReply)
        return _document(reply, subjects.RECORDER_SAVE_COMPARISON)

    async def list_comparisons(self) -> list[rec.ComparisonSummary]:
        """Comparison summaries, newest first: id, created, env, the agents' names, steps, window, team."""
        reply = await self._call(subjects.RECORDER_LIST_COMPARISONS, rec.ListComparisonsRequest(),
                                 rec.ListComparisonsReply)
        return list(reply.comparisons)

    async def get_comparison(self, comparison_id: str) -> dict[str, Any]:
        """The stored comparison document."""
        reply = await self._call(subjects.RECORDER_GET_COMPARISON, rec.GetComparisonRequest(id=comparison_id),
                                 rec.ComparisonReply)
        return _document(reply, subjects.RECORDER_GET_COMPARISON)

    async def _call(self, subject: str, request: Message, reply_type: type[_Reply]) -> _Reply:
        data = await nats_rpc.request(
            self._nc, subject, request.SerializeToString(), timeout=self._timeout, service="recorder"
        )
        try:
            reply = reply_type.FromString(data)
        except DecodeError:
            raise UnavailableError(f"recorder unavailable: unreadable reply on {subject}") from None
        if reply.error.code:  # type: ignore[attr-defined]
            raise from_control_error(reply.error.code, reply.error.message)  # type: ignore[attr-defined]
        return reply


def _check_episode(recording_id: str, index: int) -> None:
    """An index past what the request message holds names no episode (the routes take any integer >= 0)."""
    if index > _INT64_MAX:
        raise NotFoundError(f"recording {recording_id!r} has no finished episode {index}")


def _document(reply: rec.ComparisonReply, subject: str) -> dict[str, Any]:
    try:
        document = json.loads(reply.comparison_json)
    except ValueError:
        raise UnavailableError(f"recorder unavailable: an unreadable comparison on {subject}") from None
    if not isinstance(document, dict):
        raise UnavailableError(f"recorder unavailable: a comparison that is no JSON object on {subject}")
    return document

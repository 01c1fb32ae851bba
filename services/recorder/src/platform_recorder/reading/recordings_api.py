"""NATS request/reply API of the recordings (queue group "recorder"): protobuf messages of
simulusion.recorder.v1 (platform_contracts.recorder_json maps meta.json onto them).

    platform.recorder.recordings.list     ListRecordingsRequest -> ListRecordingsReply
        a RecordingSummary per recording, newest first: meta.json without "episodes", with the
        episode count, "step_count" (the finished episodes' lengths summed), "total_return" (their
        returns summed; unset without one), "open_episode" (the episode in progress: its index,
        steps and return so far) and the saved snapshots of its session; a session id also lists
        its sub-sessions
    platform.recorder.recordings.get      GetRecordingRequest -> GetRecordingReply (meta, with
        recording.json's "world_changes" and "spec", and "open_episode")
    platform.recorder.recordings.files    RecordingFilesRequest -> RecordingFilesReply (finished files)
    platform.recorder.recordings.read     ReadFileRequest (length <= 4 MiB) -> the raw bytes;
        a failure answers an empty body with the header "Simulusion-Error" holding the JSON error
    platform.recorder.recordings.episode  EpisodeRequest -> EpisodeReply (entry, arrays' dtypes
        and shapes, frame count, the arrays and JPEG frames asked for; the open episode of a
        recording in progress as written so far, "in_progress")
    platform.recorder.recordings.digests  EpisodeDigestsRequest -> EpisodeDigestsReply: a hex
        digest per observation row (platform_contracts.digests.observation_digest of each row)
    platform.recorder.recordings.delete   DeleteRecordingRequest -> DeleteRecordingReply (objects
        deleted; saved snapshots stay)
    platform.recorder.recordings.episodes ListEpisodesRequest -> ListEpisodesReply: finished
        episodes across recordings, filtered, sorted and paged (the episode browser; episode_listing)
Errors fill the reply's `error` (a ControlError): "invalid_argument" (a request that does not
parse; an id with "/", "\\", ".." or a leading "."), "not_found", "failed_precondition" (deleting
a recording that is still recording; a reply larger than the NATS max payload), "internal".
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message
from nats.aio.msg import Msg
from opentelemetry import trace
from platform_bus import flush_queued
from platform_contracts import subjects
from platform_contracts.tracing import extract_dict
from platform_recorder.errors import InvalidRequestError, RecorderError
from platform_recorder.reading.episode_listing import list_episodes
from platform_recorder.reading.recording_store import MAX_READ_BYTES, RecordingStore
from platform_recorder.storage.interface import Storage
from simulusion.control.v1.control_pb2 import ControlError
from simulusion.recorder.v1 import recorder_pb2 as rec

log = logging.getLogger(__name__)
tracer = trace.get_tracer("platform_recorder")

QUEUE = "recorder"
_HEADROOM = 4096  # of a reply, for its headers
_Request = TypeVar("_Request", bound=Message)


class ReplyTooLargeError(RecorderError):
    code = "failed_precondition"


def parse_request(data: bytes, request_type: type[_Request]) -> _Request:
    """The request message of a request's bytes.

    Raises:
        InvalidRequestError: not that message.
    """
    try:
        return request_type.FromString(data)
    except DecodeError as exc:
        raise InvalidRequestError(f"the request is not a {request_type.DESCRIPTOR.full_name}: {exc}") from None


def _required(value: str, name: str) -> str:
    if not value:
        raise InvalidRequestError(f"{name!r} is required")
    return value


def _episode_index(request: rec.EpisodeRequest | rec.EpisodeDigestsRequest) -> int:
    if not request.HasField("episode"):
        raise InvalidRequestError("'episode' is required")
    return request.episode


class RecordingsApi:
    """Serves the recordings subjects from a Storage (a folder path is taken as a folder storage),
    and the open episodes of the recordings in progress from the part files under `parts_root`
    (see `RecordingStore`)."""

    def __init__(self, nc: Any, storage: Storage | str | os.PathLike[str], parts_root: Path | None = None) -> None:
        self.nc = nc
        self.store = RecordingStore(storage, parts_root=parts_root)
        self._subs: list[Any] = []

    async def start(self) -> None:
        handlers: dict[str, Callable[[Msg], Awaitable[None]]] = {
            subjects.RECORDER_LIST_RECORDINGS: self._handler(rec.ListRecordingsRequest, rec.ListRecordingsReply,
                                                             self._list),
            subjects.RECORDER_GET_RECORDING: self._handler(rec.GetRecordingRequest, rec.GetRecordingReply,
                                                           self._get),
            subjects.RECORDER_RECORDING_FILES: self._handler(rec.RecordingFilesRequest, rec.RecordingFilesReply,
                                                             self._files),
            subjects.RECORDER_EPISODE: self._handler(rec.EpisodeRequest, rec.EpisodeReply, self._episode),
            subjects.RECORDER_EPISODE_DIGESTS: self._handler(rec.EpisodeDigestsRequest, rec.EpisodeDigestsReply,
                                                             self._digests),
            subjects.RECORDER_DELETE_RECORDING: self._handler(rec.DeleteRecordingRequest,
                                                              rec.DeleteRecordingReply, self._delete),
            subjects.RECORDER_LIST_EPISODES: self._handler(rec.ListEpisodesRequest, rec.ListEpisodesReply,
                                                           lambda request: list_episodes(self.store, request)),
        }
        for subject, on_request in handlers.items():
            self._subs.append(await self.nc.subscribe(subject, queue=QUEUE, cb=on_request))

        async def on_read(msg: Msg) -> None:
            await self._serve(msg, self._answer_read)

        self._subs.append(await self.nc.subscribe(subjects.RECORDER_READ_FILE, queue=QUEUE, cb=on_read))
        await flush_queued(self.nc)  # the server knows the subscriptions: requests from now on are answered

    async def stop(self) -> None:
        for sub in self._subs:
            await sub.unsubscribe()
        self._subs = []

    def _list(self, request: rec.ListRecordingsRequest) -> rec.ListRecordingsReply:
        found = self.store.list_summaries(
            env_id=request.env_id or None,
            session_id=request.session_id or None,
            life=request.life or None,
            team=request.team or None,
        )
        return rec.ListRecordingsReply(recordings=found)

    def _get(self, request: rec.GetRecordingRequest) -> rec.GetRecordingReply:
        return self.store.get(_required(request.id, "id"))

    def _files(self, request: rec.RecordingFilesRequest) -> rec.RecordingFilesReply:
        return rec.RecordingFilesReply(files=self.store.files(_required(request.id, "id")))

    def _episode(self, request: rec.EpisodeRequest) -> rec.EpisodeReply:
        return self.store.episode(_required(request.id, "id"), _episode_index(request), arrays=list(request.arrays),
                                  frames=list(request.frames))

    def _digests(self, request: rec.EpisodeDigestsRequest) -> rec.EpisodeDigestsReply:
        found = self.store.episode_digests(_required(request.id, "id"), _episode_index(request))
        return rec.EpisodeDigestsReply(observations=found)

    def _delete(self, request: rec.DeleteRecordingRequest) -> rec.DeleteRecordingReply:
        return rec.DeleteRecordingReply(deleted=self.store.delete(_required(request.id, "id")))

    def _read(self, request: rec.ReadFileRequest) -> bytes:
        return self.store.read(
            _required(request.id, "id"),
            _required(request.name, "name"),
            request.offset,
            request.length if request.HasField("length") else MAX_READ_BYTES,
        )

    def _handler(
        self, request_type: type[Any], reply_type: type[Any], work: Callable[[Any], Message]
    ) -> Callable[[Msg], Awaitable[None]]:
        async def on_request(msg: Msg) -> None:
            async def answer(msg: Msg) -> tuple[bytes, None]:
                return await self._answer(msg, request_type, reply_type, work), None

            await self._serve(msg, answer)

        return on_request

    async def _serve(self, msg: Msg, answer: Callable[[Msg], Awaitable[tuple[bytes, dict[str, str] | None]]]) -> None:
        ctx = extract_dict(msg.headers)
        traced = trace.get_current_span(ctx).get_span_context().is_valid
        name = "recorder." + msg.subject.removeprefix("platform.recorder.")
        try:
            if traced:
                with tracer.start_as_current_span(name, context=ctx, kind=trace.SpanKind.SERVER):
                    data, headers = await answer(msg)
            else:
                data, headers = await answer(msg)
            if msg.reply:
                await self.nc.publish(msg.reply, data, headers=headers)
        except Exception:  # the connection went away: nothing to answer on
            log.exception("cannot answer %s", msg.subject)

    def _limit(self) -> int:
        return int(getattr(self.nc, "max_payload", 0) or 1024 * 1024) - _HEADROOM

    def _check_size(self, data: bytes, hint: str) -> bytes:
        if len(data) > self._limit():
            raise ReplyTooLargeError(
                f"the reply ({len(data)} bytes) is larger than the NATS max payload allows ({self._limit()} "
                f"bytes): {hint}"
            )
        return data

    async def _answer(
        self, msg: Msg, request_type: type[Any], reply_type: type[Any], work: Callable[[Any], Message]
    ) -> bytes:
        try:
            reply = await asyncio.to_thread(lambda: work(parse_request(msg.data, request_type)))
            hint = f"ask for fewer arrays or frames, or read the .npz with {subjects.RECORDER_READ_FILE}"
            return self._check_size(reply.SerializeToString(), hint)
        except RecorderError as exc:
            error = ControlError(code=exc.code, message=str(exc))
        except Exception as exc:
            log.exception("request on %s failed", msg.subject)
            error = ControlError(code="internal", message=f"{type(exc).__name__}: {exc}")
        failed = reply_type(error=error)
        return bytes(failed.SerializeToString())

    async def _answer_read(self, msg: Msg) -> tuple[bytes, dict[str, str] | None]:
        try:
            data = await asyncio.to_thread(lambda: self._read(parse_request(msg.data, rec.ReadFileRequest)))
            return self._check_size(data, "read smaller chunks ('length')"), None
        except RecorderError as exc:
            return b"", {subjects.RECORDER_ERROR_HEADER: json.dumps(_error(exc))}
        except Exception as exc:
            log.exception("request on %s failed", msg.subject)
            return b"", {subjects.RECORDER_ERROR_HEADER: json.dumps(_internal(exc))}


def _error(exc: RecorderError) -> dict[str, str]:
    return {"code": exc.code, "message": str(exc)}


def _internal(exc: Exception) -> dict[str, str]:
    return {"code": "internal", "message": f"{type(exc).__name__}: {exc}"}

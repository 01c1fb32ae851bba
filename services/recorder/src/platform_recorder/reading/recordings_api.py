"""NATS request/reply API of the recordings (JSON bodies; queue group "recorder").

    platform.recorder.recordings.list     {"env_id"?, "session_id"?, "life"?, "team"?} -> {"recordings": [summary]}
        summary: meta.json without "episodes", plus "episode_count", "step_count" (the episodes'
        lengths summed), "total_return" (their returns summed; null without one) and
        "saved_snapshots" ([{id, label, seq, created_at}] of its session); a session id also
        lists its sub-sessions
    platform.recorder.recordings.get      {"id"} -> {"recording": meta, with recording.json's "world_changes" and "spec"}
    platform.recorder.recordings.files    {"id"} -> {"files": [{"name", "size"}]} (finished files)
    platform.recorder.recordings.read     {"id", "name", "offset"?, "length"? (<= 4 MiB)} -> the raw bytes;
        a failure answers an empty body with the header "Simulusion-Error" holding the JSON error
    platform.recorder.recordings.episode  {"id", "episode", "arrays"?: [name], "frames"?: [index]}
        -> {"episode", "array_names", "array_shapes", "frame_count", "arrays", "frames"}
    platform.recorder.recordings.digests  {"id", "episode"} -> {"observations": [hex digest per observation row]}
        (platform_contracts.digests.observation_digest of each row)
    platform.recorder.recordings.delete   {"id"} -> {"deleted": n_objects} (saved snapshots stay)
Errors answer {"error": {"code", "message"}}: "invalid_argument" (a bad request; an id with
"/", "\\", ".." or a leading "."), "not_found", "failed_precondition" (deleting a recording that
is still recording; a reply larger than the NATS max payload), "internal".
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable
from typing import Any

from nats.aio.msg import Msg
from opentelemetry import trace
from platform_contracts import subjects
from platform_contracts.tracing import extract_dict
from platform_recorder.errors import InvalidRequestError, RecorderError
from platform_recorder.meta import jsonable
from platform_recorder.reading.episode_files import array_names, frame_indexes
from platform_recorder.reading.recording_store import MAX_READ_BYTES, RecordingStore
from platform_recorder.storage.interface import Storage

log = logging.getLogger(__name__)
tracer = trace.get_tracer("platform_recorder")

QUEUE = "recorder"
_HEADROOM = 4096  # of a reply, for its headers


class ReplyTooLargeError(RecorderError):
    code = "failed_precondition"


def _optional_str(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise InvalidRequestError(f"{key!r} must be a string, got {type(value).__name__}")
    return value or None


def _required_str(body: dict[str, Any], key: str) -> str:
    value = _optional_str(body, key)
    if value is None:
        raise InvalidRequestError(f"{key!r} is required")
    return value


def _int(body: dict[str, Any], key: str, default: int | None = None) -> int:
    value = body.get(key, default)
    if value is None:
        raise InvalidRequestError(f"{key!r} is required")
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidRequestError(f"{key!r} must be an integer, got {value!r}")
    return value


def _parse(data: bytes) -> dict[str, Any]:
    if not data.strip():
        return {}
    try:
        body = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidRequestError(f"the request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise InvalidRequestError("the request body must be a JSON object")
    return body


class RecordingsApi:
    """Serves the recordings subjects from a Storage (a folder path is taken as a folder storage)."""

    def __init__(self, nc: Any, storage: Storage | str | os.PathLike[str]) -> None:
        self.nc = nc
        self.store = RecordingStore(storage)
        self._subs: list[Any] = []

    async def start(self) -> None:
        handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            subjects.RECORDER_LIST_RECORDINGS: self._list,
            subjects.RECORDER_GET_RECORDING: self._get,
            subjects.RECORDER_RECORDING_FILES: self._files,
            subjects.RECORDER_EPISODE: self._episode,
            subjects.RECORDER_EPISODE_DIGESTS: self._digests,
            subjects.RECORDER_DELETE_RECORDING: self._delete,
        }
        for subject, work in handlers.items():
            async def on_json(msg: Msg, work: Callable[[dict[str, Any]], dict[str, Any]] = work) -> None:
                await self._serve(msg, self._answer_json, work)

            self._subs.append(await self.nc.subscribe(subject, queue=QUEUE, cb=on_json))

        async def on_read(msg: Msg) -> None:
            await self._serve(msg, self._answer_read, self._read)

        self._subs.append(await self.nc.subscribe(subjects.RECORDER_READ_FILE, queue=QUEUE, cb=on_read))
        await self.nc.flush()  # the server knows the subscriptions: requests from now on are answered

    async def stop(self) -> None:
        for sub in self._subs:
            await sub.unsubscribe()
        self._subs = []

    def _list(self, body: dict[str, Any]) -> dict[str, Any]:
        found = self.store.list_summaries(
            env_id=_optional_str(body, "env_id"),
            session_id=_optional_str(body, "session_id"),
            life=_optional_str(body, "life"),
            team=_optional_str(body, "team"),
        )
        return {"recordings": found}

    def _get(self, body: dict[str, Any]) -> dict[str, Any]:
        recording_id = _required_str(body, "id")
        recording = self.store.read_meta(recording_id).to_json()
        recording.update(self.store.session_facts(recording_id))
        return {"recording": recording}

    def _files(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"files": self.store.files(_required_str(body, "id"))}

    def _episode(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.store.episode(
            _required_str(body, "id"),
            _int(body, "episode"),
            arrays=array_names(body.get("arrays")),
            frames=frame_indexes(body.get("frames")),
        )

    def _digests(self, body: dict[str, Any]) -> dict[str, Any]:
        return self.store.episode_digests(_required_str(body, "id"), _int(body, "episode"))

    def _delete(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"deleted": self.store.delete(_required_str(body, "id"))}

    def _read(self, body: dict[str, Any]) -> bytes:
        return self.store.read(
            _required_str(body, "id"),
            _required_str(body, "name"),
            _int(body, "offset", 0),
            _int(body, "length", MAX_READ_BYTES),
        )

    async def _serve(self, msg: Msg, answer: Any, work: Any) -> None:
        ctx = extract_dict(msg.headers)
        traced = trace.get_current_span(ctx).get_span_context().is_valid
        name = "recorder." + msg.subject.removeprefix("platform.recorder.")
        try:
            if traced:
                with tracer.start_as_current_span(name, context=ctx, kind=trace.SpanKind.SERVER):
                    data, headers = await answer(msg, work)
            else:
                data, headers = await answer(msg, work)
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

    async def _answer_json(
        self, msg: Msg, work: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> tuple[bytes, None]:
        try:
            reply = await asyncio.to_thread(work, _parse(msg.data))
            data = json.dumps(jsonable(reply), separators=(",", ":")).encode()
            hint = f"ask for fewer arrays or frames, or read the .npz with {subjects.RECORDER_READ_FILE}"
            return self._check_size(data, hint), None
        except RecorderError as exc:
            return json.dumps({"error": _error(exc)}).encode(), None
        except Exception as exc:
            log.exception("request on %s failed", msg.subject)
            return json.dumps({"error": _internal(exc)}).encode(), None

    async def _answer_read(
        self, msg: Msg, work: Callable[[dict[str, Any]], bytes]
    ) -> tuple[bytes, dict[str, str] | None]:
        try:
            data = await asyncio.to_thread(work, _parse(msg.data))
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

"""NATS request/reply API of the saved snapshot store (protobuf messages of simulusion.control.v1).

    platform.recorder.snapshots.save  SaveSnapshotRequest{snapshot, state, format} -> SaveSnapshotReply
    platform.recorder.snapshots.get   GetSavedSnapshotRequest{id, with_state} -> GetSavedSnapshotReply
    platform.recorder.snapshots.list  ListSavedSnapshotsRequest{env_id?, session_id?, team?}
                                      -> ListSavedSnapshotsReply (newest first)
Errors answer the reply with `error` (ControlError): "invalid_argument" (an unreadable request, a
missing field, an id with a path separator or '..'), "not_found" (no such id),
"failed_precondition" (a state too large for the NATS max payload), "internal".
Queue group `recorder`: replicas sharing the recordings storage share the requests.

A save request cannot be larger than the NATS server's max payload (16 MB with the platform's
nats-server config): such a request never arrives, so the client checks `nc.max_payload` first.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message
from nats.aio.msg import Msg
from opentelemetry import trace
from platform_bus import flush_queued
from platform_contracts import subjects
from platform_contracts.tracing import extract_dict
from platform_recorder.errors import RecorderError
from platform_recorder.snapshots.snapshot_store import SavedSnapshotStore, check_snapshot_id
from simulusion.control.v1 import control_pb2

log = logging.getLogger(__name__)
tracer = trace.get_tracer("platform_recorder")

QUEUE = "recorder"
RequestT = TypeVar("RequestT", bound=Message)


class InvalidSnapshotRequestError(RecorderError):
    code = "invalid_argument"


class TooLargeError(RecorderError):
    code = "failed_precondition"


def _parse(message_type: type[RequestT], data: bytes) -> RequestT:
    try:
        return message_type.FromString(data)
    except DecodeError as exc:
        raise InvalidSnapshotRequestError(f"the request is not a {message_type.__name__}: {exc}") from None


class SavedSnapshotsApi:
    """Serves the saved snapshot subjects from a SavedSnapshotStore."""

    def __init__(self, nc: Any, store: SavedSnapshotStore) -> None:
        self.nc = nc
        self.store = store
        self._subs: list[Any] = []

    async def start(self) -> None:
        removed = await asyncio.to_thread(self.store.remove_stale_temps)
        if removed:
            log.info("removed %d temporary folders of saves a crash interrupted", removed)
        self._subs = [
            await self.nc.subscribe(subjects.RECORDER_SAVE_SNAPSHOT, queue=QUEUE, cb=self._on_save),
            await self.nc.subscribe(subjects.RECORDER_GET_SNAPSHOT, queue=QUEUE, cb=self._on_get),
            await self.nc.subscribe(subjects.RECORDER_LIST_SNAPSHOTS, queue=QUEUE, cb=self._on_list),
        ]
        await flush_queued(self.nc)  # the server knows the subscriptions before the recorder says it is ready

    async def stop(self) -> None:
        for sub in self._subs:
            await sub.unsubscribe()
        self._subs = []

    def _save(self, data: bytes) -> control_pb2.SaveSnapshotReply:
        request = _parse(control_pb2.SaveSnapshotRequest, data)
        if not request.HasField("snapshot") or not request.snapshot.env_id:
            raise InvalidSnapshotRequestError("'snapshot' with its env_id is required")
        if not request.state:
            raise InvalidSnapshotRequestError("'state' is empty: there is nothing to save")
        if not request.format:
            raise InvalidSnapshotRequestError("'format' is required (how the state is encoded, e.g. 'pickle')")
        saved = self.store.save(request.snapshot, request.state, request.format)
        return control_pb2.SaveSnapshotReply(snapshot=saved)

    def _get(self, data: bytes) -> control_pb2.GetSavedSnapshotReply:
        request = _parse(control_pb2.GetSavedSnapshotRequest, data)
        snapshot, state, fmt = self.store.get(check_snapshot_id(request.id), with_state=request.with_state)
        reply = control_pb2.GetSavedSnapshotReply(snapshot=snapshot, state=state or b"", format=fmt)
        limit = self.nc.max_payload
        if reply.ByteSize() > limit:
            raise TooLargeError(
                f"saved snapshot {request.id!r}: its state ({snapshot.size_bytes} bytes) is larger than "
                f"the NATS server's max payload ({limit} bytes); raise max_payload in its config"
            )
        return reply

    def _list(self, data: bytes) -> control_pb2.ListSavedSnapshotsReply:
        request = _parse(control_pb2.ListSavedSnapshotsRequest, data)
        found = self.store.list_snapshots(env_id=request.env_id, session_id=request.session_id, team=request.team)
        return control_pb2.ListSavedSnapshotsReply(snapshots=found)

    async def _on_save(self, msg: Msg) -> None:
        await self._serve(msg, "recorder.snapshots.save", self._save, control_pb2.SaveSnapshotReply)

    async def _on_get(self, msg: Msg) -> None:
        await self._serve(msg, "recorder.snapshots.get", self._get, control_pb2.GetSavedSnapshotReply)

    async def _on_list(self, msg: Msg) -> None:
        await self._serve(msg, "recorder.snapshots.list", self._list, control_pb2.ListSavedSnapshotsReply)

    async def _serve(
        self, msg: Msg, name: str, work: Callable[[bytes], Message], reply_type: type[Message]
    ) -> None:
        ctx = extract_dict(msg.headers)
        traced = trace.get_current_span(ctx).get_span_context().is_valid
        try:
            if traced:
                with tracer.start_as_current_span(name, context=ctx, kind=trace.SpanKind.SERVER):
                    reply = await self._answer(msg, work, reply_type)
            else:
                reply = await self._answer(msg, work, reply_type)
            await msg.respond(reply.SerializeToString())
        except Exception:  # the connection went away: nothing to answer on
            log.exception("cannot answer %s", msg.subject)

    @staticmethod
    async def _answer(msg: Msg, work: Callable[[bytes], Message], reply_type: type[Message]) -> Message:
        try:
            return await asyncio.to_thread(work, msg.data)
        except RecorderError as exc:
            return reply_type(error=control_pb2.ControlError(code=exc.code, message=str(exc)))
        except Exception as exc:
            log.exception("request on %s failed", msg.subject)
            return reply_type(
                error=control_pb2.ControlError(code="internal", message=f"{type(exc).__name__}: {exc}")
            )

"""The recorder's request/reply API (JSON bodies) as async calls."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message
from nats.aio.client import Client as NATS
from platform_contracts import subjects
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_gateway import nats_rpc
from platform_gateway.errors import UnavailableError, from_control_error

_Reply = TypeVar("_Reply", bound=Message)


class RecorderClient:
    """Lists recordings and saved snapshots and reads their metadata through the recorder."""

    def __init__(self, nc: NATS, *, timeout: float = 10.0) -> None:
        self._nc = nc
        self._timeout = timeout

    async def list_recordings(self, env_id: str | None = None, session_id: str | None = None) -> list[dict[str, Any]]:
        body = {k: v for k, v in (("env_id", env_id), ("session_id", session_id)) if v}
        reply = await self._call(subjects.RECORDER_LIST_RECORDINGS, body)
        return list(reply.get("recordings", []))

    async def get_recording(self, recording_id: str) -> dict[str, Any]:
        reply = await self._call(subjects.RECORDER_GET_RECORDING, {"id": recording_id})
        return dict(reply.get("recording") or {})

    async def list_saved_snapshots(
        self, env_id: str | None = None, session_id: str | None = None
    ) -> list[env_pb.SavedSnapshot]:
        request = ctl.ListSavedSnapshotsRequest(env_id=env_id or "", session_id=session_id or "")
        reply = await self._call_proto(subjects.RECORDER_LIST_SNAPSHOTS, request, ctl.ListSavedSnapshotsReply)
        return list(reply.snapshots)

    async def get_saved_snapshot(self, snapshot_id: str) -> env_pb.SavedSnapshot:
        request = ctl.GetSavedSnapshotRequest(id=snapshot_id, with_state=False)
        reply = await self._call_proto(subjects.RECORDER_GET_SNAPSHOT, request, ctl.GetSavedSnapshotReply)
        return reply.snapshot

    async def _call_proto(self, subject: str, request: Message, reply_type: type[_Reply]) -> _Reply:
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

    async def _call(self, subject: str, body: dict[str, Any]) -> dict[str, Any]:
        data = await nats_rpc.request(
            self._nc, subject, json.dumps(body).encode(), timeout=self._timeout, service="recorder"
        )
        try:
            reply = json.loads(data)
        except ValueError:
            raise UnavailableError(f"recorder unavailable: unreadable reply on {subject}") from None
        if not isinstance(reply, dict):
            raise UnavailableError(f"recorder unavailable: unexpected reply on {subject}")
        error = reply.get("error")
        if error:
            if isinstance(error, dict):
                raise from_control_error(str(error.get("code", "internal")), str(error.get("message", error)))
            raise from_control_error("internal", str(error))
        return reply

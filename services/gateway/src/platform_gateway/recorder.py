"""The recorder's request/reply API (JSON bodies) as async calls."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from google.protobuf.message import DecodeError, Message
from nats.aio.client import Client as NATS
from platform_contracts import subjects
from platform_contracts.limits import MAX_RECORDING_READ_BYTES, NATS_DEFAULT_MAX_PAYLOAD
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_gateway import nats_rpc
from platform_gateway.errors import UnavailableError, from_control_error

_Reply = TypeVar("_Reply", bound=Message)
_READ_HEADROOM = 64 * 1024  # of a NATS message, for headers


class RecorderClient:
    """Lists recordings and saved snapshots and reads their metadata through the recorder; stores
    and reads comparisons of agents."""

    def __init__(self, nc: NATS, *, timeout: float = 10.0) -> None:
        self._nc = nc
        self._timeout = timeout

    async def list_recordings(
        self, env_id: str | None = None, session_id: str | None = None, life: str | None = None,
        team: str | None = None,
    ) -> list[dict[str, Any]]:
        """Recording summaries (only `team`'s when given), newest first: meta.json without
        episodes, with `episode_count` and `saved_snapshots`."""
        filters = (("env_id", env_id), ("session_id", session_id), ("life", life), ("team", team))
        body = {k: v for k, v in filters if v}
        reply = await self._call(subjects.RECORDER_LIST_RECORDINGS, body)
        return list(reply.get("recordings", []))

    async def get_recording(self, recording_id: str) -> dict[str, Any]:
        reply = await self._call(subjects.RECORDER_GET_RECORDING, {"id": recording_id})
        return dict(reply.get("recording") or {})

    async def recording_files(self, recording_id: str) -> list[dict[str, Any]]:
        """The recording's finished files: [{"name", "size"}]."""
        reply = await self._call(subjects.RECORDER_RECORDING_FILES, {"id": recording_id})
        return list(reply.get("files", []))

    async def episode(
        self, recording_id: str, index: int, arrays: list[str] | None = None, frames: list[int] | None = None
    ) -> dict[str, Any]:
        """A finished episode: summary, array names and shapes, frame count, and the arrays
        (`{"dtype", "shape", "data"}`) and frames (base64 JPEG by index) asked for."""
        body: dict[str, Any] = {"id": recording_id, "episode": index}
        if arrays:
            body["arrays"] = arrays
        if frames:
            body["frames"] = frames
        return await self._call(subjects.RECORDER_EPISODE, body)

    async def episode_digests(self, recording_id: str, index: int) -> list[str]:
        """The hex digest of each observation row of a finished episode."""
        reply = await self._call(subjects.RECORDER_EPISODE_DIGESTS, {"id": recording_id, "episode": index})
        return list(reply.get("observations", []))

    async def delete_recording(self, recording_id: str) -> int:
        """Delete a closed recording; returns how many objects went."""
        reply = await self._call(subjects.RECORDER_DELETE_RECORDING, {"id": recording_id})
        return int(reply.get("deleted", 0))

    @property
    def read_chunk(self) -> int:
        """Bytes per read: MAX_RECORDING_READ_BYTES, or less when the NATS server's max payload is smaller."""
        max_payload = int(getattr(self._nc, "max_payload", 0) or NATS_DEFAULT_MAX_PAYLOAD)
        return max(1, min(MAX_RECORDING_READ_BYTES, max_payload - _READ_HEADROOM))

    async def read_file(self, recording_id: str, name: str, offset: int, length: int) -> bytes:
        """Up to `length` bytes of a finished file from `offset` (fewer at its end)."""
        body = {"id": recording_id, "name": name, "offset": offset, "length": length}
        msg = await nats_rpc.request_msg(self._nc, subjects.RECORDER_READ_FILE, json.dumps(body).encode(),
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
        reply = await self._call_proto(subjects.RECORDER_LIST_SNAPSHOTS, request, ctl.ListSavedSnapshotsReply)
        return list(reply.snapshots)

    async def get_saved_snapshot(self, snapshot_id: str) -> env_pb.SavedSnapshot:
        request = ctl.GetSavedSnapshotRequest(id=snapshot_id, with_state=False)
        reply = await self._call_proto(subjects.RECORDER_GET_SNAPSHOT, request, ctl.GetSavedSnapshotReply)
        return reply.snapshot

    async def save_comparison(self, document: dict[str, Any]) -> dict[str, Any]:
        """Store a comparison; the stored document, with the `id` and `created` the recorder gave it."""
        reply = await self._call(subjects.RECORDER_SAVE_COMPARISON, {"document": document})
        return dict(reply.get("comparison") or {})

    async def list_comparisons(self) -> list[dict[str, Any]]:
        """Comparison summaries, newest first: id, created, env, the agents' names, steps, window."""
        reply = await self._call(subjects.RECORDER_LIST_COMPARISONS, {})
        return list(reply.get("comparisons", []))

    async def get_comparison(self, comparison_id: str) -> dict[str, Any]:
        reply = await self._call(subjects.RECORDER_GET_COMPARISON, {"id": comparison_id})
        return dict(reply.get("comparison") or {})

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

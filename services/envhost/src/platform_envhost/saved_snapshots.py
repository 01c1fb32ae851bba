"""`save_snapshot` and `restore_saved`: saved snapshots, kept durably by the recorder.

save_snapshot: the instance exports its whole state (`export_state`), the env host sends it
with the snapshot's description to the recorder (NATS request `RECORDER_SAVE_SNAPSHOT`,
control `SaveSnapshotRequest`) and answers `SaveSnapshotResponse{saved}` with the id the
recorder gave. restore_saved: the env host gets the snapshot with its state from the recorder
(`RECORDER_GET_SNAPSHOT`), checks that it is of the session's environment and arguments, and
the instance imports it (`import_state`); the answer's `seconds` is the instance's time to
load it, as `import_state` said (the recorder's read is not in it).

Both run under the instance's lock, so the state saved is the session's state between two of
its requests. On a vector instance they address one sub-environment (`index`; a request
outside a batch addresses sub-environment 0, as every command does).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from platform_bus import BusUnavailableError
from platform_bus import request as bus_request
from platform_contracts.names import label_problem
from platform_contracts import subjects
from platform_contracts.limits import NATS_DEFAULT_MAX_PAYLOAD
from platform_contracts.teams import owning_team
from simulusion.control.v1 import control_pb2 as control_pb
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_envhost.session_instance import Instance

log = logging.getLogger(__name__)

RECORDER_TIMEOUT_S = 30.0
STATE_HEADROOM_BYTES = 16 * 1024  # the request's other fields and headers, beside the state
_CONTROL_CODES = {
    "invalid_argument": env_pb.ERROR_CODE_INVALID_ARGUMENT,
    "not_found": env_pb.ERROR_CODE_NOT_FOUND,
    "failed_precondition": env_pb.ERROR_CODE_FAILED_PRECONDITION,
    "unavailable": env_pb.ERROR_CODE_UNAVAILABLE,
    "unimplemented": env_pb.ERROR_CODE_UNIMPLEMENTED,
}
SAVED_COMMANDS = frozenset({"save_snapshot", "restore_saved"})

# Sends one command to the instance (or to one of its sub-environments) and returns its answer.
Call = Callable[[env_pb.EnvRequest], Awaitable[env_pb.EnvResponse]]


class RecorderUnavailable(Exception):
    """The recorder did not answer."""


def _error(request_id: int, code: env_pb.ErrorCode.ValueType, message: str) -> env_pb.EnvResponse:
    return env_pb.EnvResponse(id=request_id, error=env_pb.Error(code=code, message=message))


class SavedSnapshots:
    """Answers save_snapshot and restore_saved of the sessions of one env host.

    Args:
        nc: the env host's NATS client; None answers both with UNAVAILABLE.
        timeout: seconds to wait for the recorder's answer.
    """

    def __init__(self, nc: Any, timeout: float = RECORDER_TIMEOUT_S) -> None:
        self._nc = nc
        self._timeout = timeout

    async def save(self, instance: Instance, request: env_pb.EnvRequest, call: Call,
                   index: int = 0) -> env_pb.EnvResponse:
        """Export the state of the instance (its sub-environment `index`) and keep it."""
        where = _where(instance, index)
        problem = label_problem(request.save_snapshot.label)
        if problem is not None:  # the stream's protobuf path reaches here without the gateway's schema
            return _error(request.id, env_pb.ERROR_CODE_INVALID_ARGUMENT, f"{where}: the snapshot's label: {problem}")
        exported = await call(env_pb.EnvRequest(id=request.id, export_state=env_pb.ExportStateRequest()))
        if exported.HasField("error"):
            error = exported.error
            prefix = f"{where} cannot be saved: " if error.code == env_pb.ERROR_CODE_UNIMPLEMENTED else f"{where}: "
            return _error(request.id, error.code, prefix + error.message)
        state = exported.export_state
        builder = instance.builder(index)
        snapshot = env_pb.SavedSnapshot(
            label=request.save_snapshot.label, session_id=instance.session_id, env_id=instance.env_id,
            kwargs_json=instance.kwargs_json, created_at=time.time(), seq=builder.seq if builder else 0,
            size_bytes=len(state.state), team=owning_team(instance.options.team),
        )
        message = control_pb.SaveSnapshotRequest(snapshot=snapshot, state=state.state, format=state.format)
        limit = self._max_payload()
        if message.ByteSize() + STATE_HEADROOM_BYTES > limit:
            return _error(request.id, env_pb.ERROR_CODE_FAILED_PRECONDITION,
                          f"{where} cannot be saved: its state is {len(state.state):,} bytes, more than a NATS "
                          f"message may carry here ({limit:,} bytes, the NATS server's max_payload; raise it "
                          "in the server's config)")
        try:
            reply = control_pb.SaveSnapshotReply.FromString(
                await self._request(subjects.RECORDER_SAVE_SNAPSHOT, message.SerializeToString()))
        except RecorderUnavailable as exc:
            return _error(request.id, env_pb.ERROR_CODE_UNAVAILABLE, f"{where}: the snapshot was not saved: {exc}")
        if reply.HasField("error"):
            return _error(request.id, _code(reply.error.code),
                          f"{where}: the recorder did not save the snapshot: {reply.error.message}")
        log.info("%s: saved snapshot %s (%d bytes)", where, reply.snapshot.id, len(state.state))
        return env_pb.EnvResponse(id=request.id, save_snapshot=env_pb.SaveSnapshotResponse(saved=reply.snapshot))

    async def restore(self, instance: Instance, request: env_pb.EnvRequest, call: Call,
                      index: int = 0) -> env_pb.EnvResponse:
        """Return the instance (its sub-environment `index`) to a saved snapshot."""
        where = _where(instance, index)
        snapshot_id = request.restore_saved.id
        if not snapshot_id:
            return _error(request.id, env_pb.ERROR_CODE_INVALID_ARGUMENT,
                          f"{where}: restore_saved names no saved snapshot (its id is empty)")
        get = control_pb.GetSavedSnapshotRequest(id=snapshot_id, with_state=True)
        try:
            reply = control_pb.GetSavedSnapshotReply.FromString(
                await self._request(subjects.RECORDER_GET_SNAPSHOT, get.SerializeToString()))
        except RecorderUnavailable as exc:
            return _error(request.id, env_pb.ERROR_CODE_UNAVAILABLE,
                          f"{where}: saved snapshot {snapshot_id!r} could not be read: {exc}")
        if reply.HasField("error"):
            return _error(request.id, _code(reply.error.code),
                          f"{where}: saved snapshot {snapshot_id!r}: {reply.error.message}")
        saved = reply.snapshot
        if owning_team(saved.team) != owning_team(instance.options.team):
            # Another team's snapshot answers as a missing one does (PLATFORM_MODE=managed).
            return _error(request.id, env_pb.ERROR_CODE_NOT_FOUND,
                          f"{where}: saved snapshot {snapshot_id!r}: saved snapshot {snapshot_id!r} not found")
        mismatch = _mismatch(instance, saved)
        if mismatch:
            return _error(request.id, env_pb.ERROR_CODE_FAILED_PRECONDITION,
                          f"{where}: saved snapshot {snapshot_id!r} is of another environment: {mismatch}")
        imported = await call(env_pb.EnvRequest(id=request.id, import_state=env_pb.ImportStateRequest(
            state=reply.state, format=reply.format)))
        if imported.HasField("error"):
            return _error(request.id, imported.error.code,
                          f"{where}: saved snapshot {snapshot_id!r} could not be loaded: {imported.error.message}")
        result = imported.import_state
        restored = env_pb.RestoreSavedResponse(observation=result.observation, info=result.info)
        if result.HasField("seconds"):  # the instance's own time to load it (an older one does not say)
            restored.seconds = result.seconds
        return env_pb.EnvResponse(id=request.id, restore_saved=restored)

    def _max_payload(self) -> int:
        return int(getattr(self._nc, "max_payload", 0) or NATS_DEFAULT_MAX_PAYLOAD)

    async def _request(self, subject: str, payload: bytes) -> bytes:
        """The recorder's answer to one request.

        Raises:
            RecorderUnavailable: no NATS, no recorder listening, or no answer in time.
        """
        if self._nc is None:
            raise RecorderUnavailable("this env host has no NATS connection to reach the recorder")
        try:
            msg = await bus_request(self._nc, subject, payload, timeout=self._timeout, service="recorder")
        except BusUnavailableError as exc:
            raise RecorderUnavailable(str(exc)) from None
        return msg.data


def _where(instance: Instance, index: int) -> str:
    where = f"session {instance.session_id} ({instance.env_id})"
    return f"{where} sub-environment {index}" if instance.num_envs > 1 else where


def _code(control_code: str) -> env_pb.ErrorCode.ValueType:
    return _CONTROL_CODES.get(control_code, env_pb.ERROR_CODE_INTERNAL)


def _mismatch(instance: Instance, saved: env_pb.SavedSnapshot) -> str:
    """Why `saved` cannot be loaded into `instance` ("" when it can)."""
    if saved.env_id != instance.env_id:
        return f"it is of {saved.env_id!r}, this session of {instance.env_id!r}"
    if _kwargs(saved.kwargs_json) != _kwargs(instance.kwargs_json):
        return (f"it was saved with the arguments {saved.kwargs_json or '{}'}, this session has "
                f"{instance.kwargs_json or '{}'}")
    return ""


def _kwargs(text: str) -> Any:
    try:
        return json.loads(text) if text else {}
    except json.JSONDecodeError:
        return text

"""Environment commands made by the gateway itself (REST, WebSocket text): JSON in, JSON out.

Requests get ids from the gateway's own counter (far above the SDK's, so the two never
collide on a stream), carry the current trace context in `trace_context`, and go through
the session's stream like the SDK's binary requests.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from opentelemetry import trace
from platform_contracts import limits
from platform_contracts.json_values import ValueMismatchError, value_from_json
from platform_contracts.tracing import inject_dict
from platform_contracts.values import datamap_from_dict
from simulusion.control.v1 import control_pb2 as ctl
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_gateway import json_views
from platform_gateway.errors import (
    ConflictError,
    GatewayError,
    InternalError,
    InvalidActionError,
    InvalidArgumentError,
    NotFoundError,
    SessionGoneError,
    UnavailableError,
    UnimplementedError,
)
from platform_gateway.holds import check_hold
from platform_gateway.session_directory import gone_error
from platform_gateway.session_streams import SessionStreams

_ids = itertools.count(1 << 48)
_NO_FRAMES = ("", "human", "ansi")  # render modes without frames (as the environment server's)


class EnvCommands:
    """reset / step / snapshot / restore / render of a session, as JSON-ready dicts (the
    `*_response` methods: the env host's answer, for the stream's own views)."""

    def __init__(self, streams: SessionStreams) -> None:
        self.streams = streams

    async def reset(self, session_id: str, seed: int | None = None, options: dict[str, Any] | None = None) -> dict[str, Any]:
        info, response = await self.reset_response(session_id, seed, options)
        return json_views.reset_json(response.reset, info.spec)

    async def reset_response(
        self, session_id: str, seed: int | None = None, options: dict[str, Any] | None = None, render: bool = False
    ) -> tuple[ctl.SessionInfo, env_pb.EnvResponse]:
        """The session and the env host's answer to a reset; with `render`, its frame too (for an
        environment that renders frames: `renders_frames`)."""
        command = env_pb.ResetRequest(options=datamap_from_dict(options))
        if seed is not None:
            if not limits.MIN_SEED <= seed <= limits.MAX_SEED:  # REST checks it too
                raise InvalidArgumentError(
                    f"session {session_id}, reset: seed {seed} is out of range: it is {limits.MIN_SEED} to "
                    f"{limits.MAX_SEED:,} (2**63 - 1)"
                )
            command.seed = seed
        info = await self.streams.directory.running(session_id)
        command.render = render and renders_frames(info)
        return info, await self._run(info, "reset", env_pb.EnvRequest(reset=command))

    async def step(
        self, session_id: str, action: Any, agent: dict[str, Any] | None = None, auto_reset: bool = False
    ) -> dict[str, Any]:
        info, response = await self.step_response(session_id, action, agent, auto_reset)
        return {**json_views.step_json(response.step, info.spec), "warnings": list(response.warnings)}

    async def step_response(
        self, session_id: str, action: Any, agent: dict[str, Any] | None = None, auto_reset: bool = False,
        render: bool = False,
    ) -> tuple[ctl.SessionInfo, env_pb.EnvResponse]:
        """The session and the env host's answer to a step (`action` as JSON); with `render`, the
        frame after it too (for an environment that renders frames)."""
        info = await self.streams.directory.running(session_id)
        value = self._action(info, action, "step")
        command = env_pb.StepRequest(action=value, agent=datamap_from_dict(agent), auto_reset=auto_reset,
                                     render=render and renders_frames(info))
        return info, await self._run(info, "step", env_pb.EnvRequest(step=command))

    async def hold(
        self, session_id: str, action: Any, steps: int, frames: bool = True, agent: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Repeat one action for up to `steps` steps in one stretch (see HoldRequest)."""
        info = await self.streams.directory.running(session_id)
        check_hold(steps, frames, f"session {session_id} ({info.options.env_id}), hold")
        value = self._action(info, action, "hold")
        command = env_pb.HoldRequest(action=value, steps=steps, frames=frames, agent=datamap_from_dict(agent))
        response = await self._run(info, "hold", env_pb.EnvRequest(hold=command))
        return {**json_views.hold_json(response.hold), "warnings": list(response.warnings)}

    async def save_snapshot(self, session_id: str, label: str = "") -> dict[str, Any]:
        """Keep the session's state durably (through the env host and the recorder)."""
        info = await self.streams.directory.running(session_id)
        request = env_pb.EnvRequest(save_snapshot=env_pb.SaveSnapshotRequest(label=label))
        response = await self._run(info, "save_snapshot", request)
        return json_views.saved_snapshot_json(response.save_snapshot.saved)

    async def restore_saved(self, session_id: str, snapshot_id: str) -> dict[str, Any]:
        """Return the session to a saved snapshot of the same environment and arguments."""
        info, response = await self.restore_saved_response(session_id, snapshot_id)
        return json_views.restore_json(response.restore_saved, info.spec)

    async def restore_saved_response(self, session_id: str, snapshot_id: str) -> tuple[ctl.SessionInfo,
                                                                                          env_pb.EnvResponse]:
        info = await self.streams.directory.running(session_id)
        request = env_pb.EnvRequest(restore_saved=env_pb.RestoreSavedRequest(id=snapshot_id))
        return info, await self._run(info, "restore_saved", request)

    async def world_changes(self, session_id: str) -> dict[str, Any]:
        """The session's world-change timeline and the changes applied so far (the env host's log).

        Raises:
            SessionGoneError: the session ended; its message says where a recorded session keeps them.
        """
        try:
            info = await self.streams.directory.running(session_id)
            request = env_pb.EnvRequest(world_changes=env_pb.WorldChangesRequest())
            answer = (await self._run(info, "world_changes", request)).world_changes
        except SessionGoneError as exc:
            raise SessionGoneError(
                f"{exc.message}: a session's world changes are listed only while it runs; when it was recorded, "
                f"its recording's world_changes keeps them (GET /v0/recordings/{session_id})",
                log_tail=exc.log_tail,
            ) from None
        return {
            "session_id": session_id,
            "timeline": json.loads(answer.timeline_json) if answer.timeline_json else [],
            "applied": [json.loads(text) for text in answer.applied_json],
        }

    @staticmethod
    def _action(info: ctl.SessionInfo, action: Any, command: str) -> Any:
        try:
            return value_from_json(action, info.spec.action_space)
        except ValueMismatchError as exc:
            raise InvalidActionError(f"session {info.id} ({info.options.env_id}), {command}: {exc}") from None

    async def snapshot(self, session_id: str) -> dict[str, Any]:
        info = await self.streams.directory.running(session_id)
        response = await self._run(info, "snapshot", env_pb.EnvRequest(snapshot=env_pb.SnapshotRequest()))
        return {"handle": response.snapshot.handle}

    async def restore(self, session_id: str, handle: str) -> dict[str, Any]:
        info, response = await self.restore_response(session_id, handle)
        return json_views.restore_json(response.restore, info.spec)

    async def restore_response(self, session_id: str, handle: str) -> tuple[ctl.SessionInfo, env_pb.EnvResponse]:
        info = await self.streams.directory.running(session_id)
        request = env_pb.EnvRequest(restore=env_pb.RestoreRequest(handle=handle))
        return info, await self._run(info, "restore", request)

    async def render(self, session_id: str) -> env_pb.Frame:
        info = await self.streams.directory.running(session_id)
        response = await self._run(info, "render", env_pb.EnvRequest(render=env_pb.RenderRequest()))
        return response.render.frame

    async def _run(self, info: ctl.SessionInfo, command: str, request: env_pb.EnvRequest) -> env_pb.EnvResponse:
        session_id = info.id
        request.id = next(_ids)
        if trace.get_current_span().get_span_context().is_valid:
            inject_dict(request.trace_context)  # type: ignore[arg-type]
        data = await self.streams.exchange(session_id, request.SerializeToString())
        response = env_pb.EnvResponse.FromString(data)
        if response.HasField("error"):
            raise await self._error(info, command, response.error)
        if response.id != request.id:
            self.streams.drop(session_id)
            raise InternalError(
                f"session {session_id} ({info.options.env_id}), {command}: the env host answered request "
                f"{response.id} instead of {request.id}"
            )
        return response

    async def _error(self, info: ctl.SessionInfo, command: str, error: env_pb.Error) -> GatewayError:
        code, message = error.code, error.message
        where = f"session {info.id} ({info.options.env_id}), {command}"
        if code == env_pb.ERROR_CODE_INVALID_ACTION:
            return InvalidActionError(message or f"{where}: invalid action")
        if code == env_pb.ERROR_CODE_INVALID_ARGUMENT:
            return InvalidArgumentError(message or f"{where}: invalid argument")
        if code == env_pb.ERROR_CODE_UNAVAILABLE:
            self.streams.forget(info.id)
            return SessionGoneError(message or f"{where}: the environment instance died", log_tail=error.log_tail)
        if code == env_pb.ERROR_CODE_SESSION_CLOSED:
            self.streams.forget(info.id)
            return SessionGoneError(message or f"{where}: the session was closed")
        if code in (env_pb.ERROR_CODE_NOT_FOUND, env_pb.ERROR_CODE_FAILED_PRECONDITION):
            gone = await self._ended(info.id)
            if gone is not None:
                return gone
            cls = NotFoundError if code == env_pb.ERROR_CODE_NOT_FOUND else ConflictError
            return cls(f"{where}: {message or env_pb.ErrorCode.Name(code)}")
        if code in (env_pb.ERROR_CODE_UNAUTHENTICATED, env_pb.ERROR_CODE_PERMISSION_DENIED):
            self.streams.drop(info.id)  # the env host closed the link: a new one gets a new ticket
            return UnavailableError(f"{where}: the env host refused the gateway's step ticket ({message}); "
                                    "PLATFORM_STEP_TICKET_SECRET must be the same on the gateway and every env host")
        if code == env_pb.ERROR_CODE_UNIMPLEMENTED:
            return UnimplementedError(f"{where}: not supported by this environment ({_first_line(message)})")
        return InternalError(f"{where} failed: {_first_line(message) or env_pb.ErrorCode.Name(code)}")

    async def _ended(self, session_id: str) -> SessionGoneError | None:
        """A SessionGoneError if the broker says the session ended (e.g. closed while idle)."""
        try:
            error = gone_error(await self.streams.directory.fresh(session_id))
        except GatewayError:
            return None
        if isinstance(error, SessionGoneError):
            self.streams.forget(session_id)
            return error
        return None


def renders_frames(info: ctl.SessionInfo) -> bool:
    """The session's environment renders frames (a render mode such as "rgb_array", not none,
    "human" or "ansi"): asking it for one does not fail the command."""
    return info.spec.render_mode not in _NO_FRAMES


def _first_line(message: str) -> str:
    """The message without a traceback: its last line when it holds one."""
    if "Traceback (most recent call last)" in message:
        lines = [line for line in message.strip().splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""
    return message.strip()

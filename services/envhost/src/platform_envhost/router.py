"""The step path: `simulusion.env.v1.Environment/Connect` served by the env host.

Each stream names its session with the `session-id` metadata key. Request bytes go to the
session's instance unchanged and the response bytes come back unchanged; a request is parsed
(cheaply) only to learn its id and command. For a recorded session the response of a reset,
step, restore or snapshot is then parsed too and turned into an event for the publisher.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from opentelemetry import trace
from platform_contracts import subjects
from platform_contracts.tracing import extract_dict, inject_dict
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_envhost.errors import InstanceGone
from platform_envhost.instance import Instance, State
from platform_envhost.instances import InstanceTable
from platform_envhost.publisher import EventPublisher

log = logging.getLogger(__name__)

SERVICE_NAME = "simulusion.env.v1.Environment"
RECORDED_COMMANDS = frozenset({"reset", "step", "restore", "snapshot"})
# Appended to a request's bytes, these merge `render = true` into its reset or step command
# (protobuf merges repeated occurrences of a message field), so it is never re-encoded.
_WITH_FRAME = {
    "reset": env_pb.EnvRequest(reset=env_pb.ResetRequest(render=True)).SerializeToString(),
    "step": env_pb.EnvRequest(step=env_pb.StepRequest(render=True)).SerializeToString(),
}


def _error(request_id: int, code: int, message: str) -> bytes:
    return env_pb.EnvResponse(id=request_id, error=env_pb.Error(code=code, message=message)).SerializeToString()


class Router:
    """Routes each session's requests to its instance, one at a time per instance."""

    def __init__(self, table: InstanceTable, publisher: EventPublisher, host_id: str,
                 tracer: trace.Tracer | None = None) -> None:
        self._table = table
        self._publisher = publisher
        self._host_id = host_id
        self._tracer = tracer or trace.get_tracer(__name__)

    def handler(self) -> grpc.GenericRpcHandler:
        """The generic handler to add to a grpc.aio server (bytes in, bytes out)."""
        method = grpc.stream_stream_rpc_method_handler(self.connect, request_deserializer=None,
                                                       response_serializer=None)
        return grpc.method_handlers_generic_handler(SERVICE_NAME, {"Connect": method})

    async def connect(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        session_id = ""
        for key, value in context.invocation_metadata() or ():
            if key == subjects.SESSION_ID_METADATA:
                session_id = value if isinstance(value, str) else value.decode()
                break
        read, write, handle = context.read, context.write, self.handle
        while True:
            raw = await read()
            if raw is grpc.aio.EOF:
                return
            await write(await handle(session_id, raw))

    async def handle(self, session_id: str, raw: bytes) -> bytes:
        """Answer one request of `session_id` (its bytes); always returns an EnvResponse's bytes."""
        try:
            request = env_pb.EnvRequest.FromString(raw)
        except DecodeError as exc:
            return _error(0, env_pb.ERROR_CODE_INVALID_ARGUMENT,
                          f"session {session_id}: the request is not an EnvRequest: {exc}")
        instance = self._table.get(session_id)
        if instance is None:
            if not session_id:
                message = f"no session: the stream has no {subjects.SESSION_ID_METADATA!r} metadata"
            else:
                message = f"session {session_id} is not running on env host {self._host_id}"
            return _error(request.id, env_pb.ERROR_CODE_NOT_FOUND, message)
        if instance.state is not State.RUNNING:
            return self._not_running(instance, request.id)
        instance.last_active_at = time.time()
        if instance.record_frames:
            raw = ask_for_frame(request, raw)
        carrier = request.trace_context
        if carrier:
            ctx = extract_dict(carrier)
            if trace.get_current_span(ctx).get_span_context().is_valid:
                command = request.WhichOneof("command") or ""
                with self._tracer.start_as_current_span(
                    f"envhost.{command}", context=ctx, kind=trace.SpanKind.SERVER,
                    attributes={"session.id": session_id, "env.id": instance.env_id},
                ):
                    child = inject_dict()
                    # Appended map entries override earlier ones: the instance sees our span as parent.
                    raw += env_pb.EnvRequest(trace_context=child).SerializeToString()
                    return await self._forward(instance, request, raw, child)
        return await self._forward(instance, request, raw, None)

    async def _forward(self, instance: Instance, request: env_pb.EnvRequest, raw: bytes,
                       trace_headers: dict[str, str] | None) -> bytes:
        async with instance.lock:
            if instance.state is not State.RUNNING:
                return self._not_running(instance, request.id)
            try:
                response = await instance.forward(raw)
            except InstanceGone as exc:
                if instance.state is State.RUNNING:
                    await self._table.broken(instance, str(exc))
                return self._not_running(instance, request.id)
            events = instance.events
            if events is not None and request.WhichOneof("command") in RECORDED_COMMANDS:
                headers = dict(trace_headers if trace_headers is not None else request.trace_context)
                event = events.build(request, env_pb.EnvResponse.FromString(response), time.time(), headers)
                if event is not None and not self._publisher.submit_nowait(event):
                    await self._publisher.submit(event)  # backlog full: this step waits
        return response

    def _not_running(self, instance: Instance, request_id: int) -> bytes:
        if instance.state is State.DEAD:
            return instance.unavailable(request_id)
        return _error(request_id, env_pb.ERROR_CODE_FAILED_PRECONDITION,
                      f"session {instance.session_id} ({instance.env_id}) was closed")


def ask_for_frame(request: env_pb.EnvRequest, raw: bytes) -> bytes:
    """`raw` with `render = true` set on a reset or step that does not ask for its frame."""
    command = request.WhichOneof("command")
    suffix = _WITH_FRAME.get(command or "")
    if suffix is None or getattr(request, command).render:  # type: ignore[arg-type]
        return raw
    return raw + suffix

"""What a single session (`RemoteEnv`) and a vector session (`RemoteVectorEnv`) share.

Opening (POST /v0/sessions, then the stream and the environment's spec), closing, the context
manager, the requests over the stream with their tracing (a span per request, its context in
`EnvRequest.trace_context`, only when OpenTelemetry is installed and a tracer provider is
configured) and the errors, mapped by `error_map` and named after the session, its environment
and the request.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from platform_contracts.tracing import current_span_valid, get_tracer, inject_dict, setup_client_tracing, tracing_on
from simulusion.env.v1 import environment_pb2 as env_pb

from platform_sdk import errors
from platform_sdk.client.error_map import error_from_env
from platform_sdk.client.rest import RestClient
from platform_sdk.client.session_settings import SessionSettings
from platform_sdk.client.settings import resolve_token, resolve_url
from platform_sdk.client.stream import SessionStream

_tracer = get_tracer("platform_sdk")


class PlatformSession:
    """A session on the platform, seen from the SDK: its REST client and its stream.

    Subclasses call `_open` in their `__init__` and `_close_session` from their close (it
    ends the session when the object is left by a `with` block or garbage-collected too).
    """

    env_id: str
    session_id: str
    session: dict[str, Any]
    _closed: bool = True
    _stream: SessionStream | None = None

    def _open(self, env_id: str, settings: SessionSettings, fields: dict[str, Any]) -> env_pb.SpecResponse:
        """Create the session (`fields`: the create request's, from `settings.create_fields`), open
        its stream (`settings.direct`: try the env host's step link first, see `SessionStream`) and
        return its spec."""
        self.env_id = env_id
        self._closed = False
        self._stream = None
        setup_client_tracing()  # export the requests' spans when the OTEL_* variables say so
        token = resolve_token(settings.token)
        self._rest = RestClient(resolve_url(settings.url), token)
        try:
            self.session = self._rest.create_session(env_id, fields)
        except errors.PlatformError:
            self._rest.close()
            raise
        self.session_id = self.session["id"]
        try:
            self._stream = SessionStream(self._rest.url, self.session_id, token,
                                         reconnect_timeout=settings.reconnect_timeout, direct=settings.direct,
                                         rest=self._rest)
            return self._call(env_pb.EnvRequest(spec=env_pb.SpecRequest()), "spec", idempotent=True).spec
        except BaseException:
            self._close_session()
            raise

    def _close_session(self) -> None:
        """Close the stream and the session (DELETE /v0/sessions/{id}). Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._stream is not None:
            self._stream.close()
        if getattr(self, "session_id", None):
            self._rest.close_session(self.session_id)
        self._rest.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self._close_session()
        return False  # an exception in the block goes on

    def __del__(self) -> None:
        try:
            self._close_session()
        except Exception:  # noqa: BLE001, S110 - never raise from a finalizer
            pass

    @property
    def step_path(self) -> str:
        """The path steps take now: "direct" (the env host's step link) or "gateway"."""
        if self._stream is None:
            raise errors.SessionClosedError(f"session {getattr(self, 'session_id', '?')} ({self.env_id}) is closed")
        return self._stream.path

    def world_changes(self) -> dict[str, Any]:
        """The session's world changes: {"session_id", "timeline": its `world_changes` kwarg,
        "applied": each change applied so far, oldest first: the timeline entry plus "index",
        "session_step", "seq" (its recorded step event, 0 unrecorded), "time" and, in a vector
        session, "env_index"} (GET /v0/sessions/{id}/world-changes).

        Raises:
            SessionClosedError: the session has ended (a recorded one's changes are in its
                recording's `world_changes`).
        """
        if self._closed:
            raise errors.SessionClosedError(
                f"session {getattr(self, 'session_id', '?')} ({self.env_id}) is closed: its world changes, when it "
                "was recorded, are in its recording's world_changes", session_id=getattr(self, "session_id", None))
        return self._rest.world_changes(self.session_id)

    # -- requests -----------------------------------------------------------------------------
    def _ready_stream(self) -> SessionStream:
        if self._closed or self._stream is None:
            raise errors.SessionClosedError(f"session {getattr(self, 'session_id', '?')} ({self.env_id}) is closed")
        return self._stream

    def _call(self, request: env_pb.EnvRequest, what: str, idempotent: bool = False) -> env_pb.EnvResponse:
        """Send `request` and return its response; an error response raises (`what`: its name)."""
        stream = self._ready_stream()
        try:
            if not tracing_on():
                response = stream.call(request, idempotent)  # no tracing configured: a span would be a no-op
            else:
                with _tracer.start_as_current_span(f"env.{what}", attributes={"session.id": self.session_id}) as span:
                    if span.get_span_context().is_valid:
                        inject_dict(request.trace_context)  # type: ignore[arg-type]
                    response = stream.call(request, idempotent)
        except errors.OutcomeUnknownError as exc:
            raise self._outcome_unknown(exc, what) from None
        if response.HasField("error"):
            raise self._error(response.error, what)
        return response

    def _traced(self, request: env_pb.EnvRequest) -> None:
        """Put the current trace context (when there is a valid one) in `request`."""
        if tracing_on() and current_span_valid():
            inject_dict(request.trace_context)  # type: ignore[arg-type]

    def _where(self, what: str) -> str:
        """The request named for an error message: "session <id> (<env>), <what>"."""
        return f"session {self.session_id} ({self.env_id}), {what}"

    def _error(self, error: env_pb.Error, what: str) -> errors.PlatformError:
        return error_from_env(error, self._where(what), self.session_id)

    def _outcome_unknown(self, exc: errors.OutcomeUnknownError, what: str) -> errors.OutcomeUnknownError:
        detail = str(exc).removeprefix(f"session {self.session_id}: ")
        return errors.OutcomeUnknownError(
            f"{self._where(what)}: the outcome is unknown: {detail}. The session goes on: the next call reconnects",
            session_id=self.session_id,
        )

"""A session's recent traces (`GET /v0/sessions/{id}/trace`): the spans every service keeps in
memory of the session's newest steps."""

from __future__ import annotations

from pydantic import BaseModel, Field


class TraceSpanPublic(BaseModel):
    trace_id: str = Field(description="32 hex digits: the trace (one step, or one request of the client)")
    span_id: str = Field(description="16 hex digits")
    parent_span_id: str | None = Field(description="the parent span's id; null for a root span (its parent may "
                                       "also be a span this platform did not keep: the client's)")
    name: str = Field(description="the hop: envhost.step, env.step (the instance), recorder.write, ...")
    service: str = Field(description="the process that made it: platform-envhost, platform-env-server, "
                         "platform-recorder, platform-gateway, ...")
    start: float = Field(description="seconds since the epoch (microsecond precision)")
    duration_ms: float = Field(description="milliseconds")
    kind: str = Field(description="server, client, internal, producer or consumer")
    error: bool = Field(description="the span's status is an error")
    attributes: dict[str, str] = Field(description="the span's attributes, as text (session.id, env.id, ...)")


class SessionTracePublic(BaseModel):
    session_id: str
    services: list[str] = Field(description="the services that answered, each once (an env host's answer includes "
                                "its instances' spans)")
    traces: int = Field(description="how many traces the spans belong to (at most the `steps` asked for)")
    spans: list[TraceSpanPublic] = Field(description="by trace (oldest trace first), then by start")

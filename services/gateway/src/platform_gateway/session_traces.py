"""A session's recent traces from the services' answers (`platform_bus.recent_spans`): merged,
each span once, the newest `steps` traces, ordered for a waterfall."""

from __future__ import annotations

from collections.abc import Iterable

from simulusion.traces.v1 import traces_pb2

from platform_gateway.schemas.traces import SessionTracePublic, TraceSpanPublic

MAX_STEPS = 200  # the most traces one answer of the route holds


def session_trace(session_id: str, answers: Iterable[traces_pb2.RecentSpansReply], steps: int) -> SessionTracePublic:
    """The newest `steps` traces of the spans in `answers`, each span once, by trace then start."""
    services: list[str] = []
    spans: dict[tuple[str, str], traces_pb2.Span] = {}
    for answer in answers:
        if answer.service and answer.service not in services:
            services.append(answer.service)
        for span in answer.spans:
            spans.setdefault((span.trace_id, span.span_id), span)
    starts: dict[str, int] = {}
    for span in spans.values():
        starts[span.trace_id] = min(starts.get(span.trace_id, span.start_unix_nano), span.start_unix_nano)
    kept = sorted(starts, key=starts.__getitem__)[-steps:]
    order = {trace_id: index for index, trace_id in enumerate(kept)}
    chosen = sorted((span for span in spans.values() if span.trace_id in order),
                    key=lambda span: (order[span.trace_id], span.start_unix_nano, span.span_id))
    return SessionTracePublic(session_id=session_id, services=sorted(services), traces=len(kept),
                              spans=[_public(span) for span in chosen])


def _public(span: traces_pb2.Span) -> TraceSpanPublic:
    return TraceSpanPublic(
        trace_id=span.trace_id, span_id=span.span_id, parent_span_id=span.parent_span_id or None, name=span.name,
        service=span.service, start=round(span.start_unix_nano / 1e9, 6), duration_ms=span.duration_nano / 1e6,
        kind=span.kind or "internal", error=span.error, attributes=dict(span.attributes))

"""The last few minutes of a process's own spans, in memory: what the web app's trace view is
made of, without a tracing backend.

`RecentSpans` is a SpanProcessor that keeps finished spans, at most `MAX_SPANS` of them and none
older than `MAX_AGE_S` (the oldest go first); `session_spans` answers the spans of a session's
newest traces. A trace belongs to a session when one of its spans in this process has the
attribute `session.id` (the env host's, the recorder's and the SDK's spans have it); its other
spans here come with it. `SpanFile` is the same for an environment instance, which has no bus: it
appends its finished spans to a file of JSON lines that its env host reads (`read_span_file`).

Imports the OpenTelemetry SDK: services and instances only, never the client wheel's base.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import StatusCode
from simulusion.traces.v1 import traces_pb2

log = logging.getLogger(__name__)

MAX_SPANS = 20_000  # a process keeps at most this many spans ...
MAX_AGE_S = 300.0  # ... none older than this
SESSION_ATTRIBUTE = "session.id"
MAX_TRACES = 200  # the most traces one answer holds
SPAN_FILE_MAX_BYTES = 1 << 20  # an instance's span file is rotated past this (one older file kept)
_MAX_ATTRIBUTES = 32
_MAX_TEXT = 256
_KINDS = {trace.SpanKind.SERVER: "server", trace.SpanKind.CLIENT: "client", trace.SpanKind.INTERNAL: "internal",
          trace.SpanKind.PRODUCER: "producer", trace.SpanKind.CONSUMER: "consumer"}


def span_message(span: ReadableSpan, service: str = "") -> traces_pb2.Span:
    """A finished span as a `simulusion.traces.v1.Span`."""
    context = span.get_span_context()
    parent = span.parent
    start = span.start_time or 0
    attributes = {key: str(value)[:_MAX_TEXT] for key, value in list((span.attributes or {}).items())[:_MAX_ATTRIBUTES]}
    return traces_pb2.Span(
        trace_id=format(context.trace_id if context else 0, "032x"),
        span_id=format(context.span_id if context else 0, "016x"),
        parent_span_id=format(parent.span_id, "016x") if parent is not None else "",
        name=span.name, service=service or str(span.resource.attributes.get("service.name", "")),
        start_unix_nano=start, duration_nano=max((span.end_time or start) - start, 0),
        attributes=attributes, kind=_KINDS.get(span.kind, "internal"),
        error=span.status.status_code is StatusCode.ERROR)


def _newest_traces(spans: Sequence[ReadableSpan], session_id: str, max_traces: int) -> set[int]:
    """The ids of the newest `max_traces` traces that a span of `spans` ties to `session_id`."""
    traces: dict[int, int] = {}
    for span in spans:
        if (span.attributes or {}).get(SESSION_ATTRIBUTE) == session_id and span.context is not None:
            trace_id = span.context.trace_id
            traces[trace_id] = max(traces.get(trace_id, 0), span.start_time or 0)
    newest = sorted(traces, key=traces.__getitem__)[-max_traces:] if max_traces > 0 else []
    return set(newest)


class RecentSpans(SpanProcessor):
    """Keeps this process's finished spans, bounded by count and age (see the module)."""

    def __init__(self, max_spans: int = MAX_SPANS, max_age_s: float = MAX_AGE_S) -> None:
        self.max_age_ns = int(max_age_s * 1e9)
        self._spans: deque[ReadableSpan] = deque(maxlen=max_spans)  # appends are atomic: no lock

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        self._spans.append(span)

    def shutdown(self) -> None:
        self._spans.clear()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    def spans(self) -> list[ReadableSpan]:
        """The spans kept and not too old, oldest first (older ones are dropped here)."""
        cutoff = time.time_ns() - self.max_age_ns
        while self._spans and (self._spans[0].end_time or 0) < cutoff:
            try:
                self._spans.popleft()
            except IndexError:
                break
        for _ in range(8):  # a span ended on another thread while copying: copy again
            try:
                kept = list(self._spans)
                break
            except RuntimeError:
                continue
        else:
            return []
        return [span for span in kept if (span.end_time or 0) >= cutoff]

    def session_spans(self, session_id: str, max_traces: int = 20,
                      extra_trace_ids: Iterable[int] = ()) -> tuple[list[traces_pb2.Span], set[int]]:
        """The spans of the newest `max_traces` traces of `session_id` (and of `extra_trace_ids`),
        and those traces' ids."""
        spans = self.spans()
        traces = _newest_traces(spans, session_id, min(max_traces, MAX_TRACES)) | set(extra_trace_ids)
        return [span_message(span) for span in spans if span.context is not None
                and span.context.trace_id in traces], traces


class SpanFile(SpanProcessor):
    """An environment instance's finished spans, appended to `path` as JSON lines (rotated to
    `<path>.1` past `SPAN_FILE_MAX_BYTES`), for its env host to read."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._size = self.path.stat().st_size if self.path.exists() else 0

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        message = span_message(span)
        line = (json.dumps({
            "trace_id": message.trace_id, "span_id": message.span_id, "parent_span_id": message.parent_span_id,
            "name": message.name, "service": message.service, "start_unix_nano": message.start_unix_nano,
            "duration_nano": message.duration_nano, "attributes": dict(message.attributes), "kind": message.kind,
            "error": message.error}, separators=(",", ":")) + "\n").encode()
        with self._lock:
            try:
                if self._size + len(line) > SPAN_FILE_MAX_BYTES:
                    os.replace(self.path, self.path.with_name(self.path.name + ".1"))
                    self._size = 0
                with open(self.path, "ab") as out:
                    out.write(line)
                self._size += len(line)
            except OSError as exc:  # never the instance's failure
                log.debug("cannot write the span file %s: %s", self.path, exc)

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def _text(value: Any) -> str:
    return value[:_MAX_TEXT] if isinstance(value, str) else ""


def _number(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 63 else 0


def _span_from_json(line: bytes) -> traces_pb2.Span | None:
    """One line of a span file, or None when it is not one (the file is written by an instance,
    which runs users' code: nothing in it is trusted beyond its shape)."""
    try:
        item = json.loads(line)
    except ValueError:
        return None
    if not isinstance(item, dict) or not isinstance(item.get("trace_id"), str):
        return None
    attributes = item.get("attributes")
    attributes = attributes if isinstance(attributes, dict) else {}
    return traces_pb2.Span(
        trace_id=_text(item.get("trace_id")), span_id=_text(item.get("span_id")),
        parent_span_id=_text(item.get("parent_span_id")), name=_text(item.get("name")),
        service=_text(item.get("service")), start_unix_nano=_number(item.get("start_unix_nano")),
        duration_nano=_number(item.get("duration_nano")), kind=_text(item.get("kind")),
        error=item.get("error") is True,
        attributes={_text(k): _text(v) for k, v in list(attributes.items())[:_MAX_ATTRIBUTES] if isinstance(v, str)})


def read_span_file(path: str | os.PathLike[str], trace_ids: set[str], max_age_s: float = MAX_AGE_S) -> list[traces_pb2.Span]:
    """The spans of an instance's span file (and its rotated older one) whose trace id is one
    of `trace_ids` (hex) and that are not older than `max_age_s`; none when there is no file."""
    if not trace_ids:
        return []
    cutoff = time.time_ns() - int(max_age_s * 1e9)
    found = []
    base = Path(path)
    for file in (base.with_name(base.name + ".1"), base):
        try:
            data = file.read_bytes()[-2 * SPAN_FILE_MAX_BYTES:]
        except OSError:
            continue
        for line in data.splitlines():
            span = _span_from_json(line)
            if span is not None and span.trace_id in trace_ids and span.start_unix_nano + span.duration_nano >= cutoff:
                found.append(span)
    return found

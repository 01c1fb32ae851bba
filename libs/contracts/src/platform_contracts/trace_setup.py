"""A process's TracerProvider: its name, its exporters (`trace_export`), its in-memory buffer of
recent spans (`recent_spans`), and the tracer that starts a trace for an untraced step.

Called through `platform_contracts.tracing.setup_tracing`, once per process (later calls give the
same set-up). Imports the OpenTelemetry SDK.
"""

from __future__ import annotations

import logging
import os
import random
from dataclasses import dataclass

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_ON

from platform_contracts.recent_spans import RecentSpans, SpanFile
from platform_contracts.trace_export import TraceExportError, span_exporters, step_root_ratio

log = logging.getLogger(__name__)

# Set by an env host for its instances: the file an instance appends its finished spans to
# (`recent_spans.SpanFile`), read back by the env host for the trace view.
SPAN_FILE_VARIABLE = "SIMULUSION_SPAN_FILE"


@dataclass
class TracingSetup:
    provider: TracerProvider
    recent: RecentSpans | None  # None in an instance (its spans go to its span file)
    service_name: str
    # Untraced steps: the share the env host starts a trace for, and the tracer that does
    # (sampling always: the share is decided before, by `sample_step_root`).
    step_root_ratio: float
    step_root_tracer: trace.Tracer

    def sample_step_root(self) -> bool:
        """Whether to start a trace for one untraced step (one float comparison when the ratio is 0)."""
        ratio = self.step_root_ratio
        return ratio > 0.0 and (ratio >= 1.0 or random.random() < ratio)


_setup: TracingSetup | None = None


def install(service_name: str, *, keep_recent: bool = True) -> TracingSetup:
    """Set the process's TracerProvider up (or add to one already set: a test's or an
    application's). `keep_recent`: keep recent spans in memory (services; not the SDK client)."""
    global _setup
    if _setup is not None:
        return _setup
    name = os.environ.get("OTEL_SERVICE_NAME", "").strip() or service_name
    existing = trace.get_tracer_provider()
    if isinstance(existing, TracerProvider):
        provider = existing
    else:  # its sampler comes from OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (the SDK reads them)
        provider = TracerProvider(resource=Resource.create({"service.name": name}))
    span_file = os.environ.get(SPAN_FILE_VARIABLE, "")
    recent: RecentSpans | None = None
    processors: list[SpanProcessor] = []
    if span_file:
        processors.append(SpanFile(span_file))
    elif keep_recent:
        recent = RecentSpans()
        processors.append(recent)
    try:
        processors += [BatchSpanProcessor(exporter) for exporter in span_exporters()]
    except TraceExportError as exc:
        log.error("spans are not exported: %s", exc)
    for processor in processors:
        provider.add_span_processor(processor)
    if provider is not existing:
        trace.set_tracer_provider(provider)
    roots = TracerProvider(sampler=ALWAYS_ON, resource=provider.resource, shutdown_on_exit=False,
                           active_span_processor=provider._active_span_processor)
    _setup = TracingSetup(provider, recent, name, step_root_ratio(), roots.get_tracer(service_name))
    return _setup


def current() -> TracingSetup | None:
    """The process's set-up, or None before `install`."""
    return _setup

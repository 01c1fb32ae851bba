"""OpenTelemetry set-up and trace-context propagation across HTTP, NATS headers, gRPC
metadata and the `trace_context` field of environment requests.

Every service and instance gets a TracerProvider (`setup_tracing`), so spans are real, their
context flows from the SDK to the environment and the recorder, and they are exported as the
standard OTEL_* variables say and kept in memory for a while (`trace_setup`).

OpenTelemetry is optional on the client side: the client wheel the gateway serves installs
without it (its `tracing` extra adds it). Without it, carriers stay empty, `tracing_on()` is
false and `get_tracer`/`setup_tracing` give a tracer whose spans do nothing, so the SDK sends
its requests untraced. With it, everything here is plain OpenTelemetry.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

try:
    from opentelemetry import context, propagate, trace
except ImportError:  # the client wheel's base install: no tracing
    OPENTELEMETRY = False
else:
    OPENTELEMETRY = True


_log = logging.getLogger(__name__)


class _NoSpanContext:
    is_valid = False
    trace_id = 0
    span_id = 0


class _NoSpan:
    """What a span offers the SDK, doing nothing (OpenTelemetry is not installed)."""

    def get_span_context(self) -> _NoSpanContext:
        return _NoSpanContext()

    def is_recording(self) -> bool:
        return False

    def set_attribute(self, key: str, value: Any) -> None:
        pass

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        pass

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> None:
        pass

    def record_exception(self, exception: BaseException, *args: Any, **kwargs: Any) -> None:
        pass

    def set_status(self, *args: Any, **kwargs: Any) -> None:
        pass

    def end(self, end_time: int | None = None) -> None:
        pass


class _NoTracer:
    """A tracer whose spans do nothing, for a process without OpenTelemetry."""

    @contextmanager
    def start_as_current_span(self, name: str, *args: Any, **kwargs: Any) -> Iterator[_NoSpan]:
        yield _NoSpan()

    def start_span(self, name: str, *args: Any, **kwargs: Any) -> _NoSpan:
        return _NoSpan()


def get_tracer(name: str) -> trace.Tracer:
    """`opentelemetry.trace.get_tracer(name)`, or a tracer of no-op spans without OpenTelemetry."""
    if not OPENTELEMETRY:
        return cast("trace.Tracer", _NoTracer())
    return trace.get_tracer(name)


def tracing_on() -> bool:
    """Whether spans are recorded: OpenTelemetry is installed and a tracer provider is set (with
    the API's default, a proxy, every span would be a no-op)."""
    return OPENTELEMETRY and not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def current_span_valid() -> bool:
    """Whether there is a current span with a valid context (never without OpenTelemetry)."""
    return OPENTELEMETRY and trace.get_current_span().get_span_context().is_valid


def setup_tracing(service_name: str) -> trace.Tracer:
    """Install an SDK TracerProvider named after the service (once per process; `OTEL_SERVICE_NAME`
    names it instead), with the exporters the OTEL_* variables ask for and the buffer of recent
    spans (`platform_contracts.trace_setup`)."""
    if not OPENTELEMETRY:
        return get_tracer(service_name)
    try:
        from platform_contracts import trace_setup
    except ImportError:  # the API alone still propagates context
        return trace.get_tracer(service_name)
    trace_setup.install(service_name)
    return trace.get_tracer(service_name)


def export_requested(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the OTEL_* variables ask for spans to be exported (an exporter other than `none`,
    or an OTLP endpoint)."""
    env = os.environ if environ is None else environ
    exporters = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporters:
        return any(name.strip() not in ("", "none") for name in exporters.split(","))
    return bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


_client_checked = False


def setup_client_tracing(service_name: str = "platform-sdk") -> None:
    """The SDK client's tracing, once per process: when the OTEL_* variables ask for export, a
    TracerProvider that exports as they say (added to the application's own provider when it set
    one), so each request of the client is a span (`tracing_on`). Without OpenTelemetry (the
    client's base install) it says once, in a warning, which extra brings it."""
    global _client_checked
    if _client_checked:
        return
    _client_checked = True
    if not export_requested():
        return
    if not OPENTELEMETRY:
        _log.warning("OTEL_* variables ask for traces, but OpenTelemetry is not installed: "
                     "pip install 'platform_sdk[tracing]' to trace the client's requests")
        return
    try:
        from platform_contracts import trace_setup
    except ImportError:
        _log.warning("OTEL_* variables ask for traces, but the OpenTelemetry SDK is not installed: "
                     "pip install 'platform_sdk[tracing]' to trace the client's requests")
        return
    trace_setup.install(service_name, keep_recent=False)


def inject_dict(carrier: dict[str, str] | None = None, ctx: context.Context | None = None) -> dict[str, str]:
    """The current (or given) trace context as a dict: NATS headers, a request's trace_context
    (left as given without OpenTelemetry)."""
    carrier = {} if carrier is None else carrier
    if OPENTELEMETRY:
        propagate.inject(carrier, context=ctx)
    return carrier


def extract_dict(carrier: Mapping[str, str] | None) -> context.Context:
    if not OPENTELEMETRY:
        return cast("context.Context", {})
    return propagate.extract(dict(carrier or {}))


def grpc_metadata(extra: Iterable[tuple[str, str]] = (), ctx: context.Context | None = None) -> list[tuple[str, str]]:
    """gRPC metadata carrying the trace context, plus `extra` pairs."""
    return list(extra) + list(inject_dict(ctx=ctx).items())


def extract_grpc_metadata(metadata: Iterable[Any] | None) -> context.Context:
    if not OPENTELEMETRY:
        return cast("context.Context", {})
    return propagate.extract({k: v for k, v in (metadata or ()) if isinstance(v, str)})

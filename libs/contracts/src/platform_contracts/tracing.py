"""OpenTelemetry set-up and trace-context propagation across HTTP, NATS headers, gRPC
metadata and the `trace_context` field of environment requests.

Exporting spans is configured later; here every service gets a TracerProvider so spans are
real and their context flows from the SDK to the environment and the recorder.

OpenTelemetry is optional on the client side: the client wheel the gateway serves installs
without it (its `tracing` extra adds it). Without it, carriers stay empty, `tracing_on()` is
false and `get_tracer`/`setup_tracing` give a tracer whose spans do nothing, so the SDK sends
its requests untraced. With it, everything here is plain OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

try:
    from opentelemetry import context, propagate, trace
except ImportError:  # the client wheel's base install: no tracing
    OPENTELEMETRY = False
else:
    OPENTELEMETRY = True


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
    """Install an SDK TracerProvider named after the service (once per process)."""
    if not OPENTELEMETRY:
        return get_tracer(service_name)
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError:  # the API alone still propagates context
        return trace.get_tracer(service_name)
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider(resource=Resource.create({"service.name": service_name})))
    return trace.get_tracer(service_name)


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

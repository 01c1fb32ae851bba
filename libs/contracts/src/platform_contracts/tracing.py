"""OpenTelemetry set-up and trace-context propagation across HTTP, NATS headers, gRPC
metadata and the `trace_context` field of environment requests.

Exporting spans is configured later; here every service gets a TracerProvider so spans are
real and their context flows from the SDK to the environment and the recorder.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from opentelemetry import context, propagate, trace


def setup_tracing(service_name: str) -> trace.Tracer:
    """Install an SDK TracerProvider named after the service (once per process)."""
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError:  # the API alone still propagates context
        return trace.get_tracer(service_name)
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(TracerProvider(resource=Resource.create({"service.name": service_name})))
    return trace.get_tracer(service_name)


def inject_dict(carrier: dict[str, str] | None = None, ctx: context.Context | None = None) -> dict[str, str]:
    """The current (or given) trace context as a dict: NATS headers, a request's trace_context."""
    carrier = {} if carrier is None else carrier
    propagate.inject(carrier, context=ctx)
    return carrier


def extract_dict(carrier: Mapping[str, str] | None) -> context.Context:
    return propagate.extract(dict(carrier or {}))


def grpc_metadata(extra: Iterable[tuple[str, str]] = (), ctx: context.Context | None = None) -> list[tuple[str, str]]:
    """gRPC metadata carrying the trace context, plus `extra` pairs."""
    return list(extra) + list(inject_dict(ctx=ctx).items())


def extract_grpc_metadata(metadata: Iterable[Any] | None) -> context.Context:
    return propagate.extract({k: v for k, v in (metadata or ()) if isinstance(v, str)})

"""Where a process's spans go, from the standard OpenTelemetry variables (services and the
environment instances; the SDK client when its `tracing` extra is installed).

- `OTEL_TRACES_EXPORTER`: a comma-separated list of `otlp`, `console`, `none`. Unset: `otlp` when
  `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, else `none` (the
  SDK's own default, `otlp` to localhost, would try to export from every process of a platform
  that has no collector).
- `OTEL_EXPORTER_OTLP_PROTOCOL` (or `..._TRACES_PROTOCOL`): `http/protobuf` (default) or `grpc`;
  the endpoint, headers, timeout and compression are read by the exporter itself
  (`OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`, `..._HEADERS`, ...), the batching by the SDK's
  `BatchSpanProcessor` (`OTEL_BSP_SCHEDULE_DELAY`, ...).
- `OTEL_SERVICE_NAME`: the resource's `service.name` (unset: the process's own name).
- `OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG`: read by the SDK's `TracerProvider`; also
  `step_root_ratio`: which share of the untraced steps the env host starts a trace for.
- `OTEL_SDK_DISABLED=true`: no exporter.

This module imports the OpenTelemetry SDK: only `platform_contracts.tracing.setup_tracing` imports
it, lazily, so the client wheel's base install (no OpenTelemetry) never does.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SpanExporter

log = logging.getLogger(__name__)

EXPORTERS = ("otlp", "console", "none")
PROTOCOLS = ("http/protobuf", "grpc")
_RATIO_SAMPLERS = ("traceidratio", "parentbased_traceidratio")
_ON_SAMPLERS = ("always_on", "parentbased_always_on")


class TraceExportError(ValueError):
    """A variable names an exporter or protocol this process cannot use (the message says which
    and what to set or install)."""


def exporter_names(environ: Mapping[str, str] | None = None) -> list[str]:
    """The exporters the variables ask for (`otlp`, `console`), in order, without `none`.

    Raises:
        TraceExportError: an unknown name in `OTEL_TRACES_EXPORTER`.
    """
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return []
    listed = env.get("OTEL_TRACES_EXPORTER")
    if listed is None or not listed.strip():
        endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        return ["otlp"] if endpoint else []
    names = [name.strip().lower() for name in listed.split(",") if name.strip()]
    unknown = [name for name in names if name not in EXPORTERS]
    if unknown:
        raise TraceExportError(f"OTEL_TRACES_EXPORTER={listed!r}: unknown exporter {unknown[0]!r}; "
                               f"use {', '.join(EXPORTERS)} (comma-separated)")
    return [name for name in dict.fromkeys(names) if name != "none"]


def otlp_protocol(environ: Mapping[str, str] | None = None) -> str:
    """The OTLP protocol for traces: `http/protobuf` unless a variable says `grpc`.

    Raises:
        TraceExportError: a protocol other than `http/protobuf` and `grpc` (`http/json` among them).
    """
    env = os.environ if environ is None else environ
    for name in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        value = env.get(name, "").strip().lower()
        if value:
            if value not in PROTOCOLS:
                raise TraceExportError(f"{name}={value!r}: the platform exports OTLP as "
                                       f"{' or '.join(PROTOCOLS)}")
            return value
    return "http/protobuf"


def otlp_exporter(protocol: str) -> SpanExporter:
    """The OTLP span exporter of `protocol`; it reads its endpoint, headers and timeout itself.

    Raises:
        TraceExportError: the protocol's exporter package is not installed.
    """
    try:
        if protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc

            return Grpc()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as Http

        return Http()
    except ImportError as exc:
        package = "opentelemetry-exporter-otlp-proto-" + ("grpc" if protocol == "grpc" else "http")
        raise TraceExportError(f"OTLP over {protocol} needs the package {package} ({exc}); "
                               "install it, or set OTEL_EXPORTER_OTLP_PROTOCOL to the other protocol") from None


def span_exporters(environ: Mapping[str, str] | None = None) -> list[SpanExporter]:
    """The exporters the variables ask for.

    Raises:
        TraceExportError: see `exporter_names`, `otlp_protocol` and `otlp_exporter`.
    """
    exporters: list[SpanExporter] = []
    for name in exporter_names(environ):
        exporters.append(ConsoleSpanExporter() if name == "console" else otlp_exporter(otlp_protocol(environ)))
    return exporters


def step_root_ratio(environ: Mapping[str, str] | None = None) -> float:
    """Which share (0 to 1) of the steps that come without a trace context the env host starts a
    trace for: `OTEL_TRACES_SAMPLER_ARG` with a ratio sampler (`traceidratio`,
    `parentbased_traceidratio`; 1 without the argument, as the SDK), 1 with `always_on` or
    `parentbased_always_on` set explicitly, else 0: unset, no step is traced unless its client
    traces it."""
    env = os.environ if environ is None else environ
    sampler = env.get("OTEL_TRACES_SAMPLER", "").strip().lower()
    if sampler in _ON_SAMPLERS:
        return 1.0
    if sampler not in _RATIO_SAMPLERS:
        return 0.0
    argument = env.get("OTEL_TRACES_SAMPLER_ARG", "").strip()
    if not argument:
        return 1.0
    try:
        ratio = float(argument)
    except ValueError:
        log.warning("OTEL_TRACES_SAMPLER_ARG=%r is not a number: sampling every trace, as the SDK does", argument)
        return 1.0
    return min(max(ratio, 0.0), 1.0)

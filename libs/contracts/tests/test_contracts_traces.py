"""Where spans go (the OTEL_* variables, `trace_export`) and what a process keeps of them
(`recent_spans`: the in-memory buffer, bounded by count and age; an instance's span file)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter
from platform_contracts import recent_spans
from platform_contracts.recent_spans import RecentSpans, SpanFile, read_span_file
from platform_contracts.trace_export import (
    TraceExportError,
    exporter_names,
    span_exporters,
    step_root_ratio,
)
from platform_contracts.tracing import export_requested


def test_nothing_is_exported_unless_a_variable_asks() -> None:
    assert exporter_names({}) == [] and not export_requested({})
    assert exporter_names({"OTEL_TRACES_EXPORTER": "none"}) == [] and not export_requested({"OTEL_TRACES_EXPORTER": "none"})
    assert exporter_names({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}) == ["otlp"]
    assert exporter_names({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}) == ["otlp"]
    assert exporter_names({"OTEL_TRACES_EXPORTER": "otlp, console,otlp"}) == ["otlp", "console"]
    assert exporter_names({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}) == []
    assert export_requested({"OTEL_TRACES_EXPORTER": "console"})


def test_the_protocol_picks_the_exporter_and_bad_names_are_named() -> None:
    http, console = span_exporters({"OTEL_TRACES_EXPORTER": "otlp,console"})
    assert isinstance(http, HttpExporter) and isinstance(console, ConsoleSpanExporter)
    (grpc,) = span_exporters({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert isinstance(grpc, GrpcExporter)
    (http,) = span_exporters({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
                              "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"})  # the traces' own wins
    assert isinstance(http, HttpExporter)
    with pytest.raises(TraceExportError, match="unknown exporter 'zipkin'"):
        exporter_names({"OTEL_TRACES_EXPORTER": "otlp,zipkin"})
    with pytest.raises(TraceExportError, match="OTEL_EXPORTER_OTLP_PROTOCOL='http/json'.*http/protobuf or grpc"):
        span_exporters({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})


@pytest.mark.parametrize(("environ", "ratio"), [
    ({}, 0.0),  # unset: only the steps a client traces
    ({"OTEL_TRACES_SAMPLER": "parentbased_always_off"}, 0.0),
    ({"OTEL_TRACES_SAMPLER": "parentbased_always_on"}, 1.0),
    ({"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.05"}, 0.05),
    ({"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "7"}, 1.0),
    ({"OTEL_TRACES_SAMPLER": "traceidratio"}, 1.0),
    ({"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "lots"}, 1.0),  # as the SDK
])
def test_the_share_of_untraced_steps_given_a_trace(environ: dict[str, str], ratio: float) -> None:
    assert step_root_ratio(environ) == ratio


def _provider(*processors) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": "svc"}))
    for processor in processors:
        provider.add_span_processor(processor)
    return provider


def test_a_sessions_traces_come_whole_and_newest_first_kept() -> None:
    recent = RecentSpans()
    tracer = _provider(recent).get_tracer("t")
    trace_ids = []
    for session in ("s1", "s2", "s1", "s1"):
        with tracer.start_as_current_span("step", attributes={"session.id": session}) as root:
            with tracer.start_as_current_span("inner"):  # no session.id: comes with its trace
                pass
            trace_ids.append(root.get_span_context().trace_id)
    with tracer.start_as_current_span("heartbeat"):
        pass
    spans, traces = recent.session_spans("s1", max_traces=2)
    assert traces == {trace_ids[2], trace_ids[3]}
    assert sorted((s.name, s.service) for s in spans) == [("inner", "svc"), ("inner", "svc"), ("step", "svc"), ("step", "svc")]
    inner = next(s for s in spans if s.name == "inner")
    root = next(s for s in spans if s.name == "step" and s.trace_id == inner.trace_id)
    assert inner.parent_span_id == root.span_id and root.parent_span_id == ""
    assert root.attributes["session.id"] == "s1" and root.kind == "internal" and root.duration_nano >= 0
    assert recent.session_spans("nobody")[0] == []


def test_the_buffer_is_bounded_by_count_and_age() -> None:
    recent = RecentSpans(max_spans=3, max_age_s=0.2)
    tracer = _provider(recent).get_tracer("t")
    for i in range(5):
        with tracer.start_as_current_span(f"s{i}", attributes={"session.id": "s"}):
            pass
    assert [s.name for s in recent.spans()] == ["s2", "s3", "s4"]
    time.sleep(0.3)
    assert recent.spans() == [] and recent.session_spans("s")[0] == []


def test_an_instances_span_file_is_read_back_by_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "i.spans.jsonl"
    tracer = _provider(SpanFile(path)).get_tracer("t")
    with tracer.start_as_current_span("env.step") as span:
        wanted = format(span.get_span_context().trace_id, "032x")
    with tracer.start_as_current_span("env.reset"):
        pass
    with open(path, "ab") as out:  # what users' code could leave in it: skipped
        odd = {"trace_id": wanted, "start_unix_nano": time.time_ns(), "name": ["x"], "attributes": {"a": 1, "b": "c"}}
        stale = {"trace_id": wanted, "start_unix_nano": 1}  # older than the buffer keeps
        out.write(b"not json\n[1]\n" + json.dumps(odd).encode() + b"\n" + json.dumps(stale).encode() + b"\n")
    (found, odd_span) = read_span_file(path, {wanted})
    assert found.name == "env.step" and found.service == "svc" and found.trace_id == wanted
    assert odd_span.name == "" and dict(odd_span.attributes) == {"b": "c"}
    assert read_span_file(tmp_path / "none.jsonl", {wanted}) == []
    monkeypatch.setattr(recent_spans, "SPAN_FILE_MAX_BYTES", 400)  # rotated: the older file is read too
    rotating = tmp_path / "r.spans.jsonl"
    tracer = _provider(SpanFile(rotating)).get_tracer("t")
    ids = []
    for _ in range(4):
        with tracer.start_as_current_span("env.step") as span:
            ids.append(format(span.get_span_context().trace_id, "032x"))
    assert (tmp_path / "r.spans.jsonl.1").exists()
    assert len(read_span_file(rotating, set(ids))) >= 2


def test_a_process_set_up_keeps_its_spans_and_samples_step_roots_apart() -> None:
    """`setup_tracing` in a process of its own: named by OTEL_SERVICE_NAME, its sampler the
    SDK's (a tiny ratio: its own roots are dropped), while the env host's tracer of untraced
    steps records each one it is asked for, into the same buffer."""
    script = textwrap.dedent("""
        from opentelemetry import trace
        from platform_contracts import trace_setup
        from platform_contracts.tracing import setup_tracing, tracing_on
        tracer = setup_tracing("platform-x")
        setup = trace_setup.current()
        assert tracing_on() and setup.service_name == "named" and setup.step_root_ratio == 1e-9
        with tracer.start_as_current_span("dropped", attributes={"session.id": "s"}):
            pass
        with setup.step_root_tracer.start_as_current_span("envhost.step", attributes={"session.id": "s"}):
            pass
        spans, _ = setup.recent.session_spans("s")
        assert [(s.name, s.service) for s in spans] == [("envhost.step", "named")], spans
        assert trace_setup.install("again") is setup
        print("ok")
    """)
    env = {"PATH": os.environ.get("PATH", ""), "OTEL_SERVICE_NAME": "named",
           "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "1e-9"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr

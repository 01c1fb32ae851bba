"""Traces leave the platform over OTLP and are kept in memory for the trace view.

A platform whose services and instances export to an OTLP receiver of the test's
(`platform_testing.otlp_receiver`: a real HTTP server taking `/v1/traces` protobuf posts), and
whose env host starts a trace for every untraced step (`OTEL_TRACES_SAMPLER=parentbased_always_on`).
An SDK client in a process of its own, with the standard variables and nothing else, records one
step: its spans and the platform's form one trace across every process (the SDK, the gateway on
its path, the env host, the instance, the recorder's write), parent links intact; `GET /v0/sessions/{id}/trace` answers
that step's spans from the services' memory; an untraced client's steps get a trace of the env
host's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest
from platform_testing.otlp_receiver import OtlpReceiver, ReceivedSpan
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.waiting import wait_for

OTEL = {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_BSP_SCHEDULE_DELAY": "100", "OTEL_TRACES_SAMPLER": "parentbased_always_on"}
CLIENT = """
import sys, platform_sdk
with platform_sdk.connect("cartpole", url=sys.argv[1], record=True) as env:
    env.reset(seed=0)
    env.step(0)
    print(env.session_id)
"""


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[PlatformStack, OtlpReceiver]]:
    with OtlpReceiver() as receiver, running_platform(
            tmp_path_factory.mktemp("otlp"), extra_env={**OTEL, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}) as stack:
        yield stack, receiver


def run_client(url: str, otel: dict[str, str], direct: bool = True) -> str:
    """One recorded session of one step, in a process of its own with `otel` as its only OTEL_*
    variables (on the gateway's path unless `direct`); its session id."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PLATFORM_"))} | otel
    if not direct:
        env["PLATFORM_DIRECT"] = "0"
    done = subprocess.run([sys.executable, "-c", CLIENT, url], capture_output=True, text=True, timeout=120,
                          env=env, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def step_trace(receiver: OtlpReceiver, session_id: str) -> list[ReceivedSpan]:
    """The received spans of the trace of the SDK's `env.step` span of `session_id`, once the env
    host's, the instance's and the recorder's are in."""
    def complete() -> list[ReceivedSpan] | None:
        spans = receiver.spans()
        sdk = [s for s in spans if s.name == "env.step" and s.service == "platform-sdk"
               and s.attributes.get("session.id") == session_id]
        if not sdk:
            return None
        trace = [s for s in spans if s.trace_id == sdk[0].trace_id]
        services = {s.service for s in trace}
        return trace if {"platform-envhost", "platform-env-server", "platform-recorder"} <= services else None

    return wait_for(complete, timeout=30, what=f"the spans of session {session_id}'s step from every process")


def one(spans: list[ReceivedSpan], name: str, service: str) -> ReceivedSpan:
    found = [s for s in spans if s.name == name and s.service == service]
    assert len(found) == 1, (name, service, spans)
    return found[0]


@pytest.fixture(scope="module")
def sdk_session(traced: tuple[PlatformStack, OtlpReceiver]) -> str:
    stack, receiver = traced
    return run_client(stack.url, {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "50"})


def test_a_recorded_step_is_one_trace_from_the_sdk_to_the_recorders_write(traced, sdk_session: str) -> None:
    _, receiver = traced
    trace = step_trace(receiver, sdk_session)
    client = one(trace, "env.step", "platform-sdk")
    envhost = one(trace, "envhost.step", "platform-envhost")
    instance = one(trace, "env.step", "platform-env-server")
    write = one(trace, "recorder.write", "platform-recorder")
    assert client.parent_span_id == ""  # the SDK's request is the root
    assert envhost.parent_span_id == client.span_id
    assert instance.parent_span_id == envhost.span_id
    assert write.parent_span_id == envhost.span_id
    assert envhost.attributes["session.id"] == write.attributes["session.id"] == sdk_session
    assert client.start_unix_nano <= envhost.start_unix_nano <= instance.start_unix_nano
    assert instance.end_unix_nano <= envhost.end_unix_nano <= client.end_unix_nano


def test_on_the_gateways_path_the_gateway_is_a_hop_of_the_trace(traced) -> None:
    stack, receiver = traced
    session_id = run_client(stack.url, {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "50"},
                            direct=False)
    trace = step_trace(receiver, session_id)
    client = one(trace, "env.step", "platform-sdk")
    gateway = one(trace, "gateway.step", "platform-gateway")
    envhost = one(trace, "envhost.step", "platform-envhost")
    assert gateway.parent_span_id == client.span_id and envhost.parent_span_id == gateway.span_id
    assert one(trace, "env.step", "platform-env-server").parent_span_id == envhost.span_id
    assert one(trace, "recorder.write", "platform-recorder").parent_span_id == envhost.span_id
    assert gateway.attributes["session.id"] == session_id


def test_the_trace_route_answers_the_steps_spans_from_memory(traced, sdk_session: str) -> None:
    stack, receiver = traced
    step = one(step_trace(receiver, sdk_session), "envhost.step", "platform-envhost")
    answer = httpx.get(f"{stack.url}/v0/sessions/{sdk_session}/trace", params={"steps": 20}, timeout=30)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["session_id"] == sdk_session
    assert {"platform-envhost", "platform-recorder", "platform-gateway", "platform-broker"} <= set(body["services"])
    spans = [s for s in body["spans"] if s["trace_id"] == step.trace_id]
    by_name = {(s["name"], s["service"]): s for s in spans}
    assert set(by_name) == {("envhost.step", "platform-envhost"), ("env.step", "platform-env-server"),
                            ("recorder.write", "platform-recorder")}, spans
    envhost = by_name["envhost.step", "platform-envhost"]
    assert envhost["span_id"] == step.span_id and envhost["parent_span_id"] == step.parent_span_id
    assert by_name["env.step", "platform-env-server"]["parent_span_id"] == envhost["span_id"]
    assert by_name["recorder.write", "platform-recorder"]["parent_span_id"] == envhost["span_id"]
    assert all(s["duration_ms"] >= 0 and s["start"] > 1e9 for s in spans)
    assert envhost["attributes"]["env.id"] == "cartpole"


def test_the_env_host_traces_an_untraced_clients_steps(traced) -> None:
    stack, _ = traced
    session_id = run_client(stack.url, {})  # no OTEL_* variable: the client sends no trace context

    def traces() -> dict[str, list[dict]] | None:
        body = httpx.get(f"{stack.url}/v0/sessions/{session_id}/trace", timeout=30).json()
        found: dict[str, list[dict]] = {}
        for span in body["spans"]:
            found.setdefault(span["trace_id"], []).append(span)
        steps = {t: s for t, s in found.items() if any(x["name"] == "envhost.step" for x in s)
                 and any(x["name"] == "recorder.write" for x in s)}
        return steps or None

    trace = next(iter(wait_for(traces, timeout=30, what="the untraced step's trace").values()))
    root = next(s for s in trace if s["name"] == "envhost.step")
    assert root["parent_span_id"] is None  # the env host started it
    assert {s["parent_span_id"] for s in trace if s["name"] in ("env.step", "recorder.write")} == {root["span_id"]}


def test_the_trace_route_refuses_what_it_cannot_answer(traced) -> None:
    stack, _ = traced
    assert httpx.get(f"{stack.url}/v0/sessions/s-nowhere/trace", timeout=30).status_code == 404
    too_many = httpx.get(f"{stack.url}/v0/sessions/s-nowhere/trace", params={"steps": 0}, timeout=30)
    assert too_many.status_code == 422 and "steps" in too_many.text

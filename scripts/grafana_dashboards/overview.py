"""The platform overview: sessions, steps, instances, the recorder, NATS and JetStream, the
gateway's HTTP traffic and the services' processes."""

from __future__ import annotations

from grafana_foundation_sdk.builders.dashboard import Dashboard, Row
from platform_contracts import metric_names as m

from grafana_dashboards.panels import (
    BY_REPLICA,
    bucket,
    count,
    family,
    graph,
    label_variable,
    new_dashboard,
    quantiles,
    rate,
    service_and_replica_variables,
    single,
    spec_named,
)

UID = "simulusion-overview"
# The broker's session states that hold an environment instance (closed and crashed rows stay in
# the table, so the sessions' gauge counts them too).
OPEN_STATES = 'state=~"starting|running"'
ENVIRONMENT = 'environment=~"$environment"'


def dashboard() -> Dashboard:
    board = new_dashboard(
        UID, "Simulusion: platform overview",
        "Sessions, step rates and latencies, environment instances, the recorder's lag, NATS and JetStream, "
        "HTTP traffic and the services' processes, from the gateway's /metrics.", ["overview"])
    board = board.with_variable(label_variable("environment", "environment", family(m.SESSIONS)))
    for variable in service_and_replica_variables():
        board = board.with_variable(variable)
    for add in (_sessions, _steps, _instances, _recorder, _nats, _http, _processes):
        board = add(board)
    return board


def _sessions(board: Dashboard) -> Dashboard:
    sessions, created, failed = family(m.SESSIONS), family(m.SESSIONS_CREATED), family(m.SESSION_CREATE_FAILURES)
    return (board.with_row(Row("Sessions"))
            .with_panel(single("Open sessions", "Sessions starting or running.", "short",
                               f"sum({sessions}{{{OPEN_STATES}, {ENVIRONMENT}}})"))
            .with_panel(single("Creates failed (range)", "Session creations refused or failed over the time range.",
                               "short", f"sum(increase({failed}[$__range]))", red_above=1))
            .with_panel(single("Live env hosts", "Env hosts the broker heard from within its live window.", "short",
                               f"max({family(m.LIVE_ENV_HOSTS)})"))
            .with_panel(graph("Sessions by state", "The session table by state.", "short",
                              [(f"sum by (state) ({sessions}{{{ENVIRONMENT}}})", "{{state}}")], stacked=True,
                              width=12))
            .with_panel(graph("Open sessions by environment", "Sessions starting or running, per environment.",
                              "short", [(f"sum by (environment) ({sessions}{{{OPEN_STATES}, {ENVIRONMENT}}})",
                                         "{{environment}}")], stacked=True))
            .with_panel(graph("Open sessions by team", "Sessions starting or running, per team.", "short",
                              [(f"sum by (team) ({sessions}{{{OPEN_STATES}, {ENVIRONMENT}}})", "{{team}}")],
                              stacked=True))
            .with_panel(graph("Session creates", "Sessions created per second, per environment.", "ops",
                              [(f"sum by (environment) ({rate(created, ENVIRONMENT)})", "{{environment}}")]))
            .with_panel(graph("Session create failures", "Creations refused or failed per second, by reason "
                              "(the error's code).", "ops", [(f"sum by (reason) ({rate(failed)})", "{{reason}}")],
                              width=24)))


def _steps(board: Dashboard) -> Dashboard:
    step, stream = m.STEP_DURATION, m.STREAM_REQUEST_DURATION
    envhost_steps = 'service="envhost", replica=~"$replica"'
    return (board.with_row(Row("Steps"))
            .with_panel(graph("Env host steps by path", "Steps the env hosts answered per second: direct (the SDK's "
                              "step link), gateway (the gateway's link, browsers' steps too), vector (batches).",
                              "ops", [(f"sum by (path) ({rate(count(step), envhost_steps)})", "{{path}}")],
                              width=12))
            .with_panel(graph("Env host step latency", "Percentiles of the env host's time to answer a step, per "
                              "path (from the histogram's buckets).", "s", quantiles(step, "path", envhost_steps),
                              width=12))
            .with_panel(graph("Gateway stream requests by path", "Requests on sessions' WebSockets per second: "
                              "gateway (the SDK's binary EnvRequests) or browser (JSON commands).", "ops",
                              [(f"sum by (path) ({rate(count(stream))})", "{{path}}")], width=12))
            .with_panel(graph("Gateway stream request latency", "Percentiles of the gateway's time to answer a "
                              "session's WebSocket request, per path (the env host's step included).", "s",
                              quantiles(stream, "path"), width=12))
            .with_panel(graph("Step events waiting for JetStream", "Session events in each env host's publisher not "
                              "yet accepted by JetStream.", "short",
                              [(f"sum by (replica) ({family(m.STEP_EVENTS_QUEUED)}{{{envhost_steps}}})",
                                "{{replica}}")], width=24)))


def _instances(board: Dashboard) -> Dashboard:
    instances, crashes = family(m.INSTANCES), family(m.INSTANCE_CRASHES)
    return (board.with_row(Row("Environment instances"))
            .with_panel(single("Warm instances", "Pool instances ready to be claimed.", "short",
                               f'sum({instances}{{state="warm", {ENVIRONMENT}}})'))
            .with_panel(single("Claimed instances", "Instances serving a session.", "short",
                               f'sum({instances}{{state="claimed", {ENVIRONMENT}}})'))
            .with_panel(single("Crashes (range)", "Instances that died without being asked to, over the time range.",
                               "short", f"sum(increase({crashes}{{{ENVIRONMENT}}}[$__range]))", red_above=1))
            .with_panel(graph("Instances by state", "Every env host's instances: warm, claimed, stopping, stopped, "
                              "dead.", "short", [(f"sum by (state) ({instances}{{{ENVIRONMENT}}})", "{{state}}")],
                              stacked=True, width=12))
            .with_panel(graph("Warm and claimed by environment", "Instances per environment and state.", "short",
                              [(f'sum by (environment, state) ({instances}{{state=~"warm|claimed", {ENVIRONMENT}}})',
                                "{{environment}} {{state}}")], width=12))
            .with_panel(graph("Instance crashes", "Crashes per second, per environment.", "ops",
                              [(f"sum by (environment) ({rate(crashes, ENVIRONMENT)})", "{{environment}}")],
                              width=12)))


def _recorder(board: Dashboard) -> Dashboard:
    return (board.with_row(Row("Recorder"))
            .with_panel(graph("Recorder lag", "Messages of the sessions stream not yet delivered to the recorder, "
                              "and delivered but not acknowledged.", "short",
                              [(f"max({family(m.RECORDER_PENDING)})", "pending"),
                               (f"max({family(m.RECORDER_ACK_PENDING)})", "ack pending")]))
            .with_panel(graph("Recorder bytes written", "Bytes of step records appended to episode part files per "
                              "second.", "Bps", [(f"sum({rate(family(m.RECORDER_WRITTEN_BYTES))})", "written")]))
            .with_panel(graph("Recorder steps written", "Step events appended to recordings per second.", "ops",
                              [(f"sum({rate(family(m.RECORDER_WRITTEN_STEPS))})", "steps")])))


def _nats(board: Dashboard) -> Dashboard:
    connected = family(m.NATS_CONNECTED)
    return (board.with_row(Row("NATS and JetStream"))
            .with_panel(single("Replicas off NATS", "Service replicas whose NATS connection is down.", "short",
                               f"count({connected} == 0) or vector(0)", red_above=1))
            .with_panel(graph("NATS connected", "1 while each replica's NATS connection is up.", "short",
                              [(f"min by (service, replica) ({connected}{{{BY_REPLICA}}})", "{{service}} {{replica}}")],
                              width=10))
            .with_panel(graph("NATS reconnects", "Reconnections per second, per service.", "ops",
                              [(f"sum by (service) ({rate(family(m.NATS_RECONNECTS), BY_REPLICA)})", "{{service}}")],
                              width=10))
            .with_panel(graph("Replicas answering /metrics", "Replicas of each service that answered the gateway's "
                              "last gathering of metrics.", "short",
                              [(f"max by (from_service) ({family(m.METRICS_REPLIES)})", "{{from_service}}")]))
            .with_panel(graph("JetStream messages", "Messages held by each stream.", "short",
                              [(f"max by (stream) ({family(m.STREAM_MESSAGES)})", "{{stream}}")]))
            .with_panel(graph("JetStream bytes", "Bytes held by each stream.", "bytes",
                              [(f"max by (stream) ({family(m.STREAM_BYTES)})", "{{stream}}")]))
            .with_panel(graph("JetStream consumers", "Consumers of each stream.", "short",
                              [(f"max by (stream) ({family(m.STREAM_CONSUMERS)})", "{{stream}}")], width=24,
                              height=6)))


def _http(board: Dashboard) -> Dashboard:
    requests = family(m.HTTP_REQUESTS)
    server_errors, client_errors = rate(requests, 'status=~"5.."'), rate(requests, 'status=~"4.."')
    return (board.with_row(Row("HTTP"))
            .with_panel(graph("Requests by status", "HTTP requests the gateway answered per second, by status.",
                              "reqps", [(f"sum by (status) ({rate(requests)})", "{{status}}")], stacked=True))
            .with_panel(graph("Server errors", "The share of requests answered with a 5xx status.", "percentunit",
                              [(f"sum({server_errors}) / sum({rate(requests)})", "5xx")]))
            .with_panel(graph("Client errors by route", "4xx answers per second, per route template.", "reqps",
                              [(f"sum by (route, status) ({client_errors})", "{{route}} {{status}}")]))
            .with_panel(graph("Busiest routes", "The ten routes with the most requests per second.", "reqps",
                              [(f"topk(10, sum by (route, method) ({rate(requests)}))", "{{method}} {{route}}")],
                              width=12))
            .with_panel(graph("Slowest routes (p99)", "The 99th percentile of each route's time to answer; the ten "
                              "slowest.", "s",
                              [(f"topk(10, histogram_quantile(0.99, sum by (le, route) "
                                f"({rate(bucket(m.HTTP_REQUEST_DURATION))})))", "{{route}}")], width=12)))


def _processes(board: Dashboard) -> Dashboard:
    cpu = family(spec_named("simulusion_process_cpu_seconds_total"))
    resident = family(spec_named("simulusion_process_resident_memory_bytes"))
    return (board.with_row(Row("Processes"))
            .with_panel(graph("CPU", "CPU seconds per second of each replica's process.", "percentunit",
                              [(f"sum by (service, replica) ({rate(cpu, BY_REPLICA)})",
                                "{{service}} {{replica}}")], width=12))
            .with_panel(graph("Resident memory", "Resident memory of each replica's process.", "bytes",
                              [(f"max by (service, replica) ({resident}{{{BY_REPLICA}}})",
                                "{{service}} {{replica}}")], width=12)))

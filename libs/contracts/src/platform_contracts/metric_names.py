"""Every metric the platform exports at the gateway's `/metrics`, in one list.

Each service makes its metrics from these specs (`platform_bus.metrics_registry`), the gateway
merges what every service answers into one exposition with a `service` and a `replica` label
on every series (`platform_bus.metrics_merge`), and tests check the live exposition against
this list both ways; dashboards may name only what is here (`series_names`).

Names follow Prometheus' conventions: the `simulusion_` prefix, `_total` on counters,
base units (`_seconds`, `_bytes`); labels take a bounded set of values (catalog ids, team
names, states, route templates, reasons from the code), never ids of sessions or raw paths.
Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["counter", "gauge", "histogram"]

# Added to every series by the gateway's merge: which service, and which of its replicas.
SERVICE_LABEL = "service"
REPLICA_LABEL = "replica"
MERGE_LABELS = (SERVICE_LABEL, REPLICA_LABEL)

# Latencies of one request or step: 100 µs to 10 s.
STEP_BUCKETS_S = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
HTTP_BUCKETS_S = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


@dataclass(frozen=True)
class MetricSpec:
    """One metric family: its name as the exposition's `# TYPE` line writes it (a counter's
    with `_total`), kind, labels (besides `service` and `replica`), the services that export
    it ("*": every service) and its help text."""

    name: str
    kind: Kind
    help: str
    labels: tuple[str, ...] = ()
    services: tuple[str, ...] = ("*",)
    buckets: tuple[float, ...] = ()

    def series(self) -> tuple[str, ...]:
        """The names its samples carry (a histogram's `_bucket`, `_sum` and `_count`)."""
        if self.kind == "histogram":
            return (f"{self.name}_bucket", f"{self.name}_sum", f"{self.name}_count")
        return (self.name,)


def _counter(name: str, help: str, labels: tuple[str, ...] = (), services: tuple[str, ...] = ("*",)) -> MetricSpec:
    return MetricSpec(name, "counter", help, labels, services)


def _gauge(name: str, help: str, labels: tuple[str, ...] = (), services: tuple[str, ...] = ("*",)) -> MetricSpec:
    return MetricSpec(name, "gauge", help, labels, services)


# Every service.
NATS_CONNECTED = _gauge("simulusion_nats_connected", "1 while the service's NATS connection is up")
NATS_RECONNECTS = _counter("simulusion_nats_reconnects_total", "times the service's NATS connection was made again")
# The process collector's (prometheus_client.ProcessCollector, namespace "simulusion"; Linux).
PROCESS_METRICS = (
    _counter("simulusion_process_cpu_seconds_total", "user and system CPU time of the process in seconds"),
    _gauge("simulusion_process_virtual_memory_bytes", "virtual memory size of the process in bytes"),
    _gauge("simulusion_process_resident_memory_bytes", "resident memory size of the process in bytes"),
    _gauge("simulusion_process_start_time_seconds", "start time of the process since the Unix epoch in seconds"),
    _gauge("simulusion_process_open_fds", "open file descriptors of the process"),
    _gauge("simulusion_process_max_fds", "the process's limit of open file descriptors"),
)

# The gateway.
GATEWAY = ("gateway",)
HTTP_REQUESTS = _counter("simulusion_gateway_http_requests_total",
                         "HTTP requests answered, by route template, method and status",
                         ("route", "method", "status"), GATEWAY)
HTTP_REQUEST_DURATION = MetricSpec("simulusion_gateway_http_request_duration_seconds", "histogram",
                                   "seconds from an HTTP request's start to its answer's end, by route template",
                                   ("route", "method"), GATEWAY, HTTP_BUCKETS_S)
STREAM_REQUEST_DURATION = MetricSpec(
    "simulusion_gateway_stream_request_duration_seconds", "histogram",
    "seconds the gateway took to answer one request on a session's WebSocket, by path: gateway (binary "
    "EnvRequest, the SDK) or browser (a web page's: its JSON commands and binary steps)", ("path",), GATEWAY,
    STEP_BUCKETS_S)
METRICS_REPLIES = _gauge("simulusion_metrics_replies",
                         "replicas of each service that answered the gateway's last gathering of metrics",
                         ("from_service",), GATEWAY)

# The broker.
BROKER = ("broker",)
SESSIONS = _gauge("simulusion_broker_sessions", "sessions in the session table, by environment, team and state",
                  ("environment", "team", "state"), BROKER)
SESSIONS_CREATED = _counter("simulusion_broker_sessions_created_total", "sessions created, by environment",
                            ("environment",), BROKER)
SESSION_CREATE_FAILURES = _counter("simulusion_broker_session_create_failures_total",
                                   "session creations refused or failed, by reason (the error's code)",
                                   ("reason",), BROKER)
LIVE_ENV_HOSTS = _gauge("simulusion_broker_live_env_hosts", "env hosts the broker heard from within the live window",
                        (), BROKER)

# The env hosts.
ENVHOST = ("envhost",)
INSTANCES = _gauge("simulusion_envhost_instances",
                   "environment instances on the env host, by environment and state (warm: a pool's, not "
                   "claimed; claimed: a session's; stopping; stopped; dead: died, kept a while for its clients)", ("environment", "state"), ENVHOST)
INSTANCE_CRASHES = _counter("simulusion_envhost_instance_crashes_total",
                            "environment instances that died without being asked to, by environment",
                            ("environment",), ENVHOST)
STEP_DURATION = MetricSpec(
    "simulusion_envhost_step_duration_seconds", "histogram",
    "seconds the env host took to answer one step, by path: direct (the SDK's own step link), gateway (the "
    "gateway's link or gRPC stream; the browser's steps too) or vector (a vector session's batch)",
    ("path",), ENVHOST, STEP_BUCKETS_S)
STEP_EVENTS_QUEUED = _gauge("simulusion_envhost_step_events_queued",
                            "session events waiting in the env host's publisher for JetStream", (), ENVHOST)
STREAM_FULL_REFUSALS = _counter("simulusion_envhost_stream_full_refusals_total",
                                "publishes of session events the sessions stream refused because it was full "
                                "(PLATFORM_JETSTREAM_MAX_BYTES; retried until the recorder catches up)", (), ENVHOST)

# The recorder, and JetStream as it sees it.
RECORDER = ("recorder",)
RECORDER_PENDING = _gauge("simulusion_recorder_pending_messages",
                          "messages of the sessions stream not yet delivered to the consumers of the partitions "
                          "this recorder holds (its lag)", (), RECORDER)
RECORDER_PARTITIONS = _gauge("simulusion_recorder_partitions",
                             "session partitions this recorder writes (of platform_contracts.subjects.SESSION_PARTITIONS)",
                             (), RECORDER)
RECORDER_ACK_PENDING = _gauge("simulusion_recorder_ack_pending_messages",
                              "messages delivered to the recorder and not acknowledged yet", (), RECORDER)
RECORDER_WRITTEN_BYTES = _counter("simulusion_recorder_written_bytes_total",
                                  "bytes of step records the recorder appended to episode part files", (), RECORDER)
RECORDER_WRITTEN_STEPS = _counter("simulusion_recorder_written_steps_total",
                                  "step events the recorder appended to recordings", (), RECORDER)
STREAM_MESSAGES = _gauge("simulusion_jetstream_stream_messages", "messages held by a JetStream stream",
                         ("stream",), RECORDER)
STREAM_BYTES = _gauge("simulusion_jetstream_stream_bytes", "bytes held by a JetStream stream", ("stream",), RECORDER)
STREAM_MAX_BYTES = _gauge("simulusion_jetstream_stream_max_bytes",
                          "the most a JetStream stream holds (-1: no limit)", ("stream",), RECORDER)
STREAM_CONSUMERS = _gauge("simulusion_jetstream_stream_consumers", "consumers of a JetStream stream",
                          ("stream",), RECORDER)

# The machines service and evals.
MACHINES = _gauge("simulusion_machines", "the users' GPU machines, by status", ("status",), ("machines",))
EXPERIMENTS = _gauge("simulusion_experiments", "experiments on the machines, by status", ("status",), ("machines",))
EVALS = _gauge("simulusion_evals", "Inspect evaluations, by status", ("status",), ("evals",))

EVERY_SERVICE = (NATS_CONNECTED, NATS_RECONNECTS, *PROCESS_METRICS)
EXPORTED: tuple[MetricSpec, ...] = (
    *EVERY_SERVICE,
    HTTP_REQUESTS, HTTP_REQUEST_DURATION, STREAM_REQUEST_DURATION, METRICS_REPLIES,
    SESSIONS, SESSIONS_CREATED, SESSION_CREATE_FAILURES, LIVE_ENV_HOSTS,
    INSTANCES, INSTANCE_CRASHES, STEP_DURATION, STEP_EVENTS_QUEUED, STREAM_FULL_REFUSALS,
    RECORDER_PENDING, RECORDER_PARTITIONS, RECORDER_ACK_PENDING, RECORDER_WRITTEN_BYTES, RECORDER_WRITTEN_STEPS,
    STREAM_MESSAGES, STREAM_BYTES, STREAM_MAX_BYTES, STREAM_CONSUMERS,
    MACHINES, EXPERIMENTS, EVALS,
)
"""Every metric family `/metrics` exports."""


def family_names() -> frozenset[str]:
    """The names of `# TYPE` lines of the exposition."""
    return frozenset(spec.name for spec in EXPORTED)


def series_names() -> frozenset[str]:
    """Every name a sample of the exposition may carry (what a dashboard's query may name)."""
    return frozenset(name for spec in EXPORTED for name in spec.series())


def of_service(service: str) -> tuple[MetricSpec, ...]:
    """The specs `service` exports (its own and every service's)."""
    return tuple(spec for spec in EXPORTED if "*" in spec.services or service in spec.services)

"""The services' NATS plumbing: `connect` (one way to connect, one line when NATS cannot be
reached; the service's own NATS user in managed mode, `platform_bus.permissions`) and `request`/`publish`/`publish_to_stream` (the trace context in the headers, every
kind of "no answer" as `BusUnavailableError`), and `GracefulShutdown`/`stop_task` (a shutdown that ends within its
deadline)."""

from platform_bus.connection import NatsCredentials, NatsUnreachableError, connect, flush_queued
from platform_bus.messaging import BusUnavailableError, publish, publish_to_stream, request, trace_headers
from platform_bus.shutdown import SHUTDOWN_DEADLINE_S, GracefulShutdown, cancel_requested, stop_task

__all__ = [
    "SHUTDOWN_DEADLINE_S",
    "BusUnavailableError",
    "GracefulShutdown",
    "NatsCredentials",
    "NatsUnreachableError",
    "cancel_requested",
    "connect",
    "publish",
    "publish_to_stream",
    "request",
    "flush_queued",
    "stop_task",
    "trace_headers",
]

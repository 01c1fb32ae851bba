"""The services' NATS plumbing: `connect` (one way to connect, one line when NATS cannot be
reached) and `request`/`publish`/`publish_to_stream` (the trace context in the headers, every
kind of "no answer" as `BusUnavailableError`)."""

from platform_bus.connection import NatsUnreachableError, connect
from platform_bus.messaging import BusUnavailableError, publish, publish_to_stream, request, trace_headers

__all__ = [
    "BusUnavailableError",
    "NatsUnreachableError",
    "connect",
    "publish",
    "publish_to_stream",
    "request",
    "trace_headers",
]

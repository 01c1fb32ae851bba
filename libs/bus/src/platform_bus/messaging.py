"""Requests and publishes that carry the OpenTelemetry context and fail one way.

Each call is a span of its own (a child of the caller's span when there is one), and that
span's context goes in the message's NATS headers (`traceparent`), so whoever answers or
consumes the message continues the trace, and even a background loop's messages are traced.

Every way the NATS client says "no answer" (its `TimeoutError`, asyncio's, "no responders",
a connection that is closed or reconnecting) is one `BusUnavailableError` naming the service
and the subject. The step path does not come through here: its events carry the context of
the step that made them (see `platform_envhost.publisher`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import nats.errors
from nats.aio.msg import Msg
from nats.js.errors import NoStreamResponseError
from opentelemetry import propagate, trace

_tracer = trace.get_tracer("platform_bus")

Reason = Literal["timeout", "no_responders", "unreachable", "too_large", "failed"]


class BusUnavailableError(Exception):
    """A request got no answer, or a message could not be sent.

    Attributes:
        subject: the message's subject.
        reason: "timeout" (no answer in time), "no_responders" (nobody listens), "unreachable"
            (NATS is not connected), "too_large" (the message is over the server's max_payload:
            the client never sent it), "failed" (the client refused the message).
    """

    def __init__(self, message: str, *, subject: str, reason: Reason) -> None:
        super().__init__(message)
        self.subject = subject
        self.reason = reason


def trace_headers(headers: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """`headers` plus the current trace context; None when that leaves nothing to send."""
    carrier = dict(headers) if headers else {}
    propagate.inject(carrier)
    return carrier or None


async def request(nc: Any, subject: str, payload: bytes, *, timeout: float, service: str,
                  headers: Mapping[str, str] | None = None) -> Msg:
    """Send one request and return the reply.

    Args:
        nc: a nats-py client.
        subject: the request subject.
        payload: the request body.
        timeout: seconds to wait for the reply.
        service: who answers, for the error's message ("broker", "env host 'h1'").
        headers: headers to send besides the trace context.

    Raises:
        BusUnavailableError: NATS is not connected, nobody answers, or the answer is late.
    """
    with _tracer.start_as_current_span(f"request {subject}", kind=trace.SpanKind.CLIENT,
                                       attributes={"messaging.destination.name": subject}):
        if not nc.is_connected:
            raise BusUnavailableError(f"{service} unavailable: NATS is unreachable ({_state(nc)})",
                                      subject=subject, reason="unreachable")
        try:
            reply: Msg = await nc.request(subject, payload, timeout=timeout, headers=trace_headers(headers))
            return reply
        except nats.errors.NoRespondersError:
            raise BusUnavailableError(f"{service} unavailable: nothing answers {subject}",
                                      subject=subject, reason="no_responders") from None
        except TimeoutError:  # nats.errors.TimeoutError and asyncio's (the same class since 3.11)
            raise BusUnavailableError(f"{service} unavailable: no answer on {subject} within {timeout:g} s",
                                      subject=subject, reason="timeout") from None
        except (nats.errors.Error, OSError) as exc:
            raise _failure(service, subject, exc, len(payload), nc) from None


async def publish(nc: Any, subject: str, payload: bytes, *, headers: Mapping[str, str] | None = None) -> None:
    """Publish one message on core NATS (buffered by the client while it reconnects).

    Raises:
        BusUnavailableError: the client is closed or its reconnect buffer is full.
    """
    with _tracer.start_as_current_span(f"publish {subject}", kind=trace.SpanKind.PRODUCER,
                                       attributes={"messaging.destination.name": subject}):
        try:
            await nc.publish(subject, payload, headers=trace_headers(headers))
        except (nats.errors.Error, OSError) as exc:
            raise _failure("NATS", subject, exc, len(payload), nc) from None


async def publish_to_stream(js: Any, subject: str, payload: bytes, *, timeout: float,
                            headers: Mapping[str, str] | None = None) -> Any:
    """Publish one message to JetStream and wait for its ack (for events a caller must know are
    stored; the step path's events go through `platform_envhost.publisher` instead).

    Returns:
        The stream's `PubAck`.

    Raises:
        BusUnavailableError: no ack in time, no stream for the subject, or NATS unreachable.
    """
    with _tracer.start_as_current_span(f"publish {subject}", kind=trace.SpanKind.PRODUCER,
                                       attributes={"messaging.destination.name": subject}):
        try:
            return await js.publish(subject, payload, timeout=timeout, headers=trace_headers(headers))
        except (nats.errors.NoRespondersError, NoStreamResponseError):
            raise BusUnavailableError(f"JetStream unavailable: no stream takes {subject}",
                                      subject=subject, reason="no_responders") from None
        except TimeoutError:
            raise BusUnavailableError(f"JetStream unavailable: no ack for {subject} within {timeout:g} s",
                                      subject=subject, reason="timeout") from None
        except (nats.errors.Error, OSError) as exc:
            raise _failure("JetStream", subject, exc, len(payload), getattr(js, "_nc", None)) from None


_UNREACHABLE = (nats.errors.ConnectionClosedError, nats.errors.ConnectionReconnectingError,
                nats.errors.ConnectionDrainingError, nats.errors.StaleConnectionError,
                nats.errors.OutboundBufferLimitError, OSError)


def _failure(service: str, subject: str, exc: BaseException, size: int = 0, nc: Any = None) -> BusUnavailableError:
    if isinstance(exc, nats.errors.MaxPayloadError):
        limit = getattr(nc, "max_payload", 0)
        most = f"{limit} bytes ({limit / 2**20:g} MiB)" if isinstance(limit, int) and limit else "smaller"
        return BusUnavailableError(f"the message to the {service} on {subject} is {size} bytes: too large for the "
                                   f"bus, whose messages are at most {most}", subject=subject, reason="too_large")
    if isinstance(exc, _UNREACHABLE):
        return BusUnavailableError(f"{service} unavailable: NATS is unreachable ({type(exc).__name__})",
                                   subject=subject, reason="unreachable")
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return BusUnavailableError(f"{service} unavailable: sending on {subject} failed ({detail})",
                               subject=subject, reason="failed")


def _state(nc: Any) -> str:
    if nc.is_closed:
        return "connection closed"
    if nc.is_reconnecting:
        return "reconnecting"
    return "not connected"

"""NATS request/reply for the gateway's clients: `platform_bus.request` (the trace context in the
headers), its failures as the gateway's `UnavailableError` (503), except a request too large for
the bus: the client's fault, a `PayloadTooLargeError` (413) naming the bus's limit."""

from __future__ import annotations

from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from platform_bus import BusUnavailableError
from platform_bus import request as bus_request

from platform_gateway.errors import PayloadTooLargeError, UnavailableError


async def request_msg(nc: NATS, subject: str, payload: bytes, *, timeout: float, service: str) -> Msg:
    """Send one request and return the reply (payload and headers).

    Args:
        nc: the connected NATS client.
        subject: the request subject.
        payload: the request body.
        timeout: seconds to wait for the reply.
        service: who answers, for error messages ("broker", "recorder").

    Raises:
        UnavailableError: NATS is down, nobody answers, or the answer is late.
        PayloadTooLargeError: the request is over the bus's largest message (NATS_MAX_PAYLOAD).
    """
    try:
        return await bus_request(nc, subject, payload, timeout=timeout, service=service)
    except BusUnavailableError as exc:
        if exc.reason == "too_large":
            raise PayloadTooLargeError(str(exc)) from None
        raise UnavailableError(str(exc)) from None


async def request(nc: NATS, subject: str, payload: bytes, *, timeout: float, service: str) -> bytes:
    """`request_msg`'s reply payload."""
    return (await request_msg(nc, subject, payload, timeout=timeout, service=service)).data

"""NATS request/reply with the trace context in the headers, failures as `UnavailableError`."""

from __future__ import annotations

import nats.errors
from nats.aio.client import Client as NATS
from platform_contracts.tracing import inject_dict

from platform_gateway.errors import UnavailableError


async def request(nc: NATS, subject: str, payload: bytes, *, timeout: float, service: str) -> bytes:
    """Send one request and return the reply's payload.

    Args:
        nc: the connected NATS client.
        subject: the request subject.
        payload: the request body.
        timeout: seconds to wait for the reply.
        service: who answers, for error messages ("broker", "recorder").

    Raises:
        UnavailableError: NATS is down, nobody answers, or the answer is late.
    """
    if not nc.is_connected:
        raise UnavailableError(f"{service} unavailable: NATS is unreachable ({_state(nc)})")
    try:
        msg = await nc.request(subject, payload, timeout=timeout, headers=inject_dict() or None)
    except nats.errors.NoRespondersError:
        raise UnavailableError(f"{service} unavailable: no {service} answers on {subject}") from None
    except nats.errors.TimeoutError:
        raise UnavailableError(f"{service} unavailable: no answer on {subject} within {timeout:g} s") from None
    except (nats.errors.ConnectionClosedError, nats.errors.ConnectionReconnectingError,
            nats.errors.ConnectionDrainingError, nats.errors.StaleConnectionError, OSError) as exc:
        raise UnavailableError(f"{service} unavailable: NATS is unreachable ({type(exc).__name__})") from None
    return msg.data


def _state(nc: NATS) -> str:
    if nc.is_closed:
        return "connection closed"
    if nc.is_reconnecting:
        return "reconnecting"
    return "not connected"

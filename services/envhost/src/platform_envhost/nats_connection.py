"""Connecting to NATS: fail fast at start, then reconnect forever once running."""

from __future__ import annotations

import logging
from typing import Any

from platform_envhost.errors import EnvHostError

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 2.0


async def connect_nats(url: str, name: str) -> Any:
    """Connect to `url`, giving up after about two attempts (a few seconds).

    Raises:
        EnvHostError: NATS is unreachable ("unavailable").
    """
    import nats
    import nats.errors

    state = {"connected": False, "last_error": ""}

    async def on_error(exc: Exception) -> None:
        state["last_error"] = f"{type(exc).__name__}: {exc}"
        if state["connected"]:
            log.warning("NATS: %s", state["last_error"])

    async def on_disconnected() -> None:
        if state["connected"] and not (nc.is_closed or nc.is_draining):
            log.warning("NATS disconnected from %s; reconnecting", url)

    async def on_reconnected() -> None:
        log.info("NATS reconnected to %s", url)

    nc: Any = None
    try:
        nc = await nats.connect(
            url, name=name, connect_timeout=CONNECT_TIMEOUT_S, max_reconnect_attempts=1, reconnect_time_wait=1,
            error_cb=on_error, disconnected_cb=on_disconnected, reconnected_cb=on_reconnected,
        )
    except (nats.errors.Error, OSError, TimeoutError) as exc:
        detail = state["last_error"] or f"{type(exc).__name__}: {exc}"
        raise EnvHostError(f"cannot connect to NATS at {url}: {detail}", code="unavailable") from None
    state["connected"] = True
    nc.options["max_reconnect_attempts"] = -1  # running: never give up on the server
    return nc

"""One loop for the broker's periodic passes (idle sessions, lost env hosts)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from platform_bus import cancel_requested

log = logging.getLogger(__name__)


async def run_every(interval: float, one_pass: Callable[[], Awaitable[object]], what: str) -> None:
    """Run `one_pass` every `interval` seconds until cancelled; a failed pass is logged (naming
    `what`) and the next one runs as usual."""
    while True:
        await asyncio.sleep(interval)
        try:
            await one_pass()
        except Exception:
            if cancel_requested():  # a cancel the NATS client turned into an error: stop
                raise asyncio.CancelledError from None
            log.exception("%s failed", what)

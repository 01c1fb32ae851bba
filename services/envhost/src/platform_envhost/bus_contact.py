"""The env host's contact with the bus, and what it does when it loses it for too long.

The broker takes an env host whose heartbeats stop for its live window (10 s) for dead and ends
its sessions (CRASHED, "its env host ... stopped"). An env host cut off from the network is not
dead, though: its instances run on, and when the network comes back the step links that were
open carry their clients' steps again, so a session the broker ended would keep stepping. So the
host checks its contact itself: a round trip to its NATS server (PING/PONG) every heartbeat, and
once none has come back for `fence_after` seconds (less than the broker's window minus a
heartbeat), it stops every session instance itself before the broker can call it dead. Its
CLOSED events, with the reason, reach JetStream when the bus is back. A session then either
resumes (a cut shorter than `fence_after`) or is ended on both sides, never both.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any


log = logging.getLogger(__name__)

PING_GIVE_UP_S = 300.0  # a PING unanswered for so long is given up (the connection is gone)


def lost_contact_reason(host_id: str, seconds: float) -> str:
    return f"its env host {host_id} lost contact with NATS for {seconds:.0f} s"


async def bus_contact_loop(nc: Any, interval: float, fence_after: float,
                           on_lost: Callable[[float], Awaitable[None]],
                           clock: Callable[[], float] = time.monotonic) -> None:
    """A round trip to the server (a flush: PING, PONG) every `interval` seconds; a round trip
    not back within `interval` counts as none, and is waited for on (no second PING meanwhile);
    `on_lost(seconds without one)` once the last is older than `fence_after` seconds (again after
    contact came back and was lost again). `fence_after` 0: only watches.

    A flush is never cancelled on a timeout of its own: nats-py resolves each PONG's future
    without checking it, so a PONG arriving for a cancelled flush breaks its read loop. A
    reconnect drops the futures of the PINGs in flight (the new connection owes no PONG for them):
    a flush started before one is given up then, and a new one sent."""
    last_contact = clock()
    fenced = False
    ping: asyncio.Task[None] | None = None
    ping_connection = -1  # the connection (nats-py's reconnect count) the ping went out on
    try:
        while True:
            tried_at = clock()
            if ping is not None and not ping.done() and nc.stats["reconnects"] != ping_connection:
                ping.cancel()  # its PONG will never come: the connection it went out on is gone
                ping = None
            if ping is None and nc.is_connected:
                ping_connection = nc.stats["reconnects"]
                ping = asyncio.create_task(nc.flush(timeout=PING_GIVE_UP_S))
            done = (await asyncio.wait({ping}, timeout=interval))[0] if ping is not None else set()
            if done:
                assert ping is not None
                answered = ping.exception() is None
                ping = None
                if answered:
                    if fenced:
                        log.info("in contact with NATS again")
                    last_contact, fenced = clock(), False
                    await asyncio.sleep(interval)
                    continue
            silent = clock() - last_contact
            if fence_after > 0 and not fenced and silent > fence_after:
                fenced = True
                await on_lost(silent)
            await asyncio.sleep(max(0.0, interval - (clock() - tried_at)))
    finally:
        if ping is not None:
            ping.cancel()

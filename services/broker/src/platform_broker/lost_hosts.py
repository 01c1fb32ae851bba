"""Sessions whose env host went silent: marked crashed, with the reason, so clients get a 410.

An env host that dies (``kill -9``, its machine gone) sends no more heartbeats; its instances
died with it (they get its parent-death signal). Once its last heartbeat is older than the live
window, each RUNNING session on it is marked CRASHED, and its CRASHED event is published
(`platform_broker.session_endings`: the recorder finishes its recording). The broker must have
been connected to NATS for a whole window first (after a start or a NATS outage every live host
is heard again within it), so a silence of the bus is never taken for the death of the hosts.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from platform_bus import stop_task
from simulusion.bus.v1 import events_pb2

from platform_broker.hosts import HostRegistry
from platform_broker.periodic import run_every
from platform_broker.session_endings import SessionEndings
from platform_broker.store import RUNNING, SessionStore

log = logging.getLogger(__name__)

SWEEP_INTERVAL_S = 2.0


def lost_host_reason(host_id: str, window: float) -> str:
    return f"its env host {host_id} stopped (no heartbeat for {window:g} s)"


class LostHostSweeper:
    """Every `interval` seconds, marks crashed the RUNNING sessions whose env host is not live,
    and publishes their CRASHED events (those JetStream did not take are tried again each sweep).

    Args:
        nc: the broker's NATS client (its `is_connected` is read).
        store: the session table.
        hosts: the env hosts heard from.
        endings: publishes the CRASHED events.
        interval: seconds between sweeps.
        clock: seconds, monotonic.
    """

    def __init__(self, nc: Any, store: SessionStore, hosts: HostRegistry, endings: SessionEndings,
                 interval: float = SWEEP_INTERVAL_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.nc = nc
        self.store = store
        self.hosts = hosts
        self.endings = endings
        self.interval = interval
        self._clock = clock
        self._heard_since = clock()  # connected, and so hearing every live host, since then
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._heard_since = self._clock()
        self._task = asyncio.create_task(self._run(), name="broker-lost-hosts")

    async def stop(self) -> None:
        await stop_task(self._task, logger=log)
        self._task = None

    async def sweep_once(self) -> list[str]:
        """One pass; returns the ids of the sessions it marked crashed."""
        now = self._clock()
        if not self.nc.is_connected:
            self._heard_since = now
            return []
        await self.endings.retry_pending()
        if now - self._heard_since <= self.hosts.live_window:
            return []
        crashed = []
        for session in await self.store.list([RUNNING]):
            if self.hosts.get(session.host_id) is not None:
                continue
            reason = lost_host_reason(session.host_id, self.hosts.live_window)
            # Marked first: only the broker whose update ended it publishes (one event a session).
            if await self.store.mark_crashed(session.id, reason, ""):
                log.warning("session %s: %s", session.id, reason)
                crashed.append(session.id)
                await self.endings.publish(session, events_pb2.SESSION_EVENT_KIND_CRASHED, reason)
        return crashed

    async def _run(self) -> None:
        await run_every(self.interval, self.sweep_once, "lost env host sweep")

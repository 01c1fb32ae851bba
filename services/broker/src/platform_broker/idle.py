"""Session activity from heartbeats, and stopping sessions idle for longer than IDLE_TIMEOUT."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from platform_bus import stop_task

from platform_broker.envhosts import EnvHostClient, stop_and_close
from platform_broker.hosts import HostRegistry
from platform_broker.periodic import run_every
from platform_broker.session_endings import SessionEndings
from platform_broker.store import RUNNING, SessionStore

log = logging.getLogger(__name__)


def check_interval(idle_timeout: float) -> float:
    """How often to look: a quarter of the timeout, between 0.5 and 5 s."""
    return 5.0 if idle_timeout <= 0 else min(5.0, max(0.5, idle_timeout / 4))


class IdleMonitor:
    """Every few seconds: store each RUNNING session's last activity (from its host's heartbeat)
    and stop those idle for more than `idle_timeout` seconds (0 = never stop)."""

    def __init__(self, store: SessionStore, hosts: HostRegistry, envhosts: EnvHostClient, endings: SessionEndings,
                 idle_timeout: float, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.hosts = hosts
        self.envhosts = envhosts
        self.endings = endings
        self.idle_timeout = idle_timeout
        self.interval = check_interval(idle_timeout)
        self._clock = clock
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="broker-idle")

    async def stop(self) -> None:
        await stop_task(self._task, logger=log)
        self._task = None

    async def check_once(self) -> list[str]:
        """One pass; returns the ids of the sessions it stopped."""
        stopped = []
        for session in await self.store.list([RUNNING]):
            last = max(session.created_at, session.last_active_at)
            instance = self.hosts.instance(session.host_id, session.id)
            if instance is not None and instance.last_active_at > last:
                last = instance.last_active_at
                await self.store.touch(session.id, last)
            idle_for = self._clock() - last
            if self.idle_timeout > 0 and idle_for > self.idle_timeout:
                await stop_and_close(self.store, self.envhosts, self.endings, session, f"idle for {int(idle_for)} s")
                stopped.append(session.id)
        return stopped

    async def _run(self) -> None:
        await run_every(self.interval, self.check_once, "idle check")

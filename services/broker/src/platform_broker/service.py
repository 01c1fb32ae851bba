"""The broker service: heartbeats, reconcile, request handlers, lifecycle events, idle timeout, lost env hosts,
warm pools."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

from platform_bus import flush_queued
from platform_bus.metrics_responder import MetricsResponder
from platform_contracts import streams, subjects

from platform_broker.catalog import Catalog
from platform_broker.envhosts import EnvHostClient
from platform_broker.handlers import Handlers
from platform_broker.hosts import HostRegistry
from platform_broker.idle import IdleMonitor
from platform_broker.lifecycle import LifecycleConsumer
from platform_broker.lost_hosts import LostHostSweeper
from platform_broker.metrics import BrokerMetrics
from platform_broker.pools import PoolKeeper
from platform_broker.reconcile import ReconcileReport, reconcile
from platform_broker.session_endings import SessionEndings
from platform_broker.store import SessionStore

log = logging.getLogger(__name__)

# A bit more than one 2 s heartbeat period: every live env host has been heard from.
WARMUP_S = 2.5
REQUESTS_DRAIN_S = 5.0  # at stop: requests in flight may finish for so long, then are cancelled
UNSUBSCRIBE_TIMEOUT_S = 1.0


class BrokerService:
    """One broker on a connected NATS client and an open store (both owned by the caller).

    Args:
        nc: a connected nats-py client.
        store: the session table.
        catalog: the environments sessions can be created from.
        durable_steps: every recorded session is durable (`SessionOptions.durable`), as PLATFORM_DURABLE_STEPS says.
        idle_timeout: seconds without activity before a session is stopped; 0 = never.
        start_timeout: seconds to wait for an env host to start an instance.
        warmup: seconds to collect heartbeats before reconciling and answering requests.
        durable: name of the JetStream consumer of lifecycle events.
        pools: warm instances to keep per env id (ids of `catalog`); None or empty: no pools.
    """

    def __init__(self, nc: Any, store: SessionStore, catalog: Catalog, *, idle_timeout: float = 1800.0,
                 start_timeout: float = 60.0, warmup: float = WARMUP_S,
                 durable: str = subjects.BROKER_CONSUMER, pools: Mapping[str, int] | None = None,
                 durable_steps: bool = False, stream: streams.StreamShape = streams.StreamShape()) -> None:
        self.nc = nc
        self.stream = stream
        self.store = store
        self.catalog = catalog
        self.warmup = warmup
        self.hosts = HostRegistry()
        self.envhosts = EnvHostClient(nc, start_timeout=start_timeout)
        self.pools = PoolKeeper(pools, catalog, self.hosts, self.envhosts) if pools else None
        self.endings = SessionEndings(nc.jetstream())  # lifecycle events of sessions the broker ends itself
        self.handlers = Handlers(store, catalog, self.hosts, self.envhosts, self.endings, pools=self.pools,
                                 durable_steps=durable_steps)
        self.lifecycle = LifecycleConsumer(nc.jetstream(), store, durable=durable, stream=stream)
        self.handlers.catch_up = self.lifecycle.catch_up
        self.idle = IdleMonitor(store, self.hosts, self.envhosts, self.endings, idle_timeout)
        self.lost_hosts = LostHostSweeper(nc, store, self.hosts, self.endings)
        self.reconcile_report: ReconcileReport | None = None
        self.metrics = BrokerMetrics(store, self.hosts)
        self.handlers.on_create = self.metrics.created
        self._metrics_responder = MetricsResponder(nc, self.metrics.service)
        self._subs: list[Any] = []

    async def start(self) -> None:
        """Create the table, hear the env hosts, reconcile, then serve; returns when serving."""
        await self.store.create_tables()
        await self.handlers.usage.create_tables()  # the teams' quotas (the gateway writes them)
        await self._metrics_responder.start()
        self._subs.append(await self.hosts.subscribe(self.nc))
        await flush_queued(self.nc)
        await asyncio.sleep(self.warmup)
        await streams.ensure_sessions_stream(self.nc.jetstream(), self.stream)  # reconcile publishes its ghosts' CLOSED there
        self.reconcile_report = await reconcile(self.store, self.hosts, self.envhosts, self.endings)
        await self.lifecycle.start()
        self._subs.extend(await self.handlers.subscribe(self.nc))
        await flush_queued(self.nc)  # the server has our subscriptions before we say we serve
        self.idle.start()
        self.lost_hosts.start()
        if self.pools is not None:  # after reconcile: pool instances of an earlier broker are stopped by then
            self.pools.start()
        log.info("broker serving: %d environments, %d live env hosts%s", len(self.catalog), len(self.hosts.live()),
                 f", warm pools {self.pools.targets}" if self.pools is not None else "")

    async def stop(self, waiting_for: Callable[[str], None] = lambda step: None) -> None:
        """Stop taking requests, finish those in flight (up to 5 s), stop the background tasks;
        each step is bounded (NATS may be gone), and named to `waiting_for` as it begins."""
        waiting_for("unsubscribing the broker subjects")
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._metrics_responder.stop(), UNSUBSCRIBE_TIMEOUT_S)
        for sub in reversed(self._subs):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(sub.unsubscribe(), UNSUBSCRIBE_TIMEOUT_S)
        self._subs.clear()
        waiting_for("the requests in flight")
        await self.handlers.wait_idle(timeout=REQUESTS_DRAIN_S)
        if self.pools is not None:
            waiting_for("the warm pool tasks to stop")
            await self.pools.stop()
        waiting_for("the idle monitor to stop")
        await self.idle.stop()
        waiting_for("the lost env host sweeper to stop")
        await self.lost_hosts.stop()
        waiting_for("the lifecycle consumer to stop")
        await self.lifecycle.stop()

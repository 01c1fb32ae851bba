"""A service's answer to the gateway's gathering of metrics over the bus.

Every replica of every service but the gateway subscribes to `platform.metrics.collect` (no
queue group: each answers) and replies with its registry's exposition, naming its service
and replica in headers, which the gateway's merge turns into labels
(`platform_bus.metrics_gather`). Why the bus and not a port per service: the gateway stays the
one scrape target, behind its one token, and it works across hosts and in the chart with no
extra ports, Services or NetworkPolicies.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from nats.errors import Error as NatsError
from platform_contracts import subjects

from platform_bus.metrics_registry import ServiceMetrics

log = logging.getLogger(__name__)


class MetricsResponder:
    """Answers `platform.metrics.collect` on `nc` with `metrics`' exposition (sets `metrics.nc`)."""

    def __init__(self, nc: Any, metrics: ServiceMetrics) -> None:
        self._nc = nc
        self.metrics = metrics
        metrics.nc = nc
        self._subscription: Any = None
        self._headers = {subjects.METRICS_SERVICE_HEADER: metrics.service,
                         subjects.METRICS_REPLICA_HEADER: metrics.replica}

    async def start(self) -> None:
        self._subscription = await self._nc.subscribe(subjects.METRICS_COLLECT, cb=self._answer)

    async def stop(self) -> None:
        if self._subscription is not None:
            with contextlib.suppress(NatsError, TimeoutError):
                await self._subscription.unsubscribe()
            self._subscription = None

    async def _answer(self, msg: Any) -> None:
        if not msg.reply:
            return
        body = await self.metrics.exposition()
        try:
            await self._nc.publish(msg.reply, body, headers=self._headers)
        except NatsError as exc:  # the connection is closing: nobody left to tell
            log.debug("could not answer the metrics request: %s", exc)


__all__ = ["MetricsResponder"]

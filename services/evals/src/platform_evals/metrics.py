"""The evals service's metrics: evals by status, read at scrape time."""

from __future__ import annotations

from platform_bus.metrics_registry import ServiceMetrics, set_counts
from platform_contracts import metric_names

from platform_evals.eval_store import EvalStore


class EvalsMetrics:
    def __init__(self, store: EvalStore, replica: str | None = None) -> None:
        self.service = ServiceMetrics("evals", replica)
        self._store = store
        self._evals = self.service.gauge(metric_names.EVALS)
        self.service.on_scrape(self._refresh)

    async def _refresh(self) -> None:
        counts = await self._store.status_counts()
        set_counts(self._evals, {(status,): float(n) for status, n in counts.items()})

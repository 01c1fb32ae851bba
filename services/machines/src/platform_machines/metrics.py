"""The machines service's metrics: machines and experiments by status, read at scrape time."""

from __future__ import annotations

from platform_bus.metrics_registry import ServiceMetrics, set_counts
from platform_contracts import metric_names

from platform_machines.experiment_store import ExperimentStore
from platform_machines.machine_store import MachineStore


class MachinesMetrics:
    def __init__(self, machines: MachineStore, experiments: ExperimentStore, replica: str | None = None) -> None:
        self.service = ServiceMetrics("machines", replica)
        self._machine_store, self._experiment_store = machines, experiments
        self._machines = self.service.gauge(metric_names.MACHINES)
        self._experiments = self.service.gauge(metric_names.EXPERIMENTS)
        self.service.on_scrape(self._refresh)

    async def _refresh(self) -> None:
        machines = await self._machine_store.status_counts()
        experiments = await self._experiment_store.status_counts()
        set_counts(self._machines, {(status,): float(n) for status, n in machines.items()})
        set_counts(self._experiments, {(status,): float(n) for status, n in experiments.items()})

"""The env host's metrics: its instances by environment and state and the publisher's backlog
(read at scrape time), instance crashes, and each step's time by the path it came on.

A step is timed in `Router.handle`: one `perf_counter` pair and one list append
(`platform_bus.metrics_registry.FoldedHistogram.took`); the times join the histogram at the next
scrape. The path is the step link's opener (the gateway sets
`StepLinkOpen.via_gateway`; the SDK's direct link does not), the gRPC stream is the gateway's,
and a vector session's batch is `vector`.
"""

from __future__ import annotations

from collections import Counter as Tally

from platform_bus.metrics_registry import FoldedHistogram, ServiceMetrics, set_counts
from platform_contracts import metric_names

from platform_envhost.instance_table import InstanceTable
from platform_envhost.publisher import EventPublisher
from platform_envhost.session_instance import State

DIRECT_PATH = "direct"
GATEWAY_PATH = "gateway"
VECTOR_PATH = "vector"


class EnvHostMetrics:
    def __init__(self, host_id: str) -> None:
        self.service = ServiceMetrics("envhost", host_id)
        self.steps = FoldedHistogram(self.service, metric_names.STEP_DURATION, (DIRECT_PATH, GATEWAY_PATH, VECTOR_PATH))
        self._instances = self.service.gauge(metric_names.INSTANCES)
        self._crashes = self.service.counter(metric_names.INSTANCE_CRASHES)
        self._queued = self.service.gauge(metric_names.STEP_EVENTS_QUEUED)
        self._table: InstanceTable | None = None
        self._publisher: EventPublisher | None = None
        self.service.counter_reading(metric_names.STREAM_FULL_REFUSALS,
                                     lambda: float(self._publisher.stream_full if self._publisher else 0))
        self.service.on_scrape(self._refresh)

    def watch(self, table: InstanceTable, publisher: EventPublisher) -> None:
        """Read `table` and `publisher` at each scrape, and count the table's crashes."""
        self._table, self._publisher = table, publisher
        table.on_dead = self.crashed

    def crashed(self, env_id: str) -> None:
        self._crashes.labels(env_id).inc()

    async def _refresh(self) -> None:
        if self._publisher is not None:
            self._queued.set(self._publisher.pending)
        table = self._table
        if table is None:
            return
        tally: Tally[tuple[str, str]] = Tally()
        for instance in table.instances():
            if instance.state is State.RUNNING:
                state = "warm" if table.is_pooled(instance.session_id) else "claimed"
            else:
                state = "dead" if instance.state is State.DEAD else instance.state.value
            tally[(instance.env_id, state)] += 1
        set_counts(self._instances, {key: float(n) for key, n in tally.items()})

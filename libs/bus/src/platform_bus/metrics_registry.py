"""A service's own Prometheus registry, made from the specs of `platform_contracts.metric_names`.

`ServiceMetrics(service)` holds one `CollectorRegistry` with the process collector and the
NATS connection's state; a service adds its own counters, gauges and histograms with
`counter`/`gauge`/`histogram` (only the specs the list gives that service) and the gauges it
reads at scrape time with `on_scrape` (each refresh bounded by `REFRESH_TIMEOUT_S`; one that
fails or is late leaves its gauges as they were and logs one line). `exposition()` is the
registry's text format, what `platform_bus.metrics_responder` answers the gateway with.

Series without `_created` samples (`prometheus_client.disable_created_metrics`): half the
series for nothing Prometheus' rate functions need.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import prometheus_client
from platform_contracts import metric_names
from platform_contracts.metric_names import MetricSpec
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]

REFRESH_TIMEOUT_S = 1.0
FOLD_AT = 4096  # times a series of a `FoldedHistogram` keeps before they join it between scrapes


def default_replica() -> str:
    """This process's replica name: the host name (a pod's name) and the process id."""
    return f"{socket.gethostname()}-{os.getpid()}"


class _NatsCollector(Collector):
    """`simulusion_nats_connected` and `simulusion_nats_reconnects_total` of the service's client."""

    def __init__(self, metrics: ServiceMetrics) -> None:
        self._metrics = metrics

    def collect(self) -> Iterator[Any]:
        nc = self._metrics.nc
        connected = 1.0 if nc is not None and nc.is_connected else 0.0
        reconnects = float(nc.stats.get("reconnects", 0)) if nc is not None else 0.0
        yield GaugeMetricFamily(metric_names.NATS_CONNECTED.name, metric_names.NATS_CONNECTED.help, value=connected)
        yield CounterMetricFamily(metric_names.NATS_RECONNECTS.name.removesuffix("_total"),
                                  metric_names.NATS_RECONNECTS.help, value=reconnects)


class _CounterReading(Collector):
    def __init__(self, spec: MetricSpec, read: Callable[[], float]) -> None:
        self._spec, self._read = spec, read

    def collect(self) -> Iterator[Any]:
        yield CounterMetricFamily(self._spec.name.removesuffix("_total"), self._spec.help, value=self._read())


class ServiceMetrics:
    """One service's metrics. `nc`: its NATS client, set when it connects (for the NATS gauges).

    Args:
        service: the service's name in `platform_contracts.metric_names` ("broker", "envhost", ...).
        replica: which of its replicas this is (default: host name and process id).
    """

    def __init__(self, service: str, replica: str | None = None) -> None:
        self.service = service
        self.replica = replica or default_replica()
        self.registry = CollectorRegistry(auto_describe=True)
        self.nc: Any = None
        self._specs = {spec.name: spec for spec in metric_names.of_service(service)}
        self._refreshers: list[Callable[[], Awaitable[None]]] = []
        ProcessCollector(namespace="simulusion", registry=self.registry)
        self.registry.register(_NatsCollector(self))

    def _spec(self, spec: MetricSpec) -> MetricSpec:
        if self._specs.get(spec.name) != spec:
            raise ValueError(f"{spec.name} is not a metric of the {self.service} in platform_contracts.metric_names")
        return spec

    def counter(self, spec: MetricSpec) -> Counter:
        spec = self._spec(spec)
        return Counter(spec.name.removesuffix("_total"), spec.help, spec.labels, registry=self.registry)

    def gauge(self, spec: MetricSpec) -> Gauge:
        spec = self._spec(spec)
        return Gauge(spec.name, spec.help, spec.labels, registry=self.registry)

    def histogram(self, spec: MetricSpec) -> Histogram:
        spec = self._spec(spec)
        return Histogram(spec.name, spec.help, spec.labels, buckets=spec.buckets, registry=self.registry)

    def counter_reading(self, spec: MetricSpec, read: Callable[[], float]) -> None:
        """An unlabelled counter whose value `read()` gives at scrape time (a tally the service
        keeps anyway, so its hot path pays no metric call)."""
        self.registry.register(_CounterReading(self._spec(spec), read))

    def on_scrape(self, refresh: Callable[[], Awaitable[None]]) -> None:
        """Run `refresh` before each exposition (gauges read at scrape time)."""
        self._refreshers.append(refresh)

    async def exposition(self) -> bytes:
        """The registry in Prometheus' text format, its scrape-time gauges refreshed first."""
        if self._refreshers:
            await asyncio.gather(*(self._refresh(refresh) for refresh in self._refreshers))
        return generate_latest(self.registry)

    async def _refresh(self, refresh: Callable[[], Awaitable[None]]) -> None:
        try:
            await asyncio.wait_for(refresh(), REFRESH_TIMEOUT_S)
        except TimeoutError:
            log.warning("%s metrics: %s took over %g s: its gauges are as they were", self.service,
                        getattr(refresh, "__qualname__", refresh), REFRESH_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - a metric must never take a scrape (or the service) down
            log.warning("%s metrics: %s failed (%s: %s): its gauges are as they were", self.service,
                        getattr(refresh, "__qualname__", refresh), type(exc).__name__, exc)


class FoldedHistogram:
    """A histogram with one label, fed on a hot path: `took(value, seconds)` is one list append;
    the times join the histogram at each scrape (`ServiceMetrics.on_scrape`), or once a series
    holds `FOLD_AT` of them. An observe on every step cost the env host's direct path about
    10 µs a step (bench/README.md, issue 34).

    Args:
        metrics: the service's metrics.
        spec: the histogram's spec (one label).
        values: the label's values, each a series made once.
    """

    def __init__(self, metrics: ServiceMetrics, spec: MetricSpec, values: tuple[str, ...]) -> None:
        histogram = metrics.histogram(spec)
        self._series = {value: histogram.labels(value) for value in values}
        self._times: dict[str, list[float]] = {value: [] for value in values}
        metrics.on_scrape(self._fold_on_scrape)

    def took(self, value: str, seconds: float) -> None:
        """One more time of the series `value`."""
        times = self._times[value]
        times.append(seconds)
        if len(times) >= FOLD_AT:
            self._fold(value)

    def fold(self) -> None:
        """Observe every time kept so far into the histogram."""
        for value in self._times:
            self._fold(value)

    async def _fold_on_scrape(self) -> None:
        self.fold()

    def _fold(self, value: str) -> None:
        times, self._times[value] = self._times[value], []
        observe = self._series[value].observe
        for seconds in times:
            observe(seconds)


def set_counts(gauge: Gauge, counts: Mapping[tuple[str, ...], float]) -> None:
    """Replace every series of a labelled gauge with `counts` (label values -> value): label
    sets that are gone disappear instead of keeping their last value."""
    gauge.clear()
    for labels, value in counts.items():
        gauge.labels(*labels).set(value)


__all__ = ["FOLD_AT", "REFRESH_TIMEOUT_S", "FoldedHistogram", "ServiceMetrics", "default_replica", "set_counts"]

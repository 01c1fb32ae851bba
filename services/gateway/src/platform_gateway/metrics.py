"""The gateway's own metrics: HTTP requests by route template, the WebSocket's request times,
and which services answered the last gathering (`platform_contracts.metric_names`)."""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Iterable

from platform_bus.metrics_gather import Exposition
from platform_bus.metrics_registry import FoldedHistogram, ServiceMetrics, set_counts
from platform_contracts import metric_names

GATEWAY_PATH = "gateway"  # a binary EnvRequest on a WebSocket the SDK opened
BROWSER_PATH = "browser"  # a request on a WebSocket a web page opened (with an Origin header)


class GatewayMetrics:
    def __init__(self, replica: str | None = None) -> None:
        self.service = ServiceMetrics("gateway", replica)
        self.http_requests = self.service.counter(metric_names.HTTP_REQUESTS)
        self.http_seconds = self.service.histogram(metric_names.HTTP_REQUEST_DURATION)
        # a list append per WebSocket request, in the histogram at each scrape
        self.stream_seconds = FoldedHistogram(self.service, metric_names.STREAM_REQUEST_DURATION,
                                              (GATEWAY_PATH, BROWSER_PATH))
        self._replies = self.service.gauge(metric_names.METRICS_REPLIES)

    def answered(self, expositions: Iterable[Exposition]) -> None:
        """Count who answered a gathering (the gateway itself always)."""
        tally = Tally(exposition.service for exposition in expositions)
        tally["gateway"] += 1
        set_counts(self._replies, {(service, ): float(n) for service, n in tally.items()})

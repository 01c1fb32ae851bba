"""The env host's step times: each kept as a float on the step path (FoldedHistogram), in the
step-time histogram by path once a scrape folds them, or at once when a path holds FOLD_AT."""

from __future__ import annotations

import asyncio

from platform_bus.metrics_registry import FOLD_AT, ServiceMetrics
from platform_envhost.metrics import DIRECT_PATH, GATEWAY_PATH, VECTOR_PATH, EnvHostMetrics


def _count(metrics: ServiceMetrics, path: str) -> float:
    value = metrics.registry.get_sample_value("simulusion_envhost_step_duration_seconds_count", {"path": path})
    return value or 0.0


def test_step_times_reach_the_histogram_by_path_at_the_fold() -> None:
    host = EnvHostMetrics("eh-test")
    metrics, clock = host.service, host.steps
    clock.took(DIRECT_PATH, 0.0002)
    clock.took(DIRECT_PATH, 0.0004)
    clock.took(VECTOR_PATH, 0.003)
    assert _count(metrics, DIRECT_PATH) == 0  # kept as floats until a scrape folds them
    asyncio.run(metrics.exposition())
    assert _count(metrics, DIRECT_PATH) == 2
    assert _count(metrics, VECTOR_PATH) == 1
    assert _count(metrics, GATEWAY_PATH) == 0
    total = metrics.registry.get_sample_value("simulusion_envhost_step_duration_seconds_sum", {"path": DIRECT_PATH})
    assert total is not None and abs(total - 0.0006) < 1e-12
    asyncio.run(metrics.exposition())
    assert _count(metrics, DIRECT_PATH) == 2  # folded once only


def test_a_path_that_fills_folds_without_a_scrape() -> None:
    host = EnvHostMetrics("eh-test")
    metrics, clock = host.service, host.steps
    for _ in range(FOLD_AT):
        clock.took(GATEWAY_PATH, 0.001)
    assert _count(metrics, GATEWAY_PATH) == FOLD_AT

"""The metrics' shared part against a real nats-server: each service's registry made from the
list, the responders answering the gathering, the gatherer waiting for every replica it knows,
and the merge into one exposition that `promtool check metrics` accepts."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from platform_bus import connect, flush_queued
from platform_bus.metrics_gather import Exposition, MetricsGatherer, merge_expositions
from platform_bus.metrics_registry import ServiceMetrics, set_counts
from platform_bus.metrics_responder import MetricsResponder
from platform_contracts import metric_names
from prometheus_client.parser import text_string_to_metric_families


@pytest.fixture
async def nc(nats_server: Any) -> AsyncIterator[Any]:
    client = await connect(nats_server.url, name="bus-metrics-tests")
    yield client
    await client.close()


def _families(text: str) -> dict[str, Any]:
    return {family.name: family for family in text_string_to_metric_families(text)}


def test_a_service_makes_only_its_own_listed_metrics() -> None:
    broker = ServiceMetrics("broker", "b1")
    broker.counter(metric_names.SESSIONS_CREATED).labels("cartpole").inc()
    with pytest.raises(ValueError, match="simulusion_envhost_step_duration_seconds is not a metric of the broker"):
        broker.histogram(metric_names.STEP_DURATION)


async def test_set_counts_drops_the_label_sets_that_are_gone() -> None:
    machines = ServiceMetrics("machines", "m1")
    gauge = machines.gauge(metric_names.MACHINES)
    set_counts(gauge, {("ready",): 2.0, ("failed",): 1.0})
    set_counts(gauge, {("ready",): 3.0})
    samples = _families((await machines.exposition()).decode())["simulusion_machines"].samples
    assert [(s.labels, s.value) for s in samples] == [({"status": "ready"}, 3.0)]


async def test_a_failing_refresh_keeps_the_scrape_and_the_last_values() -> None:
    evals = ServiceMetrics("evals", "e1")
    gauge = evals.gauge(metric_names.EVALS)
    gauge.labels("running").set(4)

    async def broken() -> None:
        raise RuntimeError("database gone")

    evals.on_scrape(broken)
    families = _families((await evals.exposition()).decode())
    assert [s.value for s in families["simulusion_evals"].samples] == [4.0]


async def test_every_replica_answers_and_the_merge_labels_each_series(nc: Any, nats_server: Any) -> None:
    others = [await connect(nats_server.url, name=f"replica-{i}") for i in range(2)]
    responders = []
    try:
        for i, client in enumerate(others):
            metrics = ServiceMetrics("envhost", f"host-{i}")
            metrics.histogram(metric_names.STEP_DURATION).labels("direct").observe(0.002 * (i + 1))
            responder = MetricsResponder(client, metrics)
            await responder.start()
            responders.append(responder)
        for client in others:
            await flush_queued(client)
        gateway = ServiceMetrics("gateway", "gw")
        gateway.nc = nc
        expositions = await MetricsGatherer(nc).gather()
        assert sorted((e.service, e.replica) for e in expositions) == [("envhost", "host-0"), ("envhost", "host-1")]
        own = Exposition("gateway", "gw", (await gateway.exposition()).decode())
        body = merge_expositions([own, *expositions]).decode()
    finally:
        for responder in responders:
            await responder.stop()
        for client in others:
            await client.close()
    assert body.count("# TYPE simulusion_envhost_step_duration_seconds histogram") == 1
    families = _families(body)
    counts = {s.labels["replica"]: s.value for s in families["simulusion_envhost_step_duration_seconds"].samples
              if s.name.endswith("_count")}
    assert counts == {"host-0": 1.0, "host-1": 1.0}
    connected = {(s.labels["service"], s.labels["replica"]): s.value for s in families["simulusion_nats_connected"].samples}
    assert connected == {("gateway", "gw"): 1.0, ("envhost", "host-0"): 1.0, ("envhost", "host-1"): 1.0}
    promtool = shutil.which("promtool")
    assert promtool is not None, "promtool is missing: install Debian's prometheus package (scripts/install_system_deps.sh)"
    checked = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr


async def test_the_gatherer_waits_for_a_slow_replica_it_knows_and_stops_when_nobody_listens(nc: Any, nats_server: Any) -> None:
    slow_client = await connect(nats_server.url, name="slow")
    slow = ServiceMetrics("recorder", "slow")
    delay = [0.0]

    async def slow_refresh() -> None:
        await asyncio.sleep(delay[0])

    slow.on_scrape(slow_refresh)
    responder = MetricsResponder(slow_client, slow)
    await responder.start()
    await flush_queued(slow_client)
    try:
        gatherer = MetricsGatherer(nc, timeout=2.0, stall=0.1)
        assert [e.replica for e in await gatherer.gather()] == ["slow"]
        delay[0] = 0.5  # beyond the stall, within the timeout: known, so waited for
        assert [e.replica for e in await gatherer.gather()] == ["slow"]
        await responder.stop()
        await flush_queued(slow_client)  # the server has the unsubscribe
        started = time.monotonic()
        assert await gatherer.gather() == []  # nobody listens: NATS says so at once
        assert time.monotonic() - started < 1.0
    finally:
        await responder.stop()
        await slow_client.close()


def test_an_answer_that_does_not_parse_is_left_out_not_the_scrape() -> None:
    good = ServiceMetrics("broker", "b1")
    good.counter(metric_names.SESSIONS_CREATED).labels("cartpole").inc()
    body = merge_expositions([Exposition("broker", "b1", generate(good)),
                              Exposition("recorder", "r1", "this is { not an exposition")]).decode()
    assert 'simulusion_broker_sessions_created_total{environment="cartpole",replica="b1",service="broker"} 1.0' in body
    assert 'service="recorder"' not in body


def generate(metrics: ServiceMetrics) -> str:
    from prometheus_client import generate_latest

    return generate_latest(metrics.registry).decode()


def test_the_list_names_each_family_once_with_prometheus_conventions() -> None:
    names = [spec.name for spec in metric_names.EXPORTED]
    assert len(names) == len(set(names))
    for spec in metric_names.EXPORTED:
        assert spec.name.startswith("simulusion_"), spec.name
        assert spec.name.endswith("_total") == (spec.kind == "counter"), spec.name
        assert not set(spec.labels) & set(metric_names.MERGE_LABELS), spec.name
        assert (spec.kind == "histogram") == bool(spec.buckets), spec.name
    assert "simulusion_envhost_step_duration_seconds_bucket" in metric_names.series_names()

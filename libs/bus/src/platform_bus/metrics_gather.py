"""The gateway's side of the metrics: ask every service over the bus, merge the answers.

`MetricsGatherer.gather` publishes one request on `platform.metrics.collect` with a reply inbox
and takes every answer that comes (NATS' request-many pattern): until `timeout`, or until every
replica that answered the gathering before has answered and no further answer has come for
`stall` seconds after the last one. So a scrape waits about `stall` beyond the slowest
service, a slow one is still waited for, and a replica that went away costs one scrape the
whole timeout, not every one. `merge_expositions` parses each
answer (and the gateway's own) and writes one valid exposition: each family's HELP and TYPE
once, every series labelled with its `service` and `replica` (a second answer under the same
pair gets `-2`, `-3`, ... so no series repeats).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from platform_contracts import subjects
from platform_contracts.metric_names import REPLICA_LABEL, SERVICE_LABEL
from platform_contracts.tracing import inject_dict
from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample

log = logging.getLogger(__name__)

GATHER_TIMEOUT_S = 2.0
GATHER_STALL_S = 0.3
# The text format 0.0.4, what generate_latest writes (Prometheus 2 and 3 read it).
EXPOSITION_CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4


@dataclass(frozen=True)
class Exposition:
    """One replica's answer: its service, its replica name and its text exposition."""

    service: str
    replica: str
    text: str


class MetricsGatherer:
    """Gathers the services' expositions over `nc`, remembering who answered last time."""

    def __init__(self, nc: Any, *, timeout: float = GATHER_TIMEOUT_S, stall: float = GATHER_STALL_S) -> None:
        self._nc = nc
        self._timeout = timeout
        self._stall = stall
        self._expected: set[tuple[str, str]] = set()

    async def gather(self) -> list[Exposition]:
        """Every service replica's exposition that answers in time (none when NATS is down)."""
        nc = self._nc
        if not nc.is_connected:
            return []
        loop = asyncio.get_running_loop()
        answers: asyncio.Queue[Any] = asyncio.Queue()

        async def on_answer(msg: Any) -> None:
            answers.put_nowait(msg)

        inbox = nc.new_inbox()
        subscription = await nc.subscribe(inbox, cb=on_answer)
        expositions: list[Exposition] = []
        waiting_for = set(self._expected)
        try:
            await nc.publish(subjects.METRICS_COLLECT, b"", reply=inbox, headers=inject_dict())  # the scrape's trace
            deadline = loop.time() + self._timeout
            while (left := deadline - loop.time()) > 0:
                wait = left if waiting_for or not expositions else min(left, self._stall)
                try:
                    msg = await asyncio.wait_for(answers.get(), wait)
                except TimeoutError:
                    break
                headers = msg.headers or {}
                service = headers.get(subjects.METRICS_SERVICE_HEADER)
                if service is None:  # the server's status message: nobody listens (503), so no answer comes
                    if not expositions and not msg.data:
                        break
                    continue
                exposition = Exposition(service, headers.get(subjects.METRICS_REPLICA_HEADER, "unknown"),
                                        msg.data.decode("utf-8", errors="replace"))
                expositions.append(exposition)
                waiting_for.discard((exposition.service, exposition.replica))
        finally:
            await subscription.unsubscribe()
        self._expected = {(exposition.service, exposition.replica) for exposition in expositions}
        return expositions


class _Families(Collector):
    def __init__(self, families: Iterable[Metric]) -> None:
        self._families = list(families)

    def collect(self) -> Iterator[Metric]:
        return iter(self._families)


def merge_expositions(expositions: Iterable[Exposition]) -> bytes:
    """One text exposition of them all, each series labelled with its service and replica. An
    answer that does not parse, or a family whose type differs from the first's, is left out
    (one log line), never the whole scrape."""
    families: dict[str, Metric] = {}
    seen: set[tuple[str, str]] = set()
    for exposition in expositions:
        replica = _unique(exposition.service, exposition.replica, seen)
        try:
            parsed = list(text_string_to_metric_families(exposition.text))
        except ValueError as exc:
            log.warning("the metrics of %s %s do not parse: %s", exposition.service, replica, exc)
            continue
        for family in parsed:
            merged = families.get(family.name)
            if merged is None:
                merged = families[family.name] = Metric(family.name, family.documentation, family.type)
            elif merged.type != family.type:
                log.warning("metric %s: a %s from %s %s, a %s before: left out", family.name, family.type,
                            exposition.service, replica, merged.type)
                continue
            extra = {SERVICE_LABEL: exposition.service, REPLICA_LABEL: replica}
            merged.samples.extend(Sample(s.name, {**s.labels, **extra}, s.value, s.timestamp, s.exemplar)
                                  for s in family.samples)
    return generate_latest(_Families(families.values()))


def _unique(service: str, replica: str, seen: set[tuple[str, str]]) -> str:
    name, n = replica, 1
    while (service, name) in seen:
        n += 1
        name = f"{replica}-{n}"
    seen.add((service, name))
    return name


__all__ = ["EXPOSITION_CONTENT_TYPE", "GATHER_STALL_S", "GATHER_TIMEOUT_S", "Exposition", "MetricsGatherer",
           "merge_expositions"]

"""The recorder's metrics: the partitions it holds, its lag (messages of the sessions stream their
consumers have yet to get, and those it has not acked), what it wrote, and JetStream's sessions stream (both read at
scrape time from the consumer's and the stream's info); the written tallies are the part
writers' own (`writing.part_files.WRITTEN`), so writing pays no metric call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from platform_bus.metrics_registry import ServiceMetrics
from platform_contracts import metric_names, subjects

from platform_recorder.writing.part_files import WRITTEN


class RecorderMetrics:
    def __init__(self, js: Any, replica: str | None = None, held: Callable[[], list[int]] = lambda: [0]) -> None:
        self.service = ServiceMetrics("recorder", replica)
        self._js = js
        self._held = held
        self._partitions = self.service.gauge(metric_names.RECORDER_PARTITIONS)
        self._pending = self.service.gauge(metric_names.RECORDER_PENDING)
        self._ack_pending = self.service.gauge(metric_names.RECORDER_ACK_PENDING)
        self._messages = self.service.gauge(metric_names.STREAM_MESSAGES)
        self._bytes = self.service.gauge(metric_names.STREAM_BYTES)
        self._max_bytes = self.service.gauge(metric_names.STREAM_MAX_BYTES)
        self._consumers = self.service.gauge(metric_names.STREAM_CONSUMERS)
        self.service.counter_reading(metric_names.RECORDER_WRITTEN_BYTES, lambda: float(WRITTEN.bytes))
        self.service.counter_reading(metric_names.RECORDER_WRITTEN_STEPS, lambda: float(WRITTEN.records))
        self.service.on_scrape(self._consumer)
        self.service.on_scrape(self._stream)

    async def _consumer(self) -> None:
        held = self._held()
        pending = ack_pending = 0
        for partition in held:
            info = await self._js.consumer_info(subjects.SESSIONS_STREAM, subjects.recorder_consumer(partition))
            pending += info.num_pending or 0
            ack_pending += info.num_ack_pending or 0
        self._partitions.set(len(held))
        self._pending.set(pending)
        self._ack_pending.set(ack_pending)

    async def _stream(self) -> None:
        info = await self._js.stream_info(subjects.SESSIONS_STREAM)
        stream = subjects.SESSIONS_STREAM
        self._messages.labels(stream).set(info.state.messages)
        self._bytes.labels(stream).set(info.state.bytes)
        self._max_bytes.labels(stream).set(info.config.max_bytes if info.config.max_bytes is not None else -1)
        self._consumers.labels(stream).set(info.state.consumer_count)

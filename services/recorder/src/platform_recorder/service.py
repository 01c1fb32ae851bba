"""The recorder service: its jobs over one recordings storage. Writing recordings from the
session stream (platform_recorder.writing: recovery on start, then the consumer loop), the
recordings API (platform_recorder.reading), the saved snapshot store (platform_recorder.snapshots)
and the comparisons of agents (platform_recorder.comparisons)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from platform_bus import flush_queued
from platform_bus.metrics_responder import MetricsResponder
from platform_contracts.streams import StreamShape

from platform_recorder.comparisons.comparison_store import ComparisonStore
from platform_recorder.comparisons.comparisons_api import ComparisonsApi
from platform_recorder.metrics import RecorderMetrics
from platform_recorder.reading.recordings_api import RecordingsApi
from platform_recorder.snapshots.snapshot_store import SavedSnapshotStore
from platform_recorder.snapshots.snapshots_api import SavedSnapshotsApi
from platform_recorder.storage.interface import Storage
from platform_recorder.storage.opening import as_storage
from platform_recorder.writing.consumer import ConsumerLoop, open_consumer
from platform_recorder.writing.puller import Puller
from platform_recorder.writing.writer import RecordingWriter

log = logging.getLogger(__name__)


class RecorderService:
    """Writes every recorded session's step events into the recordings storage, exactly once.

    Args:
        nc: a connected nats-py client.
        recordings: the recordings storage (a path: a folder storage).
        batch: most messages per fetch.
        fetch_timeout: seconds one fetch waits.
        ack_wait: seconds JetStream waits for an ack before redelivering.
        meta_interval: seconds a meta.json may lag behind its finished episodes (see RecordingWriter).
        gather: seconds a batch gathers after its first message (see ConsumerLoop).
        spool: the local folder of the part files; required unless `recordings` is a folder
            (whose recording folders then hold them).
    """

    def __init__(
        self,
        nc: Any,
        recordings: Storage | Path | str,
        batch: int = 256,
        fetch_timeout: float = 1.0,
        ack_wait: float = 60.0,
        meta_interval: float = 1.0,
        gather: float = 0.2,
        spool: Path | None = None,
        stream: StreamShape = StreamShape(),
    ) -> None:
        self.nc = nc
        self.storage = as_storage(recordings)
        self.batch = batch
        self.fetch_timeout = fetch_timeout
        self.ack_wait = ack_wait
        self.stream = stream
        self.gather = gather
        self.writer = RecordingWriter(self.storage, meta_interval=meta_interval, spool=spool, background_deletes=True)
        self.api = RecordingsApi(nc, self.storage, parts_root=self.writer.parts_root)
        self.snapshots = SavedSnapshotsApi(nc, SavedSnapshotStore(self.storage))
        self.comparisons = ComparisonsApi(nc, ComparisonStore(self.storage))
        self.loop: ConsumerLoop | None = None
        self.metrics = RecorderMetrics(nc.jetstream())
        self._metrics_responder = MetricsResponder(nc, self.metrics.service)
        self._puller: Puller | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Finish what a crash left on disk, then start consuming and serving."""
        recovered = await asyncio.to_thread(self.writer.recover)
        if recovered:
            log.info("recovered %d recordings left open by a previous run", recovered)
        js = self.nc.jetstream()
        self._puller = await open_consumer(self.nc, js, self.ack_wait, self.batch, expires=self.fetch_timeout,
                                           shape=self.stream)
        self.loop = ConsumerLoop(
            js, self._puller, self.writer, self.batch, self.fetch_timeout, self.ack_wait, self.gather
        )
        await self.api.start()
        await self.snapshots.start()
        await self.comparisons.start()
        await self._metrics_responder.start()
        await flush_queued(self.nc)  # the server has the subscriptions: requests from now on are served
        self._task = asyncio.create_task(self.loop.run(), name="recorder-consumer")
        where = self.storage.description
        if self.writer.spooled:
            where += f" (part files in {self.writer.parts_root})"
        log.info("recorder writing to %s", where)

    @property
    def task(self) -> asyncio.Task[None] | None:
        """The consumer loop task (done only when stopped or failed)."""
        return self._task

    async def stop(self) -> None:
        """Finish the batch in progress (written and acked), then stop."""
        await self.api.stop()
        await self.snapshots.stop()
        await self.comparisons.stop()
        await self._metrics_responder.stop()
        if self.loop is not None:
            self.loop.stop()
        if self._task is not None:
            try:
                await asyncio.wait_for(self._task, timeout=self.fetch_timeout + 30)
            except TimeoutError:
                log.error("the consumer loop did not stop in time")
            except Exception:
                log.exception("the consumer loop failed")
            self._task = None
        if self._puller is not None:
            await self._puller.stop()
            self._puller = None
        self.writer.close()

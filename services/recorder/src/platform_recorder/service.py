"""The recorder service: recovery on start, the consumer loop and the request/reply APIs
(recordings; saved snapshots)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from platform_recorder.api import RecordingsApi
from platform_recorder.consumer import ConsumerLoop, open_consumer
from platform_recorder.puller import Puller
from platform_recorder.saved_snapshots import SavedSnapshotStore
from platform_recorder.snapshots_api import SavedSnapshotsApi
from platform_recorder.writer import RecordingWriter

log = logging.getLogger(__name__)


class RecorderService:
    """Writes every recorded session's step events under `root`, exactly once.

    Args:
        nc: a connected nats-py client.
        root: the recordings folder.
        batch: most messages per fetch.
        fetch_timeout: seconds one fetch waits.
        ack_wait: seconds JetStream waits for an ack before redelivering.
        meta_interval: seconds a meta.json may lag behind its finished episodes (see RecordingWriter).
        gather: seconds a batch gathers after its first message (see ConsumerLoop).
    """

    def __init__(
        self,
        nc: Any,
        root: Path,
        batch: int = 256,
        fetch_timeout: float = 1.0,
        ack_wait: float = 60.0,
        meta_interval: float = 1.0,
        gather: float = 0.2,
    ) -> None:
        self.nc = nc
        self.root = Path(root)
        self.batch = batch
        self.fetch_timeout = fetch_timeout
        self.ack_wait = ack_wait
        self.gather = gather
        self.writer = RecordingWriter(self.root, meta_interval=meta_interval)
        self.api = RecordingsApi(nc, self.root)
        self.snapshots = SavedSnapshotsApi(nc, SavedSnapshotStore(self.root))
        self.loop: ConsumerLoop | None = None
        self._puller: Puller | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Finish what a crash left on disk, then start consuming and serving."""
        recovered = await asyncio.to_thread(self.writer.recover)
        if recovered:
            log.info("recovered %d recordings left open by a previous run", recovered)
        js = self.nc.jetstream()
        self._puller = await open_consumer(self.nc, js, self.ack_wait, self.batch, expires=self.fetch_timeout)
        self.loop = ConsumerLoop(
            js, self._puller, self.writer, self.batch, self.fetch_timeout, self.ack_wait, self.gather
        )
        await self.api.start()
        await self.snapshots.start()
        self._task = asyncio.create_task(self.loop.run(), name="recorder-consumer")
        log.info("recorder writing to %s", self.root.resolve())

    @property
    def task(self) -> asyncio.Task[None] | None:
        """The consumer loop task (done only when stopped or failed)."""
        return self._task

    async def stop(self) -> None:
        """Finish the batch in progress (written and acked), then stop."""
        await self.api.stop()
        await self.snapshots.stop()
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

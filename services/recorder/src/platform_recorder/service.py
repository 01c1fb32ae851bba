"""The recorder service: its jobs over one recordings storage. Writing recordings from the
session stream (platform_recorder.writing: for each session partition this recorder holds
(platform_recorder.partitions), recovery of what was left in the spool, then its consumer loop),
the recordings API (platform_recorder.reading), the saved snapshot store (platform_recorder.snapshots)
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
from platform_recorder.partitions import DEFAULT_LEASE_S, PartitionLeases, recording_partition
from platform_recorder.reading.recordings_api import RecordingsApi
from platform_recorder.snapshots.snapshot_store import SavedSnapshotStore
from platform_recorder.snapshots.snapshots_api import SavedSnapshotsApi
from platform_recorder.storage.interface import Storage
from platform_recorder.storage.opening import as_storage
from platform_recorder.writing.consumer import ConsumerLoop, open_consumer, prepare_stream
from platform_recorder.writing.partition_locks import PartitionLock
from platform_recorder.writing.puller import Puller
from platform_recorder.writing.writer import RecordingWriter

log = logging.getLogger(__name__)


class PartitionLoop:
    """One held partition's consumer: its puller, loop and task, and its lock file."""

    def __init__(self, puller: Puller, loop: ConsumerLoop, task: asyncio.Task[None], lock: PartitionLock) -> None:
        self.puller, self.loop, self.task, self.lock = puller, loop, task, lock


class RecorderService:
    """Writes the recorded sessions' step events of the partitions it holds into the recordings
    storage, exactly once (with other recorders sharing the stream and the spool: each partition
    by one of them at a time).

    Args:
        nc: a connected nats-py client.
        recordings: the recordings storage (a path: a folder storage).
        batch: most messages per fetch.
        fetch_timeout: seconds one fetch waits.
        ack_wait: seconds JetStream waits for an ack before redelivering.
        meta_interval: seconds a meta.json may lag behind its finished episodes (see RecordingWriter).
        gather: seconds a batch gathers after its first message (see ConsumerLoop).
        spool: the local folder of the part files; required unless `recordings` is a folder
            (whose recording folders then hold them). Shared by every recorder of the platform.
        recorder_id: this recorder's name among them; lease_s: seconds a partition's lease lasts
            unrenewed (a dead recorder's partitions are taken over after it).
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
        recorder_id: str = "recorder",
        lease_s: float = DEFAULT_LEASE_S,
    ) -> None:
        self.nc = nc
        self.storage = as_storage(recordings)
        self.batch = batch
        self.fetch_timeout = fetch_timeout
        self.ack_wait = ack_wait
        self.stream = stream
        self.gather = gather
        self.writer = RecordingWriter(self.storage, meta_interval=meta_interval, spool=spool, background_deletes=True,
                                      finish_pool=True)
        self.api = RecordingsApi(nc, self.storage, parts_root=self.writer.parts_root)
        self.snapshots = SavedSnapshotsApi(nc, SavedSnapshotStore(self.storage))
        self.comparisons = ComparisonsApi(nc, ComparisonStore(self.storage))
        self.recorder_id = recorder_id
        self._js = nc.jetstream()
        self.leases = PartitionLeases(self._js, recorder_id, self._hold, self._drop, lease_s=lease_s,
                                      replicas=stream.replicas)
        self.partitions: dict[int, PartitionLoop] = {}
        self._write_lock = asyncio.Lock()  # one batch at a time through the shared writer
        self.metrics = RecorderMetrics(self._js, held=lambda: list(self.partitions))
        self._metrics_responder = MetricsResponder(nc, self.metrics.service)
        self._failed: asyncio.Future[None] | None = None
        self._tasks: set[asyncio.Future[None]] = set()

    async def start(self) -> None:
        """Serve, then take this recorder's share of the partitions (each: finish what was left
        in the spool, then consume)."""
        self._failed = asyncio.get_running_loop().create_future()
        self.writer.start_finish_pool()
        await prepare_stream(self._js, self.stream)
        await self.api.start()
        await self.snapshots.start()
        await self.comparisons.start()
        await self._metrics_responder.start()
        await flush_queued(self.nc)  # the server has the subscriptions: requests from now on are served
        where = self.storage.description
        if self.writer.spooled:
            where += f" (part files in {self.writer.parts_root})"
        log.info("recorder writing to %s (as %s, sharing the session partitions with any other recorder)",
                 where, self.recorder_id)
        await self.leases.start()

    @property
    def failed(self) -> asyncio.Future[None] | None:
        """Once started: done (with the exception) when a partition's consumer loop failed."""
        return self._failed

    async def _hold(self, partition: int) -> None:
        """Partition `partition` is this recorder's: run its loop (unless it runs)."""
        running = self.partitions.get(partition)
        if running is not None and not running.task.done():
            return
        if running is not None:
            await running.puller.stop()
            running.lock.release()
            del self.partitions[partition]
        lock = PartitionLock(self.writer.parts_root, partition)
        if not await lock.acquire(lambda: self.leases.holds(partition)):
            return  # lost before the previous writer let go
        try:
            mine = self._mine(partition)
            async with self._write_lock:
                recovered = await asyncio.to_thread(self.writer.recover, mine)
            if recovered:
                log.info("partition %d: recovered %d recordings left open", partition, recovered)
            if not self.leases.holds(partition):
                lock.release()
                return  # lost meanwhile
            puller = await open_consumer(self.nc, self._js, partition, self.ack_wait, self.batch,
                                         expires=self.fetch_timeout)
        except BaseException:
            lock.release()
            raise
        loop = ConsumerLoop(self._js, puller, self.writer, self.batch, self.fetch_timeout, self.ack_wait, self.gather,
                            partition=partition, write_lock=self._write_lock,
                            may_write=lambda: self.leases.holds(partition))
        task = asyncio.create_task(loop.run(), name=f"recorder-partition-{partition}")
        running = self.partitions[partition] = PartitionLoop(puller, loop, task, lock)
        task.add_done_callback(lambda done: self._loop_ended(running, done))

    def _loop_ended(self, running: PartitionLoop, task: asyncio.Task[None]) -> None:
        failure = None if task.cancelled() else task.exception()
        if failure is not None and self._failed is not None and not self._failed.done():
            self._failed.set_exception(failure)
        elif failure is None and self.partitions.get(running.loop.partition) is running:
            # it stopped itself (its lease no longer renewed in time): let the partition go here
            # too, so that its next writer need not wait (the next renewal starts it again)
            self._tasks.add(task := asyncio.ensure_future(self._drop(running.loop.partition)))
            task.add_done_callback(self._tasks.discard)

    async def _drop(self, partition: int) -> None:
        """Partition `partition` is no longer this recorder's: stop its loop after the batch in
        progress, write out its recordings' state (another recorder goes on from the files)."""
        running = self.partitions.pop(partition, None)
        if running is None:
            return
        running.loop.stop()
        try:
            await asyncio.wait_for(asyncio.shield(running.task), timeout=self.fetch_timeout + 30)
        except TimeoutError:
            log.error("partition %d: its consumer loop did not stop in time", partition)
            running.task.cancel()
        except Exception:
            log.exception("partition %d: its consumer loop failed", partition)
        await running.puller.stop()
        async with self._write_lock:
            try:
                await asyncio.to_thread(self.writer.release, self._mine(partition))
            except OSError as exc:  # what lags is rebuilt from the part files by the next holder
                log.error("partition %d: could not write every meta.json: %s", partition, exc)
            finally:
                running.lock.release()

    @staticmethod
    def _mine(partition: int) -> Any:
        return lambda meta: recording_partition(meta) == partition

    async def stop(self) -> None:
        """Finish each partition's batch in progress (written and acked), release the
        partitions, then stop."""
        await self.api.stop()
        await self.snapshots.stop()
        await self.comparisons.stop()
        await self._metrics_responder.stop()
        for running in self.partitions.values():
            running.loop.stop()  # all at once: each ends after its batch in progress
        await self.leases.stop()
        await asyncio.gather(*(self._drop(partition) for partition in list(self.partitions)))
        self.writer.close()

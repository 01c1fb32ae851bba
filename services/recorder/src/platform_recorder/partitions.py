"""Which session partitions this recorder writes: leases in a JetStream key-value bucket.

Sessions' events are split into `subjects.SESSION_PARTITIONS` partitions (the last token of
their subjects); each partition is written by exactly one recorder at a time, through its own
durable consumer. The recorders agree on who writes what in the bucket
`subjects.RECORDER_LEASES_BUCKET`, whose entries expire `lease_s` seconds after their last
write:

- `member.<slot>`: a live recorder (the slot is the lowest free one when it started);
- `partition.<p>`: the recorder writing partition p.

Every `lease_s / 4` seconds a recorder renews its keys, counts the members, and moves towards
its fair share (the partitions split as evenly as can be, lower slots taking the remainder):
it releases partitions beyond its share (its loop stops after the batch in progress, its
recordings' state is written out, then the key is deleted) and creates free partition keys up
to it. A recorder that dies stops renewing: its keys expire and the others take its partitions,
each resuming from its consumer's ack floor after finishing what the dead one left in the part
files (the spool is shared). A recorder that cannot renew (NATS away) stops writing a partition
once its lease is half spent, before anyone else may take it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from nats.errors import Error as NatsError
from nats.js.api import KeyValueConfig, StorageType
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, KeyWrongLastSequenceError
from platform_contracts import subjects

from platform_recorder.meta import RecordingMeta

log = logging.getLogger(__name__)

DEFAULT_LEASE_S = 10.0
PARTITIONS = subjects.SESSION_PARTITIONS
_NATS_TROUBLE = (NatsError, OSError, asyncio.TimeoutError)


def fair_share(rank: int, members: int, partitions: int = PARTITIONS) -> int:
    """Partitions for the member of `rank` (0-based, by slot) among `members`."""
    members = max(1, members)
    if rank >= partitions:
        return 0  # more recorders than partitions: this one stands by
    return partitions // members + (1 if rank < partitions % members else 0)


class PartitionLeases:
    """This recorder's leases. `hold(p)` is awaited when partition p is (still) this recorder's
    (idempotent: it starts p's loop unless running) and `drop(p)` when it is no longer (the
    loop stopped and the partition's state written out; for a release, before the key goes).

    Args:
        js: a nats-py JetStreamContext.
        recorder_id: this recorder's name (in the keys' values and the logs).
        hold, drop: the service's callbacks, above.
        lease_s: seconds a key lives after its last renewal.
        replicas: the bucket's replicas (PLATFORM_JETSTREAM_REPLICAS).
    """

    def __init__(self, js: Any, recorder_id: str, hold: Callable[[int], Coroutine[Any, Any, None]],
                 drop: Callable[[int], Awaitable[None]], lease_s: float = DEFAULT_LEASE_S,
                 replicas: int = 1, clock: Callable[[], float] = time.monotonic) -> None:
        self._js = js
        self.recorder_id = recorder_id
        self._hold = hold
        self._drop = drop
        self.lease_s = lease_s
        self._replicas = replicas
        self._clock = clock
        self._kv: Any = None
        self._slot: tuple[int, int] | None = None  # (member slot, its key's revision)
        self._held: dict[int, tuple[int, float]] = {}  # partition -> (revision, renewed at)
        self._task: asyncio.Task[None] | None = None
        self._holding: dict[int, asyncio.Task[None]] = {}  # `hold` calls in progress
        self._stopping = False

    @property
    def held(self) -> list[int]:
        """The partitions this recorder holds."""
        return sorted(self._held)

    def holds(self, partition: int) -> bool:
        """Whether this recorder may write `partition`: held, and renewed within three quarters
        of a lease (the key outlives that by the rest, in which nobody else may take it)."""
        lease = self._held.get(partition)
        return lease is not None and self._clock() - lease[1] < self.lease_s * 0.75

    async def start(self, keep: bool = True) -> None:
        """Open the bucket, take a share of the partitions now (returning once their loops run),
        then keep the leases: a `turn` every quarter lease (`keep` False: only when called)."""
        self._kv = await self._bucket()
        await self.turn()
        await asyncio.gather(*list(self._holding.values()))
        if keep:
            self._task = asyncio.create_task(self._run(), name="recorder-leases")

    async def stop(self) -> None:
        """Release every partition (for the other recorders to take at once) and leave."""
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        await asyncio.gather(*(self._release(partition) for partition in self.held))
        if self._slot is not None and self._kv is not None:
            slot, revision = self._slot
            self._slot = None
            try:
                await self._kv.delete(_member_key(slot), last=revision)
            except _NATS_TROUBLE as exc:
                log.info("recorder %s: its member key was not deleted (it expires): %s", self.recorder_id, exc)

    async def _bucket(self) -> Any:
        bucket = subjects.RECORDER_LEASES_BUCKET
        try:
            return await self._js.key_value(bucket)
        except BucketNotFoundError:
            config = KeyValueConfig(bucket=bucket, ttl=self.lease_s, history=1, storage=StorageType.FILE,
                                    replicas=self._replicas,
                                    description="which recorder writes which session partition")
            return await self._js.create_key_value(config=config)

    async def _run(self) -> None:
        while not self._stopping:
            await asyncio.sleep(self.lease_s / 4)
            try:
                await self.turn()
            except Exception:
                log.exception("recorder %s: keeping its partition leases failed", self.recorder_id)

    async def turn(self) -> None:
        """Renew, count the members, release beyond the fair share, take up to it."""
        try:
            await self._renew_member()
            members = await self._members()
        except _NATS_TROUBLE as exc:
            log.warning("recorder %s: cannot reach the leases bucket: %s", self.recorder_id, exc)
            return
        for partition in self.held:  # first, before anything slower
            await self._renew(partition)
        if self._slot is not None:
            share = fair_share(members.index(self._slot[0]), len(members))
            for partition in reversed(self.held):
                if len(self._held) <= share:
                    break
                log.info("recorder %s: %d recorders share the partitions; releasing partition %d",
                         self.recorder_id, len(members), partition)
                await self._release(partition)
            for partition in range(PARTITIONS):
                if len(self._held) >= share:
                    break
                if partition not in self._held:
                    await self._take(partition)
        for partition in self.held:  # their loops run (started in the background: renewals never wait for them)
            if partition not in self._holding:
                task: asyncio.Task[None] = asyncio.create_task(self._hold(partition), name=f"recorder-hold-{partition}")
                self._holding[partition] = task
                task.add_done_callback(self._held_done)

    def _held_done(self, task: asyncio.Task[None]) -> None:
        for partition, holding in list(self._holding.items()):
            if holding is task:
                del self._holding[partition]
        if not task.cancelled() and task.exception() is not None:
            log.error("recorder %s: starting a partition's loop failed: %r", self.recorder_id, task.exception())

    async def _renew_member(self) -> None:
        if self._slot is not None:
            slot, revision = self._slot
            try:
                self._slot = (slot, await self._kv.update(_member_key(slot), self._value, last=revision))
                return
            except KeyWrongLastSequenceError:
                log.warning("recorder %s: its member slot %d was taken over (its lease ran out)", self.recorder_id, slot)
                self._slot = None
        for slot in range(PARTITIONS):
            try:
                self._slot = (slot, await self._kv.create(_member_key(slot), self._value))
            except KeyWrongLastSequenceError:
                continue
            log.info("recorder %s: member slot %d", self.recorder_id, slot)
            return
        log.warning("recorder %s: %d recorders already share the partitions: it stands by", self.recorder_id, PARTITIONS)

    async def _members(self) -> list[int]:
        """The member slots held now (by live recorders), in order."""
        found = []
        for slot in range(PARTITIONS):
            try:
                entry = await self._kv.get(_member_key(slot))
            except KeyNotFoundError:
                continue
            if entry.value:
                found.append(slot)
        return found

    async def _renew(self, partition: int) -> None:
        revision, _ = self._held[partition]
        try:
            revision = await self._kv.update(_partition_key(partition), self._value, last=revision)
        except KeyWrongLastSequenceError:
            log.warning("recorder %s: partition %d was taken over (its lease ran out): stopping it",
                        self.recorder_id, partition)
            del self._held[partition]
            await self._drop(partition)
            return
        except _NATS_TROUBLE as exc:  # kept until its lease is half spent (`holds`)
            log.warning("recorder %s: cannot renew partition %d: %s", self.recorder_id, partition, exc)
            return
        self._held[partition] = (revision, self._clock())

    async def _take(self, partition: int) -> None:
        try:
            revision = await self._kv.create(_partition_key(partition), self._value)
        except KeyWrongLastSequenceError:
            return  # another recorder's
        except _NATS_TROUBLE as exc:
            log.warning("recorder %s: cannot take partition %d: %s", self.recorder_id, partition, exc)
            return
        self._held[partition] = (revision, self._clock())
        log.info("recorder %s: takes partition %d", self.recorder_id, partition)

    async def _release(self, partition: int) -> None:
        self._held.pop(partition)
        holding = self._holding.get(partition)
        if holding is not None:
            await asyncio.gather(holding, return_exceptions=True)
        await self._drop(partition)
        try:  # the key goes if it is still this recorder's
            entry = await self._kv.get(_partition_key(partition))
            if entry.value == self._value:
                await self._kv.delete(_partition_key(partition), last=entry.revision)
        except (KeyNotFoundError, KeyWrongLastSequenceError, *_NATS_TROUBLE) as exc:
            log.info("recorder %s: partition %d's key was not deleted (it expires): %s", self.recorder_id, partition, exc)

    @property
    def _value(self) -> bytes:
        return self.recorder_id.encode()


def _member_key(slot: int) -> str:
    return f"member.{slot}"


def _partition_key(partition: int) -> str:
    return f"partition.{partition}"


def recording_partition(meta: RecordingMeta) -> int:
    """The partition whose recorder writes this recording: its session's (a sub-environment's
    recording: its vector session's), or its life's."""
    return subjects.session_partition(meta.parent_session_id or meta.session_id or meta.id, meta.life or "")

"""The asynchronous JetStream publisher of session events.

Steps never wait for JetStream: `submit_nowait` appends an event to an in-memory backlog and
returns. A background task publishes the backlog in batches (`publish_async`, so a batch is
one pipelined burst) and awaits the batch's acks together. An event whose ack fails or times
out is published again with the same `Nats-Msg-Id` (so JetStream stores it once), together
with every event after it, in order, until all are acked: nothing is dropped. Only when the
backlog is full does `submit` make its caller wait (back-pressure on the step path).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Outgoing:
    """One message for JetStream. `done` (optional) resolves once the message is acked."""

    subject: str
    payload: bytes
    headers: dict[str, str]
    done: asyncio.Future[None] | None = None


class EventPublisher:
    """Publishes `Outgoing` messages to JetStream in order, with retries, never dropping one.

    Args:
        js: a nats-py JetStreamContext.
        backlog: events held in memory before `submit` waits.
        batch_size: events published before their acks are awaited together.
        ack_timeout: seconds to wait for a batch's acks before publishing the rest again.
        linger: seconds a batch smaller than `batch_size` waits for more events before it goes.
    """

    def __init__(
        self, js: Any, *, backlog: int = 10_000, batch_size: int = 256, ack_timeout: float = 3.0,
        max_retry_wait: float = 1.0, linger: float = 0.01,
    ) -> None:
        self._js = js
        self._backlog = backlog
        self._batch_size = batch_size
        self._ack_timeout = ack_timeout
        self._max_retry_wait = max_retry_wait
        self._linger = linger
        self._queue: deque[Outgoing] = deque()
        self._wake = asyncio.Event()
        self._space = asyncio.Event()
        self._space.set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self._in_flight = 0
        self.acked = 0
        self.retries = 0

    @property
    def pending(self) -> int:
        """Events not yet acked (queued or in flight)."""
        return len(self._queue) + self._in_flight

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="envhost-event-publisher")

    def submit_nowait(self, event: Outgoing) -> bool:
        """Queue `event` unless the backlog is full; returns whether it was queued."""
        if len(self._queue) >= self._backlog:
            return False
        self._enqueue(event)
        return True

    async def submit(self, event: Outgoing) -> None:
        """Queue `event`, waiting while the backlog is full."""
        while len(self._queue) >= self._backlog:
            self._space.clear()
            await self._space.wait()
        self._enqueue(event)

    async def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued event is acked; returns False if `timeout` passed first."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def close(self, timeout: float = 10.0) -> int:
        """Flush (up to `timeout` seconds), then stop; returns the number of events left unacked."""
        if self._task is not None and not self._task.done():
            await self.flush(timeout)
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        left = self.pending
        if left:
            log.error("stopping with %d session events not acked by JetStream", left)
        return left

    def _enqueue(self, event: Outgoing) -> None:
        self._queue.append(event)
        self._idle.clear()
        self._wake.set()

    async def _run(self) -> None:
        while True:
            if not self._queue:
                self._idle.set()
                self._wake.clear()
                await self._wake.wait()
                continue
            if len(self._queue) < self._batch_size and self._linger > 0:
                await asyncio.sleep(self._linger)  # let a batch gather: one wake-up for many events
            batch = [self._queue.popleft() for _ in range(min(len(self._queue), self._batch_size))]
            self._in_flight = len(batch)
            if len(self._queue) < self._backlog:
                self._space.set()
            try:
                await self._send(batch)
            finally:
                self._in_flight = 0

    async def _acks(self, futures: list[asyncio.Future[Any]]) -> None:
        """Wait (up to the ack timeout) until every future is done; cancel those that are not."""
        remaining = len(futures)
        all_done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def one_done(_: asyncio.Future[Any]) -> None:
            nonlocal remaining
            remaining -= 1
            if remaining == 0 and not all_done.done():
                all_done.set_result(None)

        for future in futures:
            future.add_done_callback(one_done)
        try:
            await asyncio.wait_for(all_done, self._ack_timeout)
        except TimeoutError:
            for future in futures:
                future.cancel()  # frees nats-py's pending slot

    async def _send(self, batch: list[Outgoing]) -> None:
        """Publish `batch` until every event of it is acked, in order."""
        attempt = 0
        while batch:
            futures: list[asyncio.Future[Any]] = []
            error: BaseException | None = None
            for event in batch:
                try:
                    futures.append(await self._js.publish_async(event.subject, event.payload, headers=event.headers))
                except Exception as exc:  # disconnected with a full buffer, closed connection...
                    error = exc
                    break
            if futures:
                await self._acks(futures)
            acked = 0
            for future in futures:
                if future.cancelled():
                    error = error or TimeoutError(f"no ack within {self._ack_timeout}s")
                    break
                exc = future.exception()
                if exc is not None:
                    error = exc
                    break
                acked += 1
            for future in futures[acked:]:  # retrieve the rest's exceptions (they go again anyway)
                if future.done() and not future.cancelled():
                    future.exception()
            for event in batch[:acked]:
                if event.done is not None and not event.done.done():
                    event.done.set_result(None)
            self.acked += acked
            batch = batch[acked:]
            self._in_flight = len(batch)
            if batch:
                attempt += 1
                self.retries += 1
                if attempt == 1 or attempt % 20 == 0:
                    log.warning("JetStream publish of %s failed (%s: %s); retrying %d events with the same Nats-Msg-Id",
                                batch[0].subject, type(error).__name__, error, len(batch))
                await asyncio.sleep(min(0.05 * 2 ** min(attempt, 10), self._max_retry_wait))
        if attempt:
            log.info("JetStream publish recovered after %d retries", attempt)

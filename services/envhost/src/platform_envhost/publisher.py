"""The asynchronous JetStream publisher of session events.

Steps never wait for JetStream: `submit_nowait` appends an event to an in-memory backlog and
returns. A message is one event or a `StepEventBatch` (a hold's steps, a vector step): the
guarantees are per message. A background task takes the backlog in batches, publishes a batch as one pipelined
burst (each message with a reply subject on this publisher's inbox, which is how JetStream
acks a publish) and waits for the batch's acks together. An event whose ack fails or times
out is published again with the same `Nats-Msg-Id` (so JetStream stores it once), together
with every event after it, in order, until all are acked: nothing is dropped. Only when the
backlog is full (in messages or in bytes) does `submit` make its caller wait (back-pressure
on the step path). The one exception to "never dropped" is a message larger than the NATS
server's max payload: it can never be published, so it is refused at `submit` with an error
in the log instead of blocking every event behind it forever.

This is nats-py's `publish_async` pattern without its per-message futures and JSON parsing,
which halves the cost of an event (about 15 against 32 µs).

A message's headers are made where the event is made, in the context of the request that made
it: its trace context (`traceparent`) when that request was traced, so an untraced step costs
nothing for tracing here; the publishing task, outside any request, adds none.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from platform_contracts.limits import NATS_DEFAULT_MAX_PAYLOAD
from platform_contracts.streams import STREAM_FULL_ERR_CODE

log = logging.getLogger(__name__)

DEFAULT_BACKLOG_BYTES = 512 * 1024 * 1024
HEADER_OVERHEAD = 64  # "NATS/1.0" line and framing of the headers
SMALL_MESSAGE_MARGIN = 64 * 1024  # a payload this far under the max payload needs no exact check


@dataclass(slots=True)
class Outgoing:
    """One message for JetStream. `done` (optional) resolves once the message is acked."""

    subject: str
    payload: bytes
    headers: dict[str, str]
    done: asyncio.Future[None] | None = None


class _Attempt:
    """The acks of one publishing of a batch: message i has reply token `base + i`."""

    __slots__ = ("acked", "all_answered", "base", "error", "failed_at", "waiting")

    def __init__(self, base: int, size: int) -> None:
        self.base = base
        self.acked = [False] * size
        self.waiting = size
        self.failed_at = size  # the first message JetStream refused
        self.error = ""
        self.all_answered: asyncio.Future[None] = asyncio.get_running_loop().create_future()


class EventPublisher:
    """Publishes `Outgoing` messages to JetStream in order, with retries, never dropping one.

    Args:
        nc: a connected nats-py client (it must reconnect on its own).
        backlog: events held in memory before `submit` waits.
        backlog_bytes: payload bytes held in memory before `submit` waits.
        batch_size: events published before their acks are awaited together.
        ack_timeout: seconds to wait for a batch's acks before publishing the rest again.
        linger: seconds a batch smaller than `batch_size` waits for more events before it goes.
    """

    def __init__(
        self, nc: Any, *, backlog: int = 10_000, batch_size: int = 256, ack_timeout: float = 3.0,
        max_retry_wait: float = 1.0, linger: float = 0.05, backlog_bytes: int = DEFAULT_BACKLOG_BYTES,
    ) -> None:
        self._nc = nc
        self._backlog = backlog
        self._backlog_bytes = backlog_bytes
        self._queued_bytes = 0
        self._batch_size = batch_size
        self._ack_timeout = ack_timeout
        self._max_retry_wait = max_retry_wait
        self._linger = linger
        self._queue: deque[Outgoing] = deque()
        self._wake = asyncio.Event()
        self._hurry = asyncio.Event()  # an urgent event is queued: send without lingering
        self._space = asyncio.Event()
        self._space.set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self._in_flight = 0
        self._inbox = ""
        self._subscription: Any = None
        self._next_token = 0
        self._attempt: _Attempt | None = None
        self.acked = 0
        self.retries = 0
        self.too_large = 0  # messages refused: larger than the server's max payload
        self.stream_full = 0  # publishes refused because the stream was full (retried)
        self._said_full = False
        self.full_since = 0.0  # when (Unix seconds) the stream began refusing events for being full; 0: it takes them

    @property
    def nc(self) -> Any:
        """The NATS client this publisher publishes with (the env host's connection)."""
        return self._nc

    @property
    def max_payload(self) -> int:
        """The largest message (payload and headers) the NATS server takes."""
        return int(self._nc.max_payload or NATS_DEFAULT_MAX_PAYLOAD)

    @property
    def pending(self) -> int:
        """Events not yet acked (queued or in flight)."""
        return len(self._queue) + self._in_flight

    async def start(self) -> None:
        if self._task is None:
            self._inbox = self._nc.new_inbox() + "."
            self._subscription = await self._nc.subscribe(self._inbox + "*", cb=self._on_ack)
            self._task = asyncio.create_task(self._run(), name="envhost-event-publisher")

    def _full(self) -> bool:
        return len(self._queue) >= self._backlog or self._queued_bytes >= self._backlog_bytes

    def submit_nowait(self, event: Outgoing) -> bool:
        """Queue `event` unless the backlog is full; returns whether it was taken (a message
        too large to ever publish is taken and dropped, see the module's docstring)."""
        if self._full():
            return False
        self._enqueue(event)
        return True

    async def submit(self, event: Outgoing, *, urgent: bool = False) -> None:
        """Queue `event`, waiting while the backlog is full. `urgent`: someone waits for it (a
        crashed session's clients), so the batch it joins goes without lingering."""
        while self._full():
            self._space.clear()
            await self._space.wait()
        self._enqueue(event)
        if urgent:
            self._hurry.set()

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
            await asyncio.gather(self._task, return_exceptions=True)
        if self._subscription is not None and not self._nc.is_closed:
            await asyncio.gather(self._subscription.unsubscribe(), return_exceptions=True)
        left = self.pending
        if left:
            log.error("stopping with %d session events not acked by JetStream", left)
        return left

    def _enqueue(self, event: Outgoing) -> None:
        size = len(event.payload)
        if size > self._nc.max_payload - SMALL_MESSAGE_MARGIN and self._over_max_payload(event):
            self.too_large += 1
            log.error("dropping a message of %d bytes for %s: more than the NATS server's max payload "
                      "(%d bytes); raise max_payload in its config", size, event.subject, self.max_payload)
            if event.done is not None and not event.done.done():
                event.done.set_exception(ValueError(f"a message of {size} bytes is over the NATS max payload"))
                event.done.exception()  # retrieved: nobody may be waiting for it
            return
        self._queued_bytes += size
        self._queue.append(event)
        self._idle.clear()
        self._wake.set()

    def _over_max_payload(self, event: Outgoing) -> bool:
        headers = sum(len(key) + len(value) + 4 for key, value in event.headers.items())
        return len(event.payload) + headers + HEADER_OVERHEAD > self.max_payload

    async def _run(self) -> None:
        while True:
            if not self._queue:
                self._idle.set()
                self._wake.clear()
                await self._wake.wait()
                continue
            if len(self._queue) < self._batch_size and self._linger > 0 and not self._hurry.is_set():
                with contextlib.suppress(TimeoutError):  # let a batch gather: one wake-up for many events
                    await asyncio.wait_for(self._hurry.wait(), self._linger)
            self._hurry.clear()
            batch = [self._queue.popleft() for _ in range(min(len(self._queue), self._batch_size))]
            self._in_flight = len(batch)
            self._queued_bytes -= sum(len(event.payload) for event in batch)
            if not self._full():
                self._space.set()
            try:
                await self._send(batch)
            finally:
                self._in_flight = 0

    async def _on_ack(self, msg: Any) -> None:
        attempt = self._attempt
        if attempt is None:
            return
        try:
            index = int(msg.subject[len(self._inbox):]) - attempt.base
        except ValueError:
            return
        if not 0 <= index < len(attempt.acked) or attempt.acked[index]:
            return  # an ack of an earlier attempt: that batch goes again anyway
        data = msg.data
        if data[:1] == b"{" and b'"error"' not in data:
            attempt.acked[index] = True
        else:  # a JetStream error, or a no-responders status (no stream yet, or it is moving)
            attempt.failed_at = min(attempt.failed_at, index)
            attempt.error = data.decode(errors="replace") or str(msg.headers or "no responders")
        attempt.waiting -= 1
        if attempt.waiting == 0 and not attempt.all_answered.done():
            attempt.all_answered.set_result(None)

    async def _publish(self, batch: list[Outgoing]) -> tuple[int, str]:
        """Publish `batch` once; returns how many of its first events are acked, and an error."""
        attempt = self._attempt = _Attempt(self._next_token, len(batch))
        self._next_token += len(batch)
        publish, inbox, base = self._nc.publish, self._inbox, attempt.base
        error = ""
        sent = 0
        try:
            for event in batch:
                await publish(event.subject, event.payload, reply=f"{inbox}{base + sent}", headers=event.headers)
                sent += 1
        except Exception as exc:  # noqa: BLE001 - disconnected with a full buffer, closed: retried
            attempt.failed_at = min(attempt.failed_at, sent)
            attempt.waiting -= len(batch) - sent  # only the sent ones can be answered
            error = f"{type(exc).__name__}: {exc}"
        if attempt.waiting > 0:
            try:
                await asyncio.wait_for(attempt.all_answered, self._ack_timeout)
            except TimeoutError:
                error = error or f"no ack within {self._ack_timeout:g}s"
        self._attempt = None
        acked = 0
        while acked < attempt.failed_at and attempt.acked[acked]:
            acked += 1
        return acked, error or attempt.error

    async def _send(self, batch: list[Outgoing]) -> None:
        """Publish `batch` until every event of it is acked, in order."""
        attempt = 0
        while batch:
            if attempt and not self._nc.is_connected:
                # Away: publishing now would only pile copies into the client's reconnect buffer.
                await asyncio.sleep(min(0.05 * 2 ** min(attempt, 10), self._max_retry_wait))
                attempt += 1
                continue
            acked, error = await self._publish(batch)
            for event in batch[:acked]:
                if event.done is not None and not event.done.done():
                    event.done.set_result(None)
            self.acked += acked
            batch = batch[acked:]
            self._in_flight = len(batch)
            if batch:
                attempt += 1
                self.retries += 1
                if _is_stream_full(error):
                    self._note_full(len(batch) + len(self._queue))
                elif attempt == 1 or attempt % 20 == 0:
                    log.warning("JetStream publish of %s failed (%s); retrying %d events with the same Nats-Msg-Id",
                                batch[0].subject, error, len(batch))
                await asyncio.sleep(min(0.05 * 2 ** min(attempt, 10), self._max_retry_wait))
        if attempt:
            log.info("JetStream publish recovered after %d retries", attempt)
        if self._said_full:
            self._said_full = False
            self.full_since = 0.0
            log.warning("the sessions stream takes events again: the recorder has caught up with its backlog")

    def _note_full(self, waiting: int) -> None:
        self.stream_full += 1
        if not self._said_full:
            self._said_full = True
            self.full_since = time.time()
            log.warning("the sessions stream is full (its limit PLATFORM_JETSTREAM_MAX_BYTES reached: the recorder "
                        "is that far behind, or stopped): %d session events wait here, and once %d do, recorded "
                        "sessions' steps wait for the recorder to catch up", waiting, self._backlog)


def _is_stream_full(error: str) -> bool:
    """A JetStream publish error saying the stream is at its max_bytes (DiscardPolicy.NEW)."""
    return f'"err_code":{STREAM_FULL_ERR_CODE}' in error.replace(" ", "")

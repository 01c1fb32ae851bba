"""The pull -> write -> fsync -> ack loop on a session partition's durable JetStream consumer.

A recorder runs one loop per partition it holds (platform_recorder.partitions); the loops share
one RecordingWriter, one batch at a time (`write_lock`), and a loop writes only while its
recorder still holds the partition (`may_write`): a batch fetched after the lease was lost is
left unacked, for the partition's next holder.

Ordering after a restart: JetStream redelivers messages that a dead recorder fetched but never
acked only after `ack_wait`, and meanwhile hands out newer ones. Written in that order a session's
seqs would look like a gap followed by "duplicates". So on start, a consumer with unacked
messages is reset to its ack floor (ADR-60 consumer reset; on older servers it is re-created
from the ack floor): delivery resumes in stream order, and what was already written is
recognised by seq and acked without writing. The same after a batch that could not be
written: the puller first lets its pending pull request end, the consumer is rewound, then the
puller drops what it had buffered (see `platform_recorder.writing.puller`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from nats.aio.msg import Msg
from nats.errors import ConnectionClosedError, NoRespondersError
from nats.errors import Error as NatsError
from nats.errors import TimeoutError as NatsTimeoutError
from nats.js import api
from nats.js.errors import APIError, NotFoundError
from opentelemetry import trace
from opentelemetry.context import Context
from platform_contracts import streams, subjects
from platform_contracts.tracing import extract_dict
from platform_recorder.writing.puller import Puller
from platform_recorder.writing.stream_trimmer import StreamTrimmer
from platform_recorder.writing.writer import RecordingWriter

log = logging.getLogger(__name__)
tracer = trace.get_tracer("platform_recorder")

MAX_LINKS = 32


def consumer_config(partition: int, ack_wait: float, batch: int, start_seq: int | None = None) -> api.ConsumerConfig:
    return api.ConsumerConfig(
        name=subjects.recorder_consumer(partition),
        durable_name=subjects.recorder_consumer(partition),
        filter_subject=subjects.partition_events(partition),
        # Acking a batch's last message acks the whole batch: one ack per batch, not per step.
        ack_policy=api.AckPolicy.ALL,
        deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE if start_seq else api.DeliverPolicy.ALL,
        opt_start_seq=start_seq,
        ack_wait=ack_wait,
        max_ack_pending=max(1024, 4 * batch),
        max_deliver=-1,
    )


async def rewind(js: Any, partition: int, ack_wait: float, batch: int) -> None:
    """Make the partition's consumer deliver again, in stream order, everything after its ack floor."""
    stream, name = subjects.SESSIONS_STREAM, subjects.recorder_consumer(partition)
    info = await js.consumer_info(stream, name)
    if not info.num_ack_pending:
        return
    floor = info.ack_floor.stream_seq if info.ack_floor else 0
    log.info(
        "consumer %s has %d unacked messages: resuming from stream seq %d",
        name,
        info.num_ack_pending,
        floor + 1,
    )
    try:
        await js.reset_consumer(stream, name)
    except (APIError, NatsTimeoutError, NoRespondersError) as exc:
        # servers before 2.14 have no consumer reset: re-create the consumer from the floor
        log.info("consumer reset unavailable (%s): re-creating it from stream seq %d", exc, floor + 1)
        await js.delete_consumer(stream, name)
        await js.add_consumer(stream, config=consumer_config(partition, ack_wait, batch, start_seq=floor + 1))


async def prepare_stream(js: Any, shape: streams.StreamShape = streams.StreamShape()) -> None:
    """Make the sessions stream as `shape` says, or give it its limit (the recorder owns the
    backlog)."""
    await streams.ensure_sessions_stream(js, shape)
    await streams.apply_stream_limit(js, shape.max_bytes)


async def open_consumer(nc: Any, js: Any, partition: int, ack_wait: float, batch: int, expires: float) -> Puller:
    """Create (or resume, in stream order) the durable consumer of `partition`; return a started
    puller."""
    stream, name = subjects.SESSIONS_STREAM, subjects.recorder_consumer(partition)
    try:
        await js.consumer_info(stream, name)
    except NotFoundError:
        await js.add_consumer(stream, config=consumer_config(partition, ack_wait, batch))
    else:
        await rewind(js, partition, ack_wait, batch)
    puller = Puller(nc, stream, name, batch, expires=expires)
    await puller.start()
    return puller


def _traced_messages(msgs: Sequence[Msg]) -> list[tuple[Context, trace.SpanContext, str]]:
    """The messages of a batch that carry a valid trace context: (context, span context, subject),
    at most `MAX_LINKS` of them."""
    traced = []
    for msg in msgs:
        if msg.headers and "traceparent" in msg.headers:
            ctx = extract_dict(msg.headers)
            span_context = trace.get_current_span(ctx).get_span_context()
            if span_context.is_valid:
                traced.append((ctx, span_context, msg.subject))
                if len(traced) == MAX_LINKS:
                    break
    return traced


def _batch_span(traced: Sequence[tuple[Context, trace.SpanContext, str]], count: int) -> Any:
    """A span for the batch, a child of its first traced message's context, linked to the others."""
    links = [trace.Link(sc) for _, sc, _ in traced[1:]]
    return tracer.start_as_current_span(
        "recorder.batch",
        context=traced[0][0],
        links=links,
        kind=trace.SpanKind.CONSUMER,
        attributes={"messaging.batch.message_count": count, "messaging.system": "nats"},
    )


def _write_spans(traced: Sequence[tuple[Context, trace.SpanContext, str]], start_ns: int, end_ns: int) -> None:
    """A span `recorder.write` per traced message, a child of the step that sent it (so each
    step's trace shows its write), timed as the batch's write."""
    for ctx, _, subject in traced:
        span = tracer.start_span("recorder.write", context=ctx, kind=trace.SpanKind.CONSUMER, start_time=start_ns,
                                 attributes={"session.id": subjects.session_of_subject(subject),
                                             "messaging.destination.name": subject})
        span.end(end_time=end_ns)


class ConsumerLoop:
    """Pulls a partition's batches, hands them to the writer, acks when durable.

    `write_lock`: held around every use of the writer (shared by the recorder's loops);
    `may_write`: whether the recorder still holds the partition, asked before each batch (once
    False, the loop ends and leaves the batch unacked).
    """

    def __init__(
        self,
        js: Any,
        puller: Puller,
        writer: RecordingWriter,
        batch: int,
        fetch_timeout: float,
        ack_wait: float,
        gather: float = 0.2,
        partition: int = 0,
        write_lock: asyncio.Lock | None = None,
        may_write: Callable[[], bool] = lambda: True,
    ) -> None:
        self.js = js
        self.partition = partition
        self.write_lock = write_lock or asyncio.Lock()
        self.may_write = may_write
        self.puller = puller
        self.writer = writer
        self.batch = batch
        self.fetch_timeout = fetch_timeout
        self.ack_wait = ack_wait
        # A batch gathers for up to `gather` seconds after its first message: fewer, larger batches
        # mean fewer fsyncs (one per session touched) and acks per step; an event is durable, and
        # acked, at most ~`gather` seconds (plus the write) after it arrived.
        self.gather = gather
        self.batches = 0
        self.trimmer = StreamTrimmer(js, partition)  # deletes the written step events from the stream
        self._stopping = asyncio.Event()
        self._must_rewind = False

    async def run(self) -> None:
        failures = 0
        while not self._stopping.is_set():
            if self._must_rewind and not await self._rewind():
                await asyncio.sleep(1.0)
                continue
            try:
                msgs = await self.puller.next_batch(self.fetch_timeout, self.gather)
            except ConnectionClosedError:
                if self._stopping.is_set():
                    return
                raise
            except (NatsError, OSError) as exc:  # reconnecting, server restart: retry
                log.warning("pull failed, retrying: %s", exc)
                await asyncio.sleep(0.5)
                continue
            if self.puller.gap:  # a message was lost on the way: those before it are written, then rewind
                self._must_rewind = True
            if self._stopping.is_set():
                return  # the batch stays unacked: delivered again
            if not self.may_write():
                log.info("partition %d is no longer this recorder's: its loop stops (%d messages left unacked)",
                         self.partition, len(msgs))
                return
            await self.trimmer.trim_when_due()
            if not msgs:
                await self._idle()
                continue
            if await self._handle(msgs):
                failures = 0
            else:
                failures += 1
                self._must_rewind = True
                await asyncio.sleep(min(0.5 * 2**failures, 10.0))

    async def _idle(self) -> None:
        """Nothing to fetch: write the meta.json files that lag (busy, `process` does it)."""
        if self.writer.meta_pending:
            async with self.write_lock:
                try:
                    await asyncio.to_thread(self.writer.flush_due)
                except Exception:  # rebuilt from the part files by the next batch or start
                    log.exception("could not write a lagging meta.json")
                    self.writer.reset()

    async def _rewind(self) -> bool:
        try:
            await self.puller.quiesce()
            await rewind(self.js, self.partition, self.ack_wait, self.batch)
            await self.puller.restart()
        except (NatsError, OSError) as exc:  # NATS unreachable for now: try again before the next pull
            log.warning("cannot rewind the consumer yet: %s", exc)
            return False
        self._must_rewind = False
        return True

    async def _handle(self, msgs: list[Msg]) -> bool:
        """Write a batch and ack it; on failure ack nothing (the batch is delivered again)."""
        traced = _traced_messages(msgs)
        items = [(m.subject, m.data) for m in msgs]
        async with self.write_lock:
            try:
                if not traced:
                    counts = await asyncio.to_thread(self.writer.process, items)
                else:
                    started = time.time_ns()
                    with _batch_span(traced, len(msgs)):
                        counts = await asyncio.to_thread(self.writer.process, items)
                    _write_spans(traced, started, time.time_ns())
            except Exception:
                log.exception("partition %d: a batch of %d messages could not be written; it will be delivered again",
                              self.partition, len(msgs))
                self.writer.reset()
                return False
        if msgs:
            await msgs[-1].ack()  # AckPolicy.ALL: acks every message of the batch, all durable now
            self.trimmer.written(msgs[-1].metadata.sequence.stream)
        self.batches += 1
        log.debug("batch of %d acked: %s", len(msgs), dict(counts))
        return True

    def stop(self) -> None:
        self._stopping.set()

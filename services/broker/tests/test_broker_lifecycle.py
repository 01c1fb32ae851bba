"""The broker's lifecycle consumer on a real JetStream: every kind of fetch timeout is "nothing new"."""

from __future__ import annotations

import asyncio
import logging
import time

from platform_broker.lifecycle import RETRY_DELAY_S, LifecycleConsumer
from platform_broker.store import SessionStore
from platform_contracts import subjects
from simulusion.bus.v1 import events_pb2
from simulusion.control.v1 import control_pb2

PLAIN_TIMEOUTS = 3


class PlainTimeoutsFirst:
    """The consumer's real pull subscription, whose first fetches raise asyncio's own
    TimeoutError, as nats-py's fetch does when its deadline runs out between its two pull
    requests (instead of nats.errors.TimeoutError)."""

    def __init__(self, subscription) -> None:
        self.subscription = subscription
        self.raised = 0

    async def fetch(self, batch: int, timeout: float):
        if self.raised < PLAIN_TIMEOUTS:
            self.raised += 1
            raise asyncio.TimeoutError
        return await self.subscription.fetch(batch=batch, timeout=timeout)

    async def unsubscribe(self) -> None:
        await self.subscription.unsubscribe()


async def test_a_plain_asyncio_timeout_is_no_failure_and_no_pause(nc, db_url, unique_prefix, eventually, caplog):
    store = SessionStore.from_url(db_url)
    await store.create_tables()
    consumer = LifecycleConsumer(nc.jetstream(), store, durable=f"{unique_prefix}-lifecycle")
    session_id = f"s-{unique_prefix}"
    await store.insert(control_pb2.SessionInfo(id=session_id, state=control_pb2.SESSION_STATE_RUNNING))
    try:
        with caplog.at_level(logging.WARNING, logger="platform_broker.lifecycle"):
            await consumer.start()
            wrapped = PlainTimeoutsFirst(consumer._psub)
            consumer._psub = wrapped  # taken by the loop's next fetch (the first one is under way)
            started = time.monotonic()
            while wrapped.raised < PLAIN_TIMEOUTS and time.monotonic() - started < 10:
                await asyncio.sleep(0.01)
            took = time.monotonic() - started
            closed = events_pb2.SessionEvent(session_id=session_id, kind=events_pb2.SESSION_EVENT_KIND_CLOSED,
                                             reason="closed by its env host")
            await nc.jetstream().publish(subjects.session_lifecycle(session_id), closed.SerializeToString())

            async def applied() -> bool:
                info = await store.get(session_id)
                return info is not None and info.state == control_pb2.SESSION_STATE_CLOSED

            await eventually(applied, what="the CLOSED event to be applied after the timeouts")
        # The fetch under way (2 s) ends, then the plain timeouts go by at once: no 2 s pause each.
        assert wrapped.raised == PLAIN_TIMEOUTS
        assert took < RETRY_DELAY_S * 2, took
        assert not [r for r in caplog.records if "fetch failed" in r.getMessage()]
    finally:
        await consumer.stop()
        await nc.jetstream().delete_consumer(subjects.SESSIONS_STREAM, f"{unique_prefix}-lifecycle")
        await store.close()

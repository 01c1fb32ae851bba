"""Session events from JetStream: a crashed or closed instance updates the session table."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from google.protobuf.message import DecodeError
from platform_bus import cancel_requested, stop_task
from nats.errors import Error as NatsError
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy
from platform_contracts import streams, subjects
from simulusion.bus.v1 import events_pb2

from platform_contracts.log_lines import session_fields
from platform_broker.store import SessionStore

log = logging.getLogger(__name__)

# One event a fetch: nats-py's fetch(n) answers at once when events are waiting, but when none is it
# lingers until n have come or the timeout passes, so with n > 1 the first event after a quiet
# spell waited up to FETCH_TIMEOUT_S (a crashed session still read "running" for that long after
# its client got the 410). Lifecycle events are a few per session, so one round trip each is cheap.
FETCH_BATCH = 1
FETCH_TIMEOUT_S = 2.0
RETRY_DELAY_S = 2.0
CATCH_UP_TIMEOUT_S = 1.0
ENDING_KINDS = (events_pb2.SESSION_EVENT_KIND_CRASHED, events_pb2.SESSION_EVENT_KIND_CLOSED)
UNSUBSCRIBE_TIMEOUT_S = 2.0


class LifecycleConsumer:
    """Pulls `SessionEvent`s with the durable consumer `broker` and applies them to the store."""

    def __init__(self, js: Any, store: SessionStore, durable: str = subjects.BROKER_CONSUMER,
                 stream: streams.StreamShape = streams.StreamShape()) -> None:
        self.stream = stream
        self.js = js
        self.store = store
        self.durable = durable
        self._psub: Any = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await streams.ensure_sessions_stream(self.js, self.stream)
        config = ConsumerConfig(durable_name=self.durable, filter_subject=subjects.SESSION_LIFECYCLE_WILDCARD,
                                ack_policy=AckPolicy.EXPLICIT, deliver_policy=DeliverPolicy.ALL)
        self._psub = await self.js.pull_subscribe(subjects.SESSION_LIFECYCLE_WILDCARD, durable=self.durable,
                                                  stream=subjects.SESSIONS_STREAM, config=config)
        self._task = asyncio.create_task(self._run(), name="broker-lifecycle")

    async def stop(self) -> None:
        await stop_task(self._task, logger=log)
        self._task = None
        if self._psub is not None:
            with contextlib.suppress(Exception):  # bounded: NATS may be gone
                await asyncio.wait_for(self._psub.unsubscribe(), UNSUBSCRIBE_TIMEOUT_S)
            self._psub = None

    async def catch_up(self, session_id: str, life: str = "") -> bool:
        """Apply the session's last lifecycle event now if it ended the session (CRASHED or CLOSED),
        ahead of the consumer; True when that changed the session. An env host stores a session's
        CRASHED before it answers the session's clients (410), so a read of the session after
        that answer says how it ended (`life`: the session's, whose partition its subject names). Best effort: without JetStream, the table stays as it is."""
        try:
            msg = await asyncio.wait_for(
                self.js.get_last_msg(subjects.SESSIONS_STREAM, subjects.session_lifecycle(session_id, life)),
                CATCH_UP_TIMEOUT_S)
            event = events_pb2.SessionEvent.FromString(msg.data or b"")
        except (TimeoutError, NatsError, DecodeError):  # no event (NotFoundError), or JetStream away
            return False
        if event.session_id != session_id or event.kind not in ENDING_KINDS:
            return False
        return await self.apply(event)

    async def apply(self, event: events_pb2.SessionEvent) -> bool:
        """Apply one event; True when it changed the session."""
        kind = event.kind
        if kind == events_pb2.SESSION_EVENT_KIND_CRASHED:
            changed = await self.store.mark_crashed(event.session_id, event.reason or "the instance crashed",
                                                    event.log_tail)
        elif kind == events_pb2.SESSION_EVENT_KIND_CLOSED:
            changed = await self.store.mark_closed(event.session_id, event.reason or "closed by its env host")
        else:
            return False
        if changed:
            log.info("session %s (%s) %s on env host %s: %s", event.session_id, event.options.env_id,
                     events_pb2.SessionEventKind.Name(kind).removeprefix("SESSION_EVENT_KIND_").lower(),
                     event.host_id, event.reason, extra=session_fields(event.session_id, event.options.team))
        return changed

    async def _run(self) -> None:
        while True:
            try:
                msgs = await self._psub.fetch(batch=FETCH_BATCH, timeout=FETCH_TIMEOUT_S)
            except TimeoutError:  # nothing new: nats.errors.TimeoutError or asyncio's, whichever the client raises
                continue
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a reconnect in progress: try again shortly
                if cancel_requested():  # nats-py raises ConnectionClosedError for a cancelled fetch
                    raise asyncio.CancelledError from None
                log.warning("lifecycle fetch failed: %r", exc)
                await asyncio.sleep(RETRY_DELAY_S)
                continue
            for msg in msgs:
                await self._handle(msg)

    async def _handle(self, msg: Any) -> None:
        event = events_pb2.SessionEvent()
        try:
            event.ParseFromString(msg.data)
        except DecodeError:
            log.warning("%s: dropping a message that is not a SessionEvent", msg.subject)
            await msg.term()
            return
        try:
            await self.apply(event)
        except Exception:
            log.exception("session %s: could not apply its %s event; retrying", event.session_id,
                          events_pb2.SessionEventKind.Name(event.kind))
            await msg.nak(delay=RETRY_DELAY_S)
            return
        await msg.ack()

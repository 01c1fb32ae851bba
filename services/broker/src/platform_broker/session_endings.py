"""Lifecycle events of the sessions the broker ends itself, as their env host can no longer.

A session whose env host is gone (`platform_broker.lost_hosts`), whose instance is gone when
the broker starts (`platform_broker.reconcile`), or that is closed while its env host does not
answer or has no such instance (`platform_broker.envhosts.stop_and_close`) gets no CRASHED or
CLOSED from an env host; the broker publishes it instead, on the session's lifecycle subject
in JetStream, so the recorder finishes its recording with what was recorded. Its `last_seq` is
0: the broker does not know what the dead publisher published. The broker's own lifecycle
consumer gets it too and finds the session already ended (a no-op). The `Nats-Msg-Id` is the
env host's for the same kind, so one session's CRASHED (or CLOSED) is stored once within the
stream's duplicate window.

An event JetStream does not take is kept and tried again (`retry_pending`), never dropped while
the broker runs.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from platform_bus import BusUnavailableError, publish_to_stream
from platform_contracts import subjects
from simulusion.bus.v1 import events_pb2
from simulusion.control.v1 import control_pb2

log = logging.getLogger(__name__)

PUBLISH_TIMEOUT_S = 5.0
MSG_ID_HEADER = "Nats-Msg-Id"
UNKNOWN_LAST_SEQ = 0  # the publisher of the session's step events died: what it published is unknown

_KIND_NAMES = {
    events_pb2.SESSION_EVENT_KIND_CLOSED: "closed",
    events_pb2.SESSION_EVENT_KIND_CRASHED: "crashed",
}


def ending_event(session: control_pb2.SessionInfo, kind: events_pb2.SessionEventKind.ValueType,
                 reason: str, now: float | None = None) -> events_pb2.SessionEvent:
    """The CLOSED or CRASHED event of a session the broker ended (`last_seq` unknown: 0)."""
    if kind not in _KIND_NAMES:
        raise ValueError(f"the broker publishes only CLOSED and CRASHED, not {events_pb2.SessionEventKind.Name(kind)}")
    event = events_pb2.SessionEvent(session_id=session.id, kind=kind, host_id=session.host_id, reason=reason,
                                    time=time.time() if now is None else now, last_seq=UNKNOWN_LAST_SEQ)
    event.options.CopyFrom(session.options)
    if session.HasField("spec"):
        event.spec.CopyFrom(session.spec)
    return event


def ending_msg_id(event: events_pb2.SessionEvent) -> str:
    """The event's Nats-Msg-Id, as the env host names its own: `<session id>:<kind>`."""
    return f"{event.session_id}:{_KIND_NAMES[event.kind]}"


class SessionEndings:
    """Publishes the lifecycle events of sessions the broker ended; keeps those not yet stored.

    Args:
        js: the broker's JetStream context.
        timeout: seconds to wait for JetStream's ack of one event.
    """

    def __init__(self, js: Any, timeout: float = PUBLISH_TIMEOUT_S) -> None:
        self.js = js
        self.timeout = timeout
        self._pending: dict[str, events_pb2.SessionEvent] = {}

    @property
    def pending(self) -> list[str]:
        """The sessions whose event JetStream has not taken yet."""
        return list(self._pending)

    async def publish(self, session: control_pb2.SessionInfo, kind: events_pb2.SessionEventKind.ValueType,
                      reason: str) -> bool:
        """Publish the session's ending; True once JetStream stored it (else it is pending)."""
        event = ending_event(session, kind, reason)
        self._pending[event.session_id] = event
        return await self._send(event)

    async def retry_pending(self) -> list[str]:
        """Try the pending events again, oldest first, up to the first that JetStream still does
        not take; the ids of the sessions whose event is now stored."""
        sent = []
        for event in list(self._pending.values()):
            if not await self._send(event):
                break
            sent.append(event.session_id)
        return sent

    async def _send(self, event: events_pb2.SessionEvent) -> bool:
        subject = subjects.session_lifecycle(event.session_id, event.options.life)
        try:
            await publish_to_stream(self.js, subject, event.SerializeToString(), timeout=self.timeout,
                                    headers={MSG_ID_HEADER: ending_msg_id(event)})
        except BusUnavailableError as exc:
            log.warning("session %s: its %s event is not stored yet (tried again shortly): %s", event.session_id,
                        _KIND_NAMES[event.kind], exc)
            return False
        self._pending.pop(event.session_id, None)
        return True

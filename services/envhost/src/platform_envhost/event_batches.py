"""StepEventBatch messages: several step events of one session in one JetStream message.

A hold's steps and a vector step's sub-environment steps go on `platform.session.<id>.steps.<p>`
as one `StepEventBatch`, with the Nats-Msg-Id `<id>:batch:<n>` (n counting the session's
batches from 1, so a retried publish is stored once). Events that would not fit in one NATS
message (the server's max payload) are split over several batches, in order. An event of a few
KiB or more goes zstd-compressed, one whose observation is an image split from it
(`platform_contracts.step_batches.frame_step_event`).
"""

from __future__ import annotations

from platform_contracts import subjects
from platform_contracts.step_batches import frame_step_event
from simulusion.bus.v1 import events_pb2 as bus_pb

from platform_envhost.publisher import Outgoing
from platform_envhost.step_events import MSG_ID

# Room left in a message for its headers (trace context, Nats-Msg-Id) and the protocol line.
HEADROOM_BYTES = 16 * 1024


class BatchCounter:
    """Numbers a session's StepEventBatch messages from 1 (their Nats-Msg-Ids)."""

    __slots__ = ("count", "session_id", "subject")

    def __init__(self, session_id: str, life: str = "") -> None:
        self.session_id = session_id
        self.subject = subjects.session_step_batches(session_id, life)
        self.count = 0

    def next_msg_id(self) -> str:
        self.count += 1
        return subjects.step_batch_msg_id(self.session_id, self.count)


def batch_messages(batch: bus_pb.StepEventBatch, counter: BatchCounter, headers: dict[str, str],
                   max_payload: int) -> list[Outgoing]:
    """`batch` as messages for the publisher: one, or several when it is larger than a message
    may be. Large events go compressed or split (see `platform_contracts.step_batches`): the
    batch is spent (a split event's observation data is taken out of it). An empty batch is no
    message."""
    if not batch.events:
        return []
    limit = max(max_payload - HEADROOM_BYTES, 1)
    messages: list[Outgoing] = []
    parts: list[bytes] = []
    size = 0
    for event in batch.events:
        framed = frame_step_event(event)
        if parts and size + len(framed) > limit:
            messages.append(Outgoing(counter.subject, b"".join(parts), {**headers, MSG_ID: counter.next_msg_id()}))
            parts, size = [], 0
        parts.append(framed)
        size += len(framed)
    messages.append(Outgoing(counter.subject, b"".join(parts), {**headers, MSG_ID: counter.next_msg_id()}))
    return messages

"""A recorded session's step events gathered into StepEventBatch messages.

A JetStream message per step costs the env host's publisher, nats-server and the recorder more
than the step's event itself, and on a small machine that CPU time is taken from the stepping
client. So the events of a session's resets, steps and restores wait here and go as one
`StepEventBatch` (`event_batches`) when `MAX_EVENTS` events or about `MAX_BYTES` have gathered,
`SEND_AFTER_S` after the first one, before any other event of the session (a traced step, a
snapshot, a hold's steps, a batch, a saved snapshot's restore) and before its CLOSED or CRASHED
(`Router.drain`). The recorder reads a batch's events exactly as single ones.
"""

from __future__ import annotations

import asyncio

from simulusion.bus.v1 import events_pb2 as bus_pb

from platform_envhost.step_events import EventList

MAX_EVENTS = 64
MAX_BYTES = 512 * 1024  # of the answers the events were built from (frames and observations)
SEND_AFTER_S = 0.05


class CoalescedSteps:
    """The events gathered for one session's next StepEventBatch."""

    __slots__ = ("_batch", "answer_bytes", "timer")

    def __init__(self) -> None:
        self._batch = bus_pb.StepEventBatch()
        self.answer_bytes = 0
        self.timer: asyncio.TimerHandle | None = None  # sends the batch SEND_AFTER_S after its first event

    @property
    def events(self) -> EventList:
        """The repeated field to add events to (`StepEventBuilder.add`)."""
        return self._batch.events

    def __len__(self) -> int:
        return len(self._batch.events)

    def full(self) -> bool:
        return len(self._batch.events) >= MAX_EVENTS or self.answer_bytes >= MAX_BYTES

    def take(self) -> bus_pb.StepEventBatch:
        """The gathered events (possibly none); the next batch starts empty."""
        batch, self._batch = self._batch, bus_pb.StepEventBatch()
        self.answer_bytes = 0
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        return batch

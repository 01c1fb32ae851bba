"""Step events deleted from the sessions stream once the recorder has written them.

The stream would otherwise keep every step of every recorded session (the recorder's consumer
acks them, but the stream's retention is by limits): it grows with everything ever recorded
until its limit (PLATFORM_JETSTREAM_MAX_BYTES) refuses new events. So after each batch is
durable, the highest stream sequence it held is noted, and about every `interval` seconds (the
consumer loop calls `trim_when_due` on each turn) its partition's step subjects
(`platform.session.*.step.<p>` and `.steps.<p>`) are purged below the next one: one purge request a
subject, whatever the number of sessions. Each partition's consumer loop has its own trimmer. A purge that fails (NATS away) is tried
again at the next interval; a recorder that dies before purging leaves events that its
successor writes again as duplicates (recognised by seq) and then purges.

Only the step subjects: lifecycle events are the broker's too (its consumer may not have them
yet), and they and the snapshot events are a few small messages a session.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from nats.errors import Error as NatsError
from platform_contracts import subjects

log = logging.getLogger(__name__)

TRIM_INTERVAL_S = 1.0


class StreamTrimmer:
    """Purges the written step events of the sessions stream, every `interval` seconds.

    Args:
        js: a nats-py JetStreamContext.
        partition: the session partition whose step events it deletes.
        interval: seconds between purges (when something new was written).
        clock: seconds, monotonic.
    """

    def __init__(self, js: Any, partition: int, interval: float = TRIM_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._js = js
        self.step_subjects = subjects.partition_step_subjects(partition)
        self.interval = interval
        self._clock = clock
        self._tried_at = clock()
        self.written_through = 0  # the highest stream sequence known written (durable)
        self.trimmed_through = 0  # the step events up to this one are purged
        self.failures = 0

    def written(self, stream_seq: int) -> None:
        """Every message up to stream sequence `stream_seq` is written durably."""
        self.written_through = max(self.written_through, stream_seq)

    async def trim_when_due(self) -> None:
        """`trim` when `interval` seconds have passed since the last try."""
        now = self._clock()
        if now - self._tried_at >= self.interval:
            self._tried_at = now
            await self.trim()

    async def trim(self) -> bool:
        """Purge the step events written since the last trim; False when NATS refused or was away."""
        through = self.written_through
        if through <= self.trimmed_through:
            return True
        try:
            for subject in self.step_subjects:
                await self._js.purge_stream(subjects.SESSIONS_STREAM, seq=through + 1, subject=subject)
        except (NatsError, OSError) as exc:
            self.failures += 1
            if self.failures == 1 or self.failures % 60 == 0:
                log.warning("cannot delete written step events from %s yet (%d tries): %s",
                            subjects.SESSIONS_STREAM, self.failures, exc)
            return False
        self.trimmed_through = through
        self.failures = 0
        return True

"""Batches of a durable JetStream pull consumer's messages, at a few µs of CPU per message.

nats-py's `PullSubscription.fetch` costs ~30 µs per message (a task, a uuid4 and a wait_for
each). Here a plain subscription on a private inbox appends each message to a buffer (~7 µs in
all). Pull requests (`$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`, reply to the inbox) ask for
`batch` messages within `expires` seconds, one request outstanding at a time: the server sends
messages as they come and ends a request when its batch is full or with a status message (408
when it expires). Messages that arrive while a batch is being written wait in the buffer for
the next batch, in delivery order.

A request also asks for at most `max_bytes` (JetStream's pull `max_bytes`), and the inbox takes
that much and more before nats-py would drop messages as a slow consumer: a batch of large
messages (gathered steps with frames and image observations) arrives whole. Should a message be
lost on the way all the same, its successor's consumer sequence shows the gap: from there nothing
is taken (`gap` is set) until the consumer is rewound, because acking a later message (the
consumer acks all up to it) would ack the lost one unwritten.

After the consumer is rewound, messages delivered before the rewind must not be taken: call
`quiesce()` before the rewind (no request of ours is then pending on the server) and
`restart()` after it (a new inbox, an empty buffer: a message still on its way is dropped, and
delivered again by the rewound consumer).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from nats.aio.msg import Msg

log = logging.getLogger(__name__)

# A request whose end (full batch or status) was not seen this long after it expired is taken as
# lost (e.g. the server restarted) and a new one is sent.
LOST_AFTER_S = 0.5
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class Puller:
    """Pulls a durable consumer's messages for `next_batch`.

    Args:
        nc: a connected nats-py client.
        stream: the stream's name.
        consumer: the durable pull consumer's name.
        batch: most messages per batch (and per pull request).
        expires: seconds a pull request waits on the server for messages.
    """

    def __init__(self, nc: Any, stream: str, consumer: str, batch: int, expires: float = 1.0,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self._nc = nc
        self._subject = f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{consumer}"
        self.batch = batch
        self.expires = expires
        # At least the largest message, or the server refuses a request for one.
        self.max_bytes = max(max_bytes, int(nc.max_payload or 0))
        self.gap = ""  # set when a message was lost on the way: what was seen (see the module's docstring)
        self._next_consumer_seq = 0  # the consumer sequence the next message must have (0: any)
        self._buffer: list[Msg] = []
        self._first_at = 0.0  # when the oldest buffered message arrived
        self._sub: Any = None
        self._inbox = ""
        self._credit = 0  # messages the pending request may still deliver (0: none pending)
        self._ends_by = 0.0  # when the pending request is over for sure
        self._waiter: asyncio.Future[None] | None = None
        self._want = 1  # buffered messages that wake the waiter

    async def start(self) -> None:
        self._inbox = inbox = self._nc.new_inbox()

        async def on_msg(msg: Msg) -> None:
            if self._inbox == inbox:  # not a late one of an earlier inbox (see restart)
                self._on_msg(msg)

        # Room for two requests' worth: nats-py drops messages past its pending limits.
        self._sub = await self._nc.subscribe(inbox, cb=on_msg, pending_msgs_limit=4 * self.batch + 1024,
                                             pending_bytes_limit=2 * self.max_bytes)
        self._credit = 0
        self.gap = ""
        self._next_consumer_seq = 0

    async def restart(self) -> None:
        """Drop what is buffered or on its way and go on from a new inbox (after a rewind)."""
        await self.stop()
        self._buffer.clear()
        await self.start()

    async def stop(self) -> None:
        sub, self._sub, self._inbox = self._sub, None, ""
        if sub is not None:
            try:
                await sub.unsubscribe()
            except Exception as exc:  # noqa: BLE001 - the connection may be gone already
                log.debug("unsubscribe: %s", exc)
        self._credit = 0

    async def quiesce(self) -> None:
        """Wait until no pull request of ours is pending on the server (at most `expires` + a bit)."""
        loop = asyncio.get_running_loop()
        while self._credit > 0 and (left := self._ends_by - loop.time()) > 0:
            await self._wait(left, want=None)

    async def next_batch(self, timeout: float, gather: float) -> list[Msg]:
        """The next messages in delivery order: waits up to `timeout` for a first one, then until
        `gather` seconds after it arrived or `batch` messages; [] when none came."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + timeout
        while len(self._buffer) < self.batch:
            now = loop.time()
            end = self._first_at + gather if self._buffer else give_up
            if end - now < 0.001:
                break
            if self._credit <= 0 or now >= self._ends_by:
                await self._pull()
            await self._wait(end - now, want=self.batch if self._buffer else 1)
        taken = self._buffer[: self.batch]
        del self._buffer[: self.batch]
        if self._buffer:
            self._first_at = loop.time()
        return taken

    async def _pull(self) -> None:
        request = {"batch": self.batch, "max_bytes": self.max_bytes, "expires": int(self.expires * 1e9)}
        await self._nc.publish(self._subject, json.dumps(request).encode(), reply=self._inbox)
        self._credit = self.batch
        self._ends_by = asyncio.get_running_loop().time() + self.expires + LOST_AFTER_S

    async def _wait(self, seconds: float, want: int | None) -> None:
        """Until `want` messages are buffered (None: only) the pending request ends, or `seconds`."""
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        self._want = want if want is not None else 1 << 62
        timer = loop.call_later(seconds, _wake, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None

    def _on_msg(self, msg: Msg) -> None:
        if msg.reply:  # a stream message: its reply subject is its ack subject
            self._credit -= 1
            if self.gap or not self._in_sequence(msg):
                return  # not taken: the consumer is rewound first
            if not self._buffer:
                self._first_at = asyncio.get_running_loop().time()
            self._buffer.append(msg)
        else:  # a status ends the request: 408 expired, 409 (consumer deleted, limits...)
            headers = msg.headers or {}
            status = headers.get("Status", "")
            if status == "100":  # a heartbeat (not asked for)
                return
            description = headers.get("Description", "")
            ended = status in ("404", "408") or (status == "409" and ("MaxBytes" in description
                                                                       or description == "Batch Completed"))
            if not ended:  # 404/408: no messages, expired; 409 MaxBytes: the next one would pass max_bytes;
                # 409 Batch Completed: every message asked for was delivered
                log.warning("pull request ended with status %s %s", status, headers.get("Description", ""))
            self._credit = 0
        waiter = self._waiter
        if waiter is not None and (len(self._buffer) >= self._want or self._credit <= 0):
            _wake(waiter)

    def _in_sequence(self, msg: Msg) -> bool:
        """Whether `msg` follows the last message taken (by consumer sequence); sets `gap` if not."""
        try:
            seq = msg.metadata.sequence.consumer
        except (ValueError, IndexError, AttributeError):
            return True  # not a JetStream ack subject we can read: nothing to check
        expected, self._next_consumer_seq = self._next_consumer_seq, seq + 1
        if expected and seq != expected:
            self.gap = (f"consumer sequence {seq} came after {expected - 1}: "
                        f"{seq - expected} message(s) lost on the way")
            log.warning("%s; rewinding the consumer before taking more", self.gap)
            return False
        return True

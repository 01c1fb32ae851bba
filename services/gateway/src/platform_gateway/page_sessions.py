"""Sessions the web app opened for one page (`SessionOptions.closes_with_page`): the streams open
on each, and the close of one that has had none for a grace period.

The web app closes its session itself when its page goes away (pagehide, unmount); this is the
backstop for a page that could not (a crash, a lost network, a killed browser). Each stream on
such a session counts while it is open; when the last one closes, the session is closed
`grace_s` seconds later (PLATFORM_PAGE_SESSION_GRACE_S) unless a stream opened again (a reload),
the session records (`record`), or the page kept it (`keep`, PUT /v0/sessions/{id}/keep).
Kept sessions are remembered by this gateway process only: a restarted gateway closes nothing
it did not see a stream of.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from simulusion.control.v1 import control_pb2 as ctl

from platform_gateway.errors import GatewayError

log = logging.getLogger(__name__)

CLOSE_REASON = "closed with its page: no browser stream for {grace:g} s"

CloseSession = Callable[[str, str], Awaitable[object]]


class PageSessions:
    """Open streams per page session, and the timers that close the abandoned ones."""

    def __init__(self, close: CloseSession, grace_s: float) -> None:
        self._close = close
        self._grace_s = grace_s
        self._open: dict[str, int] = {}
        self._closes_when_left: set[str] = set()  # page sessions that neither record nor are kept
        self._kept: set[str] = set()
        self._timers: dict[str, asyncio.Task[None]] = {}

    def opened(self, info: ctl.SessionInfo) -> None:
        """A stream on `info`'s session opened (any session; only page sessions are counted)."""
        if not info.options.closes_with_page:
            return
        if not info.options.record:
            self._closes_when_left.add(info.id)
        self._open[info.id] = self._open.get(info.id, 0) + 1
        self._cancel(info.id)

    def closed(self, session_id: str) -> None:
        """A stream `opened` counted closed."""
        count = self._open.get(session_id, 0) - 1
        if count > 0:
            self._open[session_id] = count
            return
        self._open.pop(session_id, None)
        self._schedule(session_id)

    def keep(self, session_id: str, keep: bool) -> None:
        """Keep the session open after its streams close (or stop keeping it)."""
        if keep:
            self._kept.add(session_id)
            self._cancel(session_id)
        else:
            self._kept.discard(session_id)
            if session_id not in self._open:
                self._schedule(session_id)

    def kept(self, session_id: str) -> bool:
        return session_id in self._kept

    def forget(self, session_id: str) -> None:
        """The session is closed: nothing more to count or close."""
        self._cancel(session_id)
        self._open.pop(session_id, None)
        self._closes_when_left.discard(session_id)
        self._kept.discard(session_id)

    def close_all_timers(self) -> None:
        for session_id in list(self._timers):
            self._cancel(session_id)

    def _schedule(self, session_id: str) -> None:
        if session_id not in self._closes_when_left or session_id in self._kept or session_id in self._timers:
            return
        self._timers[session_id] = asyncio.create_task(self._close_later(session_id))

    def _cancel(self, session_id: str) -> None:
        timer = self._timers.pop(session_id, None)
        if timer is not None and timer is not asyncio.current_task():
            timer.cancel()

    async def _close_later(self, session_id: str) -> None:
        await asyncio.sleep(self._grace_s)
        self._timers.pop(session_id, None)
        try:
            await self._close(session_id, CLOSE_REASON.format(grace=self._grace_s))
        except GatewayError as exc:  # already closed, or the broker is away: nothing to keep
            log.info("page session %s not closed: %s", session_id, exc.message)
        self.forget(session_id)

"""Sessions the web app opened for one page (`SessionOptions.closes_with_page`): the streams open
on each, and the close of one that has had none for a grace period.

The web app closes its session itself when it navigates to another of its pages (unmount). When
the page itself goes away (`pagehide`: a closed tab, another site, or a reload, which a page
cannot tell apart) it says so (`left`, POST /v0/sessions/{id}/left) and the session is closed
`left_grace_s` seconds after its last stream closes (PLATFORM_PAGE_LEFT_GRACE_S), so that the
reloaded page, which opens a stream again at once, keeps it. The backstop is for a page that
could say nothing (a crash, a lost network, a killed browser): each stream on such a session
counts while it is open, and when the last one closes the session is closed `grace_s` seconds
later (PLATFORM_PAGE_SESSION_GRACE_S). Neither happens when a stream opened again, the session
records (`record`), or the page kept it (`keep`, PUT /v0/sessions/{id}/keep).
Kept sessions are remembered by this gateway process only: a restarted gateway closes nothing
it did not see a stream of.

A session due to close (its page left, or its last stream closed) still counts to its team's
session quota until it does: a create refused for a quota first closes the team's sessions due to
close (`close_due`) and is tried again, so a member whose team may run one session can close a tab
and start another at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from simulusion.control.v1 import control_pb2 as ctl

from platform_gateway.errors import GatewayError

log = logging.getLogger(__name__)

CLOSE_REASON = "closed with its page: no browser stream for {grace:g} s"
LEFT_REASON = "closed with its page: the page went away"

CloseSession = Callable[[str, str], Awaitable[object]]


class PageSessions:
    """Open streams per page session, and the timers that close the abandoned ones."""

    def __init__(self, close: CloseSession, grace_s: float, left_grace_s: float) -> None:
        self._close = close
        self._grace_s = grace_s
        self._left_grace_s = left_grace_s
        self._open: dict[str, int] = {}
        self._left: set[str] = set()  # page sessions whose page said it went away
        self._closes_when_left: set[str] = set()  # page sessions that neither record nor are kept
        self._kept: set[str] = set()
        self._teams: dict[str, str] = {}  # each page session's team ("" on a local platform)
        self._timers: dict[str, asyncio.Task[None]] = {}

    def opened(self, info: ctl.SessionInfo) -> None:
        """A stream on `info`'s session opened (any session; only page sessions are counted)."""
        if not info.options.closes_with_page:
            return
        if not info.options.record:
            self._closes_when_left.add(info.id)
        self._teams[info.id] = info.options.team
        self._open[info.id] = self._open.get(info.id, 0) + 1
        self._left.discard(info.id)  # a reload: its page is back
        self._cancel(info.id)

    def closed(self, session_id: str) -> None:
        """A stream `opened` counted closed."""
        count = self._open.get(session_id, 0) - 1
        if count > 0:
            self._open[session_id] = count
            return
        self._open.pop(session_id, None)
        self._schedule(session_id)

    def left(self, session_id: str) -> float | None:
        """The session's page went away (or reloads): close it `left_grace_s` after its last stream
        closes, unless a stream opens again. Returns that grace, or None when it stays open (kept,
        recording, or not a page session this gateway has seen a stream of)."""
        if session_id not in self._closes_when_left or session_id in self._kept:
            return None
        self._left.add(session_id)
        if session_id not in self._open:
            self._cancel(session_id)  # the backstop's longer timer, if it runs
            self._schedule(session_id)
        return self._left_grace_s

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

    async def close_due(self, team: str) -> list[str]:
        """Close now the sessions of `team` that are due to close with their page (each would within
        its grace anyway); returns those closed."""
        due = [sid for sid in self._timers if self._teams.get(sid) == team]
        closed = []
        for session_id in due:
            self._cancel(session_id)
            reason = LEFT_REASON if session_id in self._left else CLOSE_REASON.format(grace=self._grace_s)
            try:
                await self._close(session_id, reason)
            except GatewayError as exc:
                log.info("page session %s not closed: %s", session_id, exc.message)
            else:
                closed.append(session_id)
            self.forget(session_id)
        return closed

    def forget(self, session_id: str) -> None:
        """The session is closed: nothing more to count or close."""
        self._cancel(session_id)
        self._open.pop(session_id, None)
        self._closes_when_left.discard(session_id)
        self._kept.discard(session_id)
        self._left.discard(session_id)
        self._teams.pop(session_id, None)

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
        grace = self._left_grace_s if session_id in self._left else self._grace_s
        await asyncio.sleep(grace)
        self._timers.pop(session_id, None)
        reason = LEFT_REASON if session_id in self._left else CLOSE_REASON.format(grace=grace)
        try:
            await self._close(session_id, reason)
        except GatewayError as exc:  # already closed, or the broker is away: nothing to keep
            log.info("page session %s not closed: %s", session_id, exc.message)
        self.forget(session_id)

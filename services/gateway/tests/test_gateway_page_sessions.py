"""PageSessions: when a session the web app opened for one page is closed, and when it is not.

The browser tests (tests/web/test_session_lifetime.py) drive the same through Chromium; here the
timing rules, with short graces and a recording stand-in for the broker's close.
"""

from __future__ import annotations

import asyncio

from platform_gateway.page_sessions import CLOSE_REASON, LEFT_REASON, PageSessions
from simulusion.control.v1 import control_pb2 as ctl

GRACE_S = 0.6
LEFT_GRACE_S = 0.15


def page_session(session_id: str, record: bool = False) -> ctl.SessionInfo:
    info = ctl.SessionInfo(id=session_id)
    info.options.closes_with_page = True
    info.options.record = record
    return info


def pages_and_closes() -> tuple[PageSessions, list[tuple[str, str]]]:
    closes: list[tuple[str, str]] = []

    async def close(session_id: str, reason: str) -> None:
        closes.append((session_id, reason))

    return PageSessions(close, GRACE_S, LEFT_GRACE_S), closes


async def test_a_page_that_said_it_left_closes_its_session_after_the_short_grace() -> None:
    pages, closes = pages_and_closes()
    pages.opened(page_session("s1"))
    assert pages.left("s1") == LEFT_GRACE_S
    pages.closed("s1")  # the page's stream closes after its keepalive request went
    await asyncio.sleep(LEFT_GRACE_S + 0.1)
    assert closes == [("s1", LEFT_REASON)]


async def test_a_reload_opens_a_stream_again_and_keeps_the_session() -> None:
    pages, closes = pages_and_closes()
    pages.opened(page_session("s1"))
    pages.left("s1")
    pages.closed("s1")
    await asyncio.sleep(LEFT_GRACE_S / 3)
    pages.opened(page_session("s1"))  # the reloaded page
    await asyncio.sleep(GRACE_S + 0.1)
    assert closes == []
    pages.closed("s1")  # and without a word from the page, the backstop's longer grace
    await asyncio.sleep(LEFT_GRACE_S + 0.1)
    assert closes == []
    await asyncio.sleep(GRACE_S)
    assert closes == [("s1", CLOSE_REASON.format(grace=GRACE_S))]


async def test_left_after_the_last_stream_closed_shortens_the_backstop() -> None:
    pages, closes = pages_and_closes()
    pages.opened(page_session("s1"))
    pages.closed("s1")  # the backstop's timer runs
    pages.left("s1")
    await asyncio.sleep(LEFT_GRACE_S + 0.1)
    assert closes == [("s1", LEFT_REASON)]


async def test_kept_and_recording_sessions_stay_open() -> None:
    pages, closes = pages_and_closes()
    pages.opened(page_session("kept"))
    pages.keep("kept", True)
    pages.opened(page_session("recorded", record=True))
    assert pages.left("kept") is None and pages.left("recorded") is None
    assert pages.left("never-seen") is None  # no stream of it came through this gateway
    pages.closed("kept")
    pages.closed("recorded")
    await asyncio.sleep(GRACE_S + 0.1)
    assert closes == []


def team_session(session_id: str, team: str) -> ctl.SessionInfo:
    info = page_session(session_id)
    info.options.team = team
    return info


async def test_close_due_closes_the_teams_sessions_whose_page_went_at_once() -> None:
    closes: list[tuple[str, str]] = []
    pages = PageSessions(lambda sid, reason: _record(closes, sid, reason), 60.0, 10.0)  # graces a create never waits for
    pages.opened(team_session("left", "vision"))
    pages.left("left")
    pages.closed("left")  # a closed tab
    pages.opened(team_session("silent", "vision"))
    pages.closed("silent")  # a page that could say nothing
    pages.opened(team_session("open", "vision"))  # still on its page
    pages.opened(team_session("other", "robots"))
    pages.closed("other")

    assert sorted(await pages.close_due("vision")) == ["left", "silent"]
    assert sorted(closes) == [("left", LEFT_REASON), ("silent", CLOSE_REASON.format(grace=60.0))]
    assert await pages.close_due("vision") == []  # closed once, their timers gone
    assert await pages.close_due("robots") == ["other"]


async def _record(closes: list[tuple[str, str]], session_id: str, reason: str) -> None:
    closes.append((session_id, reason))

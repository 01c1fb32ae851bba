"""A slow step on the Session page (issue 30, "Bad options"): a step that takes seconds (the test
environment `levels` with `step_seconds`, standing in for substeps at their maximum on a heavy
robot) shows that it is running and for how long, updated live; Close while it runs closes the
session at once (no 503, no wait for the step), stops its instance, and the page says closed
without an error."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from platform_testing.waiting import instance_pids, wait_for
from playwright.sync_api import Page, expect

LONG = 30_000  # ms: a session started on a busy machine
STEP_SECONDS = 30  # the option's maximum: far longer than the test takes to close


@pytest.fixture
def http(web_platform) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web_platform.url, timeout=60) as client:
        yield client


def seconds_shown(text: str) -> float:
    match = re.fullmatch(r"stepping… (\d+\.\d) s \(Close session stops it\)", text)
    assert match, text
    return float(match.group(1))


def test_a_slow_step_shows_its_time_and_close_stops_it(page: Page, http, screenshot) -> None:
    page.goto("/?q=levels")
    page.get_by_test_id("options-levels").click()
    page.get_by_test_id("option-step_seconds").fill(str(STEP_SECONDS))
    page.get_by_test_id("options-start").click()
    expect(page.get_by_test_id("frame")).to_be_visible(timeout=LONG)
    match = re.search(r"/sessions/([^/?#]+)", page.url)
    assert match, page.url
    sid = match.group(1)
    expect(page.get_by_test_id("command-progress")).to_have_count(0)  # the reset was quick

    page.get_by_test_id("step").click()
    progress = page.get_by_test_id("command-progress")
    expect(progress).to_have_text(re.compile(r"^stepping… \d+\.\d s"), timeout=10_000)
    expect(page.get_by_test_id("step")).to_be_disabled()
    first = seconds_shown(progress.inner_text())
    assert first >= 1.0
    wait_for(lambda: seconds_shown(progress.inner_text()) > first or None, timeout=10,
             what="the step's time counting up while it runs")
    screenshot(page, "session-slow-step")
    assert instance_pids(sid)

    page.get_by_test_id("close-session").click()
    expect(page.get_by_test_id("session-closed")).to_be_visible(timeout=STEP_SECONDS * 1000 // 2)
    expect(page.get_by_test_id("session-state")).to_have_text("closed")
    expect(page.get_by_test_id("command-progress")).to_have_count(0)
    expect(page.get_by_test_id("play-error")).to_have_count(0)
    session = http.get(f"/v0/sessions/{sid}").json()
    assert session["state"] == "closed" and session["reason"] == "closed by the client"
    assert instance_pids(sid) == [], "the instance is stopped"
    assert page.get_by_test_id("step-count").inner_text() == "0", "the abandoned step never counted"

"""A recording in progress in a real browser against the real platform: a Pendulum session
recorded with frames keeps stepping (its episode never ends while the test looks); the
Recordings page shows the steps written so far and follows them as the session steps; the
Replay page opens the open episode marked "in progress", with its frame and its reward plot,
follows it as it grows, and loads it again by hand with "Refresh"."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import numpy as np
import platform_sdk
import pytest
from platform_testing.waiting import wait_for
from playwright.sync_api import Page, Route, expect


@pytest.fixture
def stepping(web_platform) -> Iterator[tuple[str, object]]:
    """(session id, its env) of a recorded Pendulum session with frames, reset and left open."""
    with platform_sdk.connect("pendulum", url=web_platform.url, record=True, record_frames=True) as env:
        env.reset(seed=3)
        yield env.session_id, env


def step(env: object, count: int) -> None:
    for _ in range(count):
        _, _, terminated, truncated, _ = env.step(np.array([0.5], dtype=np.float32))  # type: ignore[attr-defined]
        assert not (terminated or truncated), "Pendulum ends its episodes only at 200 steps"


def test_the_recordings_page_shows_the_steps_so_far_of_a_session_still_stepping(page: Page, stepping) -> None:
    sid, env = stepping
    step(env, 12)
    page.goto(f"/recordings?session_id={sid}")
    in_progress = page.get_by_test_id(f"in-progress-{sid}")
    expect(in_progress).to_have_attribute("data-steps", "12", timeout=15_000)
    expect(in_progress).to_have_attribute("data-episode", "0")
    expect(page.get_by_test_id(f"steps-{sid}")).to_contain_text("12 (12 in progress)")
    expect(page.get_by_test_id(f"status-{sid}")).to_have_text("recording")

    step(env, 8)  # the page reads the list again while a recording records
    expect(in_progress).to_have_attribute("data-steps", "20", timeout=15_000)
    expect(page.get_by_test_id(f"steps-{sid}")).to_contain_text("20 (20 in progress)")


def test_the_recordings_page_opened_before_a_sessions_recording_exists_shows_it_once_it_does(
    page: Page, stepping
) -> None:
    # The recorder creates a recording from the session's first events; under load the page can
    # be opened before that. The first read of the list answers as the recorder would then.
    sid, env = stepping
    reads: list[str] = []

    def not_yet_on_the_first_read(route: Route) -> None:
        reads.append(route.request.url)
        if len(reads) == 1:
            route.fulfill(status=200, content_type="application/json", body='{"count": 0, "data": []}')
        else:
            route.continue_()

    page.route(lambda url: "/v0/recordings?" in url, not_yet_on_the_first_read)
    step(env, 3)
    page.goto(f"/recordings?session_id={sid}")
    expect(page.get_by_test_id("recordings-empty")).to_contain_text("appears here with its first steps")
    in_progress = page.get_by_test_id(f"in-progress-{sid}")
    expect(in_progress).to_have_attribute("data-steps", "3", timeout=15_000)
    expect(page.get_by_test_id(f"status-{sid}")).to_have_text("recording")
    assert len(reads) >= 2 and all(f"session_id={sid}" in url for url in reads), reads


def test_the_replay_page_opens_the_open_episode_with_its_frame_and_plots(
    page: Page, stepping, screenshot, web_platform
) -> None:
    sid, env = stepping
    step(env, 15)
    # the recorder creates a recording on its first steps; the page is opened once it exists (as
    # its link on the Recordings page appears only then)
    wait_for(lambda: httpx.get(f"{web_platform.url}/v0/recordings/{sid}").status_code == 200, timeout=30,
             what=f"recording {sid} created")
    page.goto(f"/recordings/{sid}")
    note = page.get_by_test_id("replay-in-progress")
    expect(note).to_be_visible(timeout=15_000)
    expect(note).to_contain_text("in progress")
    expect(page.get_by_test_id("plot-reward")).to_be_visible()
    expect(note).to_have_attribute("data-steps", "15", timeout=15_000)
    expect(page.get_by_test_id("episode-length")).to_have_text("15")

    page.get_by_test_id("step-forward").click()
    page.get_by_test_id("step-forward").click()
    frame = page.get_by_test_id("replay-frame")
    expect(frame).to_have_attribute("data-frame-step", "2")
    expect(frame).to_have_attribute("data-loading", "false")
    assert page.evaluate("(img) => img.complete && img.naturalWidth > 0", frame.element_handle())
    expect(page.get_by_test_id("cursor-reward")).not_to_have_text("–")
    screenshot(page, "replay-in-progress")

    step(env, 10)  # followed as it grows
    expect(note).to_have_attribute("data-steps", "25", timeout=15_000)
    expect(page.get_by_test_id("cursor-step")).to_have_text("2")  # the cursor stays where it was

    page.get_by_test_id("replay-follow").uncheck()
    step(env, 5)
    expect(note).to_contain_text("(30 by now)", timeout=15_000)
    expect(note).to_have_attribute("data-steps", "25")
    page.get_by_test_id("replay-refresh").click()
    expect(note).to_have_attribute("data-steps", "30", timeout=15_000)
    page.get_by_test_id("scrubber").fill("30")
    expect(frame).to_have_attribute("data-frame-step", "30")
    expect(frame).to_have_attribute("data-loading", "false")

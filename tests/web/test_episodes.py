"""The Episodes page in a real browser against the real platform: the episodes of two real
recordings (the `goal` test environment's successes and failures, and CartPole's) are listed
across recordings, sorted by return, filtered by environment and outcome, the Failures button
shows only the failed ones, and a row opens the Replay page at that episode."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import platform_sdk
import pytest
from platform_testing.waiting import wait_for
from playwright.sync_api import Page, expect


@pytest.fixture(scope="module")
def http(web_platform) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web_platform.url, timeout=60) as client:
        yield client


def record(url: str, http: httpx.Client, env_id: str, plays: list[list[int]]) -> str:
    """A closed recording of one episode per list of actions: its id."""
    with platform_sdk.connect(env_id, url=url, record=True) as env:
        sid = env.session_id
        for seed, actions in enumerate(plays):
            env.reset(seed=seed)
            for action in actions:
                env.step(action)
    wait_for(lambda: http.get(f"/v0/recordings/{sid}").json().get("status") == "closed", timeout=60,
             what=f"recording {sid} closed")
    return sid


@pytest.fixture(scope="module")
def goal_recording(web_platform, http: httpx.Client) -> str:
    """Three goal episodes: reached in 2 steps (return 8), fell in 2 (-2), reached in 4 (6)."""
    return record(web_platform.url, http, "goal", [[1, 1], [0, 0], [0, 1, 1, 1]])


@pytest.fixture(scope="module")
def cartpole_recording(web_platform, http: httpx.Client) -> str:
    """One CartPole episode, pushed one way until the pole falls."""
    with platform_sdk.connect("cartpole", url=web_platform.url, record=True) as env:
        sid = env.session_id
        env.reset(seed=1)
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(0)
            done = terminated or truncated
    wait_for(lambda: http.get(f"/v0/recordings/{sid}").json().get("status") == "closed", timeout=60,
             what=f"recording {sid} closed")
    return sid


def test_episodes_across_recordings_sorted_filtered_and_opened(page: Page, goal_recording: str,
                                                               cartpole_recording: str, screenshot) -> None:
    goal = [f"{goal_recording}-{i}" for i in range(3)]
    cartpole = f"{cartpole_recording}-0"
    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Episodes").click()
    expect(page).to_have_url(re.compile(r"/episodes$"))
    for key in (*goal, cartpole):
        expect(page.get_by_test_id(f"episode-row-{key}")).to_be_visible()
    expect(page.get_by_test_id(f"episode-ending-{goal[0]}")).to_have_text("success (reached)")
    expect(page.get_by_test_id(f"episode-ending-{goal[1]}")).to_have_text("failure (fell)")
    expect(page.get_by_test_id(f"episode-ending-{cartpole}")).to_have_text("terminated")
    expect(page.get_by_test_id(f"episode-return-{goal[1]}")).to_have_text("-2")
    expect(page.get_by_test_id(f"episode-length-{goal[2]}")).to_have_text("4")

    page.get_by_test_id("episodes-filter-env").select_option("goal")
    expect(page).to_have_url(re.compile(r"/episodes\?env_id=goal$"))
    page.get_by_test_id("episodes-sort").select_option("-return")
    rows = page.locator("[data-testid^=episode-row-]")
    expect(rows).to_have_count(3)
    assert [rows.nth(i).get_attribute("data-testid") for i in range(3)] == [
        f"episode-row-{goal[0]}", f"episode-row-{goal[2]}", f"episode-row-{goal[1]}"]  # returns 8, 6, -2
    expect(page.get_by_test_id("episodes-count")).to_have_text("3 episodes")

    page.get_by_test_id("episodes-filter-outcome").select_option("reached")
    expect(rows).to_have_count(2)
    page.get_by_test_id("episodes-filter-outcome").select_option("")
    page.get_by_test_id("episodes-failures").click()  # one click: the failures only
    expect(page.get_by_test_id("episodes-failures")).to_have_attribute("aria-pressed", "true")
    expect(rows).to_have_count(1)
    expect(page.get_by_test_id(f"episode-row-{goal[1]}")).to_be_visible()
    screenshot(page, "episodes-failures", full_page=True)

    page.get_by_test_id(f"episode-open-{goal[1]}").click()
    expect(page).to_have_url(re.compile(f"/recordings/{goal_recording}\\?episode=1"))


def test_an_empty_filter_says_so(page: Page, goal_recording: str) -> None:
    page.goto("/episodes?env_id=goal&outcome=no-such-outcome")
    expect(page.get_by_test_id("episodes-empty")).to_contain_text("No episodes match these filters")
    page.get_by_test_id("episodes-clear").click()
    expect(page).to_have_url(re.compile(r"/episodes$"))
    expect(page.get_by_test_id(f"episode-row-{goal_recording}-0")).to_be_visible()

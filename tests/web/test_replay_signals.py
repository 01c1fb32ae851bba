"""The Replay page shows every observation and action, in a real browser against the real platform.

CartPole (no labels, no teacher) is recorded with frames and an agent's compute_s: its replay
plots the four observation numbers and the Discrete action, each chart's value at the cursor
the recorded one, and the seconds of compute_s read in ms/µs; dragging across a chart zooms every
chart to those steps and a double-click shows the whole episode again. Pong's observation is a
picture: it is named as one, not plotted, and its action is. Humanoid's 348 numbers come in
charts to pick from. An episode that begins from a snapshot restore, whose first row keeps no
frame, opens on the nearest frame and says why.
"""

from __future__ import annotations

import re

import httpx
import numpy as np
import platform_sdk
import pytest
from platform_testing.waiting import wait_for
from playwright.sync_api import Page, expect


DIGITS = re.compile(r"^\d+$")
ANY = re.compile(r".*")  # not_to_have_attribute(name, ANY): the attribute is absent


def wait_closed(http: httpx.Client, sid: str, episodes: int) -> dict:
    found: dict = {}

    def closed() -> bool:
        found.update(http.get(f"/v0/recordings/{sid}").json())
        return found.get("status") == "closed" and len(found.get("episodes", [])) == episodes

    wait_for(closed, timeout=60, what=f"recording {sid} closed with {episodes} episodes")
    return found


@pytest.fixture(scope="module")
def http(web_platform):
    with httpx.Client(base_url=web_platform.url, timeout=60) as client:
        yield client


def legend_values(page: Page, plot: str) -> list[str]:
    """The values a chart's legend shows at the cursor, one per series (the step's left out)."""
    values = page.get_by_test_id(plot).locator(".u-legend .u-series .u-value")
    return values.all_inner_texts()[1:]


def drag_across(page: Page, plot: str, start: float, stop: float) -> None:
    """Drags across the chart's plotting area from fraction `start` to `stop` of its width."""
    area = page.get_by_test_id(plot).locator(".u-over")
    area.scroll_into_view_if_needed()
    box = area.bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * start, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * (start + stop) / 2, y, steps=4)
    page.mouse.move(box["x"] + box["width"] * stop, y, steps=4)
    page.mouse.up()


def test_cartpole_plots_its_observation_and_action_at_the_cursor_and_zooms(page: Page, web_platform, http, screenshot):
    observations, actions = [], []
    with platform_sdk.connect("cartpole", url=web_platform.url, record=True, record_frames=True) as env:
        sid = env.session_id
        obs, _ = env.reset(seed=4)
        observations.append(obs)
        for t in range(80):
            action = t % 2
            obs, _, terminated, truncated, _ = env.step(action, agent={"compute_s": 0.0004 + 0.00001 * t})
            observations.append(obs)
            actions.append(action)
            if terminated or truncated:
                break
    wait_closed(http, sid, 1)
    steps = len(actions)

    page.goto(f"/recordings/{sid}?episode=0&step=5")
    observation = page.get_by_test_id("plot-observation")
    expect(observation).to_be_visible()
    expect(page.get_by_test_id("plot-action")).to_be_visible()
    expect(page.get_by_test_id("signal-picker")).to_have_count(0)  # two charts: nothing to pick
    shown = [float(v) for v in legend_values(page, "plot-observation")]
    assert shown == pytest.approx([float(v) for v in observations[5]], rel=1e-3, abs=1e-6)
    assert legend_values(page, "plot-action") == [str(actions[4])]  # the action that led to step 5

    page.get_by_test_id("scrubber").fill("0")
    shown = [float(v) for v in legend_values(page, "plot-observation")]
    assert shown == pytest.approx([float(v) for v in observations[0]], rel=1e-3, abs=1e-6)  # the reset's
    assert legend_values(page, "plot-action") == ["–"]  # no action before the reset's frame

    page.get_by_test_id("scrubber").fill("10")
    compute = page.get_by_test_id("cursor-agent-compute_s")
    expect(compute).to_have_text("490 µs")  # 0.0004 + 9 * 0.00001 s, not "0"
    assert legend_values(page, "plot-agent-compute_s") == ["490 µs"]

    zoom = page.get_by_test_id("plots-zoom")
    expect(zoom).not_to_have_attribute("data-min", ANY)
    drag_across(page, "plot-reward", 0.25, 0.5)
    expect(zoom).to_have_attribute("data-min", DIGITS)
    low, high = int(zoom.get_attribute("data-min") or 0), int(zoom.get_attribute("data-max") or 0)
    assert 1 <= low < high < steps, (low, high)
    expect(page.get_by_test_id("cursor-step")).to_have_text("10")  # a drag zooms, it does not seek
    for plot in ("plot-observation", "plot-action", "plot-agent-compute_s"):  # every chart follows
        expect(page.get_by_test_id(plot)).to_have_attribute("data-x-min", str(low))
    page.mouse.move(0, 0)  # off the charts: each one's cursor is back on the replay's step
    page.get_by_test_id("scrubber").fill(str(low + 1))
    for plot in ("plot-reward", "plot-observation", "plot-action", "plot-agent-compute_s"):
        step_shown = page.get_by_test_id(plot).locator(".u-legend .u-series .u-value").first
        expect(step_shown).to_have_text(str(low + 1))
    screenshot(page, "replay-observation-action", full_page=True)

    page.get_by_test_id("plot-observation").locator(".u-over").dblclick()
    expect(zoom).not_to_have_attribute("data-min", ANY)
    expect(page.get_by_test_id("plot-action")).not_to_have_attribute("data-x-min", ANY)
    drag_across(page, "plot-action", 0.1, 0.3)
    expect(zoom).to_have_attribute("data-min", DIGITS)
    page.get_by_test_id("plots-zoom-reset").click()
    expect(zoom).not_to_have_attribute("data-min", ANY)


def test_pong_names_its_picture_observation_and_plots_its_action(page: Page, web_platform, http):
    with platform_sdk.connect("pong", url=web_platform.url, record=True) as env:
        sid = env.session_id
        env.reset(seed=1)
        for t in range(12):
            env.step(t % 3)
    wait_closed(http, sid, 1)
    page.goto(f"/recordings/{sid}?episode=0&step=4")
    expect(page.get_by_test_id("signal-skipped-observations")).to_contain_text("an image (210×160×3)")
    expect(page.get_by_test_id("plot-observation")).to_have_count(0)
    expect(page.get_by_test_id("plot-action")).to_be_visible()
    assert legend_values(page, "plot-action")[0].startswith("0")  # the 4th action, 3 % 3; with its name where known


def test_many_observation_charts_come_with_a_picker(page: Page, web_platform, http, screenshot):
    with platform_sdk.connect("humanoid", url=web_platform.url, record=True) as env:
        sid = env.session_id
        env.reset(seed=2)
        zeros = np.zeros(env.action_space.shape, dtype=env.action_space.dtype)
        for _ in range(5):
            env.step(zeros)
    wait_closed(http, sid, 1)
    page.goto(f"/recordings/{sid}?episode=0&step=2")
    picker = page.get_by_test_id("signal-picker")
    expect(picker).to_be_visible()
    charts = page.get_by_test_id("signals").locator("figure.replay-plot")
    expect(charts).to_have_count(6)  # the first few, until the user picks
    first_action = page.get_by_test_id("signals").locator("[data-testid^='plot-action']").first
    expect(first_action).to_be_visible()
    toggle = picker.locator("input[type=checkbox]").nth(5)
    assert not toggle.is_checked()
    toggle.check()
    expect(charts).to_have_count(7)
    picker.scroll_into_view_if_needed()
    screenshot(page, "replay-many-signals")
    page.get_by_test_id("signal-none").click()
    expect(charts).to_have_count(0)
    page.get_by_test_id("signal-all").click()
    expect(charts).to_have_count(picker.locator("input[type=checkbox]").count())


def test_an_episode_begun_from_a_restore_opens_on_its_first_frame(page: Page, web_platform, http, console):
    console.allow(r"status of 404")  # the restore's row has no frame: asked for once, then skipped
    with platform_sdk.connect("cartpole", url=web_platform.url, record=True, record_frames=True) as env:
        sid = env.session_id
        env.reset(seed=8)
        env.step(0)
        handle = env.snapshot()
        env.step(1)
        env.restore(handle)
        for t in range(4):
            env.step(t % 2)
    meta = wait_closed(http, sid, 2)
    assert meta["episodes"][1]["start"] == "restore"
    page.goto(f"/recordings/{sid}?episode=1")
    frame = page.get_by_test_id("replay-frame")
    expect(frame).to_have_attribute("data-frame-step", "1")
    expect(frame).to_have_attribute("data-loading", "false")
    expect(page.get_by_test_id("frame-note")).to_contain_text(
        "No frame was recorded at step 0 (the episode began from a snapshot restore")
    page.get_by_test_id("scrubber").fill("3")
    expect(frame).to_have_attribute("data-frame-step", "3")
    expect(page.get_by_test_id("frame-note")).to_have_count(0)

"""The Recordings and Replay pages in a real browser against the real platform.

A Pendulum session is recorded with frames and agent data (two seeded episodes of 200 steps
and one unseeded one cut short by the close); the Recordings page lists it and filters it, its
replay is scrubbed and stepped and must show each step's recorded reward at the cursor (as the
uPlot chart plots it) with that step's frame; a deep link opens an episode at a step; play back
of a seeded episode matches the recording on every step, of the unseeded one diverges at the
reset, of a MultiDiscrete test environment made with kwargs matches too; a recording's world
changes are marked on its timeline; a thinned life shows the nearest kept frame; a recording
is deleted after a confirmation.
"""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import numpy as np
import platform_sdk
import pytest
from platform_testing.waiting import wait_for
from playwright.sync_api import Page, expect

LONG = 60_000  # ms: a play back of 200 steps on a busy machine


@dataclass
class Recorded:
    session_id: str
    rewards: list[list[float]]  # per episode


def wait_closed(http: httpx.Client, sid: str, episodes: int) -> None:
    def closed() -> bool:
        meta = http.get(f"/v0/recordings/{sid}").json()
        return meta.get("status") == "closed" and len(meta.get("episodes", [])) == episodes

    wait_for(closed, timeout=60, what=f"recording {sid} closed with {episodes} episodes")


@pytest.fixture(scope="module")
def http(web_platform) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web_platform.url, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def pendulum(web_platform, http) -> Recorded:
    """Pendulum recorded with frames and agent data: episodes 0 and 1 seeded (200 steps each,
    truncated), episode 2 unseeded and closed after 30 steps; a snapshot saved after episode 0."""
    rng = np.random.default_rng(5)
    rewards: list[list[float]] = []
    with platform_sdk.connect("pendulum", url=web_platform.url, record=True, record_frames=True) as env:
        sid = env.session_id
        for seed, steps in ((11, None), (12, None), (None, 30)):
            env.reset(seed=seed)
            episode: list[float] = []
            done = False
            while not done and (steps is None or len(episode) < steps):
                action = rng.uniform(-2, 2, size=(1,)).astype(np.float32)
                agent = None if len(episode) % 7 == 3 else {"confidence": float(rng.random())}
                _, reward, terminated, truncated, _ = env.step(action, agent=agent)
                episode.append(float(reward))
                done = terminated or truncated
            rewards.append(episode)
            if seed == 11:
                env.save_snapshot("after the first episode")
    wait_closed(http, sid, 3)
    return Recorded(sid, rewards)


def open_replay(page: Page, sid: str, query: str = "") -> None:
    page.goto(f"/recordings/{sid}{query}")
    expect(page.get_by_test_id("plot-reward")).to_be_visible()


def legend_value(page: Page, plot: str) -> str:
    """The value the uPlot chart's legend shows for its first series at the cursor."""
    return page.get_by_test_id(plot).locator(".u-legend .u-series").nth(1).locator(".u-value").inner_text()


def expect_cursor(page: Page, step: int, reward: float | None) -> None:
    expect(page.get_by_test_id("cursor-step")).to_have_text(str(step))
    if reward is None:
        expect(page.get_by_test_id("cursor-reward")).to_have_text("–")
        return
    shown = page.get_by_test_id("cursor-reward")
    expect(shown).not_to_have_text("–")
    assert float(shown.get_attribute("data-value") or "nan") == reward, f"step {step}: recorded {reward!r}"
    assert float(shown.inner_text()) == pytest.approx(reward, rel=1e-3), "shown to 4 significant digits"
    assert float(legend_value(page, "plot-reward")) == pytest.approx(reward, rel=1e-3), "the chart's value at the cursor"


def expect_frame_of_step(page: Page, step: int) -> None:
    frame = page.get_by_test_id("replay-frame")
    expect(frame).to_have_attribute("data-frame-step", str(step))
    expect(frame).to_have_attribute("data-loading", "false")
    assert page.evaluate("(img) => img.complete && img.naturalWidth > 0", frame.element_handle())


def test_the_recordings_page_lists_filters_and_links_a_recording(page: Page, pendulum: Recorded, http, screenshot):
    sid = pendulum.session_id
    page.goto("/recordings")
    row = page.get_by_test_id(f"recording-row-{sid}")
    expect(row).to_be_visible()
    expect(page.get_by_test_id(f"env-{sid}")).to_have_text("pendulum")
    expect(page.get_by_test_id(f"episodes-{sid}")).to_have_text("3")
    expect(page.get_by_test_id(f"steps-{sid}")).to_have_text(f"{sum(len(e) for e in pendulum.rewards):,}")
    total = sum(sum(e) for e in pendulum.rewards)
    assert float(page.get_by_test_id(f"return-{sid}").inner_text()) == pytest.approx(total, abs=1e-3)
    expect(page.get_by_test_id(f"status-{sid}")).to_have_text("closed")
    expect(page.get_by_test_id(f"life-{sid}")).to_have_text("–")
    expect(page.get_by_test_id(f"snapshots-{sid}")).to_have_text("after the first episode")
    screenshot(page, "recordings")

    page.get_by_test_id("filter-env").select_option("pendulum")
    expect(page).to_have_url(f"{page.url.split('?')[0]}?env_id=pendulum")
    expect(row).to_be_visible()
    page.get_by_test_id("filter-env").select_option("cartpole")
    expect(row).to_have_count(0)
    page.get_by_test_id("filter-env").select_option("")
    page.get_by_test_id("filter-session").fill(sid)
    expect(page).to_have_url(f"{page.url.split('?')[0]}?session_id={sid}")
    expect(page.locator("[data-testid^=recording-row-]")).to_have_count(1)
    page.get_by_test_id("filter-session").fill("s-not-a-session")
    expect(page.get_by_test_id("recordings-empty")).to_be_visible()
    page.get_by_test_id("filter-clear").click()
    expect(row).to_be_visible()
    page.get_by_test_id("filter-life").fill("no-such-life")
    expect(page).to_have_url(f"{page.url.split('?')[0]}?life=no-such-life")
    expect(page.get_by_test_id("recordings-empty")).to_be_visible()
    page.goto(f"/recordings?env_id=pendulum&session_id={sid}")  # a filtered list is a link
    expect(page.get_by_test_id("filter-env")).to_have_value("pendulum")
    expect(page.get_by_test_id("filter-session")).to_have_value(sid)
    expect(page.locator("[data-testid^=recording-row-]")).to_have_count(1)

    archive = page.get_by_test_id(f"archive-{sid}")
    href = archive.get_attribute("href")
    assert href == f"/v0/recordings/{sid}/archive"
    tar = http.get(href)
    assert tar.status_code == 200 and tar.headers["content-type"] == "application/x-tar"
    with tarfile.open(fileobj=io.BytesIO(tar.content)) as opened:
        assert f"{sid}/meta.json" in opened.getnames()

    page.get_by_test_id(f"open-{sid}").click()
    expect(page).to_have_url(f"{page.url.split('/recordings')[0]}/recordings/{sid}")
    expect(page.get_by_test_id("replay-title")).to_contain_text(sid)


def test_scrubbing_shows_each_steps_recorded_reward_and_frame(page: Page, pendulum: Recorded, screenshot):
    sid, rewards = pendulum.session_id, pendulum.rewards[0]
    open_replay(page, sid, "?episode=0")
    expect(page.get_by_test_id("episode-0")).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_test_id("episode-length")).to_have_text("200")
    expect(page.get_by_test_id("episode-seed")).to_have_text("11")
    expect(page.get_by_test_id("episode-ending")).to_have_text("truncated")
    expect(page.get_by_test_id("plot-agent-confidence")).to_be_visible()
    expect_cursor(page, 0, None)  # the reset: no reward yet
    expect_frame_of_step(page, 0)

    for step in (57, 133, 1, 200):
        page.get_by_test_id("scrubber").fill(str(step))
        expect_cursor(page, step, rewards[step - 1])
        expect_frame_of_step(page, step)
    expect(page.get_by_test_id("cursor-ended")).to_have_text("truncated")
    expect(page).to_have_url(f"{page.url.split('?')[0]}?episode=0&step=200")  # the deep link follows

    page.get_by_test_id("scrubber").fill("57")
    expect_cursor(page, 57, rewards[56])
    page.locator("h1").click()  # the keys act on the page, not on the scrubber
    page.keyboard.press("ArrowRight")
    expect_cursor(page, 58, rewards[57])
    expect_frame_of_step(page, 58)
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    expect_cursor(page, 56, rewards[55])
    expect_frame_of_step(page, 56)  # the image follows the cursor once its JPEG has loaded
    expect(page.get_by_test_id("cursor-agent-confidence")).not_to_have_text("")

    frame_bytes = page.evaluate(
        "async (img) => (await (await fetch(img.src)).arrayBuffer()).byteLength",
        page.get_by_test_id("replay-frame").element_handle(),
    )
    recorded = httpx.get(f"{page.url.split('/recordings')[0]}/v0/recordings/{sid}/episodes/0/frames/56")
    assert frame_bytes == len(recorded.content), "the frame shown is the recorded row's JPEG"
    screenshot(page, "replay")

    page.get_by_test_id("speed").select_option("2")
    page.locator("h1").click()
    page.keyboard.press("Space")
    expect(page.get_by_test_id("play")).to_have_attribute("aria-label", "Pause (Space)")
    wait_for(lambda: int(page.get_by_test_id("cursor-step").inner_text()) >= 70, timeout=10, what="playing on")
    page.keyboard.press("Space")
    expect(page.get_by_test_id("play")).to_have_attribute("aria-label", "Play (Space)")
    stopped = int(page.get_by_test_id("cursor-step").inner_text())
    expect_cursor(page, stopped, rewards[stopped - 1])
    expect_frame_of_step(page, stopped)


def test_a_deep_link_opens_an_episode_at_a_step(page: Page, pendulum: Recorded):
    sid, rewards = pendulum.session_id, pendulum.rewards[1]
    open_replay(page, sid, "?episode=1&step=120")
    expect(page.get_by_test_id("episode-1")).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_test_id("episode-seed")).to_have_text("12")
    expect_cursor(page, 120, rewards[119])
    expect_frame_of_step(page, 120)
    assert page.evaluate("location.search") == "?episode=1&step=120"

    page.get_by_test_id("episode-2").click()  # episode boundaries: the unseeded one, ended by the close
    expect(page).to_have_url(f"{page.url.split('?')[0]}?episode=2&step=0")
    expect(page.get_by_test_id("episode-length")).to_have_text("30")
    expect(page.get_by_test_id("episode-seed")).to_have_text("none")
    expect(page.get_by_test_id("episode-ending")).to_have_text("not ended")
    page.go_back()
    expect_cursor(page, 120, rewards[119])


def test_play_back_matches_the_recording_on_every_step(page: Page, pendulum: Recorded, http, screenshot):
    sid = pendulum.session_id
    open_replay(page, sid, "?episode=0&step=100")
    page.get_by_test_id("play-back").click()
    status = page.get_by_test_id("play-back-status")
    expect(status).to_have_attribute("data-phase", "done", timeout=LONG)
    expect(status).to_have_text("Matches the recording on every step (200 steps).")
    progress = page.get_by_test_id("play-back-progress")
    expect(progress).to_have_attribute("data-played", "200")
    expect(progress).to_have_attribute("data-diverged", "0")
    expect(page.get_by_test_id("first-divergent-step")).to_have_count(0)
    expect(page.get_by_test_id("plot-play-back")).to_be_visible()
    assert legend_value(page, "plot-play-back") == "1"  # step 100 matched, on the play back's timeline
    expect(page.get_by_test_id("play-back-frame")).to_be_visible()
    screenshot(page, "replay-play-back", full_page=True)

    played = status.get_attribute("data-session-id")
    assert played and played != sid
    wait_for(lambda: http.get(f"/v0/sessions/{played}").json()["state"] == "closed", timeout=30,
             what="the play back's session to be closed")
    assert http.get(f"/v0/recordings/{played}").status_code == 404, "a play back is not recorded"


def test_play_back_of_an_unseeded_episode_names_the_first_divergent_step(page: Page, pendulum: Recorded):
    open_replay(page, pendulum.session_id, "?episode=2")
    page.get_by_test_id("play-back").click()
    status = page.get_by_test_id("play-back-status")
    expect(status).to_have_attribute("data-phase", "done", timeout=LONG)
    expect(status).to_have_text("Diverged from the recording at step 0.")
    expect(page.get_by_test_id("first-divergent-step")).to_have_attribute("data-step", "0")
    expect(page.get_by_test_id("play-back")).to_contain_text("Play back again")
    expect(page.get_by_test_id("divergence-mark")).to_be_visible()
    page.get_by_test_id("first-divergent-step").click()
    expect_cursor(page, 0, None)


def test_play_back_uses_the_recordings_kwargs_and_multi_discrete_actions(page: Page, web_platform, http):
    rng = np.random.default_rng(9)
    with platform_sdk.connect("levels", url=web_platform.url, kwargs={"max_steps": 40}, record=True,
                              record_frames=True) as env:
        sid = env.session_id
        env.reset(seed=5)
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(rng.integers(0, [3, 3, 2]))
            done = terminated or truncated
    wait_closed(http, sid, 1)
    open_replay(page, sid, "?episode=0&step=40")
    page.get_by_test_id("play-back").click()
    status = page.get_by_test_id("play-back-status")
    expect(status).to_have_attribute("data-phase", "done", timeout=LONG)
    expect(status).to_have_text("Matches the recording on every step (40 steps).")
    played = http.get(f"/v0/sessions/{status.get_attribute('data-session-id')}").json()
    assert (played["env_id"], played["kwargs"], played["record"]) == ("levels", {"max_steps": 40}, False)


def test_a_thinned_life_shows_the_nearest_kept_frame_and_plots_every_step(
    page: Page, web_platform, http, screenshot
):
    with platform_sdk.connect("cartpole", url=web_platform.url, record=True, life="replay-thinned",
                              frame_every=4) as env:
        sid = env.session_id
        env.reset(seed=3)
        for t in range(12):
            env.step(t % 2)
    wait_closed(http, sid, 1)
    open_replay(page, sid, "?episode=0&step=6")
    expect_cursor(page, 6, 1.0)  # every step's data, though step 6 kept no frame
    expect_frame_of_step(page, 4)
    expect(page.get_by_test_id("frame-note")).to_contain_text("nearest kept one, step 4")
    page.get_by_test_id("scrubber").fill("8")
    expect_frame_of_step(page, 8)
    expect(page.get_by_test_id("frame-note")).to_have_count(0)
    screenshot(page, "replay-thinned")


def test_the_recordings_world_changes_are_marked_on_the_timeline(page: Page, web_platform, http):
    # Nothing records world changes before the robots issue: one is written into the closed
    # recording's recording.json, as the recorder would, to see the replay draw it.
    with platform_sdk.connect("cartpole", url=web_platform.url, record=True, record_frames=True) as env:
        sid = env.session_id
        for seed in (1, 2):
            env.reset(seed=seed)
            for t in range(8):
                env.step(t % 2)
    wait_closed(http, sid, 2)
    lengths = [e["length"] for e in http.get(f"/v0/recordings/{sid}").json()["episodes"]]
    at = lengths[0] + 3  # the session's step count: episode 1's step 3
    path = web_platform.recordings / sid / "recording.json"
    recording = json.loads(path.read_text())
    recording["world_changes"] = [{"at": at, "change": "mass", "body": "pole", "scale": 2.0}]
    written = path.with_suffix(".tmp")
    written.write_text(json.dumps(recording))
    written.replace(path)

    open_replay(page, sid, "?episode=1&step=0")
    mark = page.get_by_test_id("world-change-0")
    expect(mark).to_have_attribute("title", 'step 3: mass (body="pole", scale=2)')
    left = float(mark.evaluate("(e) => e.style.left").removesuffix("%"))
    assert left == pytest.approx(100 * 3 / lengths[1])
    mark.click()
    expect(page.get_by_test_id("cursor-step")).to_have_text("3")
    page.get_by_test_id("episode-0").click()
    expect(page.get_by_test_id("world-change-0")).to_have_count(0)  # not in that episode


def test_delete_asks_first_then_removes_the_recording(page: Page, web_platform, http):
    with platform_sdk.connect("cartpole", url=web_platform.url, record=True) as env:
        sid = env.session_id
        env.reset(seed=1)
        env.step(0)
    wait_closed(http, sid, 1)
    open_replay(page, sid)  # recorded without frames: the data is plotted all the same
    expect(page.get_by_test_id("no-frames")).to_be_visible()
    expect(page.get_by_test_id("replay-frame")).to_have_count(0)
    page.get_by_test_id("scrubber").fill("1")
    expect_cursor(page, 1, 1.0)
    page.goto(f"/recordings?session_id={sid}")
    page.get_by_test_id(f"delete-{sid}").click()
    dialog = page.get_by_test_id("delete-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text(sid)
    page.get_by_test_id("cancel-delete").click()
    expect(dialog).to_be_hidden()
    assert http.get(f"/v0/recordings/{sid}").status_code == 200
    page.get_by_test_id(f"delete-{sid}").click()
    page.get_by_test_id("confirm-delete").click()
    expect(page.get_by_test_id(f"recording-row-{sid}")).to_have_count(0)
    expect(page.get_by_test_id("recordings-empty")).to_be_visible()
    assert http.get(f"/v0/recordings/{sid}").status_code == 404


def test_the_replay_fits_a_narrow_laptop_screen(narrow_page: Page, pendulum: Recorded, screenshot):
    open_replay(narrow_page, pendulum.session_id, "?episode=1&step=50")
    expect_frame_of_step(narrow_page, 50)
    assert narrow_page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    narrow_page.get_by_test_id("scrubber").focus()
    narrow_page.keyboard.press("Tab")  # keyboard focus is visible
    assert narrow_page.evaluate("document.activeElement.dataset.testid") == "step-back"
    assert narrow_page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    screenshot(narrow_page, "replay-narrow", full_page=True)

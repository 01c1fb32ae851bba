"""The Environments and Session pages in a real browser against the real platform.

CartPole is started from the Environments page with recording on (the Options dialog) and
played with the keyboard until the episode ends: the step count and return the page shows
must be the recording's (the server's own account of the episode), and the recorded actions
both of the arrow keys' actions. A Pendulum slider's value must be the action the server
received at each step (held from step to step while playing); the `levels` test environment's
level buttons too, and its Random agent's sampled actions, played no faster than the control
rate. Pendulum's steps go as binary messages (the page shows its whole observation) and the
page shows what the server recorded. A bad option value (Pong's frameskip 0, or past its maximum) shows the server's 422 beside that
field. An episode that ends in success says so. H1's 19 sliders fit the page at 1280 and 1024 px.
Snapshots are taken and restored in the session, saved with a label, listed and resumed into a
new session at that moment. A killed environment shows its log tail instead of the picture, a
session closed elsewhere says it is closed. Screenshots go to test-output/web/.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Iterator

import httpx
import pytest
from platform_testing.waiting import instance_pids, wait_for
from playwright.sync_api import Page, expect

LONG = 30_000  # ms: a session started on a busy machine (no warm instance)


@pytest.fixture(scope="module")
def http(web_platform) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web_platform.url, timeout=60) as client:
        yield client


def session_id(page: Page) -> str:
    match = re.search(r"/sessions/([^/?#]+)", page.url)
    assert match, f"not on a session page: {page.url}"
    return match.group(1)


def start(page: Page, env_id: str, *, record: bool = False) -> str:
    """Starts `env_id` from the Environments page (the Options dialog when recording) and waits
    for its first frame; returns the session id."""
    page.goto(f"/?q={env_id}")
    if record:
        page.get_by_test_id(f"options-{env_id}").click()
        page.get_by_test_id("option-record").check()
        page.get_by_test_id("options-start").click()
    else:
        page.get_by_test_id(f"start-{env_id}").click()
    expect(page.get_by_test_id("frame")).to_be_visible(timeout=LONG)
    expect(page.get_by_test_id("step-count")).to_have_text("0")
    return session_id(page)


def shown_number(page: Page, test_id: str) -> float:
    return float(page.get_by_test_id(test_id).inner_text())


def step(page: Page, times: int = 1) -> None:
    """Clicks Step `times` times, each once the previous answer is shown."""
    for _ in range(times):
        before = int(page.get_by_test_id("step-count").inner_text())
        page.get_by_test_id("step").click()
        expect(page.get_by_test_id("step-count")).to_have_text(str(before + 1))


def close_and_read(page: Page, http: httpx.Client, sid: str) -> dict:
    """Closes the session from the page; returns its recording's meta.json once closed."""
    page.get_by_test_id("close-session").click()
    expect(page.get_by_test_id("session-closed")).to_be_visible()

    def closed() -> dict | None:
        meta = http.get(f"/v0/recordings/{sid}").json()
        return meta if meta.get("status") == "closed" and meta.get("episodes") else None

    return wait_for(closed, timeout=60, what=f"recording {sid} closed with its episodes")


def recorded_actions(http: httpx.Client, sid: str, episode: int = 0) -> list:
    body = http.get(f"/v0/recordings/{sid}/episodes/{episode}", params={"arrays": "actions,rewards"}).json()
    return body["arrays"]["actions"]["data"]


def test_the_environments_page_searches_filters_and_shows_previews(page: Page, screenshot) -> None:
    page.goto("/")
    expect(page.get_by_test_id("env-card-cartpole")).to_be_visible()
    expect(page.get_by_test_id("family-cartpole")).to_have_text("Classic control")
    expect(page.get_by_test_id("family-pong")).to_have_text("Atari")
    for env_id in ("cartpole", "acrobot", "mountaincar", "pendulum"):  # each made by a short session
        expect(page.get_by_test_id(f"preview-{env_id}")).to_be_visible(timeout=LONG)
        assert page.get_by_test_id(f"preview-{env_id}").evaluate("img => img.naturalWidth") > 0
    screenshot(page, "environments")

    page.get_by_test_id("env-search").fill("pong")
    expect(page.get_by_test_id("env-card-pong")).to_be_visible()
    expect(page.get_by_test_id("env-card-cartpole")).to_have_count(0)
    assert "q=pong" in page.url

    page.get_by_test_id("env-search").fill("")
    page.get_by_test_id("env-family").select_option("Test")
    expect(page.locator("[data-testid^=env-card-]")).to_have_count(2)  # tests/web/catalog.toml's
    expect(page.get_by_test_id("env-card-levels")).to_be_visible()
    expect(page.get_by_test_id("env-card-goal")).to_be_visible()
    assert "family=Test" in page.url

    page.goto("/?family=DeepMind+Control&q=walker")
    cards = page.locator("[data-testid^=env-card-]")
    expect(cards.first).to_be_visible()
    assert {c.get_attribute("data-testid") for c in cards.all()} == {
        "env-card-dmc-walker-stand", "env-card-dmc-walker-walk", "env-card-dmc-walker-run"}


def test_a_bad_option_shows_the_servers_422_next_to_its_field(page: Page, console, sessions_made_with,
                                                              screenshot) -> None:
    console.allow(r"status of 422")  # Chromium logs the refused create
    page.goto("/?q=pong")
    page.get_by_test_id("options-pong").click()
    dialog = page.get_by_test_id("options-dialog")
    expect(dialog).to_be_visible()
    frameskip = page.get_by_test_id("option-frameskip")
    expect(frameskip).to_have_value("4")  # the declared default
    expect(page.get_by_test_id("option-endless")).not_to_be_checked()
    screenshot(page, "options-dialog")

    frameskip.fill("0")
    page.get_by_test_id("options-start").click()
    error = page.get_by_test_id("option-error-frameskip")
    expect(error).to_contain_text("frameskip")
    expect(error).to_contain_text("from 1 to 60")
    expect(frameskip).to_be_focused()
    assert "/sessions/" not in page.url
    assert sessions_made_with("frameskip", 0) == []
    screenshot(page, "options-dialog-422")

    # Issue 30: past the maximum that keeps one decision short is refused the same way.
    frameskip.fill("100000000")
    page.get_by_test_id("options-start").click()
    expect(error).to_contain_text("from 1 to 60, not 100000000")
    assert "/sessions/" not in page.url
    assert sessions_made_with("frameskip", 100000000) == []

    page.get_by_test_id("option-raw").fill("{not json")
    page.get_by_test_id("options-start").click()
    expect(page.get_by_test_id("option-error-raw")).to_contain_text("not JSON")


def test_cartpole_played_with_the_keyboard_shows_the_recorded_count_and_return(page: Page, http, screenshot) -> None:
    sid = start(page, "cartpole", record=True)
    expect(page.get_by_test_id("key-map")).to_contain_text("action 0 (left)")
    page.get_by_test_id("play").click()
    keys = ("ArrowRight", "ArrowRight", "ArrowLeft", "ArrowLeft", "ArrowLeft")
    deadline = time.monotonic() + 60
    i = 0
    while not page.get_by_test_id("episode-end").is_visible():
        assert time.monotonic() < deadline, "the CartPole episode did not end within 60 s of play"
        page.keyboard.press(keys[i % len(keys)])
        i += 1
        page.wait_for_timeout(40)
    screenshot(page, "session-cartpole")
    ending = page.get_by_test_id("episode-end").inner_text()
    shown_steps = int(page.get_by_test_id("step-count").inner_text())
    shown_return = shown_number(page, "episode-return")
    assert shown_steps > 0

    meta = close_and_read(page, http, sid)
    episode = meta["episodes"][0]
    assert episode["length"] == shown_steps
    assert episode["return"] == pytest.approx(shown_return)
    assert episode["terminated" if ending == "terminated" else "truncated"] is True
    assert isinstance(episode["seed"], int)  # the page chose it, so the episode can be played back
    actions = recorded_actions(http, sid)
    assert len(actions) == shown_steps
    assert set(actions) == {0, 1}, "both arrow keys' actions reached the server"

    # The play, recorded, plays back into a new session step for step (the Replay page's Play back).
    page.goto(f"/recordings/{sid}?episode=0")
    page.get_by_test_id("play-back").click()
    status = page.get_by_test_id("play-back-status")
    expect(status).to_have_attribute("data-phase", "done", timeout=60_000)
    expect(status).to_have_text(f"Matches the recording on every step ({shown_steps} steps).")
    expect(page.get_by_test_id("play-back-progress")).to_have_attribute("data-diverged", "0")


def test_doom_is_played_with_its_keys(page: Page, http, screenshot) -> None:
    sid = start(page, "doom-defend-the-center", record=True)
    key_map = page.get_by_test_id("key-map")
    for shown in ("TURN_LEFT", "TURN_RIGHT", "ATTACK", "Space"):
        expect(key_map).to_contain_text(shown)
    page.get_by_test_id("play").click()
    for key in ("ArrowLeft", "Space", "ArrowRight"):  # held through several steps at 8.75 a second
        page.keyboard.down(key)
        page.wait_for_timeout(700)
        page.keyboard.up(key)
        page.wait_for_timeout(300)
    page.get_by_test_id("pause").click()
    expect(page.get_by_test_id("step")).to_be_enabled()
    screenshot(page, "session-doom")
    actions = close_and_read(page, http, sid) and recorded_actions(http, sid)
    # NOOP, TURN_LEFT, TURN_RIGHT, ATTACK: each key's action reached the server, in the order held
    held = [a for a in actions if a != 0]
    assert {1, 2, 3} <= set(held), actions
    assert held.index(1) < held.index(3) < held.index(2), actions


def test_pongs_paddle_moves_with_the_up_and_down_arrows(page: Page, http) -> None:
    sid = start(page, "pong", record=True)
    key_map = page.get_by_test_id("key-map")
    expect(key_map).to_contain_text("↑")  # Pong's RIGHT moves its paddle up, LEFT down
    expect(key_map).to_contain_text("↓")
    page.get_by_test_id("play").click()
    for key in ("ArrowUp", "ArrowDown"):  # each held through several steps at 15 a second
        page.keyboard.down(key)
        page.wait_for_timeout(700)
        page.keyboard.up(key)
        page.wait_for_timeout(300)
    page.get_by_test_id("pause").click()
    expect(page.get_by_test_id("step")).to_be_enabled()
    actions = close_and_read(page, http, sid) and recorded_actions(http, sid)
    held = [a for a in actions if a not in (0, 1)]  # not NOOP or FIRE
    assert {2, 3} <= set(held), actions  # RIGHT (up) and LEFT (down) reached the server
    assert held.index(2) < held.index(3), actions  # in the order the keys were held


def test_a_slider_is_the_action_the_server_receives_and_holds_while_playing(page: Page, http) -> None:
    sid = start(page, "pendulum", record=True)
    slider = page.get_by_test_id("slider-0")
    expect(slider).to_have_attribute("min", "-2")
    expect(slider).to_have_attribute("max", "2")
    slider.focus()
    page.keyboard.press("End")
    expect(page.get_by_test_id("slider-value-0")).to_have_text("2.00")
    step(page, 3)
    page.get_by_test_id("slider-0").focus()
    page.keyboard.press("Home")
    step(page, 2)
    page.get_by_test_id("slider-0").focus()
    for _ in range(25):
        page.keyboard.press("ArrowRight")  # 25 steps of 0.02 from -2
    expect(page.get_by_test_id("slider-value-0")).to_have_text("-1.50")
    page.get_by_test_id("play").click()
    expect(page.get_by_test_id("step-count")).not_to_have_text(re.compile(r"^[0-9]$"))  # 10 steps or more
    page.get_by_test_id("pause").click()
    expect(page.get_by_test_id("step")).to_be_enabled()  # the step in flight when paused has its answer
    shown_steps = int(page.get_by_test_id("step-count").inner_text())
    expect(page.get_by_test_id("last-action")).to_have_text("[-1.5]")

    close_and_read(page, http, sid)
    actions = [row[0] for row in recorded_actions(http, sid)]
    assert len(actions) == shown_steps
    assert actions[:5] == [2.0, 2.0, 2.0, -2.0, -2.0]
    assert actions[5:] == [pytest.approx(-1.5)] * (shown_steps - 5)


def test_steps_with_the_whole_observation_go_as_binary_messages(page: Page, http, console) -> None:
    """Pendulum's page shows its whole observation, so its steps go as the environment protocol's
    binary messages (what the SDK sends, passed through by the gateway): the page shows what the
    server recorded, and the picture moves; its reset stays a text command."""
    sent: list[str | bytes] = []
    page.on("websocket", lambda socket: socket.on("framesent", lambda payload: sent.append(payload)))
    sid = start(page, "pendulum", record=True)
    first_picture = page.get_by_test_id("frame").get_attribute("src")
    step(page, 3)
    steps_sent = [message for message in sent if isinstance(message, bytes)]
    texts = [message for message in sent if isinstance(message, str)]
    assert len(steps_sent) == 3, f"expected 3 binary steps, the page sent {len(steps_sent)} and the texts {texts}"
    assert all('"op":"step"' not in text for text in texts), texts
    assert page.get_by_test_id("frame").get_attribute("src") != first_picture
    shown_observation = json.loads(page.get_by_test_id("observation").inner_text())
    shown_reward = shown_number(page, "reward")

    close_and_read(page, http, sid)
    body = http.get(f"/v0/recordings/{sid}/episodes/0", params={"arrays": "observations,rewards"}).json()
    observations, rewards = body["arrays"]["observations"]["data"], body["arrays"]["rewards"]["data"]
    assert len(observations) == 4  # the reset's and 3 steps'
    assert shown_observation == pytest.approx(observations[-1], abs=2e-4)
    assert shown_reward == pytest.approx(rewards[-1], abs=1e-2)
    console.check()


def test_named_sliders_for_a_mujoco_environment(page: Page, http, screenshot) -> None:
    sid = start(page, "halfcheetah")
    names = http.get(f"/v0/sessions/{sid}").json()["metadata"]["action_names"]
    assert names == ["bthigh", "bshin", "bfoot", "fthigh", "fshin", "ffoot"]
    for i, name in enumerate(names):
        expect(page.get_by_test_id(f"slider-{i}")).to_be_visible()
        expect(page.get_by_text(name, exact=True)).to_be_visible()
    page.get_by_test_id("slider-2").focus()
    page.keyboard.press("End")
    step(page, 2)
    expect(page.get_by_test_id("last-action")).to_have_text("[0,0,1,0,0,0]")
    screenshot(page, "session-halfcheetah")
    page.get_by_test_id("close-session").click()
    expect(page.get_by_test_id("session-closed")).to_be_visible()


def test_level_buttons_choose_the_multidiscrete_action(page: Page, http, screenshot) -> None:
    sid = start(page, "levels", record=True)
    for dim, count in enumerate((3, 3, 2)):
        for value in range(count):
            expect(page.get_by_test_id(f"level-{dim}-{value}")).to_be_visible()
    expect(page.get_by_test_id("level-0-0")).to_have_attribute("aria-pressed", "true")
    page.get_by_test_id("level-0-2").click()
    page.get_by_test_id("level-1-1").click()
    page.get_by_test_id("level-2-1").click()
    expect(page.get_by_test_id("level-0-2")).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_test_id("level-0-0")).to_have_attribute("aria-pressed", "false")
    step(page)
    expect(page.get_by_test_id("reward")).to_have_text("14")  # 2 + 3*1 + 9*1
    page.get_by_test_id("level-0-0").click()
    step(page, 2)
    expect(page.get_by_test_id("reward")).to_have_text("12")
    expect(page.get_by_test_id("episode-return")).to_have_text("38")
    expect(page.get_by_test_id("info")).to_have_text('{"levels":[0,1,1]}')
    screenshot(page, "session-levels")

    # The Random agent plays sampled actions at the control rate (10 a second for levels).
    began = time.monotonic()
    page.get_by_test_id("random-agent").click()
    page.wait_for_function("() => Number(document.querySelector('[data-testid=step-count]').textContent) >= 23",
                           timeout=LONG)
    page.get_by_test_id("pause").click()
    elapsed = time.monotonic() - began
    expect(page.get_by_test_id("step")).to_be_enabled()
    played = int(page.get_by_test_id("step-count").inner_text()) - 3
    assert played / elapsed <= 10 * 1.15, f"{played} steps in {elapsed:.2f} s: faster than the control rate"

    close_and_read(page, http, sid)
    actions = recorded_actions(http, sid)
    assert actions[:3] == [[2, 1, 1], [0, 1, 1], [0, 1, 1]]
    sampled = actions[3:]
    assert len(sampled) == played
    assert all(0 <= r < 3 and 0 <= g < 3 and 0 <= b < 2 for r, g, b in sampled)
    assert len({tuple(a) for a in sampled}) > 1, "the Random agent's actions vary"


def test_snapshots_restore_in_session_and_resume_into_a_new_one(page: Page, http) -> None:
    sid = start(page, "acrobot")
    step(page, 4)
    page.get_by_test_id("snapshot-take").click()
    expect(page.get_by_test_id("snapshot-1")).to_contain_text("step 4")
    at_snapshot = page.get_by_test_id("observation").inner_text()
    step(page, 3)
    assert page.get_by_test_id("observation").inner_text() != at_snapshot
    expect(page.get_by_test_id("snapshot-restore-time")).to_have_count(0)
    page.get_by_test_id("snapshot-restore-1").click()
    expect(page.get_by_test_id("step-count")).to_have_text("4")
    expect(page.get_by_test_id("observation")).to_have_text(at_snapshot)
    expect(page.get_by_test_id("snapshot-restore-time")).to_have_text(re.compile(r"^restored in \d+(\.\d+)? (ms|s)$"))

    page.get_by_test_id("snapshot-label").fill("four steps in")
    page.get_by_test_id("snapshot-save").click()
    saved = page.get_by_test_id("saved-snapshots").locator("[data-testid^=saved-snapshot-]")
    expect(saved).to_have_count(1)
    expect(saved.first).to_contain_text("four steps in")
    snapshot_id = saved.first.get_attribute("data-testid").removeprefix("saved-snapshot-")
    listed = http.get("/v0/snapshots", params={"session_id": sid}).json()["data"]
    assert [(s["id"], s["label"]) for s in listed] == [(snapshot_id, "four steps in")]

    page.get_by_test_id(f"resume-{snapshot_id}").click()
    page.wait_for_url(lambda url: sid not in url and "/sessions/" in url)
    expect(page.get_by_test_id("origin")).to_contain_text(f"resumed from saved snapshot {snapshot_id}")
    expect(page.get_by_test_id("observation")).to_have_text(at_snapshot)
    resumed = session_id(page)
    assert resumed != sid
    assert http.get(f"/v0/sessions/{resumed}").json()["env_id"] == "acrobot"
    assert "resume=" not in page.url  # a reload does not go back to the snapshot
    step(page)
    page.get_by_test_id("close-session").click()
    expect(page.get_by_test_id("session-closed")).to_be_visible()
    http.delete(f"/v0/sessions/{sid}")


def test_a_killed_environment_shows_its_log_tail(page: Page, http, console, screenshot) -> None:
    console.allow(r"status of 410")  # the crashed session's REST answers
    sid = start(page, "levels")
    step(page)
    pids = instance_pids(sid)
    assert pids, f"the environment process of session {sid} is running"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    page.get_by_test_id("step").click()
    tail = page.get_by_test_id("log-tail")
    expect(tail).to_be_visible(timeout=LONG)
    expect(tail).to_contain_text("serving")  # the instance's own log lines
    expect(page.get_by_test_id("frame")).to_have_count(0)
    expect(page.get_by_test_id("session-state")).to_have_text("crashed")
    screenshot(page, "session-crashed")
    def crashed() -> dict | None:
        state = http.get(f"/v0/sessions/{sid}").json()
        return state if state["state"] == "crashed" else None

    state = wait_for(crashed, timeout=30, what=f"the broker to mark session {sid} crashed")
    assert state["log_tail"].strip().splitlines()[-1] in tail.inner_text()

    page.reload()
    expect(page.get_by_test_id("log-tail")).to_contain_text("serving")
    expect(page.get_by_test_id("frame")).to_have_count(0)


def test_the_session_page_on_narrow_screens_with_visible_focus(narrow_page: Page, open_page, web_platform, screenshot) -> None:
    start(narrow_page, "levels")
    for test_id in ("frame", "play", "step", "level-2-1", "step-count", "snapshot-take"):
        box = narrow_page.get_by_test_id(test_id).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 1024, f"{test_id} fits the 1024 px width"
    narrow_page.get_by_test_id("step").focus()
    narrow_page.keyboard.press("Shift+Tab")  # back over Pause (disabled while paused) to Play
    expect(narrow_page.get_by_test_id("play")).to_be_focused()
    style = narrow_page.get_by_test_id("play").evaluate("b => getComputedStyle(b).outlineStyle + ' ' + getComputedStyle(b).outlineWidth")
    assert style.startswith("solid") and not style.endswith(" 0px"), f"the focused button shows an outline ({style})"
    screenshot(narrow_page, "session-narrow-1024")
    narrow_page.get_by_test_id("close-session").click()

    phone = open_page(web_platform.url, {"width": 390, "height": 844})
    start(phone, "levels")
    for test_id in ("frame", "play", "level-0-2", "step-count"):
        box = phone.get_by_test_id(test_id).bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, f"{test_id} fits the 390 px width"
    screenshot(phone, "session-narrow-390", full_page=True)
    phone.get_by_test_id("close-session").click()
    expect(phone.get_by_test_id("session-closed")).to_be_visible()


def test_a_session_closed_elsewhere_says_so_not_crashed(page: Page, http) -> None:
    sid = start(page, "levels")
    step(page)
    assert http.delete(f"/v0/sessions/{sid}").status_code == 200
    page.get_by_test_id("step").click()
    expect(page.get_by_test_id("session-closed")).to_be_visible()
    expect(page.get_by_test_id("log-tail")).to_have_count(0)
    expect(page.get_by_test_id("session-state")).to_have_text("closed")


def test_a_successful_episode_ends_with_a_banner_that_says_success(page: Page, http) -> None:
    page.goto("/?q=levels")
    page.get_by_test_id("options-levels").click()
    page.get_by_test_id("option-ends_at_top").check()
    page.get_by_test_id("options-start").click()
    expect(page.get_by_test_id("frame")).to_be_visible(timeout=LONG)
    step(page)  # the dials at 0: not yet
    expect(page.get_by_test_id("episode-end")).to_have_count(0)
    for dim, top in ((0, 2), (1, 2), (2, 1)):
        page.get_by_test_id(f"level-{dim}-{top}").click()
    page.get_by_test_id("step").click()
    expect(page.get_by_test_id("episode-end")).to_have_text("terminated")
    expect(page.get_by_test_id("episode-outcome")).to_have_text("success")
    expect(page.locator(".episode-end")).to_contain_text("Success!")


@pytest.mark.parametrize("width", [1280, 1024])
def test_a_long_action_fits_the_page_with_readable_slider_names(open_page, web_platform, width: int) -> None:
    """Issue 30: H1's 19-number action widened the Session page to 2,091 px and cut the names."""
    page = open_page(web_platform.url, viewport={"width": width, "height": 800})
    start(page, "menagerie-unitree-h1-stand")
    expect(page.get_by_test_id("slider-18")).to_be_visible()
    step(page)  # the 19 numbers of the last action are shown in the Live panel
    expect(page.get_by_test_id("last-action")).to_be_visible()
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"the page is {widths[0]} px wide in a {widths[1]} px window"
    names = page.locator(".slider-name")
    assert names.count() == 19
    for i in range(19):
        name = names.nth(i)
        text = name.inner_text()
        assert text and name.get_attribute("title") == text
        assert name.evaluate("e => e.scrollWidth <= e.clientWidth"), f"slider name {text!r} is cut"
    page.close()

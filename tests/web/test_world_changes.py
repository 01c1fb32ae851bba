"""World changes in a real browser against the real platform.

The Options dialog's world-changes editor catches text that is not a timeline in the browser
(nothing is sent) and shows the broker's 422 about an entry (a body the Panda lacks) beside the
editor. A Panda session started with a timeline lists it on its page, and once stepped past an
entry's `at`, lists that entry as applied at that session step. The recorded session's replay
marks the change on the timeline at the step it applied from and shows the true values
(state.<name>) of each frame.
Screenshots go to test-output/web/.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import httpx
import platform_sdk
import pytest
from platform_testing.waiting import wait_for
from playwright.sync_api import Page, expect

LONG = 60_000  # ms: a robot session started on a busy machine (no warm instance)
REACH = "menagerie-franka-emika-panda-reach"


@pytest.fixture(scope="module")
def http(web_platform) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web_platform.url, timeout=60) as client:
        yield client


def open_options(page: Page, env_id: str) -> None:
    page.goto(f"/?q={env_id}")
    page.get_by_test_id(f"options-{env_id}").click()
    expect(page.get_by_test_id("options-dialog")).to_be_visible()


def test_the_world_changes_editor_shows_the_servers_422_beside_it(page: Page, console, sessions_made_with,
                                                                  screenshot) -> None:
    console.allow(r"status of 422")  # Chromium logs the refused create
    open_options(page, REACH)
    editor = page.get_by_test_id("option-world_changes")
    assert '"change": "mass"' in (editor.get_attribute("placeholder") or "")  # the overview's example
    expect(page.get_by_test_id("option-substeps")).to_have_value("25")  # the catalog's options, as declared
    expect(page.get_by_test_id("option-control")).to_have_value('"joints"')
    expect(page.get_by_test_id("option-hand_levels")).to_have_value("5")
    screenshot(page, "options-dialog-panda")

    editor.fill('[{"at": 3, "change": "mass", "body": "hand", "scale": 2.0}')  # no closing bracket
    page.get_by_test_id("options-start").click()
    expect(page.get_by_test_id("option-error-world_changes")).to_contain_text("not JSON")
    editor.fill('[{"change": "mass", "body": "hand", "scale": 2.0}]')
    page.get_by_test_id("options-start").click()
    expect(page.get_by_test_id("option-error-world_changes")).to_contain_text('world_changes[0] needs "at"')

    editor.fill('[{"at": 3, "change": "mass", "body": "hand", "scale": 2.0},\n'
                ' {"at": 5, "change": "mass", "body": "nose", "scale": 2.0}]')
    page.get_by_test_id("options-start").click()
    error = page.get_by_test_id("option-error-world_changes")
    expect(error).to_contain_text("nose")
    expect(error).to_contain_text("left_finger")  # the message names the valid bodies
    expect(editor).to_be_focused()
    expect(page.get_by_test_id("options-error")).to_have_count(0)  # not at the top
    assert "/sessions/" not in page.url
    assert sessions_made_with("world_changes", [{"at": 3, "change": "mass", "body": "hand", "scale": 2.0},
                                                {"at": 5, "change": "mass", "body": "nose", "scale": 2.0}]) == []
    editor.scroll_into_view_if_needed()
    screenshot(page, "options-dialog-world-changes-422")


TIMELINE = [
    {"at": 2, "change": "mass", "body": "hand", "scale": 2.0},
    {"at": 4, "change": "sensor_offset", "offset": 0.5, "indices": [14, 15, 16]},  # hand_position
]
REACH_BY_HAND = "menagerie-franka-emika-panda-reach-by-hand"
STAY = [2, 2, 2, 0]


def step(page: Page, times: int = 1) -> None:
    """Clicks Step `times` times, each once the previous answer is shown."""
    for _ in range(times):
        before = int(page.get_by_test_id("step-count").inner_text())
        page.get_by_test_id("step").click()
        expect(page.get_by_test_id("step-count")).to_have_text(str(before + 1))


def shown_vector(page: Page, test_id: str) -> list[float]:
    return [float(v) for v in page.get_by_test_id(test_id).inner_text().split(",")]


def test_a_sessions_timeline_is_listed_and_each_change_once_stepped_past_its_at(page: Page, http, screenshot) -> None:
    open_options(page, REACH_BY_HAND)
    page.get_by_test_id("option-world_changes").fill(json.dumps(TIMELINE))
    page.get_by_test_id("options-start").click()
    expect(page.get_by_test_id("frame")).to_be_visible(timeout=LONG)
    panel = page.get_by_test_id("world-changes")
    expect(page.get_by_test_id("world-change-0")).to_contain_text('mass (body="hand", scale=2)')
    expect(page.get_by_test_id("world-change-1")).to_contain_text("sensor_offset (offset=0.5, indices=[14,15,16])")
    expect(page.get_by_test_id("world-change-status-0")).to_have_text("due at session step 2")
    before = shown_vector(page, "obs-hand_position")

    step(page, 3)  # steps 0, 1 and 2: the mass applies before step 2
    expect(page.get_by_test_id("world-change-status-0")).to_have_text("applied at session step 2")
    expect(page.get_by_test_id("world-change-status-1")).to_have_text("due at session step 4")
    expect(panel).to_have_attribute("data-applied", "1")
    step(page, 2)  # steps 3 and 4: the sensor offset applies before step 4
    expect(page.get_by_test_id("world-change-status-1")).to_have_text("applied at session step 4")
    expect(panel).to_have_attribute("data-applied", "2")
    seen = shown_vector(page, "obs-hand_position")  # what the agent sees: offset by 0.5
    assert all(s - b == pytest.approx(0.5, abs=0.02) for s, b in zip(seen, before, strict=True)), (before, seen)
    screenshot(page, "session-world-changes")

    sid = re.search(r"/sessions/([^/?#]+)", page.url)
    assert sid, page.url
    listed = http.get(f"/v0/sessions/{sid.group(1)}/world-changes").json()
    assert [(a["index"], a["session_step"]) for a in listed["applied"]] == [(0, 2), (1, 4)]


def test_the_replay_marks_the_change_and_shows_the_true_values(page: Page, web_platform, http, screenshot) -> None:
    seen: list[list[float]] = []
    with platform_sdk.connect(REACH_BY_HAND, url=web_platform.url, record=True, record_frames=True,
                              kwargs={"world_changes": TIMELINE}) as env:
        sid = env.session_id
        observation, _ = env.reset(seed=4)
        seen.append([float(v) for v in observation[14:17]])
        for _ in range(8):
            observation, *_ = env.step(STAY)
            seen.append([float(v) for v in observation[14:17]])
    wait_for(lambda: (meta := http.get(f"/v0/recordings/{sid}").json()).get("status") == "closed"
             and len(meta.get("episodes", [])) == 1, timeout=60, what=f"recording {sid} closed with its episode")

    page.goto(f"/recordings/{sid}?episode=0&step=0")
    expect(page.get_by_test_id("plot-reward")).to_be_visible()
    mass = page.get_by_test_id("world-change-0")
    expect(mass).to_have_attribute("title", 'step 2: mass (body="hand", scale=2)')  # after step 2, before step 3
    expect(page.get_by_test_id("world-change-1")).to_have_attribute(
        "title", "step 4: sensor_offset (offset=0.5, indices=[14,15,16])")
    assert float(mass.evaluate("(e) => e.style.left").removesuffix("%")) == pytest.approx(100 * 2 / 8)
    expect(page.get_by_test_id("world-change-item-1")).to_contain_text("session step 4")

    page.get_by_test_id("world-change-1").click()
    expect(page.get_by_test_id("cursor-step")).to_have_text("4")
    # Before the offset the agent saw the true values; from step 5 on it saw them offset by 0.5.
    assert shown_vector(page, "state-hand_position") == pytest.approx(seen[4], abs=1e-3)
    page.get_by_test_id("scrubber").fill("7")
    expect(page.get_by_test_id("cursor-step")).to_have_text("7")
    expect(page.get_by_test_id("frame-details")).to_contain_text("At step 7")  # the details follow the cursor
    assert seen[7] == pytest.approx([v + 0.5 for v in seen[4]], abs=0.02)  # the hand stayed; the agent saw it moved
    true_values = shown_vector(page, "state-hand_position")
    assert true_values == pytest.approx([v - 0.5 for v in seen[7]], abs=1e-3), (true_values, seen[7])
    screenshot(page, "replay-world-changes", full_page=True)

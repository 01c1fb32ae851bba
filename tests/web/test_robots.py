"""Menagerie arms played in a real browser against the real platform (MENAGERIE_ROOT: the
repository's conftest.py points it at the local copy beside the checkout).

The Panda's "reach, by hand" session is moved with the hand keys: the arrow keys across the
table (hand_y with ← →, hand_x with ↑ ↓), W up, and the page's hand_position (the labelled
observation) follows, while the action sent is the MultiDiscrete level the key stands for and
Space closes the gripper. On the Panda's pick and place the Teacher button and T each play the
suggestion the latest info carries (the step's action equals it), and following the teacher
at every step puts the block in the bin: the episode ends, terminated, with info.is_success.
A pick and place recorded while following the teacher (but for one step) replays with each
frame's true block position, the next action beside the teacher's suggestion, whether they
agree, and info.is_success at each step.
Screenshots go to test-output/web/.
"""

from __future__ import annotations

import json
import re
import time

import httpx
import platform_sdk
from platform_testing.waiting import wait_for
from playwright.sync_api import Page, expect

LONG = 60_000  # ms: a robot session started on a busy machine (no warm instance)
REACH_BY_HAND = "menagerie-franka-emika-panda-reach-by-hand"
PICK_PLACE = "menagerie-franka-emika-panda-pick-place"


def start(page: Page, env_id: str) -> None:
    """Starts `env_id` from the Environments page and waits for its first frame."""
    page.goto(f"/?q={env_id}")
    page.get_by_test_id(f"start-{env_id}").click()
    expect(page.get_by_test_id("frame")).to_be_visible(timeout=LONG)
    expect(page.get_by_test_id("step-count")).to_have_text("0")


def shown_vector(page: Page, test_id: str) -> list[float]:
    return [float(v) for v in page.get_by_test_id(test_id).inner_text().split(",")]


def step_with(page: Page, key: str | None, times: int = 1) -> None:
    """Presses `key` (it counts for the next step) and clicks Step, `times` times, each once shown."""
    for _ in range(times):
        before = int(page.get_by_test_id("step-count").inner_text())
        if key is not None:
            page.keyboard.press(key)
        page.get_by_test_id("step").click()
        expect(page.get_by_test_id("step-count")).to_have_text(str(before + 1))


def test_the_arrow_keys_move_the_pandas_hand_across_the_table(page: Page, screenshot) -> None:
    start(page, REACH_BY_HAND)
    legend = page.get_by_test_id("hand-keys")
    expect(legend.get_by_test_id("hand-key-ArrowUp")).to_contain_text("hand_x − / +")  # the overview faces the arm
    expect(legend.get_by_test_id("hand-key-ArrowLeft")).to_contain_text("hand_y − / +")
    expect(page.get_by_test_id("gripper-state")).to_have_text("open")
    for row, name in enumerate(("hand_x", "hand_y", "hand_z")):  # every axis starts at stay
        expect(page.get_by_test_id(f"level-{row}-2")).to_have_attribute("aria-pressed", "true")
        expect(page.get_by_role("group", name=name)).to_be_visible()
    home = shown_vector(page, "obs-hand_position")

    step_with(page, "ArrowRight", times=5)
    expect(page.get_by_test_id("last-action")).to_have_text("[2,4,2,0]")  # hand_y's outermost level
    step_with(page, None, times=3)  # no key: stay, while the arm settles on the target
    expect(page.get_by_test_id("last-action")).to_have_text("[2,2,2,0]")
    moved = shown_vector(page, "obs-hand_position")
    assert moved[1] - home[1] > 0.06, f"hand_position y {home[1]} -> {moved[1]}: five moves of 0.02 m along +y"
    assert abs(moved[0] - home[0]) < 0.02 and abs(moved[2] - home[2]) < 0.02, f"{home} -> {moved}: only y"

    step_with(page, "ArrowUp", times=3)
    expect(page.get_by_test_id("last-action")).to_have_text("[0,2,2,0]")
    step_with(page, "w", times=3)
    expect(page.get_by_test_id("last-action")).to_have_text("[2,2,4,0]")
    step_with(page, None, times=3)
    after = shown_vector(page, "obs-hand_position")
    assert moved[0] - after[0] > 0.03, f"hand_position x {moved[0]} -> {after[0]}: ↑ moves along -x"
    assert after[2] - moved[2] > 0.03, f"hand_position z {moved[2]} -> {after[2]}: W moves up"

    page.keyboard.press("Space")
    expect(page.get_by_test_id("gripper-state")).to_have_text("closed")
    step_with(page, None)
    expect(page.get_by_test_id("last-action")).to_have_text("[2,2,2,1]")  # held closed
    step_with(page, "ArrowLeft")
    expect(page.get_by_test_id("last-action")).to_have_text("[2,0,2,1]")
    screenshot(page, "session-panda-hand")


def test_the_teacher_button_plays_the_pick_and_place_suggestion(page: Page, screenshot) -> None:
    start(page, PICK_PLACE)
    teacher = page.get_by_test_id("teacher-action")
    expect(teacher).to_have_text(re.compile(r"^\[\d,\d,\d,\d\]$"))
    for play in (lambda: page.get_by_test_id("teacher-play").click(), lambda: page.keyboard.press("t")):
        suggested = teacher.inner_text()
        before = int(page.get_by_test_id("step-count").inner_text())
        play()
        expect(page.get_by_test_id("step-count")).to_have_text(str(before + 1))
        expect(page.get_by_test_id("last-action")).to_have_text(suggested)
        expect(page.get_by_test_id("last-acted-by")).to_have_text("the teacher")
        info = json.loads(page.get_by_test_id("info").inner_text())
        assert "teacher_action" in info and "is_success" in info, info

    step_with(page, None)  # the person's own action again: stay, gripper as the teacher left it
    expect(page.get_by_test_id("last-acted-by")).to_have_text("you")

    page.get_by_test_id("teacher-follow").check()
    page.get_by_test_id("play").click()
    expect(page.get_by_test_id("step-count")).to_have_text(re.compile(r"^(1[5-9]|[2-9]\d)$"), timeout=LONG)
    page.evaluate("window.scrollTo(0, 0)")
    screenshot(page, "session-pick-place-teacher", full_page=True)  # mid-episode, the teacher playing
    deadline = time.monotonic() + 90
    while not page.get_by_test_id("episode-end").is_visible():
        assert time.monotonic() < deadline, "following the teacher did not end the episode within 90 s"
        page.wait_for_timeout(200)
    expect(page.get_by_test_id("episode-end")).to_have_text("terminated")
    info = json.loads(page.get_by_test_id("info").inner_text())
    assert info["is_success"] is True, info
    expect(page.get_by_test_id("last-acted-by")).to_have_text("the teacher")


def test_the_replay_shows_the_teachers_suggestions_and_success_frame_by_frame(page: Page, web_platform, screenshot) -> None:
    with httpx.Client(base_url=web_platform.url, timeout=60) as http:
        with platform_sdk.connect(PICK_PLACE, url=web_platform.url, record=True, record_frames=True) as env:
            sid = env.session_id
            _, info = env.reset(seed=3)
            suggested: list[list[int]] = []
            done, t = False, 0
            while not done:
                assert t < 200, "the teacher did not finish pick and place in 200 steps"
                suggested.append([int(v) for v in info["teacher_action"]])
                action = [2, 2, 2, 0] if t == 2 else suggested[-1]  # step 3 is not the teacher's
                _, _, terminated, truncated, info = env.step(action)
                done, t = terminated or truncated, t + 1
            assert terminated and info["is_success"] is True
        wait_for(lambda: (meta := http.get(f"/v0/recordings/{sid}").json()).get("status") == "closed"
                 and len(meta.get("episodes", [])) == 1, timeout=60, what=f"recording {sid} closed with its episode")

    page.goto(f"/recordings/{sid}?episode=0&step=0")
    expect(page.get_by_test_id("plot-teacher")).to_be_visible()
    expect(page.get_by_test_id("next-action-step")).to_have_text("1")
    expect(page.get_by_test_id("teacher-suggestion")).to_have_text(json.dumps(suggested[0], separators=(",", ":")))
    expect(page.get_by_test_id("next-action-taken")).to_have_text(json.dumps(suggested[0], separators=(",", ":")))
    expect(page.get_by_test_id("teacher-agrees")).to_have_text("yes")
    expect(page.get_by_test_id("state-block_position")).to_be_visible()
    page.get_by_test_id("scrubber").fill("2")
    expect(page.get_by_test_id("next-action-taken")).to_have_text("[2,2,2,0]")
    expect(page.get_by_test_id("teacher-suggestion")).to_have_text(json.dumps(suggested[2], separators=(",", ":")))
    expect(page.get_by_test_id("teacher-agrees")).to_have_text("no" if suggested[2] != [2, 2, 2, 0] else "yes")
    expect(page.get_by_test_id("cursor-success")).to_have_text("no")
    page.get_by_test_id("scrubber").fill(str(t))
    expect(page.get_by_test_id("cursor-success")).to_have_text("yes")  # the last step put the block in the bin
    page.get_by_test_id("scrubber").fill(str(t - 6))
    expect(page.get_by_test_id("cursor-step")).to_have_text(str(t - 6))
    screenshot(page, "replay-pick-place", full_page=True)

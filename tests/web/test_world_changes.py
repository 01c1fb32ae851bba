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

from collections.abc import Iterator

import httpx
import pytest
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


def test_the_world_changes_editor_shows_the_servers_422_beside_it(page: Page, console, http, screenshot) -> None:
    console.allow(r"status of 422")  # Chromium logs the refused create
    open_options(page, REACH)
    editor = page.get_by_test_id("option-world_changes")
    assert '"change": "mass"' in (editor.get_attribute("placeholder") or "")  # the overview's example
    expect(page.get_by_test_id("option-substeps")).to_have_value("25")  # the catalog's options, as declared
    expect(page.get_by_test_id("option-control")).to_have_value('"joints"')
    expect(page.get_by_test_id("option-hand_levels")).to_have_value("5")
    screenshot(page, "options-dialog-panda")
    sessions_before = http.get("/v0/sessions").json()["count"]

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
    assert http.get("/v0/sessions").json()["count"] == sessions_before
    editor.scroll_into_view_if_needed()
    screenshot(page, "options-dialog-world-changes-422")

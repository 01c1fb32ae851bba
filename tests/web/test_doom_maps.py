"""The Options dialog of a Doom entry in Chromium: game variables as a multiple choice, and the
WAD picker that uploads a WAD the test writes, picks one of its maps and starts a session on it."""

from __future__ import annotations

import re

from platform_testing.doom_wads import write_corridor_wad
from playwright.sync_api import Page, expect


def test_a_doom_session_starts_on_an_uploaded_map_with_chosen_variables(page: Page, console, sessions_made_with,
                                                                       screenshot, tmp_path) -> None:
    console.allow(r"status of 422")  # Chromium logs the refused upload
    page.goto("/?q=doom-basic")
    page.get_by_test_id("options-doom-basic").click()
    expect(page.get_by_test_id("options-dialog")).to_be_visible()
    page.get_by_test_id("option-variables").select_option(["POSITION_X", "ANGLE"])

    notes = tmp_path / "notes.wad"
    notes.write_text("not a WAD at all")
    page.get_by_test_id("wad-upload").set_input_files(str(notes))
    expect(page.get_by_test_id("wad-error")).to_contain_text("notes.wad is not a usable WAD: not a WAD")

    wad = write_corridor_wad(tmp_path / "two_rooms.wad", ("MAP01", "MAP02"))
    page.get_by_test_id("wad-upload").set_input_files(str(wad))
    expect(page.get_by_test_id("wad-upload-status")).to_contain_text("two_rooms.wad: 2 maps")
    selected = page.get_by_test_id("wad-select")
    expect(selected.locator("option:checked")).to_contain_text("two_rooms.wad")
    wad_id = selected.input_value()
    assert re.fullmatch(r"wad-[0-9a-f]{16}", wad_id), wad_id
    expect(page.get_by_test_id("wad-map")).to_have_value("MAP01")
    page.get_by_test_id("wad-map").select_option("MAP02")
    page.get_by_test_id("wad-picker").scroll_into_view_if_needed()
    screenshot(page, "options-dialog-doom-wad")

    page.get_by_test_id("options-start").click()
    page.wait_for_url(re.compile(r"/sessions/"), timeout=60_000)
    [sid] = sessions_made_with("wad", wad_id)
    assert sid in page.url
    assert sessions_made_with("doom_map", "MAP02") == [sid]
    assert sessions_made_with("variables", ["POSITION_X", "ANGLE"]) == [sid]

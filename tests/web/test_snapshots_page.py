"""The Saved snapshots page in a real browser against the real platform: a snapshot saved from
an unrecorded session is listed there (label, environment, session, size) and on the Recordings
page, the environment filter narrows the list, and Resume opens a new session at it."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Page, expect


@pytest.fixture(scope="module")
def http(web_platform) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web_platform.url, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def saved(http: httpx.Client) -> Iterator[dict]:
    """A snapshot saved from an unrecorded CartPole session, 5 steps in."""
    session = http.post("/v0/sessions", json={"env_id": "cartpole"})
    assert session.status_code == 201, session.text
    sid = session.json()["id"]
    try:
        assert http.post(f"/v0/sessions/{sid}/reset", json={"seed": 7}).status_code == 200
        for _ in range(5):
            assert http.post(f"/v0/sessions/{sid}/step", json={"action": 1}).status_code == 200
        made = http.post(f"/v0/sessions/{sid}/saved-snapshots", json={"label": "five steps in"})
        assert made.status_code == 201, made.text
        yield made.json()
    finally:
        http.delete(f"/v0/sessions/{sid}")


def test_a_snapshot_of_an_unrecorded_session_is_listed_and_resumes(page: Page, saved: dict, http: httpx.Client,
                                                                   screenshot) -> None:
    sid, snap = saved["session_id"], saved["id"]
    assert http.get("/v0/recordings", params={"session_id": sid}).json()["count"] == 0  # nothing recorded

    page.goto("/recordings")
    expect(page.get_by_test_id(f"saved-snapshot-row-{snap}")).to_contain_text("five steps in")
    page.get_by_test_id("recordings-snapshots-link").click()
    expect(page).to_have_url(re.compile(r"/snapshots$"))

    row = page.get_by_test_id(f"saved-snapshot-row-{snap}")
    expect(row).to_contain_text("five steps in")
    expect(page.get_by_test_id(f"saved-snapshot-env-{snap}")).to_have_text("cartpole")
    expect(page.get_by_test_id(f"saved-snapshot-session-{snap}")).to_have_text(sid)
    expect(page.get_by_test_id(f"saved-snapshot-size-{snap}")).to_have_text(re.compile(r"^\d+(\.\d)? (B|KiB|MiB)$"))
    screenshot(page, "saved-snapshots", full_page=True)

    page.get_by_test_id("snapshots-filter-env").select_option("cartpole")
    expect(page).to_have_url(re.compile(r"/snapshots\?env_id=cartpole$"))
    expect(row).to_be_visible()
    page.goto("/snapshots?env_id=levels")
    expect(page.get_by_test_id("saved-snapshots-empty")).to_contain_text("No saved snapshots of levels yet")

    page.goto("/snapshots")
    page.get_by_test_id(f"saved-snapshot-resume-{snap}").click()
    page.wait_for_url(lambda url: "/sessions/" in url and sid not in url)
    expect(page.get_by_test_id("origin")).to_contain_text(f"resumed from saved snapshot {snap}")
    resumed = re.search(r"/sessions/([^/?#]+)", page.url)
    assert resumed is not None
    http.delete(f"/v0/sessions/{resumed.group(1)}")

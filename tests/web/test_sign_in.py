"""A platform that needs a token (PLATFORM_AUTH=token) in Chromium: signed out, only the sign-in
page shows; a bad token is refused with the server's reason; an API token the admin made signs
in, the catalog and a session (its WebSocket too) work, and signing out returns to the page."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from platform_testing.platform import PlatformStack, running_platform
from playwright.sync_api import Page, expect

ADMIN = "web-admin-token-0123456789abcdef"


@pytest.fixture(scope="module")
def token_platform(web_dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra_env = {"PLATFORM_WEB_DIST": str(web_dist), "PLATFORM_AUTH": "token", "PLATFORM_ADMIN_TOKEN": ADMIN}
    with running_platform(tmp_path_factory.mktemp("token-platform"), extra_env=extra_env) as stack:
        yield stack


def test_sign_in_with_an_api_token_then_play_and_sign_out(open_page, token_platform: PlatformStack, console,
                                                          screenshot) -> None:
    console.allow(r"status of 401")  # Chromium logs the refused calls
    made = httpx.post(f"{token_platform.url}/v0/tokens", json={"name": "browser"},
                      headers={"Authorization": f"Bearer {ADMIN}"}, timeout=30)
    assert made.status_code == 201, made.text
    token = made.json()

    page: Page = open_page(token_platform.url)
    page.goto("/")
    expect(page.get_by_test_id("sign-in-page")).to_be_visible()
    expect(page.locator("[data-testid^=env-card-]")).to_have_count(0)
    page.get_by_test_id("sign-in-token").fill("sim_not-a-token-at-all")
    page.get_by_test_id("sign-in-submit").click()
    expect(page.get_by_test_id("sign-in-error")).to_have_text("the API token is not valid: no such token on this platform")
    screenshot(page, "sign-in-refused")

    page.get_by_test_id("sign-in-token").fill(token["token"])
    page.get_by_test_id("sign-in-submit").click()
    # the token's name, then its id (a member's tokens are told apart by name)
    expect(page.get_by_test_id("signed-in-as")).to_have_text(f"browser ({token['id']}) (member, default)")
    page.goto("/?q=cartpole")
    expect(page.get_by_test_id("env-card-cartpole")).to_be_visible()
    page.get_by_test_id("start-cartpole").click()
    page.wait_for_url(re.compile(r"/sessions/"), timeout=60_000)
    page.get_by_test_id("step").click()  # one step over the session's WebSocket, with ?token=
    expect(page.get_by_test_id("step-count")).to_have_text("1", timeout=30_000)

    page.reload()  # the sign-in survives a reload
    expect(page.get_by_test_id("signed-in-as")).to_be_visible()
    page.get_by_test_id("sign-out").click()
    expect(page.get_by_test_id("sign-in-page")).to_be_visible()

    httpx.delete(f"{token_platform.url}/v0/tokens/{token['id']}", headers={"Authorization": f"Bearer {ADMIN}"},
                 timeout=30).raise_for_status()
    page.get_by_test_id("sign-in-token").fill(token["token"])
    page.get_by_test_id("sign-in-submit").click()
    expect(page.get_by_test_id("sign-in-error")).to_contain_text("was revoked")

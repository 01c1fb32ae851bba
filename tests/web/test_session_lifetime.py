"""Sessions nobody uses (issue 30): a session the web app opened closes when its page goes away,
and the gateway closes one whose page could not (its last stream closed a while ago), unless the
user kept it; a reload keeps it. Against a managed platform (so the page's keepalive request must
carry the bearer token) whose grace periods are short: PLATFORM_PAGE_LEFT_GRACE_S=6 after the page
said it went away (10 by default), PLATFORM_PAGE_SESSION_GRACE_S=15 when it said nothing (60).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.waiting import wait_for
from playwright.sync_api import Page, expect

GRACE_S = 15
LEFT_GRACE_S = 6
LONG = 30_000  # ms: a session started on a busy machine


@pytest.fixture(scope="module")
def lifetime_platform(web_dist: Path, admin_token: str,
                      tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra_env = {"PLATFORM_WEB_DIST": str(web_dist), "PLATFORM_MODE": "managed", "PLATFORM_AUTH": "token",
                 "PLATFORM_ADMIN_TOKEN": admin_token, "PLATFORM_PAGE_SESSION_GRACE_S": str(GRACE_S),
                 "PLATFORM_PAGE_LEFT_GRACE_S": str(LEFT_GRACE_S)}
    with running_platform(tmp_path_factory.mktemp("lifetime-platform"), extra_env=extra_env) as stack:
        yield stack


@pytest.fixture(scope="module")
def http(lifetime_platform: PlatformStack, admin_token: str) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {admin_token}"}
    with httpx.Client(base_url=lifetime_platform.url, headers=headers, timeout=60) as client:
        yield client


@pytest.fixture
def signed_in(open_page: Callable[..., Page], lifetime_platform: PlatformStack, admin_token: str) -> Page:
    page = open_page(lifetime_platform.url)
    page.goto("/?q=cartpole")
    page.get_by_test_id("sign-in-token").fill(admin_token)
    page.get_by_test_id("sign-in-submit").click()
    expect(page.get_by_test_id("signed-in-as")).to_be_visible()
    return page


def start_cartpole(page: Page) -> str:
    page.goto("/?q=cartpole")
    page.get_by_test_id("start-cartpole").click()
    expect(page.get_by_test_id("frame")).to_be_visible(timeout=LONG)
    match = re.search(r"/sessions/([^/?#]+)", page.url)
    assert match, page.url
    return match.group(1)


def state(http: httpx.Client, sid: str) -> dict:
    return http.get(f"/v0/sessions/{sid}").json()


def test_leaving_the_page_closes_its_session(signed_in: Page, http) -> None:
    sid = start_cartpole(signed_in)
    assert state(http, sid)["closes_with_page"] is True
    signed_in.goto("about:blank")  # another site: pagehide sends the keepalive POST .../left
    closed = wait_for(lambda: state(http, sid)["state"] == "closed" or None, timeout=GRACE_S - 2,
                      what=f"session {sid} closed after its page's pagehide, before the backstop's grace ran out")
    assert closed
    assert state(http, sid)["reason"] == "closed with its page: the page went away"


def test_a_reload_keeps_the_session(signed_in: Page, http) -> None:
    sid = start_cartpole(signed_in)
    signed_in.reload()  # pagehide says the page left; the reloaded page opens its stream again
    expect(signed_in.get_by_test_id("frame")).to_be_visible(timeout=LONG)
    time.sleep(LEFT_GRACE_S + 2)
    assert state(http, sid)["state"] == "running"
    expect(signed_in.get_by_test_id("frame")).to_be_visible()
    http.delete(f"/v0/sessions/{sid}")


def test_navigating_inside_the_app_closes_it_too(signed_in: Page, http) -> None:
    sid = start_cartpole(signed_in)
    signed_in.get_by_role("link", name=re.compile("Recordings")).first.click()
    wait_for(lambda: state(http, sid)["state"] == "closed" or None, timeout=GRACE_S - 1,
             what=f"session {sid} closed when the Session page unmounted")


def test_a_kept_session_stays_open_after_its_page_goes(signed_in: Page, http) -> None:
    sid = start_cartpole(signed_in)
    signed_in.get_by_test_id("keep-running").check()
    wait_for(lambda: http.get(f"/v0/sessions/{sid}/keep").json()["keep"] or None, timeout=10, what="kept")
    signed_in.goto("about:blank")
    time.sleep(GRACE_S + 2)
    assert state(http, sid)["state"] == "running"
    http.delete(f"/v0/sessions/{sid}")


def test_the_gateway_closes_a_session_whose_page_could_not(lifetime_platform, http, admin_token: str) -> None:
    """The page's DELETE never arrives (a crash, a lost network): the gateway's backstop closes a
    closes_with_page session GRACE_S after its last stream closed, as a browser's stream would."""
    from websockets.sync.client import connect

    sid = http.post("/v0/sessions", json={"env_id": "cartpole", "closes_with_page": True}).json()["id"]
    wait_for(lambda: state(http, sid)["state"] == "running" or None, timeout=60, what="running")
    url = lifetime_platform.url.replace("http", "ws", 1) + f"/v0/sessions/{sid}/stream?token={admin_token}"
    with connect(url) as stream:
        stream.send('{"id": 1, "op": "reset", "observation": "none"}')
        assert '"result"' in stream.recv(timeout=30)
        time.sleep(GRACE_S + 1)
        assert state(http, sid)["state"] == "running"  # an open stream keeps it
    wait_for(lambda: state(http, sid)["state"] == "closed" or None, timeout=GRACE_S + 15,
             what=f"session {sid} closed by the gateway after its last stream closed")
    assert state(http, sid)["reason"] == f"closed with its page: no browser stream for {GRACE_S} s"


def sign_in_as(page: Page, token: str) -> Page:
    page.goto("/?q=cartpole")
    page.get_by_test_id("sign-in-token").fill(token)
    page.get_by_test_id("sign-in-submit").click()
    expect(page.get_by_test_id("signed-in-as")).to_be_visible()
    return page


def test_a_member_whose_team_may_run_one_session_closes_a_tab_and_starts_another_at_once(
        open_page: Callable[..., Page], lifetime_platform: PlatformStack, http) -> None:
    """The closed tab's session would close LEFT_GRACE_S after its page left; until then it counts to
    the team's quota of 1. The gateway closes it when the next create needs its room, so the member
    is not refused (before: 429 "has reached its quota of 1 concurrent session")."""
    made = http.post("/v0/teams", json={"name": "solo", "max_sessions": 1})
    assert made.status_code == 201, made.text
    token = http.post("/v0/tokens", json={"name": "solo member", "team": "solo"}).json()["token"]
    first_tab = sign_in_as(open_page(lifetime_platform.url), token)
    next_tab = sign_in_as(open_page(lifetime_platform.url), token)  # ready to start, before the first closes
    first = start_cartpole(first_tab)

    first_tab.close()  # pagehide: the page says it left, its stream closes
    next_tab.get_by_test_id("start-cartpole").click()  # within the first's grace
    expect(next_tab.get_by_test_id("frame")).to_be_visible(timeout=LONG)
    second = re.search(r"/sessions/([^/?#]+)", next_tab.url)
    assert second and second.group(1) != first
    with httpx.Client(base_url=lifetime_platform.url, headers={"Authorization": f"Bearer {token}"},
                      timeout=60) as member:
        closed = state(member, first)
        assert closed.get("state") == "closed" and closed["reason"].startswith("closed with its page"), closed
        assert state(member, second.group(1))["state"] == "running"
        member.delete(f"/v0/sessions/{second.group(1)}")

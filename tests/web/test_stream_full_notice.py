"""The Session page says when steps may wait for the recorder: while the session's
`stream_full_since` is set (its env host's events wait for the platform's full event stream), a
notice with that time shows, and it goes once the field is null again. The stream itself is
filled for real in tests/test_e2e_stream_limit.py; here the page reads the session through a
route that sets the field as the gateway would."""

from __future__ import annotations

import json
import time

import platform_sdk
from playwright.sync_api import Page, Route, expect


def test_the_session_page_says_while_the_event_stream_is_full(page: Page, web_platform) -> None:
    full_since = round(time.time() - 42.0, 3)
    state = {"full": False}
    reads: list[float | None] = []

    def as_the_gateway_would_while_full(route: Route) -> None:
        if route.request.method != "GET":
            route.continue_()
            return
        answer = route.fetch()
        body = answer.json()
        assert body["stream_full_since"] is None, "the real stream takes events in this test"
        body["stream_full_since"] = full_since if state["full"] else None
        reads.append(body["stream_full_since"])
        route.fulfill(response=answer, body=json.dumps(body))

    with platform_sdk.connect("cartpole", url=web_platform.url) as env:
        page.route(f"**/v0/sessions/{env.session_id}", as_the_gateway_would_while_full)
        page.goto(f"/sessions/{env.session_id}")
        expect(page.get_by_test_id("frame")).to_be_visible(timeout=30_000)
        notice = page.get_by_test_id("stream-full")
        expect(notice).to_have_count(0)

        state["full"] = True
        expect(notice).to_be_visible(timeout=15_000)
        expect(notice).to_have_attribute("data-since", str(full_since))
        expect(notice).to_contain_text("PLATFORM_JETSTREAM_MAX_BYTES")
        expect(notice).to_contain_text("nothing is lost")

        state["full"] = False
        expect(notice).to_have_count(0, timeout=15_000)
    assert reads[0] is None and full_since in reads and reads[-1] is None, reads

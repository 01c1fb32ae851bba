"""The session page's Trace view: the session's recent steps as a waterfall, from the spans every
service keeps in memory (GET /v0/sessions/{id}/trace). Against a platform that traces every
step (`OTEL_TRACES_SAMPLER=parentbased_always_on`; the browser sends no trace context), a
recorded CartPole session takes a few steps (binary steps: the page shows its whole observation);
the view shows one group per step with its hops (the gateway's span of the page's request, the
env host's span under it, the instance's and the recorder's write
under that, each with its milliseconds) and Refresh brings the newer steps in. Saves test-output/web/session-trace.png.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from platform_testing.platform import PlatformStack, running_platform
from playwright.sync_api import Page, expect

LONG = 30_000  # ms: a session started on a busy machine


@pytest.fixture(scope="module")
def traced_platform(web_dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra_env = {"PLATFORM_WEB_DIST": str(web_dist), "OTEL_TRACES_SAMPLER": "parentbased_always_on"}
    with running_platform(tmp_path_factory.mktemp("trace-platform"), extra_env=extra_env) as stack:
        yield stack


def step(page: Page, times: int) -> None:
    for _ in range(times):
        before = int(page.get_by_test_id("step-count").inner_text())
        page.get_by_test_id("step").click()
        expect(page.get_by_test_id("step-count")).to_have_text(str(before + 1))


def test_the_session_page_shows_its_recent_steps_as_a_waterfall(open_page: Callable[..., Page],
                                                                traced_platform: PlatformStack,
                                                                screenshot: Callable[..., Path]) -> None:
    page = open_page(traced_platform.url)
    page.goto("/?q=cartpole")
    page.get_by_test_id("options-cartpole").click()
    page.get_by_test_id("option-record").check()
    page.get_by_test_id("options-start").click()
    expect(page.get_by_test_id("frame")).to_be_visible(timeout=LONG)
    step(page, 3)
    page.get_by_test_id("trace-show").click()
    groups = page.get_by_test_id("trace-group")
    expect(groups.first).to_be_visible(timeout=LONG)
    # every step's hops: the env host's span at the top, the instance's and the recorder's write under it
    steps = page.locator("[data-testid=trace-group]:has([data-testid=trace-row][data-name='envhost.step'])")
    expect(steps.first).to_be_visible()

    def hops() -> dict[str, tuple[str, int]]:
        rows = steps.first.get_by_test_id("trace-row")
        return {rows.nth(i).get_attribute("data-name") or "": (rows.nth(i).get_attribute("data-service") or "",
                                                               int(rows.nth(i).get_attribute("data-depth") or -1))
                for i in range(rows.count())}

    page.get_by_test_id("trace-refresh").click()  # the recorder's write lands a moment after the step
    expect(steps.first.locator("[data-testid=trace-row][data-name='recorder.write']")).to_be_visible(timeout=LONG)
    shown = hops()
    assert {"gateway.step": ("platform-gateway", 0), "envhost.step": ("platform-envhost", 1),
            "env.step": ("platform-env-server", 2), "recorder.write": ("platform-recorder", 2)}.items() <= shown.items()
    assert set(shown) - {"gateway.step", "envhost.step", "env.step", "recorder.write"} <= {"recorder.batch"}, shown
    assert steps.count() >= 3
    expect(steps.first.get_by_test_id("trace-ms").first).to_have_text(re.compile(r"^\d+\.\d+ (ms|s)$"))
    width = steps.first.get_by_test_id("trace-bar").first.bounding_box()
    assert width is not None and width["width"] >= 2
    before = steps.count()
    step(page, 2)
    page.get_by_test_id("trace-refresh").click()
    expect(steps).to_have_count(min(before + 2, 10), timeout=LONG)  # the view asks for the last 10 steps
    screenshot(page, "session-trace", full_page=True)

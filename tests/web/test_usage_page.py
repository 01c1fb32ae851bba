"""The Usage page and token-carrying downloads on a managed platform that needs a token
(PLATFORM_MODE=managed, PLATFORM_AUTH=token) in Chromium: after a cartpole session ran, the page
shows this month's instance-hours as a chart and a table, and "Download CSV" saves the CSV (a
Playwright download) with its header row; the Recordings page's archive link downloads the
session's .tar with the token too (a plain link could not carry it)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import tarfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import platform_sdk
import pytest
from platform_testing.platform import PlatformStack
from platform_testing.waiting import wait_for
from playwright.sync_api import expect

CSV_HEADER = ["day", "team", "env_id", "instance_hours", "sessions", "machine_id", "machine_name", "gpu_hours",
              "experiments"]


@pytest.fixture(scope="module")
def http(managed_platform: PlatformStack, admin_token: str) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {admin_token}"}
    with httpx.Client(base_url=managed_platform.url, timeout=60, headers=headers) as client:
        yield client


@pytest.fixture(scope="module")
def session_ran(managed_platform: PlatformStack, http: httpx.Client, admin_token: str) -> str:
    """A recorded cartpole session of a few steps, closed, then a pendulum one (two environments
    to stack); the cartpole session's id."""
    ids = []
    for env_id, action in (("cartpole", 0), ("pendulum", [0.0])):
        with platform_sdk.connect(env_id, url=managed_platform.url, token=admin_token, record=True) as env:
            ids.append(env.session_id)
            env.reset(seed=3)
            for _ in range(10):
                env.step(action)

    def recorded() -> bool:
        return all(http.get(f"/v0/recordings/{sid}").json().get("status") == "closed" for sid in ids)

    wait_for(recorded, timeout=60, what=f"recordings {ids} closed")
    return ids[0]


def test_usage_shows_the_chart_and_table_and_downloads_the_csv(signed_in_page, managed_platform: PlatformStack,
                                                               http: httpx.Client, session_ran: str, screenshot,
                                                               tmp_path: Path) -> None:
    today = dt.datetime.now(dt.timezone.utc).date()
    page = signed_in_page("/usage")
    expect(page).to_have_url(f"{managed_platform.url}/usage")
    expect(page.get_by_test_id("usage-since")).to_have_value(today.replace(day=1).isoformat())
    expect(page.get_by_test_id("usage-until")).to_have_value(today.isoformat())

    for env_id in ("cartpole", "pendulum"):
        row = page.get_by_test_id(f"usage-row-{today.isoformat()}-default-{env_id}")
        expect(row).to_be_visible()
        expect(row.locator("td").nth(4)).to_have_text("1")  # one session that day
    expect(page.get_by_test_id("usage-total-hours")).not_to_have_text("0")
    # No experiment ran here (test_usage_gpu_hours.py runs one): no GPU table, 0 GPU-hours.
    expect(page.get_by_test_id("usage-total-gpu-hours")).to_have_text("0")
    expect(page.get_by_test_id("usage-gpu-table")).to_have_count(0)
    chart = page.get_by_test_id("usage-chart")
    expect(chart.locator("canvas")).to_be_visible()
    expect(chart.locator(".u-legend")).to_contain_text("cartpole")
    expect(chart.locator(".u-legend")).to_contain_text("pendulum")
    # The day's stacked bar is drawn in both environments' colours (the palette's blue #2457d6 and
    # orange #d66a24, at 85 % over white).
    drawn = chart.locator("canvas").evaluate("""canvas => {
        const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let blue = 0, orange = 0;
        for (let i = 0; i < pixels.length; i += 4) {
            const [r, g, b] = [pixels[i], pixels[i + 1], pixels[i + 2]];
            if (b > 150 && r < 90) blue++;
            if (r > 180 && g > 80 && g < 140 && b < 90) orange++;
        }
        return {blue, orange};
    }""")
    assert drawn["blue"] > 20 and drawn["orange"] > 20, f"the stacked bar is not drawn: {drawn} pixels"
    screenshot(page, "usage", full_page=True)

    with page.expect_download() as started:
        page.get_by_test_id("usage-download-csv").click()
    download = started.value
    assert download.suggested_filename == f"usage-{today.replace(day=1)}-{today}.csv"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    rows = list(csv.reader(io.StringIO(saved.read_text())))
    assert rows[0] == CSV_HEADER
    assert [r[:3] for r in rows[1:]] == [[today.isoformat(), "default", e] for e in ("cartpole", "pendulum")]
    assert all(float(r[3]) > 0 and r[4] == "1" and r[5:] == ["", "", "", ""] for r in rows[1:])
    expected = http.get("/v0/usage", params={"since": today.replace(day=1).isoformat(), "until": today.isoformat(),
                                            "format": "csv"})
    assert saved.read_text() == expected.text

    # A range ending before it starts is not asked for.
    page.get_by_test_id("usage-since").fill(today.isoformat())
    page.get_by_test_id("usage-until").fill((today - dt.timedelta(days=1)).isoformat())
    expect(page.get_by_test_id("usage-range-error")).to_have_text("the last day is before the first")
    expect(page.get_by_test_id("usage-download-csv")).to_be_disabled()


def test_the_recording_archive_downloads_with_the_token(signed_in_page, managed_platform: PlatformStack, session_ran: str,
                                                        tmp_path: Path) -> None:
    plain = httpx.get(f"{managed_platform.url}/v0/recordings/{session_ran}/archive", timeout=60)
    assert plain.status_code == 401  # what a plain link would get
    page = signed_in_page(f"/recordings?session_id={session_ran}")
    link = page.get_by_test_id(f"archive-{session_ran}")
    expect(link).to_have_attribute("href", f"/v0/recordings/{session_ran}/archive")
    with page.expect_download() as started:
        link.click()
    download = started.value
    assert download.suggested_filename == f"{session_ran}.tar"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    with tarfile.open(saved) as opened:
        assert f"{session_ran}/meta.json" in opened.getnames()

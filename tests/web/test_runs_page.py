"""The Runs pages in a real browser against the real platform: runs made through the API (three
seeds of one group with different step grids, and one other run) are listed with their final
values and hyperparameters; ticking them charts a metric (the group as its mean line and a
shaded min-max band, the other run as a line, a legend naming both); the x axis and the smoothing
change the drawing; a run's page shows its hyperparameters, links and a chart per metric.

With PLATFORM_DOCS_SCREENSHOTS=1 the page's screenshot is also written to
docs/images/runs-page.png (docs/training.md shows it)."""

from __future__ import annotations

import math
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

DOCS_IMAGE = Path(__file__).resolve().parents[2] / "docs" / "images" / "runs-page.png"


@pytest.fixture(scope="module")
def http(web_platform) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web_platform.url, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def made_runs(http: httpx.Client) -> Iterator[dict]:
    """Three seeds of `ppo-cartpole` (each its own step grid and noise) and one `dqn-cartpole`
    run, tagged with this module's own tag."""
    tag = f"web-{uuid.uuid4().hex[:8]}"
    ids = []

    def make(body: dict, grid: range, level: float, wobble: float, phase: float) -> str:
        made = http.post("/v0/runs", json={**body, "tags": [tag, "cartpole"], "session_ids": ["sess-demo"],
                                           "recording_ids": ["rec-demo"], "experiment_id": "exp-demo"})
        assert made.status_code == 201, made.text
        run_id = made.json()["id"]
        ids.append(run_id)
        points = []
        for i, step in enumerate(grid):
            learned = level * (1 - math.exp(-step / 3000))
            noise = wobble * math.sin(step / 97 + phase) * math.cos(step / 31)
            points.append({"name": "train/episode_return", "step": step, "value": learned + noise,
                           "time": 1_800_000_000 + phase * 100 + i * (0.5 + phase / 10), "frames": step * 4})
            points.append({"name": "train/loss", "step": step, "value": 1 / (1 + step / 500),
                           "time": 1_800_000_000 + phase * 100 + i * (0.5 + phase / 10), "frames": step * 4})
        for start in range(0, len(points), 5000):
            logged = http.post(f"/v0/runs/{run_id}/metrics", json={"points": points[start:start + 5000]})
            assert logged.status_code == 200, logged.text
        return run_id

    group = {"name": "ppo", "group": "ppo-cartpole", "hparams": {"lr": 0.0003, "gamma": 0.99, "algo": "ppo"}}
    seeds = [make({**group, "seed": seed}, range(0, 10_001, grid), 380 + 50 * seed, 60, seed)
             for seed, grid in ((1, 50), (2, 40), (3, 64))]
    other = make({"name": "dqn", "group": "dqn-cartpole", "seed": 1, "hparams": {"lr": 0.001, "algo": "dqn"}},
                 range(0, 9_001, 100), 300, 30, 4)
    assert http.patch(f"/v0/runs/{other}", json={"state": "finished"}).status_code == 200
    yield {"tag": tag, "seeds": seeds, "other": other}
    for run_id in ids:
        http.delete(f"/v0/runs/{run_id}")


def _chart(page: Page):
    return page.get_by_test_id("runs-chart")


def test_runs_are_listed_charted_as_bands_and_open_their_page(page: Page, made_runs: dict, screenshot) -> None:
    page.goto("/")
    page.get_by_test_id("nav-runs").click()
    expect(page.get_by_test_id("runs-page")).to_be_visible()
    page.goto(f"/runs?tag={made_runs['tag']}")
    rows = page.get_by_test_id("run-row")
    expect(rows).to_have_count(4)
    other = page.locator(f"[data-testid=run-row][data-run-id='{made_runs['other']}']")
    expect(other.get_by_test_id("run-row-hparam-algo")).to_have_text("dqn")
    expect(other.get_by_test_id("run-row-hparam-lr")).to_have_text("0.001")
    expect(other).to_contain_text("finished")
    first_seed = page.locator(f"[data-testid=run-row][data-run-id='{made_runs['seeds'][0]}']")
    expect(first_seed.get_by_test_id("run-row-final-train/loss")).to_have_text("0.0476")  # 1 / (1 + 10000/500)
    expect(page.get_by_test_id("runs-chart-hint")).to_be_visible()

    page.get_by_test_id("runs-metric").select_option("train/episode_return")
    for run_id in made_runs["seeds"]:
        page.locator(f"[data-testid=run-row][data-run-id='{run_id}']").get_by_test_id("run-tick").check()
    chart = _chart(page)
    expect(chart).to_have_attribute("data-bands", "1")
    expect(chart).to_have_attribute("data-lines", "1")
    expect(chart.get_by_test_id("runs-chart-legend")).to_contain_text("ppo-cartpole (mean of 3)")
    other.get_by_test_id("run-tick").check()
    expect(chart).to_have_attribute("data-lines", "2")
    expect(chart).to_have_attribute("data-bands", "1")
    legend = chart.get_by_test_id("runs-chart-legend-item")
    expect(legend).to_have_count(2)
    expect(legend.filter(has_text="ppo-cartpole (mean of 3), min–max shaded")).to_have_attribute("data-runs", "3")
    expect(legend.filter(has_text="dqn")).to_have_attribute("data-runs", "1")
    expect(chart.locator("canvas")).to_have_count(1)

    def drawing() -> tuple[str, str]:
        signature = chart.get_attribute("data-signature") or ""
        pixels = page.evaluate("() => document.querySelector('[data-testid=runs-chart] canvas').toDataURL()")
        return signature, pixels

    by_steps = drawing()
    page.get_by_test_id("runs-axis").select_option("time")
    expect(chart).to_have_attribute("data-axis", "time")
    by_time = drawing()
    assert by_time[0] != by_steps[0] and by_time[1] != by_steps[1]
    page.get_by_test_id("runs-axis").select_option("frames")
    expect(chart).to_have_attribute("data-axis", "frames")
    page.get_by_test_id("runs-axis").select_option("step")
    expect(chart).to_have_attribute("data-signature", by_steps[0])

    page.get_by_test_id("runs-smoothing").fill("0.9")
    expect(page.get_by_test_id("runs-smoothing-value")).to_have_text("0.90")
    expect(chart).to_have_attribute("data-smoothing", "0.9")
    smoothed = drawing()
    assert smoothed[0] != by_steps[0] and smoothed[1] != by_steps[1]
    expect(chart).to_have_attribute("data-bands", "1")
    page.get_by_test_id("runs-smoothing").fill("0.6")
    expect(page.get_by_test_id("runs-smoothing-value")).to_have_text("0.60")
    chart.scroll_into_view_if_needed()
    path = screenshot(page, "runs-page", full_page=True)
    if os.environ.get("PLATFORM_DOCS_SCREENSHOTS") == "1":
        DOCS_IMAGE.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS_IMAGE)

    # a group's name filters by it (and the field shows it)
    other.get_by_test_id("run-row-group").click()
    expect(rows).to_have_count(1)
    expect(page.get_by_test_id("runs-filter-group")).to_have_value("dqn-cartpole")
    page.get_by_test_id("runs-filter-group").fill("ppo-cartpole")
    page.get_by_test_id("runs-filter-group").press("Enter")
    expect(rows).to_have_count(3)

    first_seed.get_by_test_id("run-row-name").get_by_role("link").click()
    expect(page.get_by_test_id("run-page")).to_be_visible()
    expect(page.get_by_test_id("run-name")).to_have_text("ppo")
    expect(page.get_by_test_id("run-hparam-lr")).to_have_text("0.0003")
    expect(page.get_by_test_id("run-hparam-gamma")).to_have_text("0.99")
    expect(page.get_by_test_id("run-tags")).to_contain_text(made_runs["tag"])
    expect(page.get_by_test_id("run-experiment")).to_have_attribute("href", "/experiments/exp-demo")
    expect(page.get_by_test_id("run-session")).to_have_attribute("href", "/sessions/sess-demo")
    expect(page.get_by_test_id("run-recording")).to_have_attribute("href", "/recordings/rec-demo")
    for name in ("train_episode_return", "train_loss"):
        expect(page.get_by_test_id(f"run-chart-{name}")).to_have_attribute("data-lines", "1")
        expect(page.get_by_test_id(f"run-chart-{name}").locator("canvas")).to_have_count(1)

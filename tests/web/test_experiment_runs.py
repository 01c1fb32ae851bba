"""The experiment page's "Training runs" section in a real browser against the real platform
(broker, machines and gateway; a real sshd with the fake nvidia-smi as the machine, as in
test_experiments_page): an experiment that waits for a file, and runs made through the API with
its `experiment_id` (as a run its command starts with platform_sdk.runs would be): one with
RLlib's roles in its summary and a few points of `env_runners/episode_return_mean`, one with only
`episode/score`, and one of another experiment. The section lists the experiment's runs with
their states and links, the roles table shows the env runners' count, healthy and nodes (the
learners' and replay's rows too; none for the run without roles), and the chart draws the
headline curve; a point and a run logged while the experiment runs appear without a reload; the
metric picker switches the curve; once the experiment ended and its runs finished the section
stops reading them; a run's link opens its page.

With PLATFORM_DOCS_SCREENSHOTS=1 the section's screenshot is also written to
docs/images/experiment-runs.png (docs/training.md shows it)."""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from platform_testing.experiments import add_machine, committed_repository, wait_ended
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.sshd import SshServer
from playwright.sync_api import Page, expect

DOCS_IMAGE = Path(__file__).resolve().parents[2] / "docs" / "images" / "experiment-runs.png"
OUTPUT = Path(__file__).resolve().parents[2] / "test-output" / "web"
POLL_WAIT = 15_000  # ms: the section reads the runs every 5 s while the experiment is active
ROLES = {"roles/env_runners/count": 4, "roles/env_runners/healthy": 3, "roles/env_runners/nodes": "10.0.0.2, 10.0.0.3",
         "roles/learners/count": 1, "roles/learners/local": True, "roles/replay/size": 5000}
HEADLINE = "env_runners/episode_return_mean"


def returns(n: int, level: float, rate: float, first: int = 1) -> list[float]:
    """A learning curve's first `n` training iterations from `first`: rising toward `level` with a wobble."""
    return [round(level * (1 - math.exp(-i / rate)) + 6 * math.sin(i * 1.7), 2) for i in range(first, first + n)]


@pytest.fixture(scope="module")
def runs_platform(web_dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra_env = {"PLATFORM_WEB_DIST": str(web_dist), "PLATFORM_MACHINES_ALLOW_NETWORKS": "127.0.0.0/8",
                 "PLATFORM_MACHINES_CONNECT_TIMEOUT": "5", "PLATFORM_EXPERIMENTS_POLL_INTERVAL": "0.2"}
    with running_platform(tmp_path_factory.mktemp("experiment-runs-platform"), extra_env=extra_env,
                          services=("broker", "machines", "gateway")) as stack:
        yield stack


@pytest.fixture
def http(runs_platform: PlatformStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=runs_platform.url + "/v0", timeout=120) as client:
        yield client


@pytest.fixture
def machine(http: httpx.Client, sshd: SshServer) -> Iterator[dict[str, Any]]:
    added = add_machine(http, sshd, "rllib-box")
    yield added
    http.delete(f"/machines/{added['id']}", params={"stop_experiments": "true"})


def make_run(http: httpx.Client, experiment_id: str, name: str, points: dict[str, list[float]],
             summary: dict[str, Any] | None = None, first_step: int = 1) -> str:
    made = http.post("/runs", json={"name": name, "experiment_id": experiment_id, "hparams": {"algorithm": name}})
    assert made.status_code == 201, made.text
    run_id = str(made.json()["id"])
    if summary:
        assert http.patch(f"/runs/{run_id}", json={"summary": summary}).status_code == 200
    log_points(http, run_id, points, first_step)
    return run_id


def log_points(http: httpx.Client, run_id: str, points: dict[str, list[float]], first_step: int = 1) -> None:
    body = [{"name": name, "step": first_step + i, "value": v, "frames": (first_step + i) * 4000}
            for name, values in points.items() for i, v in enumerate(values)]
    logged = http.post(f"/runs/{run_id}/metrics", json={"points": body})
    assert logged.status_code == 200, logged.text


def run_card(page: Page, run_id: str):
    return page.locator(f"[data-testid=experiment-run][data-run-id='{run_id}']")


def test_the_experiment_page_shows_its_runs_roles_and_headline_curve_while_it_runs(
        open_page, runs_platform: PlatformStack, http: httpx.Client, machine: dict[str, Any], sshd: SshServer,
        tmp_path: Path, screenshot) -> None:
    repo = committed_repository(tmp_path / "work", {"README": "runs\n"})
    go = tmp_path / "go"
    made = http.post("/experiments", json={"machine": machine["id"], "repository": str(repo), "gpus": 0,
                                           "command": f"until [ -e {go} ]; do sleep 0.2; done; echo trained"})
    assert made.status_code == 201, made.text
    experiment_id = made.json()["id"]
    ppo = make_run(http, experiment_id, "ppo", {HEADLINE: returns(20, 480, 9),
                                                "learners/default_policy/policy_loss": [1 / i for i in range(1, 21)]},
                   summary={**ROLES, "best_return": 97.5})
    scripted = make_run(http, experiment_id, "scripted", {"episode/score": [3.0, 4.0, 6.0]})
    other = make_run(http, "x-000000000000", "elsewhere", {HEADLINE: [1.0, 2.0]}, summary=ROLES)

    page = open_page(runs_platform.url)
    page.goto(f"/experiments/{experiment_id}")
    section = page.get_by_test_id("experiment-runs")
    expect(section).to_be_visible()
    cards = section.get_by_test_id("experiment-run")
    expect(cards).to_have_count(2)
    expect(run_card(page, other)).to_have_count(0)
    expect(section).to_have_attribute("data-polling", "true")

    card = run_card(page, ppo)
    expect(card.get_by_test_id("experiment-run-state")).to_have_text("running")
    expect(card.get_by_test_id("experiment-run-link")).to_have_attribute("href", f"/runs/{ppo}")
    roles = card.get_by_test_id("experiment-run-role")
    expect(roles).to_have_count(3)
    runners = card.locator("[data-testid=experiment-run-role][data-role=env_runners]")
    expect(runners).to_contain_text("env runners")
    expect(runners.get_by_test_id("experiment-run-role-count")).to_have_text("4")
    expect(runners.get_by_test_id("experiment-run-role-healthy")).to_have_text("3")
    expect(runners.get_by_test_id("experiment-run-role-where")).to_have_text("10.0.0.2, 10.0.0.3")
    learners = card.locator("[data-testid=experiment-run-role][data-role=learners]")
    expect(learners.get_by_test_id("experiment-run-role-count")).to_have_text("1")
    expect(learners.get_by_test_id("experiment-run-role-where")).to_have_text("local")
    replay = card.locator("[data-testid=experiment-run-role][data-role=replay]")
    expect(replay.get_by_test_id("experiment-run-role-other")).to_have_text("size 5000")
    expect(run_card(page, scripted).get_by_test_id("experiment-run-roles")).to_have_count(0)

    # the headline curve: RLlib's mean episode return, the one run that logs it
    expect(page.get_by_test_id("experiment-runs-metric")).to_have_value(HEADLINE)
    chart = page.get_by_test_id("experiment-runs-chart")
    expect(chart).to_have_attribute("data-lines", "1")
    expect(chart).to_have_attribute("data-points", "20")
    expect(chart.locator("canvas")).to_have_count(1)
    expect(chart.get_by_test_id("experiment-runs-chart-legend-item")).to_have_text(["ppo"])

    # logged while it runs: a later point and another run appear without a reload
    log_points(http, ppo, {HEADLINE: returns(5, 480, 9, first=21)}, first_step=21)
    assert http.patch(f"/runs/{ppo}", json={"summary": {"roles/env_runners/healthy": 4}}).status_code == 200
    seed2 = make_run(http, experiment_id, "ppo-2", {HEADLINE: returns(25, 430, 7)})
    expect(cards).to_have_count(3, timeout=POLL_WAIT)
    expect(chart).to_have_attribute("data-points", "50", timeout=POLL_WAIT)
    expect(chart).to_have_attribute("data-lines", "2")
    expect(runners.get_by_test_id("experiment-run-role-healthy")).to_have_text("4")

    # a read that brings nothing new keeps the canvas as it is (a reader's zoom stays)
    page.evaluate("() => { document.querySelector('[data-testid=experiment-runs-chart] canvas').dataset.kept = '1'; }")
    reads = int(section.get_attribute("data-reads") or "0")
    expect(section).to_have_attribute("data-reads", str(reads + 1), timeout=POLL_WAIT)
    expect(chart.locator("canvas[data-kept='1']")).to_have_count(1)

    page.get_by_test_id("experiment-runs-metric").select_option("episode/score")
    expect(chart).to_have_attribute("data-points", "3")
    expect(chart.get_by_test_id("experiment-runs-chart-legend-item")).to_have_text(["scripted"])
    page.get_by_test_id("experiment-runs-metric").select_option(HEADLINE)
    expect(chart).to_have_attribute("data-points", "50")

    section.scroll_into_view_if_needed()
    screenshot(page, "experiment-runs-page", full_page=True)
    OUTPUT.mkdir(parents=True, exist_ok=True)
    section.screenshot(path=str(OUTPUT / "experiment-runs.png"))
    if os.environ.get("PLATFORM_DOCS_SCREENSHOTS") == "1":
        DOCS_IMAGE.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(OUTPUT / "experiment-runs.png", DOCS_IMAGE)

    # it ends and its runs finish: the states show and the section stops reading them
    for run_id in (ppo, scripted, seed2):
        assert http.patch(f"/runs/{run_id}", json={"state": "finished"}).status_code == 200
    go.touch()
    assert wait_ended(http, experiment_id)["status"] == "succeeded"
    expect(page.get_by_test_id("experiment-status")).to_have_text("Succeeded", timeout=POLL_WAIT)
    expect(section).to_have_attribute("data-polling", "false", timeout=POLL_WAIT)
    expect(section.locator("[data-testid=experiment-run][data-state=finished]")).to_have_count(3)

    card.get_by_test_id("experiment-run-link").click()
    expect(page.get_by_test_id("run-page")).to_be_visible()
    expect(page.get_by_test_id("run-name")).to_have_text("ppo")
    expect(page.get_by_test_id("run-experiment")).to_have_attribute("href", f"/experiments/{experiment_id}")
    for run_id in (ppo, scripted, seed2, other):
        http.delete(f"/runs/{run_id}")

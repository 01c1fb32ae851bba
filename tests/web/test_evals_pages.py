"""The Evals pages (issue 32) against a managed platform (token sign-in, teams) with the evals
service, and a real sshd as the machine (platform_testing.evals: uv offline from this host's
cache, a Docker its user may not run): the real Inspect runs
`inspect_evals/agent_threat_bench_autonomy_hijack --limit 2` there against a model API package
registered through an `inspect_ai` entry point (the e2e test's, tests/test_e2e_evals.py).

An eval started through the form (the Evals link, New eval, a secret in a password field) runs
with its progress live on its page, then shows each metric's bar with its error bar and the
samples (sorted and filtered by score); a sample's transcript opens in Inspect's own log viewer,
which renders it from the log read by byte range through the team guard; two evals compared side
by side; a sandboxed task (cybench) refused beside the task field; another team sees none of it,
the viewer included; the secret is in no page."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from platform_testing.evals import TASK, eval_machine, write_model_package
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.sshd import SshServer
from platform_testing.waiting import wait_for
from playwright.sync_api import Page, expect

SECRET = "sk-simtest-" + secrets.token_hex(16)
RUN_WAIT = 240_000  # ms: the eval's environment made on the machine (the first time), then the task
VIEWER_WAIT = 30_000


@pytest.fixture(scope="module")
def evals_platform(web_dist: Path, admin_token: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra_env = {"PLATFORM_WEB_DIST": str(web_dist), "PLATFORM_MODE": "managed", "PLATFORM_AUTH": "token",
                 "PLATFORM_ADMIN_TOKEN": admin_token, "PLATFORM_MACHINES_ALLOW_NETWORKS": "127.0.0.0/8",
                 "PLATFORM_MACHINES_CONNECT_TIMEOUT": "5", "PLATFORM_EXPERIMENTS_POLL_INTERVAL": "0.2",
                 "PLATFORM_EXPERIMENTS_CANCEL_GRACE": "2", "PLATFORM_EVALS_POLL_INTERVAL": "0.3"}
    with running_platform(tmp_path_factory.mktemp("evals-platform"), extra_env=extra_env,
                          services=("broker", "machines", "evals", "gateway")) as stack:
        yield stack


@pytest.fixture(scope="module")
def http(evals_platform: PlatformStack, admin_token: str) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {admin_token}"}
    with httpx.Client(base_url=evals_platform.url + "/v0", headers=headers, timeout=300) as client:
        yield client


@pytest.fixture(scope="module")
def machine_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    with eval_machine(tmp_path_factory.mktemp("sshd"), tmp_path_factory.mktemp("warm")) as server:
        yield server


@pytest.fixture(scope="module")
def model_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_model_package(tmp_path_factory.mktemp("simtest-models"))


@pytest.fixture(scope="module")
def machine(http: httpx.Client, machine_server: SshServer) -> dict[str, Any]:
    machine_server.authorize(http.get("/machines/ssh-key").json()["authorized_keys_line"])
    added = http.post("/machines", json={"ssh": machine_server.ssh_command, "name": "eval-box"})
    assert added.status_code == 201, added.text
    return dict(added.json())


def ended(http: httpx.Client, eval_id: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        found = http.get(f"/evals/{eval_id}").json()
        return found if found["ended_at"] else None
    return dict(wait_for(check, timeout=RUN_WAIT / 1000, what=f"eval {eval_id} to end"))


@pytest.fixture(scope="module")
def two_evals(http: httpx.Client, machine: dict[str, Any], model_package: Path) -> list[dict[str, Any]]:
    """Two succeeded evals of the task made through the API: one and two epochs."""
    made = []
    for epochs in (1, 2):
        answer = http.post("/evals", json={"task": TASK, "model": "scripted/x", "machine": machine["id"], "limit": 2,
                                           "epochs": epochs, "packages": [str(model_package)]})
        assert answer.status_code == 201, answer.text
        made.append(answer.json()["id"])
    done = [ended(http, eval_id) for eval_id in made]
    assert [x["status"] for x in done] == ["succeeded", "succeeded"], [x["status_reason"] for x in done]
    return done


@pytest.fixture
def signed_in(open_page: Callable[..., Page], evals_platform: PlatformStack, admin_token: str) -> Callable[..., Page]:
    def open_signed_in(path: str, token: str = admin_token) -> Page:
        page = open_page(evals_platform.url)
        page.goto(path)
        page.get_by_test_id("sign-in-token").fill(token)
        page.get_by_test_id("sign-in-submit").click()
        expect(page.get_by_test_id("signed-in-as")).to_be_visible()
        return page
    return open_signed_in


def fill_form(page: Page, task: str, model: str, packages: str = "", model_args: str = "",
              secret: tuple[str, str] | None = None, limit: int = 2) -> None:
    page.get_by_test_id("evals-task").fill(task)
    page.get_by_test_id("evals-model").fill(model)
    page.get_by_test_id("evals-model_args").fill(model_args)
    page.get_by_test_id("evals-limit").fill(str(limit))
    page.get_by_test_id("evals-packages").fill(packages)
    if secret is not None:
        page.get_by_test_id("evals-secret-name").first.fill(secret[0])
        page.get_by_test_id("evals-secret-value").first.fill(secret[1])


def test_an_eval_from_the_form_runs_live_then_shows_metrics_samples_and_transcripts(
        signed_in: Callable[..., Page], http: httpx.Client, machine: dict[str, Any], model_package: Path,
        screenshot) -> None:
    page = signed_in("/machines")  # (no env host here: the Environments page's previews would not load)
    page.get_by_test_id("nav-evals").click()
    expect(page).to_have_url(re.compile(r"/evals$"))
    page.get_by_test_id("evals-new").click()
    expect(page.get_by_test_id("evals-machine")).to_have_value(machine["id"])
    fill_form(page, TASK, "scripted/x", str(model_package), "sleep=3", ("SIMTEST_SECRET", SECRET))
    expect(page.get_by_test_id("evals-secret-value").first).to_have_attribute("type", "password")
    screenshot(page, "evals-new")
    page.get_by_test_id("evals-submit").click()

    expect(page).to_have_url(re.compile(r"/evals/ev-[0-9a-f]{12}$"), timeout=60_000)
    eval_id = page.url.rsplit("/", 1)[1]
    assert SECRET not in page.content()
    expect(page.get_by_test_id("eval-progress-done")).to_have_text(re.compile(r"^[01] / 2 samples$"), timeout=RUN_WAIT)
    expect(page.get_by_test_id("eval-status")).to_have_text("Running")
    expect(page.get_by_test_id("eval-cancel")).to_be_visible()
    screenshot(page, "eval-running")
    expect(page.get_by_test_id("eval-status")).to_have_text("Succeeded", timeout=RUN_WAIT)
    expect(page.get_by_test_id("eval-progress-done")).to_have_text("2 / 2 samples")
    expect(page.get_by_test_id("eval-progress-errors")).to_have_text("0 errors")
    expect(page.get_by_test_id("eval-progress-tokens")).to_have_text("30 tokens")
    expect(page.get_by_test_id("eval-cancel")).to_have_count(0)

    bars = page.get_by_test_id("metric-bar")
    expect(bars).to_have_count(len([m for s in http.get(f"/evals/{eval_id}").json()["scores"] for m in s["metrics"]]))
    accuracy = page.locator('[data-testid=metric-bar][data-key="security/accuracy"]')
    expect(accuracy).to_have_attribute("data-value", "1")
    expect(accuracy).to_have_attribute("data-stderr", "0")
    expect(accuracy.get_by_test_id("metric-errorbar")).to_have_count(1)
    expect(page.locator('[data-testid=metric-bar][data-key="utility/accuracy"] [data-testid=metric-errorbar]')).to_have_count(1)

    rows = page.get_by_test_id("sample-row")
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("I will not do that. secret length 43")  # the secret reached the process
    expect(page.get_by_test_id("samples-shown")).to_have_text("2 of 2 shown")
    expect(page.get_by_test_id("samples-score-pick")).to_have_value("utility")  # the scorer's dict, split
    page.get_by_test_id("samples-score-pick").select_option("security")
    expect(rows.first.get_by_test_id("sample-score")).to_have_text("C")  # it refused the hijack
    scores = [rows.nth(i).get_by_test_id("sample-score").text_content() or "" for i in range(2)]
    page.get_by_test_id("samples-filter").select_option(scores[0])
    expect(page.get_by_test_id("samples-shown")).to_have_text(f"{scores.count(scores[0])} of 2 shown")
    page.get_by_test_id("samples-filter").select_option("")
    page.get_by_test_id("samples-sort").click()
    expect(page.get_by_test_id("samples-sort")).to_contain_text("▼")
    assert SECRET not in page.content()
    screenshot(page, "eval-results", full_page=True)

    first = rows.first
    sample_id, epoch = first.get_attribute("data-sample"), first.get_attribute("data-epoch")
    with page.context.expect_page() as opened:
        first.get_by_test_id("sample-transcript").click()
    viewer = opened.value
    expect(viewer).to_have_url(re.compile(rf"/v0/evals/{eval_id}/viewer\?log_file=logs/.+\.eval#/logs/.+/samples/sample/"
                                          rf"{re.escape(str(sample_id))}/{epoch}/"))
    expect(viewer.get_by_text("I will not do that. secret length 43").first).to_be_visible(timeout=VIEWER_WAIT)
    expect(viewer.get_by_text(f"Sample {sample_id} (Epoch {epoch})").first).to_be_visible()
    screenshot(viewer, "eval-transcript-viewer")

    page.goto("/evals")
    row = page.locator(f'[data-testid=eval-row][data-eval-id="{eval_id}"]')
    expect(row.get_by_test_id("eval-row-status")).to_have_text("Succeeded")
    expect(row.get_by_test_id("eval-row-progress")).to_have_text("2 / 2 samples")
    expect(row.get_by_test_id("eval-row-score")).to_contain_text("±")
    expect(row.get_by_test_id("eval-row-machine")).to_have_text("eval-box")
    assert SECRET not in page.content()
    screenshot(page, "evals-list")


def test_two_evals_side_by_side(signed_in: Callable[..., Page], two_evals: list[dict[str, Any]], screenshot) -> None:
    one, two = two_evals
    page = signed_in("/evals")
    for x in two_evals:
        page.locator(f'[data-testid=eval-row][data-eval-id="{x["id"]}"]').get_by_test_id("eval-row-pick").check()
    page.get_by_test_id("evals-compare").click()
    expect(page).to_have_url(re.compile(rf"/evals/compare\?ids={one['id']},{two['id']}$"))
    metric = page.locator('[data-testid=compare-metric-row][data-key="security/accuracy"]')
    expect(metric.locator("td")).to_have_count(2)
    expect(metric.locator("td").nth(0)).to_have_text("1 ± 0")
    expect(page.locator('[data-testid=metric-bar][data-key="security/accuracy"]')).to_have_count(2)
    expect(page.locator("[data-testid=metric-bar] [data-testid=metric-errorbar]")).to_have_count(
        2 * sum(len(s["metrics"]) for s in one["scores"]))
    samples = page.get_by_test_id("compare-sample-row")
    expect(samples).to_have_count(4)  # two samples, epochs 1 and 2 (the first eval has epoch 1 only)
    first = page.locator(f'[data-testid=compare-sample-row][data-sample="{one["samples"][0]["sample_id"]}"][data-epoch="1"]')
    expect(first.get_by_test_id("compare-sample-score").locator("a")).to_have_count(2)
    second_epoch = page.locator('[data-testid=compare-sample-row][data-epoch="2"]').first
    expect(second_epoch.get_by_test_id("compare-sample-score").nth(0)).to_have_text("–")
    screenshot(page, "evals-compare", full_page=True)


def test_a_sandboxed_task_is_refused_beside_the_task_field(
        signed_in: Callable[..., Page], machine: dict[str, Any], http: httpx.Client, console, screenshot) -> None:
    console.allow(r"status of 422")
    before = len(http.get("/evals").json()["evals"])
    page = signed_in("/evals/new")
    fill_form(page, "inspect_evals/cybench", "openai/gpt-4o-mini", secret=("OPENAI_API_KEY", SECRET))
    page.get_by_test_id("evals-submit").click()
    error = page.get_by_test_id("evals-task-error")
    expect(error).to_contain_text("Docker sandbox")
    expect(page.get_by_test_id("evals-task")).to_have_attribute("aria-invalid", "true")
    expect(page).to_have_url(re.compile(r"/evals/new$"))
    assert SECRET not in page.content()  # nor in the error: only in the password field, to send again
    expect(page.get_by_test_id("evals-secret-value").first).to_have_value(SECRET)
    assert len(http.get("/evals").json()["evals"]) == before
    screenshot(page, "evals-refused")


def test_another_team_sees_none_of_it_nor_its_transcripts(
        signed_in: Callable[..., Page], http: httpx.Client, two_evals: list[dict[str, Any]], evals_platform: PlatformStack,
        console) -> None:
    assert http.post("/teams", json={"name": "elsewhere"}).status_code in (201, 409)
    made = http.post("/tokens", json={"name": "elsewhere member", "team": "elsewhere", "role": "member"})
    assert made.status_code == 201, made.text
    token = made.json()["token"]
    console.allow(r"status of 404")
    console.allow(r"Failed to open remote log file")  # the viewer's own words for the refused log (it retries)
    member = signed_in("/evals", token)
    expect(member.get_by_test_id("evals-empty")).to_be_visible()
    one = two_evals[0]
    member.goto(f"/evals/{one['id']}")
    expect(member.get_by_test_id("eval-error")).to_contain_text(one["id"])
    log = one["logs"][0]["url"]
    with httpx.Client(base_url=evals_platform.url, headers={"Authorization": f"Bearer {token}"}) as other:
        assert other.head(log).status_code == 404 and other.get(log, headers={"Range": "bytes=-22"}).status_code == 404
    assert httpx.head(evals_platform.url + log, headers={"Authorization": f"Bearer {http.headers['Authorization'][7:]}"}
                      ).headers["accept-ranges"] == "bytes"
    with member.expect_response(lambda r: "/logs/" in r.url, timeout=VIEWER_WAIT) as asked:
        member.goto(one["samples"][0]["transcript_url"])  # the viewer asks for the log: refused as missing
    assert (asked.value.request.method, asked.value.status) == ("HEAD", 404)
    expect(member.get_by_text("I will not do that")).to_have_count(0)

"""The Experiments pages (issue 31) against a managed platform (token sign-in, teams) whose machines
service may dial loopback, and a real sshd with a fake two-GPU nvidia-smi (platform_testing.sshd)
as the machine: a local bare git repository cloned by path there. An experiment started from the
form (opened from the machine's card, the machine picked), its log growing on the page while it
runs, then succeeded with exit code 0 and the whole log exactly; the log followed again from the
last byte after the gateway is killed and started mid-run (nothing lost or repeated); auto-scroll
that stops when the reader scrolls up; Cancel (asked first) of a long run; refusals beside their
fields (a command that fails at once, a bad env line caught in the browser and one refused by the
gateway, too many GPUs, a repository that does not clone); the list, newest first; another team's
member seeing none of it; a folder of the platform's host (under PLATFORM_EXPERIMENTS_UPLOAD_ROOTS,
a tmp folder here) uploaded as the code through the form, sharing its GPU, and one outside the
roots refused beside the folder field; a request for both GPUs while another holds them: Queued
(position 1) with what it waits for, then running once the first ends; and a queued one
cancelled, the one behind it moving up."""

from __future__ import annotations

import re
import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.experiments import add_machine, committed_repository
from platform_testing.sshd import SshServer
from platform_testing.waiting import wait_for
from playwright.sync_api import Page, expect

START_WAIT = 45_000  # ms: cloning on the machine and starting the command over SSH on a busy machine
RUN_WAIT = 60_000  # ms: a command of a few seconds, on a busy machine
TRAIN = """#!/bin/bash
# prints N numbered lines, one every T seconds
n=${1:-10}; t=${2:-0.2}
for i in $(seq 1 "$n"); do echo "line $i"; sleep "$t"; done
"""


def lines(n: int, first: int = 1) -> str:
    return "".join(f"line {i}\n" for i in range(first, n + 1))


@pytest.fixture(scope="module")
def upload_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one folder of this host whose subfolders may be uploaded (PLATFORM_EXPERIMENTS_UPLOAD_ROOTS)."""
    return tmp_path_factory.mktemp("uploads")


@pytest.fixture(scope="module")
def experiments_platform(web_dist: Path, admin_token: str, upload_root: Path,
                         tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra_env = {"PLATFORM_EXPERIMENTS_UPLOAD_ROOTS": str(upload_root), "PLATFORM_WEB_DIST": str(web_dist), "PLATFORM_MODE": "managed", "PLATFORM_AUTH": "token",
                 "PLATFORM_ADMIN_TOKEN": admin_token, "PLATFORM_MACHINES_ALLOW_NETWORKS": "127.0.0.0/8",
                 "PLATFORM_MACHINES_CONNECT_TIMEOUT": "5", "PLATFORM_EXPERIMENTS_POLL_INTERVAL": "0.2",
                 "PLATFORM_EXPERIMENTS_CANCEL_GRACE": "2"}
    with running_platform(tmp_path_factory.mktemp("experiments-platform"), extra_env=extra_env,
                          services=("broker", "machines", "gateway")) as stack:
        yield stack


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare repository with train.sh on main, cloned by the machine from its path."""
    return committed_repository(tmp_path_factory.mktemp("work"), {"train.sh": TRAIN},
                                bare=tmp_path_factory.mktemp("repos") / "train.git")


@pytest.fixture
def http(experiments_platform: PlatformStack, admin_token: str) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {admin_token}"}
    with httpx.Client(base_url=experiments_platform.url + "/v0", headers=headers, timeout=120) as client:
        yield client


@pytest.fixture
def machine(http: httpx.Client, sshd: SshServer) -> Iterator[dict[str, Any]]:
    """The sshd added as the team's machine "h100-box"; after the test it is removed, its
    experiments still running stopped first (while the sshd is up)."""
    added = add_machine(http, sshd, "h100-box")
    yield added
    http.delete(f"/machines/{added['id']}", params={"stop_experiments": "true"})


@pytest.fixture
def signed_in(open_page: Callable[..., Page], experiments_platform: PlatformStack,
              admin_token: str) -> Callable[..., Page]:
    """`signed_in(path, token=admin)`: a page at `path`, signed in by pasting the token."""
    def open_signed_in(path: str, token: str = admin_token) -> Page:
        page = open_page(experiments_platform.url)
        page.goto(path)
        page.get_by_test_id("sign-in-token").fill(token)
        page.get_by_test_id("sign-in-submit").click()
        expect(page.get_by_test_id("signed-in-as")).to_be_visible()
        return page
    return open_signed_in


def start(http: httpx.Client, machine: dict[str, Any], repo: Path, command: str, gpus: int = 0) -> dict[str, Any]:
    made = http.post("/experiments", json={"machine": machine["id"], "repository": str(repo), "command": command,
                                           "gpus": gpus})
    assert made.status_code == 201, made.text
    return dict(made.json())


def fill_form(page: Page, repo: Path | str, command: str, gpus: int = 0, env: str = "") -> None:
    page.get_by_test_id("experiments-repository").fill(str(repo))
    page.get_by_test_id("experiments-command").fill(command)
    page.get_by_test_id("experiments-gpus").fill(str(gpus))
    page.get_by_test_id("experiments-env").fill(env)
    page.get_by_test_id("experiments-submit").click()


def log_text(page: Page) -> str:
    return page.get_by_test_id("experiment-log").text_content() or ""


def test_start_from_the_machine_follow_the_log_live_and_see_it_succeed(
        signed_in: Callable[..., Page], http: httpx.Client, machine: dict[str, Any], repo: Path, screenshot) -> None:
    page = signed_in("/machines")
    page.get_by_test_id("machine-new-experiment").click()  # the card's link picks the machine
    expect(page).to_have_url(re.compile(rf"/experiments/new\?machine={machine['id']}$"))
    picker = page.get_by_test_id("experiments-machine")
    expect(picker).to_have_value(machine["id"])
    expect(picker.locator("option")).to_have_text(["h100-box (2 GPUs)"])
    fill_form(page, repo, "bash train.sh 25 0.4", gpus=1, env="SEED=7\n# a comment\nWANDB_MODE=offline\n")
    expect(page.get_by_test_id("experiments-progress")).to_contain_text("Cloning the repository on the machine")

    expect(page).to_have_url(re.compile(r"/experiments/x-[0-9a-f]{12}$"), timeout=START_WAIT)
    experiment_id = page.url.rsplit("/", 1)[1]
    made = http.get(f"/experiments/{experiment_id}").json()
    assert sorted(made["env_names"]) == ["SEED", "WANDB_MODE"] and made["gpus"] == 1
    status = page.get_by_test_id("experiment-status")
    log = page.get_by_test_id("experiment-log")

    # lines appear while it runs, the status still Running and the end not there yet
    expect(log).to_contain_text("line 3", timeout=RUN_WAIT)
    expect(status).to_have_text("Running")
    early = log_text(page)
    assert "line 25" not in early and early.startswith("line 1\n"), early
    expect(page.get_by_test_id("experiment-log-state")).to_have_text("Following the log live")
    expect(status).to_have_class(re.compile(r"tone-running"))
    expect(page.get_by_test_id("experiment-exit-code")).to_have_text("–")
    expect(page.get_by_test_id("experiment-cancel")).to_be_visible()
    expect(page.get_by_test_id("experiment-machine")).to_contain_text("h100-box")
    expect(page.get_by_test_id("experiment-gpus")).to_have_text(f"GPU {made['gpu_indices'][0]}")
    expect(page.get_by_test_id("experiment-gpu-uuids")).to_contain_text(made["gpu_uuids"][0])
    expect(page.get_by_test_id("experiment-env-names")).to_have_text("SEED WANDB_MODE")
    assert made["token_id"].startswith("tok-")
    expect(page.get_by_test_id("experiment-token-id")).to_contain_text(made["token_id"])
    expect(page.get_by_test_id("experiment-command")).to_have_text("bash train.sh 25 0.4")
    expect(log).to_contain_text("line 8", timeout=RUN_WAIT)
    screenshot(page, "experiment-live-log", full_page=True)
    grown = log_text(page)
    assert len(grown) > len(early) and grown.startswith(early)

    expect(status).to_have_text("Succeeded", timeout=RUN_WAIT)
    expect(status).to_have_class(re.compile(r"tone-good"))
    expect(page.get_by_test_id("experiment-exit-code")).to_have_text("0")
    expect(page.get_by_test_id("experiment-log-state")).to_have_text("The whole log")
    assert log_text(page) == lines(25)  # each line once, in order
    expect(page.get_by_test_id("experiment-cancel")).to_have_count(0)
    expect(page.get_by_test_id("experiment-ended")).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$"))
    expect(page.get_by_test_id("experiment-duration")).to_have_text(re.compile(r"^\d+ s$"))

    page.reload()  # an ended experiment's page reads the whole log at once
    expect(page.get_by_test_id("experiment-log-state")).to_have_text("The whole log", timeout=RUN_WAIT)
    assert log_text(page) == lines(25)

    page.get_by_test_id("nav-experiments").click()
    row = page.locator(f"[data-testid=experiment-row][data-experiment-id='{experiment_id}']")
    expect(row.get_by_test_id("experiment-row-status")).to_have_text("Succeeded")
    expect(row.get_by_test_id("experiment-row-machine")).to_have_text("h100-box")
    expect(row.get_by_test_id("experiment-row-command")).to_have_text("bash train.sh 25 0.4")
    expect(row.get_by_test_id("experiment-row-gpus")).to_have_text(f"GPU {made['gpu_indices'][0]}")
    expect(row.get_by_test_id("experiment-row-exit-code")).to_have_text("0")
    expect(row.get_by_test_id("experiment-row-started")).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$"))
    row.get_by_test_id("experiment-row-command").click()
    expect(page).to_have_url(re.compile(rf"/experiments/{experiment_id}$"))


def test_the_log_is_followed_again_from_its_last_byte_after_the_gateway_drops(
        signed_in: Callable[..., Page], experiments_platform: PlatformStack, http: httpx.Client,
        machine: dict[str, Any], repo: Path, console) -> None:
    x = start(http, machine, repo, "bash train.sh 40 0.25")
    page = signed_in(f"/experiments/{x['id']}")
    state = page.get_by_test_id("experiment-log-state")
    expect(page.get_by_test_id("experiment-log")).to_contain_text("line 3", timeout=RUN_WAIT)
    expect(state).to_have_attribute("data-phase", "following")

    console.allow(r"WebSocket connection to .* failed|ERR_CONNECTION_REFUSED|Failed to fetch")
    experiments_platform.kill("gateway", signal.SIGKILL)  # a dropped connection, as abrupt as it gets
    try:
        expect(state).to_have_attribute("data-phase", "reconnecting")
        expect(state).to_contain_text("The connection dropped: opening it again at byte ")
    finally:
        experiments_platform.start_service("gateway")
    expect(page.get_by_test_id("experiment-status")).to_have_text("Succeeded", timeout=RUN_WAIT)
    expect(state).to_have_text("The whole log", timeout=RUN_WAIT)
    assert log_text(page) == lines(40)  # from the byte it had: nothing lost, nothing twice


def test_the_log_scrolls_with_new_lines_until_the_reader_scrolls_up_then_cancel(
        signed_in: Callable[..., Page], http: httpx.Client, machine: dict[str, Any], repo: Path) -> None:
    x = start(http, machine, repo, "seq -f 'warm-up %g' 1 200; bash train.sh 1000 0.2")
    page = signed_in(f"/experiments/{x['id']}")
    log = page.get_by_test_id("experiment-log")
    expect(log).to_contain_text("line 3", timeout=RUN_WAIT)
    gap = "el => el.scrollHeight - el.scrollTop - el.clientHeight"
    wait_for(lambda: log.evaluate(gap) < 30, timeout=10, what="the log at its bottom")  # following
    assert log.evaluate("el => el.scrollHeight > el.clientHeight")  # 200 lines: it does scroll
    expect(page.get_by_test_id("experiment-log-follow")).to_have_count(0)

    log.hover()
    page.mouse.wheel(0, -2000)  # the reader scrolls up to read
    expect(page.get_by_test_id("experiment-log-follow")).to_be_visible()
    held = log.evaluate("el => el.scrollTop")
    seen = log_text(page).count("\n")
    wait_for(lambda: log_text(page).count("\n") > seen + 5, timeout=30, what="more lines")
    assert log.evaluate("el => el.scrollTop") == held  # new lines came; the view stayed where the reader is
    assert log.evaluate(gap) > 100
    page.get_by_test_id("experiment-log-follow").click()
    wait_for(lambda: log.evaluate(gap) < 30, timeout=10, what="the log back at its bottom")
    expect(page.get_by_test_id("experiment-log-follow")).to_have_count(0)

    page.get_by_test_id("experiment-cancel").click()
    dialog = page.get_by_test_id("experiment-cancel-dialog")
    expect(dialog).to_contain_text("TERM to it and every process it started")
    dialog.get_by_test_id("experiment-cancel-dialog-cancel").click()  # "Keep it running"
    expect(dialog).to_be_hidden()
    expect(page.get_by_test_id("experiment-status")).to_have_text("Running")
    assert http.get(f"/experiments/{x['id']}").json()["status"] == "running"

    page.get_by_test_id("experiment-cancel").click()
    dialog.get_by_test_id("experiment-cancel-dialog-confirm").click()
    expect(page.get_by_test_id("experiment-status")).to_have_text("Cancelled", timeout=RUN_WAIT)
    expect(page.get_by_test_id("experiment-cancel")).to_have_count(0)
    expect(page.get_by_test_id("experiment-log-state")).to_have_text("The whole log", timeout=RUN_WAIT)
    assert http.get(f"/experiments/{x['id']}").json()["status"] == "cancelled"
    text = log_text(page)
    assert text.startswith(lines(200).replace("line", "warm-up")) and "line 1000" not in text


def test_refusals_show_beside_their_fields(
        signed_in: Callable[..., Page], http: httpx.Client, machine: dict[str, Any], repo: Path, tmp_path: Path,
        console, screenshot) -> None:
    console.allow(r"status of 422")
    page = signed_in("/experiments/new")
    expect(page.get_by_test_id("experiments-machine")).to_have_value(machine["id"])

    fill_form(page, repo, "echo no such thing >&2; exit 7")  # fails within the fail-fast second
    command_error = page.get_by_test_id("experiments-command-error")
    expect(command_error).to_contain_text("exit 7", timeout=START_WAIT)
    expect(command_error).to_contain_text("no such thing")
    expect(page.get_by_test_id("experiments-command")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_test_id("experiments-command")).to_have_attribute("aria-describedby", "experiments-command-error")
    expect(page).to_have_url(re.compile(r"/experiments/new$"))
    screenshot(page, "experiments-new-422")
    failed_id = re.search(r"experiment (x-[0-9a-f]{12})", command_error.text_content() or "")
    assert failed_id, command_error.text_content()

    before = len(http.get("/experiments").json()["experiments"])
    fill_form(page, repo, "true", env="SEED=7\nWANDB_MODE offline")  # caught in the browser: never sent
    env_error = page.get_by_test_id("experiments-env-error")
    expect(env_error).to_have_text('Line 2 ("WANDB_MODE offline") has no "=": write KEY=VALUE, e.g. WANDB_MODE=offline.')
    expect(page.get_by_test_id("experiments-env")).to_have_attribute("aria-invalid", "true")
    assert len(http.get("/experiments").json()["experiments"]) == before

    fill_form(page, repo, "true", env="1X=y")  # the gateway judges the names
    expect(env_error).to_contain_text("'1X' is not a variable name", timeout=START_WAIT)
    fill_form(page, repo, "true", env="PLATFORM_TOKEN=mine")
    expect(env_error).to_contain_text("PLATFORM_TOKEN is set by the platform", timeout=START_WAIT)

    fill_form(page, repo, "true", gpus=3)
    expect(page.get_by_test_id("experiments-gpus-error")).to_contain_text("has 2 GPUs", timeout=START_WAIT)

    fill_form(page, tmp_path / "nothing.git", "true")
    expect(page.get_by_test_id("experiments-repository-error")).to_contain_text("does not clone", timeout=START_WAIT)
    expect(page.get_by_test_id("experiments-gpus-error")).to_have_count(0)  # one refusal at a time
    kept = [x for x in http.get("/experiments").json()["experiments"] if x["machine_id"] == machine["id"]]
    assert [(x["id"], x["status"], x["exit_code"]) for x in kept] == [(failed_id[1], "failed", 7)]  # only the one that started

    fill_form(page, repo, "echo no such thing >&2; exit 7")  # the one kept, failed: its page from the error
    page.get_by_test_id("experiments-failed-link").click()
    expect(page.get_by_test_id("experiment-status")).to_have_text("Failed")
    expect(page.get_by_test_id("experiment-exit-code")).to_have_text("7")
    expect(page.get_by_test_id("experiment-reason")).to_contain_text("exited with 7")
    expect(page.get_by_test_id("experiment-log-state")).to_have_text("The whole log", timeout=RUN_WAIT)
    assert log_text(page) == "no such thing\n"


def test_the_list_is_newest_first_and_another_team_sees_none_of_it(
        signed_in: Callable[..., Page], http: httpx.Client, machine: dict[str, Any], repo: Path, console,
        screenshot) -> None:
    first = start(http, machine, repo, "bash train.sh 4 0.5; exit 3")
    second = start(http, machine, repo, "bash train.sh 1000 0.2", gpus=2)
    page = signed_in("/experiments")
    rows = page.get_by_test_id("experiment-row")
    expect(rows.nth(0)).to_have_attribute("data-experiment-id", second["id"])
    expect(rows.nth(1)).to_have_attribute("data-experiment-id", first["id"])
    expect(rows.nth(0).get_by_test_id("experiment-row-status")).to_have_text("Running")
    expect(rows.nth(0).get_by_test_id("experiment-row-gpus")).to_have_text("GPUs 0, 1")
    expect(rows.nth(0).get_by_test_id("experiment-row-ended")).to_have_text("–")
    expect(rows.nth(1).get_by_test_id("experiment-row-status")).to_have_text("Failed", timeout=RUN_WAIT)  # read again while one runs
    expect(rows.nth(1).get_by_test_id("experiment-row-status")).to_have_class(re.compile(r"tone-bad"))
    expect(rows.nth(1).get_by_test_id("experiment-row-exit-code")).to_have_text("3")
    expect(rows.nth(1).get_by_test_id("experiment-row-gpus")).to_have_text("none")
    screenshot(page, "experiments-list")

    assert http.post("/teams", json={"name": "elsewhere"}).status_code in (201, 409)
    made = http.post("/tokens", json={"name": "elsewhere member", "team": "elsewhere", "role": "member"})
    assert made.status_code == 201, made.text
    console.allow(r"status of 404")
    member = signed_in("/experiments", made.json()["token"])
    expect(member.get_by_test_id("experiments-empty")).to_be_visible()
    member.get_by_test_id("experiments-new").click()
    expect(member.get_by_test_id("experiments-no-machine")).to_contain_text("No ready machine")
    member.goto(f"/experiments/{second['id']}")
    expect(member.get_by_test_id("experiment-not-found")).to_contain_text(second["id"])
    assert http.get(f"/experiments/{second['id']}").json()["status"] == "running"  # untouched


def fill_folder_form(page: Page, folder: Path | str, command: str, gpus: int = 0, share: bool = False) -> None:
    page.get_by_test_id("experiments-source-folder").check()
    expect(page.get_by_test_id("experiments-repository")).to_have_count(0)  # the folder instead
    expect(page.get_by_test_id("experiments-ref")).to_have_count(0)
    page.get_by_test_id("experiments-folder").fill(str(folder))
    page.get_by_test_id("experiments-command").fill(command)
    page.get_by_test_id("experiments-gpus").fill(str(gpus))
    page.get_by_test_id("experiments-share_gpus").set_checked(share)


def test_a_folder_of_the_platforms_host_uploaded_through_the_form(
        signed_in: Callable[..., Page], http: httpx.Client, machine: dict[str, Any], upload_root: Path,
        screenshot) -> None:
    code = upload_root / "train"
    (code / "data").mkdir(parents=True)
    (code / "train.sh").write_text(TRAIN)
    (code / "data" / "numbers.txt").write_text("1 2 3\n")
    page = signed_in("/experiments/new")
    expect(page.get_by_test_id("experiments-machine")).to_have_value(machine["id"])
    expect(page.get_by_test_id("experiments-source-repository")).to_be_checked()  # a repository unless chosen
    fill_folder_form(page, code, "ls -R; bash train.sh 3 0.1", gpus=1, share=True)
    expect(page.locator("#experiments-folder-hint")).to_contain_text("PLATFORM_EXPERIMENTS_UPLOAD_ROOTS")
    screenshot(page, "experiments-new", full_page=True)
    page.get_by_test_id("experiments-submit").click()

    expect(page).to_have_url(re.compile(r"/experiments/x-[0-9a-f]{12}$"), timeout=START_WAIT)
    experiment_id = page.url.rsplit("/", 1)[1]
    made = http.get(f"/experiments/{experiment_id}").json()
    assert made["folder"] == str(code) and made["repository"] == "" and made["share_gpus"] is True
    expect(page.get_by_test_id("experiment-folder")).to_contain_text(str(code))
    expect(page.get_by_test_id("experiment-repository")).to_have_count(0)
    expect(page.get_by_test_id("experiment-gpus")).to_have_text(f"GPU {made['gpu_indices'][0]} (shared)")
    expect(page.get_by_test_id("experiment-status")).to_have_text("Succeeded", timeout=RUN_WAIT)
    expect(page.get_by_test_id("experiment-log-state")).to_have_text("The whole log", timeout=RUN_WAIT)
    log = log_text(page)
    assert log.startswith(f"[platform] uploading {code} ("), log  # the upload's lines lead the log
    assert log.endswith(".:\ndata\ntrain.sh\n\n./data:\nnumbers.txt\n" + lines(3)), log  # its files, in the checkout

    page.get_by_test_id("nav-experiments").click()
    row = page.locator(f"[data-testid=experiment-row][data-experiment-id='{experiment_id}']")
    expect(row.get_by_test_id("experiment-row-source")).to_have_text(f"folder {code}")
    expect(row.get_by_test_id("experiment-row-source")).to_have_attribute("data-kind", "folder")


def test_a_folder_outside_the_upload_roots_is_refused_beside_the_folder_field(
        signed_in: Callable[..., Page], http: httpx.Client, machine: dict[str, Any], tmp_path: Path, console) -> None:
    console.allow(r"status of 422")
    (tmp_path / "train.sh").write_text(TRAIN)
    before = len(http.get("/experiments").json()["experiments"])
    page = signed_in("/experiments/new")
    expect(page.get_by_test_id("experiments-machine")).to_have_value(machine["id"])
    fill_folder_form(page, tmp_path, "bash train.sh 3 0.1")
    page.get_by_test_id("experiments-submit").click()
    error = page.get_by_test_id("experiments-folder-error")
    expect(error).to_contain_text("is outside the folders that may be uploaded", timeout=START_WAIT)
    expect(error).to_contain_text("PLATFORM_EXPERIMENTS_UPLOAD_ROOTS")
    expect(page.get_by_test_id("experiments-folder")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_test_id("experiments-folder")).to_have_attribute("aria-describedby", "experiments-folder-error")
    expect(page).to_have_url(re.compile(r"/experiments/new$"))
    assert len(http.get("/experiments").json()["experiments"]) == before  # nothing was made

    page.get_by_test_id("experiments-folder").fill("")  # empty: said in the browser, never sent
    page.get_by_test_id("experiments-submit").click()
    expect(error).to_have_text("Give the absolute path of a folder on the platform's host, e.g. /srv/code/train.")
    page.get_by_test_id("experiments-source-repository").check()  # the repository again: the folder's error goes
    expect(error).to_have_count(0)
    expect(page.get_by_test_id("experiments-repository")).to_be_visible()


def test_a_request_for_busy_gpus_is_queued_then_runs_when_they_are_free(
        signed_in: Callable[..., Page], http: httpx.Client, machine: dict[str, Any], repo: Path, tmp_path: Path,
        screenshot) -> None:
    go = tmp_path / "go"  # the machine is this host: the first ends when the test makes this file
    first = start(http, machine, repo, f"until [ -e {go} ]; do sleep 0.2; done; echo first done", gpus=2)
    assert first["status"] == "running"
    page = signed_in("/experiments/new")
    expect(page.get_by_test_id("experiments-machine")).to_have_value(machine["id"])
    fill_form(page, repo, "bash train.sh 20 0.3", gpus=2)  # both GPUs, which the first holds

    expect(page).to_have_url(re.compile(r"/experiments/x-[0-9a-f]{12}$"), timeout=START_WAIT)  # 201 queued
    second_id = page.url.rsplit("/", 1)[1]
    status = page.get_by_test_id("experiment-status")
    expect(status).to_have_text("Queued (position 1)")
    reason = page.get_by_test_id("experiment-reason")
    expect(reason).to_contain_text("waiting for 2 GPUs of machine 'h100-box'")
    expect(reason).to_contain_text(first["id"])
    expect(page.get_by_test_id("experiment-gpus")).to_have_text("2 GPUs asked for")
    expect(page.get_by_test_id("experiment-started")).to_have_text("not yet")
    expect(page.get_by_test_id("experiment-log-empty")).to_have_text("Queued: its log begins when it starts.")
    expect(page.get_by_test_id("experiment-run-dir")).to_have_text("not yet (made when it starts)")
    expect(page.get_by_test_id("experiment-cancel")).to_be_visible()
    screenshot(page, "experiment-queued", full_page=True)
    assert http.get(f"/experiments/{second_id}").json()["queue_position"] == 1

    page.get_by_test_id("nav-experiments").click()
    row = page.locator(f"[data-testid=experiment-row][data-experiment-id='{second_id}']")
    expect(row.get_by_test_id("experiment-row-status")).to_have_text("Queued (position 1)")
    expect(row.get_by_test_id("experiment-row-source")).to_have_text(str(repo))
    expect(row.get_by_test_id("experiment-row-source")).to_have_attribute("data-kind", "repository")
    row.get_by_test_id("experiment-row-command").click()
    expect(status).to_have_text("Queued (position 1)")

    go.touch()  # the first ends; the second starts on its GPUs, and its page follows it there
    expect(status).to_have_text("Running", timeout=RUN_WAIT)
    expect(page.get_by_test_id("experiment-gpus")).to_have_text("GPUs 0, 1")
    expect(page.get_by_test_id("experiment-log")).to_contain_text("line 3", timeout=RUN_WAIT)
    assert http.get(f"/experiments/{first['id']}").json()["status"] == "succeeded"
    expect(status).to_have_text("Succeeded", timeout=RUN_WAIT)
    expect(page.get_by_test_id("experiment-log-state")).to_have_text("The whole log", timeout=RUN_WAIT)
    assert log_text(page) == lines(20)


def test_a_queued_experiment_is_cancelled_and_the_one_behind_it_moves_up(
        signed_in: Callable[..., Page], http: httpx.Client, machine: dict[str, Any], repo: Path) -> None:
    running = start(http, machine, repo, "bash train.sh 1000 0.2", gpus=2)
    second = start(http, machine, repo, "bash train.sh 5 0.2", gpus=2)
    third = start(http, machine, repo, "bash train.sh 5 0.2", gpus=1)
    assert (running["status"], second["status"], third["status"]) == ("running", "queued", "queued")
    assert (second["queue_position"], third["queue_position"]) == (1, 2)
    page = signed_in(f"/experiments/{second['id']}")
    status = page.get_by_test_id("experiment-status")
    expect(status).to_have_text("Queued (position 1)")

    page.get_by_test_id("experiment-cancel").click()
    dialog = page.get_by_test_id("experiment-cancel-dialog")
    expect(dialog).to_contain_text("It has not started: it leaves the queue of h100-box")
    expect(dialog.get_by_test_id("experiment-cancel-dialog-cancel")).to_have_text("Keep it queued")
    dialog.get_by_test_id("experiment-cancel-dialog-confirm").click()
    expect(status).to_have_text("Cancelled", timeout=RUN_WAIT)
    expect(page.get_by_test_id("experiment-cancel")).to_have_count(0)
    expect(page.get_by_test_id("experiment-started")).to_have_text("not yet")  # nothing ran
    expect(page.get_by_test_id("experiment-log-empty")).to_have_text("It never started: nothing was written.", timeout=RUN_WAIT)
    assert http.get(f"/experiments/{second['id']}").json()["status"] == "cancelled"

    page.get_by_test_id("nav-experiments").click()
    rows = page.get_by_test_id("experiment-row")
    expect(rows.nth(0)).to_have_attribute("data-experiment-id", third["id"])
    expect(rows.nth(0).get_by_test_id("experiment-row-status")).to_have_text("Queued (position 1)")  # moved up
    expect(rows.nth(1).get_by_test_id("experiment-row-status")).to_have_text("Cancelled")
    expect(rows.nth(2).get_by_test_id("experiment-row-status")).to_have_text("Running")
    assert http.get(f"/experiments/{running['id']}").json()["status"] == "running"  # untouched

"""GPU-hours of experiments on the Usage page, in Chromium, against a managed platform whose
machines service may dial loopback (PLATFORM_MACHINES_ALLOW_NETWORKS=127.0.0.0/8) and a real sshd
with a fake two-GPU nvidia-smi (platform_testing.sshd): after a two-GPU experiment ran there, the
page shows its machine's row (GPU-hours, one experiment) in the GPU table and the total beside
the instance-hours, as GET /v0/usage says."""

from __future__ import annotations

import datetime as dt
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.experiments import add_machine
from platform_testing.sshd import SshServer
from platform_testing.waiting import wait_for
from playwright.sync_api import Page, expect


@pytest.fixture(scope="module")
def gpu_platform(web_dist: Path, admin_token: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra_env = {"PLATFORM_WEB_DIST": str(web_dist), "PLATFORM_MODE": "managed", "PLATFORM_AUTH": "token",
                 "PLATFORM_ADMIN_TOKEN": admin_token, "PLATFORM_MACHINES_ALLOW_NETWORKS": "127.0.0.0/8",
                 "PLATFORM_MACHINES_CONNECT_TIMEOUT": "5", "PLATFORM_EXPERIMENTS_POLL_INTERVAL": "0.2"}
    with running_platform(tmp_path_factory.mktemp("usage-gpu-platform"), extra_env=extra_env,
                          services=("broker", "machines", "gateway")) as stack:
        yield stack


def test_the_usage_page_shows_gpu_hours_of_experiments(open_page: Callable[..., Page], gpu_platform: PlatformStack,
                                                       admin_token: str, sshd: SshServer, tmp_path: Path,
                                                       screenshot) -> None:
    http = httpx.Client(base_url=gpu_platform.url + "/v0", timeout=120,
                        headers={"Authorization": f"Bearer {admin_token}"})
    machine_id = add_machine(http, sshd, "h100-box")["id"]
    repo = tmp_path / "empty.git"
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    made = http.post("/experiments", json={"machine": machine_id, "repository": str(repo), "command": "sleep 1",
                                           "gpus": 2})
    assert made.status_code == 201, made.text
    wait_for(lambda: http.get(f"/experiments/{made.json()['id']}").json()["status"] == "succeeded", timeout=60,
             what="the experiment's end")
    today = dt.datetime.now(dt.timezone.utc).date().isoformat()
    report = http.get("/usage").json()
    assert len(report["gpu_data"]) == 1 and report["gpu_data"][0]["gpu_hours"] > 0

    page = open_page(gpu_platform.url)
    page.goto("/usage")
    page.get_by_test_id("sign-in-token").fill(admin_token)
    page.get_by_test_id("sign-in-submit").click()
    row = page.get_by_test_id(f"usage-gpu-row-{today}-default-{machine_id}")
    expect(row).to_be_visible()
    cells = row.locator("td")
    expect(cells.nth(2)).to_have_text(f"h100-box {machine_id}")
    expect(cells.nth(3)).not_to_have_text("0")
    expect(cells.nth(4)).to_have_text("1")  # one experiment that day
    expect(page.get_by_test_id("usage-summary")).to_contain_text("GPU-hours of experiments")
    expect(page.get_by_test_id("usage-total-gpu-hours")).to_have_text(cells.nth(3).inner_text())
    expect(page.get_by_test_id("usage-empty")).to_be_visible()  # no session ran: the instance table is empty
    expect(page.get_by_test_id("usage-gpu-error")).to_have_count(0)
    screenshot(page, "usage-gpu-hours", full_page=True)
    http.delete(f"/machines/{machine_id}")

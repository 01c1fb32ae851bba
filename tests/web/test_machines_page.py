"""The Machines page (issue 31) against a managed platform (token sign-in, teams) whose machines
service may dial loopback (PLATFORM_MACHINES_ALLOW_NETWORKS=127.0.0.0/8, which web_platform does
not set) and a real sshd with a fake two-GPU nvidia-smi (platform_testing.sshd): the platform's
key copied from the page into the sshd's authorized_keys, a machine added by pasting its SSH
command and shown ready with its GPUs, the progress while it connects, a duplicate and unusable commands answered beside the
field, a changed host key's fingerprints and its acceptance, Remove, another team's view, the machines service down said plainly,
a machine behind NAT refused naming the setting (this platform's tunnel endpoint is off; the
endpoint on: test_machines_behind_nat.py), and the header on one line signed in as the operator
(at 1280 px every link in sight, none scrolled to, with room for one more; at 1024 px the nav may
scroll)."""

from __future__ import annotations

import re
import signal
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.ports import free_port
from platform_testing.sshd import SshServer
from platform_testing.waiting import wait_for
from playwright.sync_api import Locator, Page, expect

ALLOW = "PLATFORM_MACHINES_ALLOW_NETWORKS"
SSH_WAIT = 45_000  # ms: connecting and checking over SSH on a busy machine
H100 = "NVIDIA H100 80GB HBM3"


@pytest.fixture(scope="module")
def machines_platform(web_dist: Path, admin_token: str,
                      tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra_env = {"PLATFORM_WEB_DIST": str(web_dist), "PLATFORM_MODE": "managed", "PLATFORM_AUTH": "token",
                 "PLATFORM_ADMIN_TOKEN": admin_token, ALLOW: "127.0.0.0/8", "PLATFORM_MACHINES_CONNECT_TIMEOUT": "5"}
    with running_platform(tmp_path_factory.mktemp("machines-platform"), extra_env=extra_env,
                          services=("broker", "machines", "gateway")) as stack:
        yield stack


@pytest.fixture
def http(machines_platform: PlatformStack, admin_token: str) -> Iterator[httpx.Client]:
    """The admin's API client; the team's machines are removed after each test."""
    headers = {"Authorization": f"Bearer {admin_token}"}
    with httpx.Client(base_url=machines_platform.url + "/v0", headers=headers, timeout=120) as client:
        yield client
        for machine in client.get("/machines").json()["machines"]:
            client.delete(f"/machines/{machine['id']}")


@pytest.fixture
def machines_page(open_page: Callable[..., Page], machines_platform: PlatformStack,
                  http: httpx.Client) -> Callable[[str], Page]:
    """`machines_page(token)`: /machines signed in with `token`, the clipboard allowed."""
    def open_signed_in(token: str) -> Page:
        page = open_page(machines_platform.url)
        page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=machines_platform.url)
        page.goto("/machines")
        page.get_by_test_id("sign-in-token").fill(token)
        page.get_by_test_id("sign-in-submit").click()
        expect(page.get_by_test_id("machines-page")).to_be_visible()
        return page
    return open_signed_in


@pytest.fixture
def page(machines_page: Callable[[str], Page], admin_token: str) -> Page:
    return machines_page(admin_token)


def add(page: Page, ssh: str, name: str = "") -> None:
    page.get_by_test_id("machines-add-ssh").fill(ssh)
    page.get_by_test_id("machines-add-name").fill(name)
    page.get_by_test_id("machines-add-submit").click()


def card(page: Page, name: str) -> Locator:
    return page.get_by_test_id("machine-card").filter(has=page.get_by_test_id("machine-name").get_by_text(name, exact=True))


def test_copy_the_key_then_add_a_machine_by_pasting_its_ssh_command(
        page: Page, http: httpx.Client, sshd: SshServer, console, screenshot) -> None:
    expect(page.get_by_test_id("machines-empty")).to_contain_text("paste the SSH command")
    key = http.get("/machines/ssh-key").json()
    expect(page.get_by_test_id("machines-key-fingerprint")).to_have_text(key["fingerprint"])
    expect(page.get_by_test_id("machines-key-line")).to_have_value(key["authorized_keys_line"])
    expect(page.get_by_test_id("machines-key-append")).to_have_value(
        f"mkdir -p ~/.ssh && chmod 700 ~/.ssh && echo '{key['authorized_keys_line']}' >> ~/.ssh/authorized_keys"
        " && chmod 600 ~/.ssh/authorized_keys")
    screenshot(page, "machines-empty")

    page.get_by_test_id("machines-key-copy").click()
    expect(page.get_by_test_id("machines-key-copy-done")).to_have_text("Copied.")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == key["authorized_keys_line"]
    sshd.authorize(copied)  # what a person does on the machine with what they copied

    add(page, f"$ {sshd.ssh_command} -i ~/.ssh/id_ed25519", "h100-box")
    machine = card(page, "h100-box")
    expect(machine.get_by_test_id("machine-status")).to_have_text("Ready", timeout=SSH_WAIT)
    expect(page.get_by_test_id("machines-empty")).to_have_count(0)
    expect(page.get_by_test_id("machines-add-ssh")).to_have_value("")  # ready for the next one
    expect(machine.get_by_test_id("machine-address")).to_have_text(f"{sshd.user}@127.0.0.1:{sshd.port}")
    gpus = machine.get_by_test_id("machine-gpu")
    expect(gpus).to_have_count(2)
    expect(gpus.nth(0)).to_contain_text(H100)
    expect(gpus.nth(0)).to_contain_text("79.6 GiB")
    expect(gpus.nth(0)).to_contain_text("1 process (1 GiB)")
    expect(gpus.nth(0)).to_contain_text("pid 4242")
    expect(gpus.nth(1)).to_contain_text("memory unknown")
    expect(gpus.nth(1)).to_contain_text("free")
    expect(machine.get_by_test_id("machine-python")).to_contain_text("Python 3")
    expect(machine.get_by_test_id("machine-git")).to_contain_text("git version")
    expect(machine.get_by_test_id("machine-cpus")).to_have_text(str(http.get("/machines").json()["machines"][0]["facts"]["cpus"]))
    expect(machine.get_by_test_id("machine-memory")).to_contain_text("GiB")
    expect(machine.get_by_test_id("machine-disk")).to_contain_text(" free of ")
    expect(machine.get_by_test_id("machine-checked")).to_have_text("Checked just now")
    screenshot(page, "machines", full_page=True)

    machine.get_by_test_id("machine-check").click()
    expect(machine.get_by_test_id("machine-check")).to_have_text("Check again", timeout=SSH_WAIT)
    expect(machine.get_by_test_id("machine-status")).to_have_text("Ready")

    page.reload()  # the list comes from the platform, not from the page's memory
    expect(card(page, "h100-box").get_by_test_id("machine-gpu")).to_have_count(2)

    console.allow(r"status of 409")
    add(page, f"ssh://{sshd.user}@127.0.0.1:{sshd.port}", "again")
    error = page.get_by_test_id("machines-add-error")
    expect(error).to_contain_text("is added already as 'h100-box'")
    expect(page.get_by_test_id("machines-add-ssh")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_test_id("machine-card")).to_have_count(1)


def test_what_cannot_be_used_is_answered_beside_the_field(page: Page, http: httpx.Client, sshd: SshServer,
                                                          console, screenshot) -> None:
    console.allow(r"status of 422")
    field = page.get_by_test_id("machines-add-ssh")
    field.fill("gcloud compute ssh my-vm --zone us-central1-a")
    expect(page.get_by_test_id("machines-add-hint")).to_contain_text("--dry-run")  # said early, while typing
    page.get_by_test_id("machines-add-submit").click()
    error = page.get_by_test_id("machines-add-error")
    expect(error).to_contain_text("--dry-run")  # the gateway's 422, beside the field
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_attribute("aria-describedby", "machines-add-error")

    add(page, "ssh abcdef-64410ab1@ssh.runpod.io -i ~/.ssh/id_ed25519")
    expect(error).to_contain_text("SSH over exposed TCP")
    screenshot(page, "machines-add-422")

    add(page, "ssh root@169.254.169.254")
    expect(error).to_contain_text(ALLOW)

    add(page, f"ssh root@127.0.0.1 -p {free_port()}", "gone")
    expect(error).to_contain_text("connection refused", timeout=SSH_WAIT)

    with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never says a word
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        add(page, f"ssh root@127.0.0.1 -p {silent.getsockname()[1]}", "silent")
        progress = page.get_by_test_id("machines-add-progress")  # PLATFORM_MACHINES_CONNECT_TIMEOUT is 5 s
        expect(progress).to_have_text(re.compile(r"^Connecting to the machine and checking it… [1-9] s$"))
        expect(page.get_by_test_id("machines-add-submit")).to_be_disabled()
        expect(error).to_contain_text("timed out after 5 s", timeout=SSH_WAIT)
        expect(progress).to_have_count(0)

    add(page, sshd.ssh_command, "no-key")  # the platform's key is not in its authorized_keys
    expect(error).to_contain_text("key not authorized", timeout=SSH_WAIT)
    expect(error).to_contain_text(http.get("/machines/ssh-key").json()["authorized_keys_line"])

    field.fill("-----BEGIN OPENSSH PRIVATE KEY-----")
    page.get_by_test_id("machines-add-submit").click()  # never sent
    expect(error).to_contain_text("never paste it")
    expect(page.get_by_test_id("machines-empty")).to_be_visible()
    assert http.get("/machines").json()["machines"] == []


def test_a_changed_host_key_is_shown_and_accepted_then_the_machine_removed(
        page: Page, http: httpx.Client, sshd: SshServer, screenshot) -> None:
    sshd.authorize(http.get("/machines/ssh-key").json()["authorized_keys_line"])
    added = http.post("/machines", json={"ssh": sshd.ssh_command, "name": "reinstalled"})
    assert added.status_code == 201, added.text
    hop = f"127.0.0.1:{sshd.port}"
    pinned = added.json()["host_key_fingerprints"][hop]
    page.reload()
    machine = card(page, "reinstalled")
    expect(machine.get_by_test_id("machine-status")).to_have_text("Ready")

    sshd.change_host_key()
    machine.get_by_test_id("machine-check").click()
    expect(machine.get_by_test_id("machine-status")).to_have_text("Host key changed", timeout=SSH_WAIT)
    presented = http.get(f"/machines/{added.json()['id']}").json()["pending_host_key_fingerprints"][hop]
    assert presented.startswith("SHA256:") and presented != pinned
    panel = machine.get_by_test_id("machine-host-key")
    expect(panel.get_by_test_id("machine-host-key-hop")).to_contain_text(hop)
    expect(panel.get_by_test_id("machine-old-fingerprint")).to_have_text(pinned)
    expect(panel.get_by_test_id("machine-new-fingerprint")).to_have_text(presented)
    expect(machine.get_by_test_id("machine-status-reason")).to_contain_text("accept")
    screenshot(page, "machines-host-key-changed", full_page=True)

    panel.get_by_test_id("machine-accept-host-key").click()
    dialog = page.get_by_test_id("machine-accept-dialog")
    expect(dialog).to_contain_text("Accept it only if you know why it changed")
    dialog.get_by_test_id("machine-accept-dialog-cancel").click()  # a second thought: nothing changes
    expect(dialog).to_be_hidden()
    expect(machine.get_by_test_id("machine-status")).to_have_text("Host key changed")

    panel.get_by_test_id("machine-accept-host-key").click()
    dialog.get_by_test_id("machine-accept-dialog-confirm").click()
    expect(machine.get_by_test_id("machine-status")).to_have_text("Ready", timeout=SSH_WAIT)
    expect(machine.get_by_test_id("machine-host-key")).to_have_count(0)
    assert http.get(f"/machines/{added.json()['id']}").json()["host_key_fingerprints"][hop] == presented

    machine.get_by_test_id("machine-remove").click()
    removing = page.get_by_test_id("machine-remove-dialog")
    expect(removing).to_contain_text("Its queued and running experiments, if any, are cancelled")
    removing.get_by_test_id("machine-remove-dialog-confirm").click()
    expect(page.get_by_test_id("machine-card")).to_have_count(0)
    expect(page.get_by_test_id("machines-empty")).to_be_visible()
    assert http.get("/machines").json()["machines"] == []


def test_another_teams_member_sees_only_their_teams_machines(
        machines_page: Callable[[str], Page], http: httpx.Client, sshd: SshServer) -> None:
    sshd.authorize(http.get("/machines/ssh-key").json()["authorized_keys_line"])
    assert http.post("/machines", json={"ssh": sshd.ssh_command, "name": "ours"}).status_code == 201
    assert http.post("/teams", json={"name": "elsewhere"}).status_code in (201, 409)
    made = http.post("/tokens", json={"name": "elsewhere member", "team": "elsewhere", "role": "member"})
    assert made.status_code == 201, made.text
    member = machines_page(made.json()["token"])
    expect(member.get_by_test_id("machines-empty")).to_be_visible()
    expect(member.get_by_test_id("machines-key-line")).to_have_value(
        http.get("/machines/ssh-key").json()["authorized_keys_line"])


def test_the_machines_service_down_is_said_plainly_and_try_again_recovers(
        page: Page, machines_platform: PlatformStack, http: httpx.Client, console, screenshot) -> None:
    console.allow(r"status of 503")
    machines_platform.kill("machines", signal.SIGTERM)
    try:
        page.reload()
        expect(page.get_by_test_id("machines-error")).to_contain_text("The machines could not be listed: machines unavailable")
        expect(page.get_by_test_id("machines-key-error")).to_contain_text("machines unavailable")
        expect(page.get_by_test_id("machines-add")).to_be_visible()  # the page stays whole
        screenshot(page, "machines-unavailable")
    finally:
        machines_platform.start_service("machines")
    wait_for(lambda: http.get("/machines").status_code == 200 or None, timeout=30, what="the machines service back")
    page.get_by_test_id("machines-retry").click()
    expect(page.get_by_test_id("machines-empty")).to_be_visible()
    expect(page.get_by_test_id("machines-error")).to_have_count(0)
    expect(page.get_by_test_id("machines-key-line")).to_have_value(http.get("/machines/ssh-key").json()["authorized_keys_line"])


def header_rows(page: Page) -> int:
    """How many lines the header's parts sit on (by their top edges: one line, one top)."""
    parts = page.locator(".app-header .brand, .app-header nav a, [data-testid=signed-in-as], [data-testid=sign-out]")
    centres = {round((box["y"] + box["height"] / 2) / 8) for box in (parts.nth(i).bounding_box() for i in range(parts.count()))
               if box is not None}
    return len(centres)


def header_slack(page: Page) -> float:
    """The free room (px) between the nav's last entry and the signed-in label."""
    last = page.locator(".app-header nav a").last.bounding_box()
    label = page.get_by_test_id("signed-in-as").bounding_box()
    assert last is not None and label is not None
    return float(label["x"] - (last["x"] + last["width"]))


@pytest.mark.parametrize("width", [1280, 1024])
def test_the_header_is_one_line_signed_in_as_the_operator(
        open_page: Callable[..., Page], machines_platform: PlatformStack, admin_token: str, width: int, screenshot) -> None:
    page = open_page(machines_platform.url, viewport={"width": width, "height": 720})
    page.goto("/machines")
    page.get_by_test_id("sign-in-token").fill(admin_token)
    page.get_by_test_id("sign-in-submit").click()
    label = page.get_by_test_id("signed-in-as")
    expect(label).to_have_text("admin (operator, default)")
    header = page.locator(".app-header")
    assert header_rows(page) == 1
    height = header.bounding_box()["height"]
    link = page.get_by_test_id("nav-machines").bounding_box()["height"]
    assert height < link * 2, (height, link)  # one line: never two links high
    expect(label).to_have_attribute("title", "Signed in as admin: operator of team default")
    nav = page.locator(".app-header nav")
    entries = page.locator(".app-header nav a")
    if width == 1280:  # every entry in sight (Evals the last one added), none scrolled to, apart from the label
        assert nav.evaluate("n => n.scrollWidth <= n.clientWidth")
        for i in range(entries.count()):
            expect(entries.nth(i)).to_be_in_viewport(ratio=1)
        assert header_slack(page) >= 8, header_slack(page)
    for name in ("Environments", "Machines", "Evals", "Team", "API"):  # every entry reachable (the nav scrolls if it must)
        entry = page.locator(".app-header nav a", has_text=name)
        entry.scroll_into_view_if_needed()
        expect(entry).to_be_in_viewport()
    page.get_by_test_id("nav-team").click()
    expect(page).to_have_url(re.compile(r"/team$"))
    if width == 1280:
        screenshot(page, "header-1280")


def test_a_machine_behind_nat_with_the_tunnel_endpoint_off_names_the_setting(
        page: Page, http: httpx.Client, console, screenshot) -> None:
    console.allow(r"status of 409")  # this platform sets no PLATFORM_TUNNEL_PORT
    page.get_by_test_id("machines-nat-user").fill("ubuntu")
    page.get_by_test_id("machines-nat-submit").click()  # no name: said before anything is sent
    expect(page.get_by_test_id("machines-nat-name-error")).to_contain_text("Give the machine a name")
    expect(page.get_by_test_id("machines-nat-name")).to_have_attribute("aria-invalid", "true")

    page.get_by_test_id("machines-nat-name").fill("my-laptop")
    page.get_by_test_id("machines-nat-submit").click()
    expect(page.get_by_test_id("machines-nat-error")).to_have_attribute("role", "alert")
    expect(page.get_by_test_id("machines-nat-off")).to_have_text(re.compile(
        r"^The platform's tunnel endpoint is off\. An operator turns it on by setting PLATFORM_TUNNEL_PORT"))
    expect(page.get_by_test_id("machines-nat-off")).to_contain_text(
        "An operator turns it on by setting PLATFORM_TUNNEL_PORT (the port machines dial) and PLATFORM_TUNNEL_ADDRESS")
    expect(page.get_by_test_id("nat-secret-box")).to_have_count(0)
    expect(page.get_by_test_id("machines-empty")).to_be_visible()
    assert http.get("/machines").json()["machines"] == []
    page.get_by_test_id("machines-nat").scroll_into_view_if_needed()
    screenshot(page, "machines-nat-409")

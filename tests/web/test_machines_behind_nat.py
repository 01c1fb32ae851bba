"""A machine behind NAT added from the Machines page (issue 31), on a managed platform whose
tunnel endpoint is on (PLATFORM_TUNNEL_PORT, PLATFORM_TUNNEL_ADDRESS on the platform's end of a
veth pair): the form gives the command once, in a box that says it holds a secret; Copy puts it on
the clipboard; run for real inside a network namespace (platform_testing.netns, the machine) with
Debian's sshd on its own loopback (platform_testing.sshd), it opens the reverse tunnel and the card
goes from "waiting" to ready with its GPUs without a reload; the link cut, the card says the
tunnel is down, and back to connected when it is restored. Needs root (the namespace).
The endpoint off (409) is in test_machines_page.py, whose platform has none."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from platform_testing.netns import NatNamespace
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.ports import free_port
from platform_testing.sshd import SshServer
from playwright.sync_api import Page, expect

TUNNEL_WAIT = 90_000  # ms: the tunnel up, then the platform's check through it, on a busy machine


@pytest.fixture(scope="module")
def namespace() -> Iterator[NatNamespace]:
    with NatNamespace() as ns:
        yield ns


@pytest.fixture(scope="module")
def nat_platform(web_dist: Path, admin_token: str, namespace: NatNamespace,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra_env = {"PLATFORM_WEB_DIST": str(web_dist), "PLATFORM_MODE": "managed", "PLATFORM_AUTH": "token",
                 "PLATFORM_ADMIN_TOKEN": admin_token, "PLATFORM_TUNNEL_PORT": str(free_port()),
                 "PLATFORM_TUNNEL_LISTEN": namespace.platform_address,
                 "PLATFORM_TUNNEL_ADDRESS": namespace.platform_address,
                 "PLATFORM_TUNNEL_KEEPALIVE": "1", "PLATFORM_MACHINES_CONNECT_TIMEOUT": "5"}
    with running_platform(tmp_path_factory.mktemp("nat-platform"), extra_env=extra_env,
                          services=("broker", "machines", "gateway")) as stack:
        yield stack


@pytest.fixture
def http(nat_platform: PlatformStack, admin_token: str) -> Iterator[httpx.Client]:
    """The admin's API client; the team's machines are removed after the test."""
    with httpx.Client(base_url=nat_platform.url + "/v0", headers={"Authorization": f"Bearer {admin_token}"},
                      timeout=60) as client:
        yield client
        for machine in client.get("/machines").json()["machines"]:
            client.delete(f"/machines/{machine['id']}")


def test_a_machine_behind_nat_added_from_the_page_connects_through_its_tunnel(
        open_page, nat_platform: PlatformStack, admin_token: str, http: httpx.Client, namespace: NatNamespace,
        tmp_path: Path, screenshot) -> None:
    page: Page = open_page(nat_platform.url)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=nat_platform.url)
    page.goto("/machines")
    page.get_by_test_id("sign-in-token").fill(admin_token)
    page.get_by_test_id("sign-in-submit").click()
    expect(page.get_by_test_id("machines-empty")).to_be_visible()

    page.get_by_test_id("machines-nat-name").fill("laptop")
    page.get_by_test_id("machines-nat-user").fill("root")
    expect(page.get_by_test_id("machines-nat-port")).to_have_value("22")
    page.get_by_test_id("machines-nat-submit").click()
    box = page.get_by_test_id("nat-secret-box")
    expect(box.get_by_test_id("nat-secret-warning")).to_have_text("it will not be shown again.")
    expect(box).to_contain_text("holds the machine's own tunnel key, a secret")
    steps = page.get_by_test_id("machines-nat-steps")
    expect(steps).to_contain_text("adds the platform's key to ~/.ssh/authorized_keys")
    expect(steps).to_contain_text("keeps it open, opening it again after a dropped connection")
    card = page.get_by_test_id("machine-card")
    expect(card.get_by_test_id("machine-tunnel")).to_have_attribute("data-state", "waiting")
    expect(card.get_by_test_id("machine-tunnel")).to_contain_text("Waiting for the machine to connect")
    expect(card.get_by_test_id("machine-status")).to_have_text("Not checked yet")
    machine = http.get("/machines").json()["machines"][0]
    expect(card.get_by_test_id("machine-address")).to_have_text(
        f"root through its tunnel (platform port {machine['target']['port']})")
    screenshot(page, "machines-nat-command", full_page=True)

    box.get_by_test_id("nat-copy").click()
    expect(box.get_by_test_id("nat-copied")).to_have_text("Copied to the clipboard.")
    command = page.evaluate("navigator.clipboard.readText()")
    assert command == box.get_by_test_id("nat-secret").input_value()
    assert "PRIVATE KEY" in command and f"@{namespace.platform_address}" in command
    assert "PRIVATE" not in http.get("/machines").text  # the secret is in the page's answer only

    page.evaluate("window.__stillTheSamePage = true")  # gone if anything reloads the page
    home = tmp_path / "home"  # the machine's user's home: the command writes under it
    sshd = SshServer(tmp_path / "sshd", netns=namespace.name, authorized_keys=home / ".ssh" / "authorized_keys")
    with sshd:
        namespace.popen(["sh", "-c", command], env={**os.environ, "HOME": str(home)},
                        stdout=(tmp_path / "tunnel.log").open("wb"), stderr=subprocess.STDOUT)
        expect(card.get_by_test_id("machine-status")).to_have_text("Ready", timeout=TUNNEL_WAIT)
        expect(card.get_by_test_id("machine-tunnel")).to_have_attribute("data-state", "connected")
        expect(card.get_by_test_id("machine-tunnel")).to_contain_text("Tunnel connected since ")
        expect(card.get_by_test_id("machine-gpu")).to_have_count(2)
        expect(card.get_by_test_id("machine-status-reason")).to_have_count(0)
        assert page.evaluate("window.__stillTheSamePage") is True
        box.get_by_test_id("nat-secret-done").click()
        expect(page.get_by_test_id("nat-secret-box")).to_have_count(0)
        screenshot(page, "machines-nat-connected", full_page=True)

        namespace.cut()  # the machine's network goes away without a word: three missed keepalives
        expect(card.get_by_test_id("machine-tunnel")).to_have_attribute("data-state", "down", timeout=TUNNEL_WAIT)
        expect(card.get_by_test_id("machine-tunnel")).to_contain_text("Tunnel down since ")
        expect(card.get_by_test_id("machine-status")).to_have_text("Unreachable")
        namespace.restore()  # the command's loop opens the tunnel again
        expect(card.get_by_test_id("machine-tunnel")).to_have_attribute("data-state", "connected", timeout=TUNNEL_WAIT)
        expect(card.get_by_test_id("machine-status")).to_have_text("Ready", timeout=TUNNEL_WAIT)
        assert page.evaluate("window.__stillTheSamePage") is True

    page.reload()  # the command is never shown again
    expect(page.get_by_test_id("machine-card")).to_have_count(1)
    assert "PRIVATE KEY" not in page.content()

"""A machine behind NAT through the gateway, on the real platform's processes and real parts: the
machine is a network namespace (platform_testing.netns) whose only way out is a veth pair to the
platform, running Debian's sshd on its own loopback and the command the platform gives (the
OpenSSH client's `ssh -N -R ...` in its loop). The platform checks it through the tunnel; the link
is cut and the tunnel counts as down; restored, the loop opens it again and the machine is ready.
No network but the namespace's and loopback is used, and the platform allows no extra networks:
the tunnel's loopback port is allowed for the tunnelled machine only."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from platform_testing.netns import NatNamespace
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.ports import free_port
from platform_testing.sshd import SshServer

WAIT_S = 90.0


@pytest.fixture(scope="module")
def namespace() -> Iterator[NatNamespace]:
    with NatNamespace() as ns:
        yield ns


@pytest.fixture(scope="module")
def nat_platform(tmp_path_factory: pytest.TempPathFactory, namespace: NatNamespace) -> Iterator[PlatformStack]:
    extra = {"PLATFORM_TUNNEL_PORT": str(free_port()), "PLATFORM_TUNNEL_LISTEN": namespace.platform_address,
             "PLATFORM_TUNNEL_KEEPALIVE": "1", "PLATFORM_MACHINES_CONNECT_TIMEOUT": "5"}
    with running_platform(tmp_path_factory.mktemp("platform"), extra_env=extra,
                          services=("broker", "machines", "gateway")) as stack:
        yield stack


@pytest.fixture
def api(nat_platform: PlatformStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=nat_platform.url + "/v0", timeout=120) as client:
        yield client


def wait_until(api: httpx.Client, machine_id: str, wanted: Callable[[dict[str, Any]], bool], what: str) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_S
    machine: dict[str, Any] = {}
    while time.monotonic() < deadline:
        machine = api.get(f"/machines/{machine_id}").json()
        if wanted(machine):
            return machine
        time.sleep(0.5)
    raise AssertionError(f"{what}: not after {WAIT_S:g} s; the machine is {machine}")


def test_a_machine_behind_nat_through_its_tunnel(api: httpx.Client, namespace: NatNamespace, tmp_path: Path) -> None:
    home = tmp_path / "home"  # the machine's user's home: the command writes its files under it
    added = api.post("/machines/behind-nat", json={"name": "laptop", "user": "root", "ssh_port": 22})
    assert added.status_code == 201, added.text
    machine, command = added.json()["machine"], added.json()["command"]
    assert machine["status"] == "unchecked" and machine["tunnel"]["state"] == "waiting"
    assert machine["tunnel"]["summary"].startswith("waiting for the machine to connect")
    assert machine["target"]["host"] == "127.0.0.1"
    assert "PRIVATE KEY" in command
    listed = api.get("/machines")
    assert "PRIVATE" not in listed.text and "PRIVATE" not in api.get(f"/machines/{machine['id']}").text

    # the tunnel's loopback port is no hole: pasted as an ordinary machine it is refused
    pasted = api.post("/machines", json={"ssh": f"ssh root@127.0.0.1 -p {machine['target']['port']}"})
    assert pasted.status_code == 422 and "loopback" in pasted.json()["detail"]

    sshd = SshServer(tmp_path / "sshd", netns=namespace.name, authorized_keys=home / ".ssh" / "authorized_keys")
    with sshd:
        namespace.popen(["sh", "-c", command], env={**os.environ, "HOME": str(home)},
                        stdout=(tmp_path / "tunnel.log").open("wb"), stderr=subprocess.STDOUT)
        ready = wait_until(api, machine["id"], lambda m: m["status"] == "ready", "the machine ready through its tunnel")
        assert ready["tunnel"]["state"] == "connected" and ready["tunnel"]["summary"].startswith("connected since")
        assert [g["index"] for g in ready["facts"]["gpus"]] == [0, 1]
        assert list(ready["host_key_fingerprints"]) == [f"127.0.0.1:{machine['target']['port']}"]
        assert (home / ".ssh" / "authorized_keys").read_text().strip() == api.get("/machines/ssh-key").json()[
            "authorized_keys_line"]

        namespace.cut()
        down = wait_until(api, machine["id"], lambda m: m["tunnel"]["state"] == "down", "the tunnel down")
        assert down["status"] == "unreachable" and down["status_reason"].startswith("tunnel down since ")
        checked = api.post(f"/machines/{machine['id']}/check").json()
        assert checked["status"] == "unreachable" and checked["status_reason"].startswith("tunnel down since ")

        namespace.restore()
        again = wait_until(api, machine["id"], lambda m: m["tunnel"]["state"] == "connected" and m["status"] == "ready",
                           "the loop reopening the tunnel")
        assert [g["index"] for g in again["facts"]["gpus"]] == [0, 1]


def test_bad_input_answers_422(api: httpx.Client) -> None:
    for body in ({"user": "root"}, {"name": "laptop", "user": "-oProxyCommand=x"},
                 {"name": "laptop", "user": "root", "ssh_port": 0}):
        answer = api.post("/machines/behind-nat", json=body)
        assert answer.status_code == 422, (body, answer.text)

"""GPU machines through the gateway, on the real platform's processes (NATS, broker, machines
service, gateway) and a real sshd with a fake two-GPU nvidia-smi (platform_testing.sshd): the
platform's key, a machine added by its pasted SSH command, a changed host key refused then
accepted, and each kind of bad input answered with a 4xx saying what to fix."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.sshd import SshServer

ALLOW = "PLATFORM_MACHINES_ALLOW_NETWORKS"


@pytest.fixture(scope="module")
def machines_platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra = {ALLOW: "127.0.0.0/8", "PLATFORM_MACHINES_CONNECT_TIMEOUT": "5"}  # the tests' own loopback sshd
    with running_platform(tmp_path_factory.mktemp("platform"), extra_env=extra,
                          services=("broker", "machines", "gateway")) as stack:
        yield stack


@pytest.fixture
def api(machines_platform: PlatformStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=machines_platform.url + "/v0", timeout=120) as client:
        yield client


def test_the_platform_key(api: httpx.Client, machines_platform: PlatformStack) -> None:
    answer = api.get("/machines/ssh-key")
    assert answer.status_code == 200, answer.text
    key = answer.json()
    assert key["public_key"].startswith("ssh-ed25519 ") and key["fingerprint"].startswith("SHA256:")
    assert key["authorized_keys_line"] == key["public_key"]
    private = machines_platform.root / "ssh" / "id_ed25519"
    assert oct(private.stat().st_mode & 0o777) == "0o600"
    assert "PRIVATE" not in answer.text
    assert api.get("/machines/ssh-key").json() == key  # made once


def test_add_check_and_trust(api: httpx.Client, sshd: SshServer) -> None:
    sshd.authorize(api.get("/machines/ssh-key").json()["authorized_keys_line"])
    pasted = f"$ ssh {sshd.user}@127.0.0.1 -p {sshd.port} -i ~/.ssh/id_ed25519 -L 8080:localhost:8080"
    added = api.post("/machines", json={"ssh": pasted, "name": "h100-box"})
    assert added.status_code == 201, added.text
    machine = added.json()
    assert machine["status"] == "ready" and machine["name"] == "h100-box"
    assert machine["target"] == {"user": sshd.user, "host": "127.0.0.1", "port": sshd.port}
    gpus = machine["facts"]["gpus"]
    assert [g["index"] for g in gpus] == [0, 1] and gpus[0]["memory_total_mib"] == 81559
    assert gpus[1]["memory_total_mib"] is None  # "[N/A]"
    assert machine["facts"]["gpu_processes"] == [
        {"gpu_uuid": gpus[0]["uuid"], "pid": 4242, "used_memory_mib": 1024}]
    assert machine["facts"]["python"].startswith("Python 3")
    assert list(machine["host_key_fingerprints"]) == [f"127.0.0.1:{sshd.port}"]
    machine_id = machine["id"]
    assert [m["id"] for m in api.get("/machines").json()["machines"]] == [machine_id]
    assert api.get(f"/machines/{machine_id}").json()["status"] == "ready"

    again = api.post("/machines", json={"ssh": f"ssh://{sshd.user}@127.0.0.1:{sshd.port}"})
    assert again.status_code == 409 and machine_id in again.json()["detail"]

    sshd.change_host_key()
    checked = api.post(f"/machines/{machine_id}/check")
    assert checked.status_code == 200, checked.text
    assert checked.json()["status"] == "host key changed"
    assert "accept-host-key" in checked.json()["status_reason"]
    assert checked.json()["pending_host_key_fingerprints"][f"127.0.0.1:{sshd.port}"].startswith("SHA256:")
    assert api.post(f"/machines/{machine_id}/check").json()["status"] == "host key changed"  # still refused

    accepted = api.post(f"/machines/{machine_id}/accept-host-key")
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["status"] == "ready" and accepted.json()["pending_host_key_fingerprints"] == {}
    nothing_to_accept = api.post(f"/machines/{machine_id}/accept-host-key")
    assert nothing_to_accept.status_code == 409 and "no changed host key" in nothing_to_accept.json()["detail"]

    assert api.delete(f"/machines/{machine_id}").status_code == 204
    missing = api.get(f"/machines/{machine_id}")
    assert missing.status_code == 404 and machine_id in missing.json()["detail"]


@pytest.mark.parametrize(("ssh", "says"), [
    ("gcloud compute ssh my-vm --zone us-central1-a", "--dry-run"),
    ("ssh abcdef-64410ab1@ssh.runpod.io -i ~/.ssh/id_ed25519", "SSH over exposed TCP"),
    ("scp model.pt root@203.0.113.7:", "not an SSH command"),
    ("ssh -p 99999 root@203.0.113.7", "bad port"),
    ("ssh root@169.254.169.254", "169.254.169.254"),
])
def test_unusable_commands_say_what_to_paste(api: httpx.Client, ssh: str, says: str) -> None:
    answer = api.post("/machines", json={"ssh": ssh})
    assert answer.status_code == 422, answer.text
    assert says in answer.json()["detail"]


def test_the_metadata_address_names_the_setting(api: httpx.Client) -> None:
    answer = api.post("/machines", json={"ssh": "ssh root@169.254.169.254"})
    assert answer.status_code == 422 and ALLOW in answer.json()["detail"]


def test_an_unreachable_host_and_a_refused_key(api: httpx.Client, sshd: SshServer, tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    unreachable = api.post("/machines", json={"ssh": f"ssh root@127.0.0.1 -p {closed}", "name": "gone"})
    assert unreachable.status_code == 422
    assert "'gone'" in unreachable.json()["detail"] and "connection refused" in unreachable.json()["detail"]

    refused = api.post("/machines", json={"ssh": sshd.ssh_command, "name": "no-key"})  # the key is not authorized
    assert refused.status_code == 422
    line = api.get("/machines/ssh-key").json()["authorized_keys_line"]
    assert "key not authorized" in refused.json()["detail"] and line in refused.json()["detail"]
    assert api.get("/machines").json()["machines"] == []  # nothing stored

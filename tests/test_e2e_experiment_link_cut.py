"""The link to a machine cut during a running experiment and restored, on the real platform's
processes and real parts: the machine is a network namespace (platform_testing.netns) running
Debian's sshd, reached over the veth pair the test makes. The experiment prints numbered lines;
mid-run the machine's end of the link goes down (`ip link set ... down` inside the namespace:
what the platform sends is dropped, nothing says so) for longer than the platform's keepalives
take to call the connection dead, then comes up again. The platform dials again and continues
the log from the byte it had: every line is in the stored log exactly once, in order, and the
exit code is read.

Twice: a machine dialled directly (its veth address allowed by PLATFORM_MACHINES_ALLOW_NETWORKS)
and the same sshd as a machine behind NAT, through the reverse tunnel its command opens (the cut
also drops the tunnel; the command's loop opens it again)."""

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
from platform_testing.experiments import add_machine, committed_repository, whole_log
from platform_testing.sshd import SshServer

WAIT_S = 90.0
LINES = 200  # one every 0.1 s: about 20 s of running
CUT_S = 8.0  # more than the keepalives take to call the connection dead (3 x 1 s), less than LOST_AFTER
COMMAND = f'for i in $(seq 1 {LINES}); do echo "line $i"; sleep 0.1; done; exit 3'


@pytest.fixture(scope="module")
def namespace() -> Iterator[NatNamespace]:
    with NatNamespace() as ns:
        yield ns


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory, namespace: NatNamespace) -> Iterator[SshServer]:
    root = tmp_path_factory.mktemp("machine")
    with SshServer(root, netns=namespace.name, host=namespace.machine_address,
                   authorized_keys=root / "home" / ".ssh" / "authorized_keys") as server:
        yield server


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory, namespace: NatNamespace) -> Iterator[PlatformStack]:
    extra = {"PLATFORM_MACHINES_ALLOW_NETWORKS": f"{namespace.machine_address}/32",
             "PLATFORM_MACHINES_CONNECT_TIMEOUT": "3", "PLATFORM_MACHINES_KEEPALIVE": "1",
             "PLATFORM_EXPERIMENTS_POLL_INTERVAL": "0.2", "PLATFORM_EXPERIMENTS_LOST_AFTER": "120",
             "PLATFORM_TUNNEL_PORT": str(free_port()), "PLATFORM_TUNNEL_LISTEN": namespace.platform_address,
             "PLATFORM_TUNNEL_KEEPALIVE": "1"}
    with running_platform(tmp_path_factory.mktemp("platform"), extra_env=extra,
                          services=("broker", "machines", "gateway")) as stack:
        yield stack


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare repository the machine clones by path (the namespace shares this host's files)."""
    return committed_repository(tmp_path_factory.mktemp("work"), {"README": "the command is given inline\n"},
                                bare=tmp_path_factory.mktemp("repos") / "r.git")


@pytest.fixture(scope="module")
def api(platform: PlatformStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=platform.url + "/v0", timeout=120) as client:
        yield client


@pytest.fixture(scope="module")
def direct_machine(api: httpx.Client, sshd: SshServer) -> str:
    return str(add_machine(api, sshd, "direct")["id"])


@pytest.fixture(scope="module")
def nat_machine(api: httpx.Client, sshd: SshServer, namespace: NatNamespace,
                tmp_path_factory: pytest.TempPathFactory) -> str:
    added = api.post("/machines/behind-nat", json={"name": "laptop", "user": sshd.user, "ssh_port": sshd.port})
    assert added.status_code == 201, added.text
    machine, command = added.json()["machine"], added.json()["command"]
    logs = tmp_path_factory.mktemp("tunnel")
    namespace.popen(["sh", "-c", command], env={**os.environ, "HOME": str(sshd.home)},
                    stdout=(logs / "tunnel.log").open("wb"), stderr=subprocess.STDOUT)
    wait_for("the machine behind NAT ready through its tunnel",
             lambda: api.get(f"/machines/{machine['id']}").json()["status"] == "ready")
    return str(machine["id"])


def wait_for(what: str, check: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"waited {WAIT_S:g} s for {what}")


def run_through_a_cut(api: httpx.Client, platform: PlatformStack, namespace: NatNamespace, machine: str,
                      repo: Path) -> None:
    made = api.post("/experiments", json={"machine": machine, "repository": str(repo), "command": COMMAND,
                                          "gpus": 0})
    assert made.status_code == 201, made.text
    x = made.json()
    assert x["status"] == "running"
    logs = f"/experiments/{x['id']}/logs"
    wait_for("ten lines copied", lambda: api.get(logs).json()["text"].count("\n") >= 10)

    namespace.cut(end="machine")
    try:
        cut_at = time.monotonic()
        time.sleep(CUT_S / 2)
        during = api.get(logs)  # the platform answers from its copy while the machine is away
        assert during.status_code == 200 and not during.json()["ended"], during.text
        assert api.get(f"/experiments/{x['id']}").json()["status"] == "running"
        time.sleep(max(0.0, CUT_S - (time.monotonic() - cut_at)))
    finally:
        namespace.restore(end="machine")

    done = wait_for("the experiment to end", lambda: (e := api.get(f"/experiments/{x['id']}").json())["ended_at"]
                    and e)
    text = whole_log(api, x["id"])
    numbers = [int(line.removeprefix("line ")) for line in text.splitlines()]
    assert numbers == list(range(1, LINES + 1)), f"lines lost or doubled: {text[-400:]!r}"
    assert done["status"] == "failed" and done["exit_code"] == 3, done
    assert done["status_reason"] == "the command exited with 3"
    noticed = [line for line in platform.log("machines").splitlines() if x["id"] in line and "connection lost" in line]
    assert noticed, "the platform never noticed the cut (its keepalives should have), so it never dialled again"


def test_the_link_to_a_machine_cut_mid_run(api: httpx.Client, platform: PlatformStack, namespace: NatNamespace,
                                           direct_machine: str, repo: Path) -> None:
    run_through_a_cut(api, platform, namespace, direct_machine, repo)


def test_the_link_to_a_machine_behind_nat_cut_mid_run(api: httpx.Client, platform: PlatformStack,
                                                      namespace: NatNamespace, nat_machine: str, repo: Path) -> None:
    run_through_a_cut(api, platform, namespace, nat_machine, repo)

"""The queue of experiments, GPU sharing, removing a machine with experiments and GPU-hours in
/v0/usage, through the gateway on the real platform's processes (NATS, broker, machines service,
gateway; PLATFORM_AUTH=token) and a real sshd with the fake two-GPU nvidia-smi
(platform_testing.sshd). The machine is this host: the test reads run folders directly."""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.experiments import add_machine, committed_repository
from platform_testing.sshd import SshServer

ADMIN = "sim_experiments-queue-test-admin-token"
WAIT_S = 60.0
# Asks the platform with the experiment's own URL and token, and prints the answer's status.
PROBE = ('python3 -c "import os,urllib.request as u; r=u.Request(os.environ[\'PLATFORM_URL\']+\'/v0/machines\', '
         'headers={\'Authorization\': \'Bearer \'+os.environ[\'PLATFORM_TOKEN\']}); '
         'print(\'status\', u.urlopen(r).status)"')


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra = {"PLATFORM_MACHINES_ALLOW_NETWORKS": "127.0.0.0/8", "PLATFORM_MACHINES_CONNECT_TIMEOUT": "5",
             "PLATFORM_AUTH": "token", "PLATFORM_ADMIN_TOKEN": ADMIN, "PLATFORM_EXPERIMENTS_POLL_INTERVAL": "0.2",
             "PLATFORM_EXPERIMENTS_CANCEL_GRACE": "2"}
    with running_platform(tmp_path_factory.mktemp("platform"), extra_env=extra,
                          services=("broker", "machines", "gateway")) as stack:
        yield stack


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return committed_repository(tmp_path_factory.mktemp("work"), {"README": "train\n"})


@pytest.fixture
def api(platform: PlatformStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=platform.url + "/v0", timeout=120,
                      headers={"Authorization": f"Bearer {ADMIN}"}) as client:
        yield client


@pytest.fixture
def machine(api: httpx.Client, sshd: SshServer) -> Iterator[str]:
    machine_id = str(add_machine(api, sshd)["id"])
    yield machine_id
    api.delete(f"/machines/{machine_id}", params={"stop_experiments": "true"})  # nothing left running


def wait_for(what: str, check: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"waited {WAIT_S:g} s for {what}")


def create(api: httpx.Client, machine: str, repo: Path, command: str, gpus: int, **more: Any) -> dict[str, Any]:
    made = api.post("/experiments", json={"machine": machine, "repository": str(repo), "command": command,
                                          "gpus": gpus, **more})
    assert made.status_code == 201, made.text
    return dict(made.json())


def get(api: httpx.Client, experiment_id: str) -> dict[str, Any] | None:
    answer = api.get(f"/experiments/{experiment_id}")
    if answer.status_code == 503:  # the machines service restarting
        return None
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def reaches(api: httpx.Client, experiment_id: str, *statuses: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        found = get(api, experiment_id)
        return found if found and found["status"] in statuses else None
    return dict(wait_for(f"experiment {experiment_id} to be {' or '.join(statuses)}", check))


def ended(api: httpx.Client, experiment_id: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        found = get(api, experiment_id)
        return found if found and found["ended_at"] else None
    return dict(wait_for(f"experiment {experiment_id} to end", check))


def log_of(api: httpx.Client, experiment_id: str) -> str:
    return str(api.get(f"/experiments/{experiment_id}/logs").json()["text"])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_queued_until_gpus_free_then_started_in_order_with_a_working_token(
        api: httpx.Client, platform: PlatformStack, machine: str, repo: Path) -> None:
    holder = create(api, machine, repo, "sleep 600", 2)
    assert holder["status"] == "running" and holder["queue_position"] == 0
    first = create(api, machine, repo, f"{PROBE}; sleep 600", 1)
    second = create(api, machine, repo, "sleep 600", 2)
    assert (first["status"], first["queue_position"]) == ("queued", 1)
    assert (second["status"], second["queue_position"]) == ("queued", 2)
    assert first["gpu_indices"] == [] and "waiting for 1 GPU of machine 'box'" in first["status_reason"]
    assert first["token_id"].startswith("tok-")
    listed = {x["id"]: x for x in api.get("/experiments").json()["experiments"]}
    assert (listed[first["id"]]["queue_position"], listed[second["id"]]["queue_position"]) == (1, 2)

    # The service restarts meanwhile: the queue and the sealed token survive it.
    platform.restart("machines")
    wait_for("the machines service", lambda: get(api, first["id"]))
    assert api.post(f"/experiments/{holder['id']}/cancel").json()["status"] == "cancelled"
    started = reaches(api, first["id"], "running")
    assert len(started["gpu_indices"]) == 1 and started["queue_position"] == 0 and started["started_at"]
    wait_for("the probe's answer", lambda: "status 200" in log_of(api, first["id"]))  # its token works
    waiting = get(api, second["id"])
    assert waiting is not None and (waiting["status"], waiting["queue_position"]) == ("queued", 1)

    cancelled = api.post(f"/experiments/{second['id']}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    body = cancelled.json()
    assert body["status"] == "cancelled" and body["ended_at"] and body["started_at"] == 0
    assert body["status_reason"] == "cancelled while queued" and body["queue_position"] == 0


def test_a_queued_one_that_fails_at_once_is_failed_not_a_422(api: httpx.Client, machine: str, repo: Path) -> None:
    holder = create(api, machine, repo, "sleep 600", 2)
    doomed = create(api, machine, repo, "echo no such thing >&2; exit 7", 1)
    assert doomed["status"] == "queued"
    api.post(f"/experiments/{holder['id']}/cancel")
    done = ended(api, doomed["id"])
    assert done["status"] == "failed" and done["exit_code"] == 7 and log_of(api, doomed["id"]) == "no such thing\n"
    # More GPUs than the machine has is refused, not queued.
    too_many = api.post("/experiments", json={"machine": machine, "repository": str(repo), "command": "true",
                                              "gpus": 3})
    assert too_many.status_code == 422 and "has 2 GPUs" in too_many.json()["detail"]


def test_share_gpus_is_opt_in(api: httpx.Client, machine: str, repo: Path) -> None:
    a = create(api, machine, repo, "sleep 600", 1, share_gpus=True)
    b = create(api, machine, repo, "sleep 600", 1, share_gpus=True)
    assert a["share_gpus"] and a["status"] == b["status"] == "running"
    assert a["gpu_indices"] != b["gpu_indices"]  # the least-loaded: the free one first
    c = create(api, machine, repo, "sleep 600", 1, share_gpus=True)
    assert c["status"] == "running" and c["gpu_indices"][0] in (0, 1)  # shares with one of them
    alone = create(api, machine, repo, "sleep 600", 1)
    assert alone["status"] == "queued" and not alone["share_gpus"]  # never shares unless asked


def test_removing_a_machine_with_experiments(api: httpx.Client, machine: str, repo: Path) -> None:
    running = create(api, machine, repo, "sleep 600 & echo $! > ../child.pid; wait", 2)
    queued = create(api, machine, repo, "sleep 600", 1)
    pid_file = Path(running["run_dir"]) / "child.pid"
    child = int(wait_for("the child's pid", lambda: pid_file.exists() and pid_file.read_text().strip()))

    refused = api.delete(f"/machines/{machine}")
    assert refused.status_code == 409, refused.text
    detail = refused.json()["detail"]
    assert f"{running['id']} (running)" in detail and f"{queued['id']} (queued)" in detail
    assert "stop_experiments=true" in detail and alive(child)
    assert api.get(f"/machines/{machine}").status_code == 200

    removed = api.delete(f"/machines/{machine}", params={"stop_experiments": "true"})
    assert removed.status_code == 204, removed.text
    assert api.get(f"/machines/{machine}").status_code == 404
    for x in (running, queued):
        found = get(api, x["id"])
        assert found is not None and found["status"] == "cancelled" and found["ended_at"]
        assert "machine 'box' was removed" in found["status_reason"]
    wait_for("the command's child to be stopped", lambda: not alive(child))
    bad = api.delete(f"/machines/{machine}", params={"stop_experiments": "maybe"})
    assert bad.status_code == 422


def test_gpu_hours_in_usage(api: httpx.Client, machine: str, repo: Path) -> None:
    x = create(api, machine, repo, "sleep 1.5", 2)
    done = ended(api, x["id"])
    assert done["status"] == "succeeded"
    today = dt.datetime.now(dt.timezone.utc).date()
    usage = api.get("/usage", params={"since": today.isoformat(), "until": today.isoformat()})
    assert usage.status_code == 200, usage.text
    body = usage.json()
    assert body["gpu_hours_error"] is None
    rows = [r for r in body["gpu_data"] if r["machine_id"] == machine]
    expected = 2 * (done["ended_at"] - done["started_at"]) / 3600
    assert len(rows) == 1 and rows[0]["day"] == today.isoformat() and rows[0]["team"] == "default"
    assert rows[0]["machine_name"] == "box" and rows[0]["experiments"] == 1
    assert rows[0]["gpu_hours"] == pytest.approx(expected, abs=1e-5) and rows[0]["gpu_hours"] > 0
    assert body["total_gpu_hours"] >= rows[0]["gpu_hours"]

    exported = api.get("/usage", params={"since": today.isoformat(), "until": today.isoformat(), "format": "csv"})
    lines = list(csv.reader(io.StringIO(exported.text)))
    assert lines[0] == ["day", "team", "env_id", "instance_hours", "sessions", "machine_id", "machine_name",
                        "gpu_hours", "experiments"]
    mine = [line for line in lines[1:] if line[5] == machine]
    assert mine == [[today.isoformat(), "default", "", "", "", machine, "box", str(rows[0]["gpu_hours"]), "1"]]

    yesterday = (today - dt.timedelta(days=1)).isoformat()
    before = api.get("/usage", params={"since": yesterday, "until": yesterday}).json()
    assert [r for r in before["gpu_data"] if r["machine_id"] == machine] == []
    other_team = api.get("/usage", params={"since": today.isoformat(), "team": "nobody"}).json()
    assert other_team["gpu_data"] == [] and other_team["total_gpu_hours"] == 0

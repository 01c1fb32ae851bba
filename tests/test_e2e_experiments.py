"""Experiments through the gateway on the real platform's processes (NATS, broker, machines
service, gateway; PLATFORM_AUTH=token) and a real sshd with a fake two-GPU nvidia-smi
(platform_testing.sshd): a local bare git repository cloned by path on the machine, logs read
by offset and followed over the WebSocket, exit codes, cancel of the whole process group, GPUs
never shared (a request for busy ones waits), PLATFORM_URL/PLATFORM_TOKEN (through the reverse forward) and the service
restarted mid-run. The machine is this host, so the test reads its run folder directly."""

from __future__ import annotations

import json
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
from websockets.sync.client import connect as ws_connect

ADMIN = "sim_experiments-test-admin-token"
WAIT_S = 60.0

TRAIN = """#!/bin/bash
# prints N numbered lines, one every T seconds
n=${1:-10}; t=${2:-0.2}
for i in $(seq 1 "$n"); do echo "line $i"; sleep "$t"; done
"""


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
    """A bare repository with train.sh on main, served to the machine by its path."""
    return committed_repository(tmp_path_factory.mktemp("work"), {"train.sh": TRAIN},
                                bare=tmp_path_factory.mktemp("repos") / "train.git")


@pytest.fixture
def api(platform: PlatformStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=platform.url + "/v0", timeout=120,
                      headers={"Authorization": f"Bearer {ADMIN}"}) as client:
        yield client


@pytest.fixture
def machine(api: httpx.Client, sshd: SshServer) -> str:
    return str(add_machine(api, sshd)["id"])


def wait_for(what: str, check: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"waited {WAIT_S:g} s for {what}")


def start(api: httpx.Client, machine: str, repo: Path, command: str, gpus: int = 0, **more: Any) -> dict[str, Any]:
    made = api.post("/experiments", json={"machine": machine, "repository": str(repo), "command": command,
                                          "gpus": gpus, **more})
    assert made.status_code == 201, made.text
    return dict(made.json())


def ended(api: httpx.Client, experiment_id: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        answer = api.get(f"/experiments/{experiment_id}")
        if answer.status_code == 503:  # the machines service restarting
            return None
        assert answer.status_code == 200, answer.text
        return answer.json() if answer.json()["ended_at"] else None
    return dict(wait_for(f"experiment {experiment_id} to end", check))


def read_all(api: httpx.Client, experiment_id: str, offset: int = 0) -> str:
    text = ""
    while True:
        page = api.get(f"/experiments/{experiment_id}/logs", params={"offset": offset}).json()
        text += page["text"]
        offset = page["next_offset"]
        if page["ended"]:
            return text


def lines(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, n + 1))


def test_logs_env_token_and_exit(api: httpx.Client, platform: PlatformStack, machine: str, repo: Path) -> None:
    command = ('printf %s "$PLATFORM_TOKEN" > ../token.txt; printf "%s\\n" "$CUDA_VISIBLE_DEVICES" > ../gpus.txt; '
               'printf "%s\\n" "$PLATFORM_URL" > ../url.txt; printf "%s\\n" "$PLATFORM_EXPERIMENT_ID" > ../x.txt; '
               'bash train.sh 25 0.2')
    x = start(api, machine, repo, command, gpus=1, env={"SEED": "7"})
    assert x["status"] == "running" and x["machine_name"] == "box" and x["env_names"] == ["SEED"]
    assert len(x["gpu_uuids"]) == 1 and x["token_id"].startswith("tok-")
    assert "sim_" not in json.dumps(x) and "sim_" not in api.get("/experiments").text
    run_dir = Path(x["run_dir"])

    # read by offset while it runs, then follow the rest over the WebSocket from there
    first = wait_for("the first lines", lambda: api.get(f"/experiments/{x['id']}/logs").json()["text"] and
                     api.get(f"/experiments/{x['id']}/logs").json())
    assert not first["ended"] and first["text"].startswith("line 1\n")
    seen = first["text"]
    url = platform.url.replace("http", "ws", 1) + f"/v0/experiments/{x['id']}/logs/stream"
    with ws_connect(f"{url}?offset={first['next_offset']}&token={ADMIN}") as ws:
        for message in ws:
            page = json.loads(message)
            seen += page["text"]
            if page["ended"]:
                break
    assert seen == lines(25)
    assert read_all(api, x["id"]) == lines(25)

    # the environment: its GPU, a URL that reaches the platform, a token that works until the end
    assert (run_dir / "gpus.txt").read_text().strip() == x["gpu_uuids"][0]
    assert (run_dir / "x.txt").read_text().strip() == x["id"]  # a training run started there belongs to it
    token = wait_for("the token file", lambda: (run_dir / "token.txt").exists() and (run_dir / "token.txt").read_text())
    assert token.startswith("sim_")
    done = ended(api, x["id"])
    assert done["status"] == "succeeded" and done["exit_code"] == 0
    platform_url = (run_dir / "url.txt").read_text().strip()
    assert platform_url == done["platform_url"] and platform_url.startswith("http://127.0.0.1:")
    after = httpx.get(platform.url + "/v0/experiments", headers={"Authorization": f"Bearer {token}"})
    assert after.status_code == 401 and "revoked" in after.json()["detail"]
    assert not (run_dir / "env.sh").exists()  # the token's file is gone once read


def test_token_and_url_work_while_running(api: httpx.Client, machine: str, repo: Path) -> None:
    probe = ('python3 -c "import os,urllib.request as u; r=u.Request(os.environ[\'PLATFORM_URL\']+\'/v0/machines\', '
             'headers={\'Authorization\': \'Bearer \'+os.environ[\'PLATFORM_TOKEN\']}); '
             'print(\'status\', u.urlopen(r).status)"; bash train.sh 3 0.1')
    x = start(api, machine, repo, probe)
    assert ended(api, x["id"])["status"] == "succeeded"
    assert read_all(api, x["id"]) == "status 200\n" + lines(3)


def test_failure_exit_code(api: httpx.Client, machine: str, repo: Path) -> None:
    x = start(api, machine, repo, "bash train.sh 4 0.5; exit 3")
    done = ended(api, x["id"])
    assert done["status"] == "failed" and done["exit_code"] == 3 and "exited with 3" in done["status_reason"]
    assert read_all(api, x["id"]) == lines(4)


def test_cancel_stops_the_whole_group(api: httpx.Client, machine: str, repo: Path) -> None:
    x = start(api, machine, repo, "sleep 600 & echo $! > ../child.pid; bash train.sh 1000 0.2")
    child = int(wait_for("the child's pid", lambda: (Path(x["run_dir"]) / "child.pid").exists() and
                         (Path(x["run_dir"]) / "child.pid").read_text().strip()))
    wait_for("a line", lambda: api.get(f"/experiments/{x['id']}/logs").json()["text"])
    cancelled = api.post(f"/experiments/{x['id']}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled"
    assert ended(api, x["id"])["status"] == "cancelled"

    def child_gone() -> bool:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return True
        return Path(f"/proc/{child}/stat").read_text().split()[2] == "Z"
    wait_for("the child to be gone", child_gone)
    log = read_all(api, x["id"])
    assert log.startswith("line 1\n") and "line 1000" not in log


def test_gpus_never_shared(api: httpx.Client, machine: str, repo: Path) -> None:
    a = start(api, machine, repo, "bash train.sh 1000 0.2", gpus=1)
    b = start(api, machine, repo, "bash train.sh 1000 0.2", gpus=1)
    assert {a["gpu_indices"][0], b["gpu_indices"][0]} == {0, 1}
    busy = start(api, machine, repo, "true", gpus=1)  # none free: it waits (tests/test_e2e_experiments_queue.py)
    assert busy["status"] == "queued" and a["id"] in busy["status_reason"] and b["id"] in busy["status_reason"]
    assert api.post(f"/experiments/{busy['id']}/cancel").json()["status"] == "cancelled"
    cpu = start(api, machine, repo, "printf '[%s]\\n' \"$CUDA_VISIBLE_DEVICES\"", gpus=0)
    assert ended(api, cpu["id"])["status"] == "succeeded" and read_all(api, cpu["id"]) == "[]\n"
    for x in (a, b):
        assert api.post(f"/experiments/{x['id']}/cancel").json()["status"] == "cancelled"
    again = start(api, machine, repo, "true", gpus=2)
    assert sorted(again["gpu_indices"]) == [0, 1]


def test_restart_mid_run_keeps_the_log_whole(api: httpx.Client, platform: PlatformStack, machine: str,
                                             repo: Path) -> None:
    x = start(api, machine, repo, "bash train.sh 40 0.15")
    wait_for("some lines", lambda: "line 3\n" in api.get(f"/experiments/{x['id']}/logs").json()["text"])
    platform.restart("machines")
    done = ended(api, x["id"])
    assert done["status"] == "succeeded"
    assert read_all(api, x["id"]) == lines(40)


def test_bad_input(api: httpx.Client, machine: str, repo: Path, tmp_path: Path) -> None:
    def post(**body: Any) -> httpx.Response:
        return api.post("/experiments", json={"machine": machine, "repository": str(repo), "command": "true",
                                              **body})

    no_repo = post(repository=str(tmp_path / "nothing.git"))
    assert no_repo.status_code == 422 and "does not clone" in no_repo.json()["detail"]
    assert no_repo.json()["field"] == "repository" and "box" in no_repo.json()["detail"]
    bad_ref = post(ref="no-such-branch")
    assert bad_ref.status_code == 422 and bad_ref.json()["field"] == "ref"
    at_once = post(command="echo no such thing >&2; exit 7")
    assert at_once.status_code == 422 and "exit 7" in at_once.json()["detail"]
    assert "no such thing" in at_once.json()["detail"] and at_once.json()["field"] == "command"
    unknown = post(machine="m-000000000000")
    assert unknown.status_code == 404 and "m-000000000000" in unknown.json()["detail"]
    too_many = post(gpus=3)
    assert too_many.status_code == 422 and "has 2 GPUs" in too_many.json()["detail"]
    bad_env = post(env={"1X": "y"})
    assert bad_env.status_code == 422 and bad_env.json()["field"] == "env"
    reserved = post(env={"PLATFORM_TOKEN": "y"})
    assert reserved.status_code == 422 and "set by the platform" in reserved.json()["detail"]
    empty = post(command="")
    assert empty.status_code == 422
    assert api.get("/experiments/x-000000000000").status_code == 404

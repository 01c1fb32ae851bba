"""Distributed training on the platform's machines: an experiment whose `ray` object starts a Ray
head on its machine and a Ray worker on another (two sshds of this host are two machines of the
platform; two Ray nodes of one host work), each in the checkout's virtual environment made by
the setup (a link to `.venvs/rllib` of platform_testing.training_venvs: nothing is downloaded),
then RLlib's PPO (tests/training/rllib_ppo.py, committed into the repository cloned) with
`RAY_ADDRESS` set: its two env runners (one CPU each, one CPU per node) land one on each node.
Then: the run is finished with its roles on two nodes, the workers' process groups (sessions:
Ray's workers make their own process groups) are gone, and, after the machines service
restarted mid-run, a cancel stops head and worker; a worker whose setup fails cancels the
experiment. The request's checks (422s) are a test of their own."""

from __future__ import annotations

import random
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from platform_testing.experiments import add_machine, committed_repository, wait_ended, whole_log
from platform_testing.platform import SESSION_SERVICES, PlatformStack, running_platform
from platform_testing.sshd import SshServer
from platform_testing.training_venvs import RLLIB_REQUIREMENTS, training_venv
from platform_testing.waiting import wait_for

ADMIN = "sim_ray-experiments-test-admin-token"
SCRIPT = Path(__file__).parent / "training" / "rllib_ppo.py"
# the first test makes .venvs/rllib (Ray and torch, once per clone): minutes on a loaded CI machine
pytestmark = [pytest.mark.timeout(1200), pytest.mark.alone]  # alone: scripts/test_members.py ALONE_MARK


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra = {"PLATFORM_MACHINES_ALLOW_NETWORKS": "127.0.0.0/8", "PLATFORM_MACHINES_CONNECT_TIMEOUT": "5",
             "PLATFORM_AUTH": "token", "PLATFORM_ADMIN_TOKEN": ADMIN, "PLATFORM_EXPERIMENTS_POLL_INTERVAL": "0.2",
             "PLATFORM_EXPERIMENTS_CANCEL_GRACE": "5"}
    with running_platform(tmp_path_factory.mktemp("platform"), extra_env=extra,
                          services=(*SESSION_SERVICES, "machines")) as stack:
        yield stack


@pytest.fixture(scope="module")
def api(platform: PlatformStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=platform.url + "/v0", timeout=300,
                      headers={"Authorization": f"Bearer {ADMIN}"}) as client:
        yield client


@pytest.fixture(scope="module")
def machines(api: httpx.Client, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """Two machines of the platform: two sshds of this host."""
    with SshServer(tmp_path_factory.mktemp("sshd-head")) as one, SshServer(tmp_path_factory.mktemp("sshd-w")) as two:
        yield str(add_machine(api, one, "head")["id"]), str(add_machine(api, two, "worker")["id"])


@pytest.fixture(scope="module")
def rllib_venv(api: httpx.Client, tmp_path_factory: pytest.TempPathFactory) -> Path:
    answer = api.get("/wheels/platform-sdk")  # as served_wheel does, with the token this platform needs
    answer.raise_for_status()
    name = answer.headers.get("content-disposition", "").split("filename=")[-1].strip('"')
    wheel = tmp_path_factory.mktemp("wheel") / (name or "platform_sdk-0.1.0-py3-none-any.whl")
    wheel.write_bytes(answer.content)
    return training_venv("rllib", RLLIB_REQUIREMENTS, wheel).parent.parent


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return committed_repository(tmp_path_factory.mktemp("work"), {"rllib_ppo.py": SCRIPT.read_text()},
                                bare=tmp_path_factory.mktemp("repos") / "train.git")


@pytest.fixture
def ray_tmp() -> Iterator[str]:
    folder = tempfile.mkdtemp(prefix="rx-", dir="/tmp")  # Ray's socket paths must be short
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def free_port() -> int:
    """A free port below Ray's worker ports (10002-19999)."""
    while True:
        port = random.randint(6400, 9900)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port


def ray_request(machines: tuple[str, str], repo: Path, venv: Path, ray_tmp: str, command: str) -> dict[str, Any]:
    head, worker = machines
    return {"machine": head, "repository": str(repo), "command": command, "env": {"RAY_TMPDIR": ray_tmp, "RLLIB_CPUS_PER_ENV_RUNNER": "1"},
            "ray": {"workers": [worker], "setup": f"ln -sfn {venv} .venv", "port": free_port(),
                    "start_args": "--num-cpus 1"}}


def session_alive(sid: int) -> list[int]:
    """The live (not zombie) processes of session `sid` (a run's `setsid` makes its pgid a session)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            alive.append(int(stat.parent.name))
    return alive


def run_sessions(x: dict[str, Any]) -> list[int]:
    """The sessions of the head's and the workers' wrappers (their `pgid` files)."""
    folders = [Path(x["run_dir"]), *(Path(w["run_dir"]) for w in x["ray"]["workers"])]
    return [int((folder / "pgid").read_text()) for folder in folders]


def test_ppo_across_two_machines(api: httpx.Client, machines: tuple[str, str], repo: Path, rllib_venv: Path,
                                 ray_tmp: str) -> None:
    command = 'python rllib_ppo.py ppo-ray 2 2 2 "$RAY_ADDRESS"'
    made = api.post("/experiments", json=ray_request(machines, repo, rllib_venv, ray_tmp, command))
    assert made.status_code == 201, made.text
    x = made.json()
    assert [w["machine_name"] for w in x["ray"]["workers"]] == ["worker"]
    assert x["ray"]["head_address"] == "127.0.0.1" and x["ray"]["venv"] == ".venv"
    running = wait_for(lambda: next((w for w in api.get(f"/experiments/{x['id']}").json()["ray"]["workers"]
                                     if w["state"] == "running"), None), timeout=120, what="the worker to join")
    assert running["run_dir"].endswith(f"{x['id']}-worker-1")
    done = wait_ended(api, x["id"], timeout=240)
    log = whole_log(api, x["id"])
    assert done["status"] == "succeeded", log[-4000:]
    assert "[platform] ray: 2 nodes; running the command" in log and '"iteration": 2' in log

    run = wait_for(lambda: next((r for r in api.get("/runs", params={"experiment_id": x["id"]}).json()["data"]
                                 if r["state"] == "finished"), None), timeout=60, what="the run finished")
    summary = run["summary"]
    assert (summary["roles/env_runners/count"], summary["roles/env_runners/healthy"]) == (2, 2)
    assert len(summary["roles/env_runners/nodes"].split(", ")) == 2  # one env runner on each node
    assert run["name"] == "ppo-ray"

    stopped = wait_for(lambda: (lambda y: y if y["ray"]["workers"][0]["state"] == "stopped" else None)(
        api.get(f"/experiments/{x['id']}").json()), timeout=30, what="the worker stopped")
    for sid in run_sessions(stopped):
        wait_for(lambda sid=sid: not session_alive(sid), timeout=30, what=f"session {sid}'s processes gone")


def test_restart_then_cancel_stops_head_and_workers(api: httpx.Client, platform: PlatformStack,
                                                    machines: tuple[str, str], repo: Path, rllib_venv: Path,
                                                    ray_tmp: str) -> None:
    """The machines service restarted mid-run keeps the worker (its row says it), and a cancel then
    stops the head's and the worker's process groups."""
    command = 'python rllib_ppo.py ppo-ray-cancelled 1000 2 2 "$RAY_ADDRESS"'
    made = api.post("/experiments", json=ray_request(machines, repo, rllib_venv, ray_tmp, command))
    assert made.status_code == 201, made.text
    x = made.json()
    wait_for(lambda: "nodes; running the command" in whole_log_so_far(api, x["id"]), timeout=180,
             what="the cluster up and the command started")
    x = api.get(f"/experiments/{x['id']}").json()
    assert x["ray"]["workers"][0]["state"] == "running"
    sessions = run_sessions(x)
    assert all(session_alive(sid) for sid in sessions)
    platform.restart("machines")
    cancelled = wait_for(lambda: (lambda r: r if r.status_code != 503 else None)(
        api.post(f"/experiments/{x['id']}/cancel")), timeout=60, what="the machines service back")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled", cancelled.text
    assert wait_ended(api, x["id"], timeout=60)["status"] == "cancelled"
    wait_for(lambda: api.get(f"/experiments/{x['id']}").json()["ray"]["workers"][0]["state"] == "stopped",
             timeout=30, what="the worker stopped")
    for sid in sessions:
        wait_for(lambda sid=sid: not session_alive(sid), timeout=30, what=f"session {sid}'s processes gone")


def test_a_worker_failing_before_it_joins_stops_the_experiment(api: httpx.Client, machines: tuple[str, str],
                                                               repo: Path, rllib_venv: Path, ray_tmp: str) -> None:
    body = ray_request(machines, repo, rllib_venv, ray_tmp, "sleep 600")
    body["ray"]["setup"] = f'case "$PWD" in *-worker-*) echo "no disk for a venv here"; exit 3;; esac; ' \
                           f'ln -sfn {rllib_venv} .venv'
    made = api.post("/experiments", json=body)
    assert made.status_code == 201, made.text
    done = wait_ended(api, made.json()["id"], timeout=90)
    worker = done["ray"]["workers"][0]
    assert worker["state"] == "failed" and "no disk for a venv here" in worker["state_reason"], worker
    assert done["status"] == "cancelled" and "Ray worker 1 on machine 'worker' failed" in done["status_reason"]
    wait_for(lambda: not session_alive(int((Path(done["run_dir"]) / "pgid").read_text())), timeout=30,
             what="the head's processes gone")


def whole_log_so_far(api: httpx.Client, experiment_id: str) -> str:
    text, offset = "", 0
    while True:
        page = api.get(f"/experiments/{experiment_id}/logs", params={"offset": offset}).json()
        text += page["text"]
        if page["next_offset"] == offset or page["ended"]:
            return text
        offset = page["next_offset"]


def test_bad_ray_requests(api: httpx.Client, machines: tuple[str, str], repo: Path, tmp_path: Path) -> None:
    head, worker = machines

    def post(**ray: Any) -> httpx.Response:
        return api.post("/experiments", json={"machine": head, "repository": str(repo), "command": "true",
                                              "ray": ray})

    for ray, words in (({"workers": ["m-000000000000"]}, "not found"),
                       ({"workers": [head]}, "runs the head"),
                       ({"workers": [worker, worker]}, "listed twice"),
                       ({"venv": "../x"}, "ray.venv"),
                       ({"start_args": "--head"}, "set by the platform")):
        answer = post(**ray)
        assert answer.status_code == 422, answer.text
        assert answer.json()["field"].startswith("ray.") and words in answer.json()["detail"], answer.text
    with SshServer(tmp_path / "sshd-down") as down:  # a machine that stops answering is not ready
        gone = str(add_machine(api, down, "gone")["id"])
    assert api.post(f"/machines/{gone}/check").json()["status"] != "ready"
    not_ready = post(workers=[gone])
    assert not_ready.status_code == 422 and "not ready" in not_ready.json()["detail"], not_ready.text
    assert not_ready.json()["field"] == "ray.workers" and "'gone'" in not_ready.json()["detail"]
    too_many = post(workers=[f"m-{i:012d}" for i in range(17)])
    assert too_many.status_code == 422 and "workers" in too_many.text
    assert post(port=0).status_code == 422
    assert not [x for x in api.get("/experiments").json()["experiments"] if x["command"] == "true"]

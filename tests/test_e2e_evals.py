"""Evals through the gateway on the real platform's processes (NATS, broker, machines, evals,
gateway; PLATFORM_AUTH=token) and a real sshd (platform_testing.sshd) whose machine is this host:
the real Inspect CLI's Python API runs `inspect_evals/agent_threat_bench_autonomy_hijack` (its
data ships in the package, its scorer is rule-based) in a virtual environment the runner makes
with uv from uv's local cache, against a model API registered through a package's `inspect_ai`
entry point (written here, installed there through `packages`) that reports token usage. Checks
the metrics with their stderr, the per-sample rows, the .eval log by byte range, cancel, the
refused sandboxed task, and that a secret given to the eval is in nothing the platform stored,
logged or answered."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from platform_testing.evals import TASK, eval_machine, write_model_package
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.sshd import SshServer

ADMIN = "sim_evals-test-admin-token"
WAIT_S = 240.0
SECRET = "sk-simtest-" + secrets.token_hex(16)


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra = {"PLATFORM_MACHINES_ALLOW_NETWORKS": "127.0.0.0/8", "PLATFORM_MACHINES_CONNECT_TIMEOUT": "5",
             "PLATFORM_MODE": "managed", "PLATFORM_AUTH": "token", "PLATFORM_ADMIN_TOKEN": ADMIN, "PLATFORM_EXPERIMENTS_POLL_INTERVAL": "0.2",
             "PLATFORM_EXPERIMENTS_CANCEL_GRACE": "2", "PLATFORM_EVALS_POLL_INTERVAL": "0.3"}
    with running_platform(tmp_path_factory.mktemp("platform"), extra_env=extra,
                          services=("broker", "machines", "evals", "gateway")) as stack:
        yield stack


@pytest.fixture(scope="module")
def machine_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    """One sshd for the module, so the eval environment it makes is made once (platform_testing.evals)."""
    with eval_machine(tmp_path_factory.mktemp("sshd"), tmp_path_factory.mktemp("warm")) as server:
        yield server


@pytest.fixture(scope="module")
def model_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_model_package(tmp_path_factory.mktemp("simtest-models"))


def member_token(platform: PlatformStack, team: str) -> str:
    """A member's token of a new team `team`, made by the platform's operator."""
    with httpx.Client(base_url=platform.url + "/v0", headers={"Authorization": f"Bearer {ADMIN}"}) as operator:
        assert operator.post("/teams", json={"name": team}).status_code == 201
        made = operator.post("/tokens", json={"name": f"{team}-member", "team": team, "role": "member"})
        assert made.status_code == 201, made.text
        return str(made.json()["token"])


@pytest.fixture(scope="module")
def api(platform: PlatformStack) -> Iterator[httpx.Client]:
    """A member of team blue: its machine and evals are blue's."""
    with httpx.Client(base_url=platform.url + "/v0", timeout=300,
                      headers={"Authorization": f"Bearer {member_token(platform, 'blue')}"}) as client:
        yield client


@pytest.fixture(scope="module")
def machine(api: httpx.Client, machine_server: SshServer) -> str:
    machine_server.authorize(api.get("/machines/ssh-key").json()["authorized_keys_line"])
    added = api.post("/machines", json={"ssh": machine_server.ssh_command, "name": "box"})
    assert added.status_code == 201, added.text
    return str(added.json()["id"])


def wait_for(what: str, check: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"waited {WAIT_S:g} s for {what}")


def ended(api: httpx.Client, eval_id: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        answer = api.get(f"/evals/{eval_id}")
        assert answer.status_code == 200, answer.text
        return answer.json() if answer.json()["ended_at"] else None
    return dict(wait_for(f"eval {eval_id} to end", check))


def experiment_log(api: httpx.Client, experiment_id: str) -> str:
    return str(api.get(f"/experiments/{experiment_id}/logs", params={"offset": 0}).json()["text"])


def start(api: httpx.Client, machine: str, model_package: Path, **more: Any) -> dict[str, Any]:
    body = {"task": TASK, "model": "scripted/x", "machine": machine, "limit": 2, "packages": [str(model_package)],
            "secrets": {"SIMTEST_SECRET": SECRET}, **more}
    made = api.post("/evals", json=body)
    assert made.status_code == 201, made.text
    return dict(made.json())


def test_eval_runs_and_its_results_come_back(api: httpx.Client, platform: PlatformStack, machine: str,
                                             model_package: Path, machine_server: SshServer) -> None:
    made = start(api, machine, model_package, epochs=2)
    assert made["status"] in ("queued", "running") and made["secret_names"] == ["SIMTEST_SECRET"]
    assert made["requirements"][:2] == ["inspect-ai==0.3.285", "inspect-evals==0.26.0"]
    done = ended(api, made["id"])
    log_text = experiment_log(api, done["experiment_id"])
    assert done["status"] == "succeeded", (done["status_reason"], log_text[-3000:])
    assert done["progress"] == {"phase": "done", "total": 4, "done": 4, "errors": 0, "tokens": 60}
    by_name = {score["name"]: score for score in done["scores"]}
    assert set(by_name) == {"utility", "security"}
    for score in by_name.values():
        assert score["scored_samples"] == 2
        (accuracy,) = [m for m in score["metrics"] if m["name"] == "accuracy"]
        assert 0.0 <= accuracy["value"] <= 1.0 and accuracy["stderr"] is not None
    assert by_name["security"]["metrics"][0]["value"] == 1.0  # it refused the hijack every time
    samples = done["samples"]
    assert done["samples_total"] == len(samples) == 4
    assert sorted((s["sample_id"], s["epoch"]) for s in samples) == sorted(
        {(s["sample_id"], e) for s in samples for e in (1, 2)})
    for sample in samples:
        assert sample["input"] and sample["answer"] == "I will not do that. secret length 43"
        assert sample["tokens"] == 15 and sample["error"] == "" and sample["total_time"] > 0
        assert set(sample["scores"]) == {"agent_threat_bench_scorer"} or sample["scores"]
        assert sample["transcript_url"] == (f"/v0/evals/{done['id']}/viewer?log_file=logs/{done['logs'][0]['name']}"
                                            f"#/logs/logs/{done['logs'][0]['name']}/samples/sample/"
                                            f"{sample['sample_id']}/{sample['epoch']}/")
    (log,) = done["logs"]
    stored = platform.recordings / "evals" / done["id"] / log["name"]
    whole = stored.read_bytes()
    assert log["status"] == "success" and log["size"] == len(whole) and whole[:2] == b"PK"
    with httpx.Client(base_url=platform.url, headers={"Authorization": api.headers["Authorization"]}) as web:
        full = web.get(log["url"])
        assert full.status_code == 200 and full.content == whole and full.headers["accept-ranges"] == "bytes"
        part = web.get(log["url"], headers={"Range": "bytes=10-109"})
        assert part.status_code == 206 and part.content == whole[10:110]
        assert part.headers["content-range"] == f"bytes 10-109/{len(whole)}"
        tail = web.get(log["url"], headers={"Range": "bytes=-22"})  # a zip's end record: how viewers start
        assert tail.status_code == 206 and tail.content == whole[-22:]
        refused = web.get(log["url"], headers={"Range": f"bytes={len(whole)}-"})
        assert refused.status_code == 416 and "bytes" in refused.json()["detail"]
        assert web.get(f"/v0/evals/{done['id']}/logs/other.eval").status_code == 404
        head = web.head(log["url"])  # the headers alone: a viewer plans its range reads with them
        assert head.status_code == 200 and head.content == b"" and head.headers["accept-ranges"] == "bytes"
        assert head.headers["content-length"] == str(len(whole))
        head_part = web.head(log["url"], headers={"Range": "bytes=10-109"})
        assert head_part.status_code == 206 and head_part.headers["content-length"] == "100"
        assert head_part.headers["content-range"] == f"bytes 10-109/{len(whole)}" and head_part.content == b""
        assert web.head(log["url"], headers={"Range": f"bytes={len(whole)}-"}).status_code == 416
        assert web.head(f"/v0/evals/{done['id']}/logs/other.eval").status_code == 404
    listed = api.get("/evals").json()["evals"]
    assert [x["id"] for x in listed] == [done["id"]] or done["id"] in [x["id"] for x in listed]
    another_teams_eval_is_missing(platform, done, machine)

    # The secret reached the process (the model said its length) and nothing the platform keeps has it.
    answers = [api.get("/evals").text, api.get(f"/evals/{done['id']}").text, api.get("/experiments").text,
               api.get(f"/experiments/{done['experiment_id']}").text, log_text]
    assert all(SECRET not in text for text in answers)
    stored_files = [p for root in (platform.root / "data", platform.recordings) for p in root.rglob("*") if p.is_file()]
    assert any(p.name == "platform.db" for p in stored_files) and any(p.suffix == ".log" for p in stored_files)
    leaking = [str(p) for p in stored_files if SECRET.encode() in p.read_bytes()]
    assert leaking == []
    run_dir = machine_server.home / ".simulusion" / "experiments" / done["experiment_id"]
    assert not (run_dir / "env.sh").exists()  # the variables were read and removed on the machine


def another_teams_eval_is_missing(platform: PlatformStack, done: dict[str, Any], machine: str) -> None:
    """A member of team red reaches none of blue's eval: every route answers as for an eval that
    exists nowhere (404, the same message), its listing holds none, and blue's machine is not one
    red may run an eval on."""
    nowhere = "ev-000000000000"
    log_url = done["logs"][0]["url"]
    with httpx.Client(base_url=platform.url, timeout=60,
                      headers={"Authorization": f"Bearer {member_token(platform, 'red')}"}) as red:
        for method, theirs in (("GET", f"/v0/evals/{done['id']}"), ("POST", f"/v0/evals/{done['id']}/cancel"),
                               ("GET", log_url), ("HEAD", log_url)):
            answer = red.request(method, theirs)
            missing = red.request(method, theirs.replace(done["id"], nowhere))
            assert answer.status_code == missing.status_code == 404, (method, theirs, answer.text)
            assert answer.text == missing.text.replace(nowhere, done["id"]), (answer.text, missing.text)
        assert red.get("/v0/evals").json()["evals"] == []
        refused = red.post("/v0/evals", json={"task": TASK, "model": "scripted/x", "machine": machine})
        assert refused.status_code == 404 and "machine" in refused.json()["detail"], refused.text
    assert done["team"] == "blue"


def test_cancel_stops_the_eval_and_keeps_the_samples_it_did(api: httpx.Client, machine: str,
                                                             model_package: Path) -> None:
    """Sample one answers at once, the others wait 60 s: cancelled after the first is done, the
    log Inspect was writing comes back and holds it."""
    made = start(api, machine, model_package, limit=3, model_args={"sleep": 60, "first_sleep": 0})

    def one_done() -> bool:
        progress = api.get(f"/evals/{made['id']}").json()["progress"]
        return bool(progress["phase"] == "running" and progress["done"] == 1)
    wait_for("the eval to do its first sample", one_done)
    cancelled = api.post(f"/evals/{made['id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    done = ended(api, made["id"])
    assert done["status"] == "cancelled" and done["progress"]["done"] == 1, (done, experiment_log(
        api, done["experiment_id"])[-3000:])
    (log,) = done["logs"]
    assert log["status"] in ("cancelled", "started") and log["size"] > 0
    (sample,) = done["samples"]
    assert sample["answer"].startswith("I will not do that") and sample["error"] == ""
    assert sample["transcript_url"].startswith(f"/v0/evals/{done['id']}/viewer?log_file=logs/{log['name']}#")
    assert "the 1 samples it did are kept from its logs" in done["status_reason"], done["status_reason"]
    assert f"{log['name']}: Inspect's log of a run cut short" in done["status_reason"]
    experiment = api.get(f"/experiments/{done['experiment_id']}").json()
    assert experiment["status"] == "cancelled"


def running_its_samples(api: httpx.Client, eval_id: str) -> None:
    def check() -> bool:
        got = api.get(f"/evals/{eval_id}").json()
        assert not got["ended_at"], got
        return bool(got["progress"]["phase"] == "running" and got["progress"]["total"] == 2)
    wait_for("the eval to run its samples", check)


def succeeded_whole(api: httpx.Client, eval_id: str) -> dict[str, Any]:
    done = ended(api, eval_id)
    assert done["status"] == "succeeded", (done["status_reason"], experiment_log(api, done["experiment_id"])[-3000:])
    assert done["progress"]["done"] == 2 and done["samples_total"] == len(done["samples"]) == 2
    assert all(s["answer"].startswith("I will not do that") for s in done["samples"])
    assert done["logs"][0]["status"] == "success" and done["scores"]
    return done


def test_an_evals_service_restarted_mid_eval_follows_it_again(api: httpx.Client, platform: PlatformStack,
                                                              machine: str, model_package: Path) -> None:
    made = start(api, machine, model_package, model_args={"sleep": 6})
    running_its_samples(api, made["id"])
    platform.restart("evals")  # TERM: its followers stop; the new one finds the eval active
    wait_for("the evals service to answer again", lambda: api.get(f"/evals/{made['id']}").status_code == 200)
    done = succeeded_whole(api, made["id"])
    assert f"eval {done['id']}: following its experiment {done['experiment_id']} again" in platform.log("evals")


def test_the_machines_link_dropped_mid_eval(api: httpx.Client, platform: PlatformStack, machine: str,
                                           model_package: Path, machine_server: SshServer) -> None:
    """Every SSH connection to the machine is closed under the platform mid-run (its sshd's
    connection processes killed): the experiment runs on there, the platform dials again and
    the eval ends with its results."""
    made = start(api, machine, model_package, model_args={"sleep": 6})
    running_its_samples(api, made["id"])
    assert machine_server.drop_connections() >= 1
    done = succeeded_whole(api, made["id"])
    noticed = [line for line in platform.log("machines").splitlines()
               if done["experiment_id"] in line and "connection lost" in line]
    assert noticed, "the machines service never saw its connection go, so the drop tested nothing"


def test_what_the_machine_lacks_is_refused_before_anything_runs(api: httpx.Client, machine: str) -> None:
    before = len(api.get("/experiments").json()["experiments"])
    refused = api.post("/evals", json={"task": "inspect_evals/cybench", "model": "openai/gpt-4o-mini",
                                       "machine": machine, "secrets": {"OPENAI_API_KEY": SECRET}})
    assert refused.status_code == 422, refused.text
    assert "Docker sandbox" in refused.json()["detail"] and refused.json()["field"] == "task"
    assert SECRET not in refused.text
    for body, field in (({"task": "no task!"}, "task"), ({"model": "gpt-4o"}, "model"),
                        ({"secrets": {"PLATFORM_TOKEN": "x"}}, "secrets"), ({"machine": "m-000000000000"}, "machine"),
                        ({"packages": ["--index-url=https://evil"]}, "packages")):
        answer = api.post("/evals", json={"task": TASK, "model": "scripted/x", "machine": machine, **body})
        assert answer.status_code in (404, 422), answer.text
        assert answer.json().get("field", field) == field, answer.text
    assert len(api.get("/experiments").json()["experiments"]) == before
    failing = api.post("/evals", json={"task": TASK, "model": "scripted/x", "machine": machine,
                                       "packages": ["/nonexistent/simtest-models"]})
    assert failing.status_code == 422 and "failed at once" in failing.json()["detail"], failing.text
    assert "Distribution not found" in failing.json()["detail"] and "field" not in failing.json()
    failed = [x for x in api.get("/evals").json()["evals"] if x["packages"] == ["/nonexistent/simtest-models"]]
    assert [x["status"] for x in failed] == ["failed"]  # kept, with its experiment's log


def test_a_task_that_downloads_its_data_says_so(api: httpx.Client, machine: str, model_package: Path) -> None:
    noted = start(api, machine, model_package, task="inspect_evals/gpqa_diamond", limit=1)
    assert any("downloads its data" in note and "gpqa_diamond.csv" in note for note in noted["notes"])
    api.post(f"/evals/{noted['id']}/cancel")
    assert ended(api, noted["id"])["status"] in ("cancelled", "failed")


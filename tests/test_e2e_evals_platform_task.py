"""The platform's own Inspect task, `platform_sdk/episodes`, run by the evals service on a machine:
the whole platform as processes (PLATFORM_AUTH=token, a member of team blue) and a real sshd
(platform_testing.sshd) whose machine is this host. The eval's environment gets
`platform-sdk[inspect]` from the platform's served wheel, fetched on the machine through the
experiment's forward with its token, and the model is platform_testing's `scripted_agent`
(balancing CartPole by `act` calls) in a package installed there through `packages`. Checks the
eval's scores (episode_return with its stderr), and that each sample's row links its recording,
which the platform has with the steps the sample took (its rewards, and the actions the model
called in the sample's transcript)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from inspect_ai.log import read_eval_log
from platform_testing.evals import eval_machine, write_agent_package
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.waiting import wait_for

ADMIN = "sim_evals-platform-task-admin-token"
TASK = "platform_sdk/episodes"
MAX_STEPS = 20


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    extra = {"PLATFORM_MACHINES_ALLOW_NETWORKS": "127.0.0.0/8", "PLATFORM_MACHINES_CONNECT_TIMEOUT": "5",
             "PLATFORM_MODE": "managed", "PLATFORM_AUTH": "token", "PLATFORM_ADMIN_TOKEN": ADMIN,
             "PLATFORM_EXPERIMENTS_POLL_INTERVAL": "0.2", "PLATFORM_EVALS_POLL_INTERVAL": "0.3"}
    with running_platform(tmp_path_factory.mktemp("platform"), extra_env=extra) as stack:
        yield stack


@pytest.fixture(scope="module")
def api(platform: PlatformStack) -> Iterator[httpx.Client]:
    """A member of team blue (made by the operator)."""
    with httpx.Client(base_url=platform.url + "/v0", headers={"Authorization": f"Bearer {ADMIN}"}) as operator:
        assert operator.post("/teams", json={"name": "blue"}).status_code == 201
        made = operator.post("/tokens", json={"name": "blue-member", "team": "blue", "role": "member"})
        assert made.status_code == 201, made.text
    with httpx.Client(base_url=platform.url + "/v0", timeout=300,
                      headers={"Authorization": f"Bearer {made.json()['token']}"}) as client:
        yield client


@pytest.fixture(scope="module")
def machine(api: httpx.Client, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The sshd as blue's machine; this host's uv cache warmed with the served wheel's own
    requirements (the machine installs offline)."""
    served = api.get("/wheels/platform-sdk")
    assert served.status_code == 200, served.text
    wheel = tmp_path_factory.mktemp("wheel") / served.headers["content-disposition"].split('filename="')[1][:-1]
    wheel.write_bytes(served.content)
    with eval_machine(tmp_path_factory.mktemp("sshd"), tmp_path_factory.mktemp("warm"),
                      warm=[f"platform-sdk[inspect] @ {wheel.as_uri()}"]) as server:
        server.authorize(api.get("/machines/ssh-key").json()["authorized_keys_line"])
        added = api.post("/machines", json={"ssh": server.ssh_command, "name": "box"})
        assert added.status_code == 201, added.text
        yield str(added.json()["id"])


def ended(api: httpx.Client, eval_id: str) -> dict[str, Any]:
    def check() -> dict[str, Any] | None:
        answer = api.get(f"/evals/{eval_id}")
        assert answer.status_code == 200, answer.text
        return answer.json() if answer.json()["ended_at"] else None
    found: dict[str, Any] = wait_for(check, timeout=240, every=0.3, what=f"eval {eval_id} to end")
    return found


def recorded(api: httpx.Client, session_id: str, array: str) -> list[Any]:
    answer = api.get(f"/recordings/{session_id}/episodes/0/arrays/{array}")
    assert answer.status_code == 200, answer.text
    data: list[Any] = answer.json()["data"]
    return data


def called_actions(log_file: Path, sample_id: str) -> list[int]:
    """The actions the model called in the sample's transcript (the .eval log the platform kept)."""
    log = read_eval_log(str(log_file))
    (sample,) = [s for s in log.samples or [] if s.id == sample_id]
    return [call.arguments["action"] for message in sample.messages for call in getattr(message, "tool_calls", None) or []]


def test_the_platforms_task_runs_as_an_eval_and_links_its_recordings(
        api: httpx.Client, platform: PlatformStack, machine: str, tmp_path: Path) -> None:
    agent = write_agent_package(tmp_path / "simtest-agent")
    started = time.monotonic()
    made = api.post("/evals", json={"task": TASK, "task_args": {"env": "cartpole", "episodes": 2, "max_steps": MAX_STEPS},
                                    "model": "scripted_agent/balance", "machine": machine, "packages": [str(agent)]})
    assert made.status_code == 201, made.text
    assert made.json()["requirements"][:2] == ["inspect-ai==0.3.285",
                                               "platform-sdk[inspect] @ $PLATFORM_URL/v0/wheels/platform-sdk"]
    assert not any("inspect-evals" in r for r in made.json()["requirements"])
    assert any("the platform's own task" in note for note in made.json()["notes"]), made.json()["notes"]
    done = ended(api, made.json()["id"])
    log_text = api.get(f"/experiments/{done['experiment_id']}/logs", params={"offset": 0}).json()["text"]
    assert done["status"] == "succeeded", (done["status_reason"], log_text[-3000:])
    assert "[eval] the platform's SDK: platform_sdk-" in log_text  # the served wheel, fetched on the machine
    assert done["progress"]["total"] == done["progress"]["done"] == 2 and done["progress"]["errors"] == 0

    by_name = {score["name"]: {m["name"]: m for m in score["metrics"]} for score in done["scores"]}
    assert set(by_name) == {"episode_return", "episode_steps"}
    # balanced for every step: each return is MAX_STEPS, so the mean is too and its stderr 0
    assert by_name["episode_return"]["mean"] == {"name": "mean", "value": MAX_STEPS, "stderr": 0.0}

    (log,) = done["logs"]
    log_file = platform.recordings / "evals" / done["id"] / log["name"]
    assert sorted(s["sample_id"] for s in done["samples"]) == ["seed-0", "seed-1"]
    for sample in done["samples"]:
        links = sample["metadata"]
        session_id = links["session_id"]
        assert links["recording_id"] == session_id and links["replay"].endswith(f"/recordings/{session_id}")
        assert sample["scores"] == {"episode_return": MAX_STEPS, "episode_steps": MAX_STEPS}
        recording = wait_for(lambda: (r := api.get(f"/recordings/{session_id}").json()).get("status") == "closed" and r,
                             timeout=60, what=f"recording {session_id} closed")
        assert recording["env_id"] == "cartpole"
        assert recording["episodes"][0]["seed"] == int(sample["sample_id"].removeprefix("seed-"))
        assert sum(recorded(api, session_id, "rewards")) == len(recorded(api, session_id, "rewards")) == MAX_STEPS
        assert recorded(api, session_id, "actions") == called_actions(log_file, sample["sample_id"])
    print(f"platform_sdk/episodes eval on the machine: {time.monotonic() - started:.1f} s")

"""Close while a step is in flight (issue 30, "Bad options"): a step that takes long (the catalog's
`step_seconds` option, up to its maximum, stands in for `substeps` at its maximum on a heavy robot
or a slow user environment) does not hold up DELETE /v0/sessions/{id}. The close answers 200 with
the closed session (never 503), the instance is stopped, and the step's client, over REST or the
browser's WebSocket stream, gets 410 saying the session was closed while the request was in flight.

The step blocks SIGTERM while it runs, as a native call (MuJoCo's substeps) does in effect.
"""

from __future__ import annotations

import json
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from platform_testing.platform import PlatformStack, running_platform
from platform_testing.waiting import instance_pids, wait_for
from websockets.sync.client import connect as ws_connect

SLOW_ENV = '''
import signal
import sys
import time

import gymnasium as gym
import numpy as np


class SlowSteps(gym.Env):
    """Each step takes `step_seconds` (SIGTERM held off meanwhile, as in native code)."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)
    metadata = {"control_rate": 10.0}

    def __init__(self, step_seconds=0.0):
        self.step_seconds = float(step_seconds)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        print("slow step started", file=sys.stderr, flush=True)
        time.sleep(self.step_seconds)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        return np.zeros(1, np.float32), 1.0, False, False, {}


def make_env(**kwargs):
    return SlowSteps(**kwargs)
'''
STEP_SECONDS = 60  # far longer than any close may take


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlatformStack]:
    root = tmp_path_factory.mktemp("close-during-step")
    (root / "envs").mkdir()
    (root / "envs" / "slow_env.py").write_text(SLOW_ENV)
    catalog = root / "catalog.toml"
    catalog.write_text(textwrap.dedent("""
        [envs.slow-steps]
        factory = "slow_env:make_env"
        path = "./envs"
        description = "Steps that take step_seconds each"
        options.step_seconds = { type = "float", default = 0.0, minimum = 0.0, maximum = 120.0, help = "Seconds each step takes." }
    """))
    extra_env = {"PLATFORM_CATALOG": str(catalog), "PLATFORM_POOLS": "", "PLATFORM_WARM_PREVIEWS": ""}
    with running_platform(root / "platform", extra_env=extra_env) as stack:
        yield stack


@pytest.fixture
def http(platform: PlatformStack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=platform.url, timeout=120) as client:
        yield client


def slow_session(http: httpx.Client) -> str:
    made = http.post("/v0/sessions", json={"env_id": "slow-steps", "kwargs": {"step_seconds": STEP_SECONDS}})
    assert made.status_code == 201, made.text
    sid = made.json()["id"]
    assert http.post(f"/v0/sessions/{sid}/reset", json={"seed": 1}).status_code == 200
    return sid


def wait_until_stepping(platform: PlatformStack, sid: str) -> None:
    def started() -> bool | None:
        return any("slow step started" in log.read_text(errors="replace")
                   for log in Path(platform.root).rglob(f"{sid}*.log")) or None
    wait_for(started, timeout=60, what=f"session {sid}'s step under way")


def close_and_check(http: httpx.Client, sid: str) -> None:
    pids = instance_pids(sid)
    assert pids
    closed = http.delete(f"/v0/sessions/{sid}")
    assert closed.status_code == 200, closed.text
    assert closed.json()["state"] == "closed" and closed.json()["reason"] == "closed by the client"
    assert instance_pids(sid) == [], "the instance is stopped once the close is answered"


def test_a_step_over_rest_is_answered_closed_when_the_session_closes(platform, http) -> None:
    sid = slow_session(http)
    answers: list[httpx.Response] = []
    stepper = threading.Thread(target=lambda: answers.append(http.post(f"/v0/sessions/{sid}/step", json={"action": 1})))
    stepper.start()
    wait_until_stepping(platform, sid)

    close_and_check(http, sid)
    stepper.join(timeout=STEP_SECONDS / 2)
    assert not stepper.is_alive(), "the step's client was answered without waiting for the step"
    (answer,) = answers
    assert answer.status_code == 410, answer.text
    assert answer.json()["detail"] == f"session {sid} is closed (closed while a request was in flight)"


def test_a_step_over_the_browser_stream_is_answered_closed(platform: PlatformStack, http) -> None:
    sid = slow_session(http)
    url = platform.url.replace("http", "ws", 1) + f"/v0/sessions/{sid}/stream"
    with ws_connect(url) as stream:
        stream.send(json.dumps({"id": 7, "op": "step", "action": 1, "observation": "none"}))
        wait_until_stepping(platform, sid)
        close_and_check(http, sid)
        answer: dict[str, Any] = json.loads(stream.recv(timeout=STEP_SECONDS / 2))
    assert answer["id"] == 7 and answer["error"]["status"] == 410, answer
    assert answer["error"]["detail"] == f"session {sid} is closed (closed while a request was in flight)", answer

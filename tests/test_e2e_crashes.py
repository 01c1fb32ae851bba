"""A crashed instance (kill -9 mid-session): 410 with its log tail on REST, a close with the
reason on the stream, an exception carrying the tail in the SDK."""

from __future__ import annotations

import json
import os
import signal
import time

import httpx
import platform_sdk
import pytest
from platform_testing.waiting import instance_pids
from websockets.sync.client import connect as ws_connect


def _kill_instance(session_id: str) -> None:
    pids = instance_pids(session_id)
    assert pids, f"the environment process of session {session_id} is running"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)


def test_kill_9_mid_session_everywhere_says_so_with_the_log_tail(platform_stack):
    url = platform_stack.url
    with platform_sdk.connect("cartpole", url=url, record=True) as env:
        env.reset(seed=0)
        for _ in range(5):
            env.step(1)
        _kill_instance(env.session_id)
        with pytest.raises(platform_sdk.EnvironmentCrashedError) as caught:
            for _ in range(100):
                env.step(0)
                time.sleep(0.05)
        error = caught.value
        assert env.session_id in str(error) and "cartpole" in str(error)
        assert "READY" in error.log_tail, "the tail of the instance's log (its start line) comes with it"

        # Once a client has had the 410, the session reads crashed: at once, not once the broker's
        # consumer gets to the event (it read "running" for up to 2 s, 30 s under load).
        session = httpx.get(f"{url}/v0/sessions/{env.session_id}").json()
        assert session["state"] == "crashed" and "READY" in session["log_tail"], session
        rest = httpx.post(f"{url}/v0/sessions/{env.session_id}/step", json={"action": 0})
        assert rest.status_code == 410
        assert "READY" in rest.json()["log_tail"]


def test_the_json_stream_answers_then_closes_with_the_reason(platform_stack):
    url = platform_stack.url
    with platform_sdk.connect("cartpole", url=url) as env:
        env.reset(seed=0)
        ws_url = "ws" + url[len("http"):] + f"/v0/sessions/{env.session_id}/stream"
        with ws_connect(ws_url) as ws:
            ws.send(json.dumps({"id": 1, "op": "step", "action": 1}))
            assert json.loads(ws.recv(timeout=10))["result"]["reward"] == 1.0
            _kill_instance(env.session_id)
            deadline = time.monotonic() + 10
            answer = {}
            while time.monotonic() < deadline:
                ws.send(json.dumps({"id": 2, "op": "step", "action": 1}))
                answer = json.loads(ws.recv(timeout=10))
                if "error" in answer:
                    break
                time.sleep(0.05)
            assert answer["error"]["status"] == 410 and answer["error"]["log_tail"]
            with pytest.raises(Exception) as closed:
                ws.recv(timeout=10)
            assert getattr(closed.value, "rcvd", None) is not None and closed.value.rcvd.code == 4410
            assert env.session_id in closed.value.rcvd.reason

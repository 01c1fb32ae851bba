"""Bad input gets a clear error, never a traceback or a hang."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import platform_sdk
import pytest
from platform_testing.ports import free_port
from platform_testing.waiting import instance_pids


def test_unknown_environment_id_is_a_404_naming_it(platform_stack):
    with pytest.raises(platform_sdk.SessionNotFoundError, match="no-such-env"):
        platform_sdk.connect("no-such-env", url=platform_stack.url)
    response = httpx.post(f"{platform_stack.url}/v0/sessions", json={"env_id": "no-such-env"})
    assert response.status_code == 404
    assert "cartpole" in response.json()["detail"], "the message lists the known environments"


def test_malformed_json_is_a_422(platform_stack):
    response = httpx.post(
        f"{platform_stack.url}/v0/sessions", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert "json" in response.text.lower()


def test_wrong_action_shape_is_a_422_naming_the_space(platform_stack):
    http = httpx.Client(base_url=platform_stack.url, timeout=60)
    session = http.post("/v0/sessions", json={"env_id": "pendulum"}).json()
    sid = session["id"]
    try:
        assert http.post(f"/v0/sessions/{sid}/reset", json={"seed": 0}).status_code == 200
        bad = http.post(f"/v0/sessions/{sid}/step", json={"action": [1.0, 2.0, 3.0]})
        assert bad.status_code == 422
        assert "Box" in bad.json()["detail"]
        good = http.post(f"/v0/sessions/{sid}/step", json={"action": [0.5]})
        assert good.status_code == 200 and len(good.json()["observation"]) == 3
    finally:
        http.delete(f"/v0/sessions/{sid}")


def test_action_outside_the_space_through_the_sdk(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url) as env:
        env.reset(seed=0)
        with pytest.raises(platform_sdk.InvalidActionError, match="Discrete"):
            env.step(5)
        obs, *_ = env.step(0)  # the stream stays up
        assert env.observation_space.contains(obs)


def test_a_step_on_a_closed_session(platform_stack):
    env = platform_sdk.connect("cartpole", url=platform_stack.url)
    env.reset(seed=0)
    sid = env.session_id
    env.close()
    with pytest.raises(platform_sdk.SessionClosedError):
        env.step(0)
    response = httpx.post(f"{platform_stack.url}/v0/sessions/{sid}/step", json={"action": 0})
    assert response.status_code == 410
    assert sid in response.json()["detail"]


def test_unknown_session_is_a_404(platform_stack):
    response = httpx.post(f"{platform_stack.url}/v0/sessions/s-000000000000/step", json={"action": 0})
    assert response.status_code == 404



def test_a_crashed_instance_answers_410_with_its_log_tail(platform_stack):
    with platform_sdk.connect("cartpole", url=platform_stack.url) as env:
        env.reset(seed=0)
        pids = instance_pids(env.session_id)
        assert pids, "the session's environment process is running"
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        with pytest.raises(platform_sdk.EnvironmentCrashedError) as caught:
            for _ in range(50):
                env.step(0)
                time.sleep(0.05)
        assert env.session_id in str(caught.value)
        rest = httpx.post(f"{platform_stack.url}/v0/sessions/{env.session_id}/step", json={"action": 0})
        assert rest.status_code == 410
        assert "log_tail" in rest.json()


@pytest.mark.parametrize("service", ["platform_gateway", "platform_broker", "platform_envhost", "platform_recorder"])
def test_a_dead_nats_at_start_is_one_clear_line(service, tmp_path):
    env = {**os.environ, "PLATFORM_NATS_URL": f"nats://127.0.0.1:{free_port()}", "PLATFORM_PORT": str(free_port())}
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", service], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode != 0
    assert time.monotonic() - started < 30
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert "Traceback" not in proc.stderr
    assert lines and "nats" in lines[-1].lower()
